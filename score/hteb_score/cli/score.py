"""The `score` command: `hteb-score MODEL_ID [options]`."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hteb_contract.errors import HtebError
from hteb_score import CARD_FILE, DEFAULT_STORE, SAMPLE_REVISION
from hteb_score.cli import options
from hteb_score.cli.options import GivenPath
from hteb_score.cli.output import OutputFolder
from hteb_score.cli.terminal import echo
from hteb_score.encoding.backends import BACKENDS, DTYPES
from hteb_score.encoding.choice import KINDS
from hteb_score.encoding.model_files import DEFAULT_MODEL_ID, check_model, choose_model
from hteb_score.scoring.error_policy import ACTIONS
from hteb_score.scoring.options import ScoreOptions
from hteb_score.scoring.selection import PRESETS

if TYPE_CHECKING:  # imported when the option is parsed: --help stays light
    from hteb_score.cli.unit_run import Executor
    from hteb_score.evaluators.protocol import Protocol

#: the encoders that choose their own backend and precision, and who chooses them
OWN_RUNTIME = {
    "mteb": "mteb's loader decides backend and precision",
    "python": "the factory's engine runs itself",
    "null": "a null model computes its vectors itself",
}


def _protocol(ctx: click.Context, param: click.Parameter, name: str) -> Protocol:
    """--protocol NAME -> its Protocol (an unknown name is a one-line error naming the known ones)."""
    from hteb_score.evaluators.protocol import PROTOCOLS

    return PROTOCOLS.get(name)


def _judge_threshold(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """--min-judge Q: a number from 1 to 5 (click's range lets NaN through: every comparison with it is false)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number from 1 to 5")
    return value


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_ids", nargs=-1, metavar="[MODEL_ID]...")
@click.option(
    "--store",
    default=None,
    help="Revision store: a path, file://PATH or hf://OWNER/NAME. Default: the sample store bundled with hteb-score.",
)
@click.option(
    "--revision",
    "ref",
    default=None,
    help=f"Label, content hash or Hub commit. Default: {SAMPLE_REVISION} in the bundled store.",
)
@click.option(
    "--source-dir",
    type=GivenPath(path_type=Path, file_okay=False),
    default=None,
    help="Score the original data of dataset folders in the shared/data layout (dataset.json + one "
    "JSONL per table) instead of a revision.",
)
@click.option(
    "--datasets", default=None, help="Comma-separated dataset names (default: all in the revision or folder)."
)
@click.option("--transformations", default=None, help="Comma-separated transformations (default: all in the revision).")
@click.option(
    "--seeds", default=None, help="Comma-separated seeds, e.g. 1337,1338,1339 (default: all in the revision)."
)
@click.option(
    "--protocol",
    metavar="NAME",
    default="hteb",
    show_default=True,
    callback=_protocol,
    help="hteb: the paper's evaluation (full-train classification, ...); mteb: equal to mteb 2.26 main "
    "scores. The card records the protocol and each dataset's evaluation settings.",
)
@click.option(
    "--on-error",
    type=click.Choice(list(ACTIONS)),
    default="original",
    show_default=True,
    help="Items whose transformation still has errors: score the original text, drop the item, or keep "
    "the flawed output. Counts per dataset x transformation go into the card.",
)
@click.option(
    "--out",
    type=GivenPath(path_type=Path, file_okay=False),
    default=Path("hteb-results"),
    show_default=True,
    help="Folder for result_card.json, result_card.md and mteb/ JSON: new or empty, or an earlier result "
    "with --overwrite. Written whole or not at all.",
)
@click.option("--overwrite", is_flag=True, help="Replace the earlier result in --out, whole.")
@click.option("--device", default="auto", show_default=True, help="cpu, cuda, cuda:1, mps or auto.")
@click.option("--batch-size", type=click.IntRange(min=1, max=1 << 16), default=32, show_default=True)
@click.option(
    "--cache-dir",
    type=GivenPath(path_type=Path, file_okay=False),
    default=None,
    help="On-disk embedding cache (sqlite), keyed by model identity (weights, tokenizer, module configs, precision), prompt and text; safe to share.",
)
@click.option("--trust-remote-code", is_flag=True, help="Allow the model's own code from the Hub (off by default).")
@click.option(
    "--encoder",
    type=click.Choice(KINDS),
    default="auto",
    show_default=True,
    help="mteb: MODEL_ID from mteb's model registry, encoded through mteb with the prompts and instructions "
    "mteb gives each task (needs the mteb extra). python: MODEL_ID is MODULE:FACTORY or FILE.py:FACTORY, "
    "called once for an encoder of mteb's protocol (your own engine; docs/scoring.md). null: MODEL_ID is "
    "hteb:random or hteb:constant (settings as a query: hteb:random?norm=10&seed=3&dim=384), a null model "
    "that reads no text and scores chance. auto: null for MODEL_ID starting hteb:, python for "
    "MODULE:FACTORY, mteb when it is installed and has MODEL_ID registered, else sentence-transformers.",
)
@click.option(
    "--backend",
    type=click.Choice(["auto", *BACKENDS.names()]),
    default="auto",
    show_default=True,
    help="What runs the model: torch, or its transformer exported once to ONNX and run by onnxruntime "
    "(extra: onnx) or OpenVINO (extra: openvino). auto: OpenVINO fp32 on CPU when installed (measured "
    "fastest with scores equal to torch fp32's), else torch. The card records it and the largest "
    "embedding difference from torch fp32 on a probe set.",
)
@click.option(
    "--precision",
    type=click.Choice(list(DTYPES)),
    default=None,
    help="fp32 (default on CPU), fp16 (default on CUDA, torch only), bf16 (torch), int8 (onnx dynamic "
    "quantisation). A result in reduced precision is flagged reduced_precision and marked by compare.",
)
@click.option(
    "--token-budget",
    type=click.IntRange(min=64, max=1 << 22),
    default=None,
    metavar="N",
    help="Encode pre-tokenised, length-sorted batches of at most N padded tokens, prepared one batch ahead "
    "(default on CUDA and with several --device: 16384; on CPU sentence-transformers' encode with "
    "--batch-size). --device cuda:0,cuda:1 runs one model replica per device.",
)
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option(
    "--corpus-robustness",
    is_flag=True,
    help="Also score each retrieval dataset's perturbed corpora (hteb-generate --corpus-noise) with the "
    "original queries: nDCG@10 retention per perturbation and their harmonic mean, in a section of "
    "its own (never in the HTEB total or the Noise axis).",
)
@click.option(
    "--preset",
    type=click.Choice(list(PRESETS.names())),
    default=None,
    help="; ".join(f"{name}: {preset.spec.description}" for name, preset in PRESETS.items())
    + ". Recorded in the card.",
)
@click.option(
    "--model-revision",
    default=None,
    metavar="REV",
    help="Pin a Hub model to a commit, tag or branch (resolved to its commit before any data is read; the "
    "card records both). For a local folder named with --model-name: the full Hub commit whose files it "
    "holds (the card's revision and its mteb result folder; its weights' sha256 stays its identity).",
)
@click.option(
    "--model-name",
    default=None,
    metavar="NAME",
    help="The name of a model given as a local folder: the card, leaderboard and report show NAME, not "
    "the folder's path.",
)
@click.option(
    "--min-judge",
    type=click.FloatRange(1, 5),
    default=None,
    metavar="Q",
    callback=_judge_threshold,
    help="Score only transformed items whose judge mean (quality and fluency, 1-5) is at least Q; items "
    "no judge rated are kept. Kept and dropped counts per variant go into the card.",
)
@click.option(
    "--hard-twins-from",
    default=None,
    metavar="LABEL_OR_HASH",
    help="With a Sensitivity revision: also score each minimal pair against this LLM revision's "
    "meaning-keeping rewrites (paraphrasing, backtranslation, style_change) of the same original texts, "
    "the card's `hard` figure beside each accuracy (docs/sensitivity.md).",
)
@click.option(
    "--hard-twins-store",
    default=None,
    metavar="STORE",
    help="The store of --hard-twins-from (a path, file://PATH or hf://OWNER/NAME). Default: the run's --store.",
)
@click.option(
    "--part",
    default=None,
    metavar="DATASETS",
    help="Score only these datasets (comma-separated) of the run the other options choose, as its work "
    "units: OUT gets hteb_part.json, not a card; `hteb-score merge` joins the parts into the card a "
    "single run writes.",
)
@click.option(
    "--joins",
    type=GivenPath(path_type=Path),
    default=None,
    metavar="DIR",
    help="With --part: the folder of parts this one will be merged with (DATASET.hteb_part.json.gz files or "
    "part folders). Refused before anything is scored where this environment's hteb-score or package versions "
    "differ from theirs, which `hteb-score merge` would refuse afterwards.",
)
@click.option(
    "--ray-address",
    default=None,
    metavar="local|auto|ADDRESS",
    help="Spread the work units (one per model and dataset) over a Ray cluster: local (start one here), "
    "auto (`ray start`'s) or ADDRESS (needs the ray extra). OUT/<model>/ gets each card, OUT/comparison/ "
    "the comparison and report page; the same command again resumes a killed run.",
)
@click.option(
    "--ray-workers",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Ray workers, one model each at a time (default: as many as the cluster's CPUs, or GPUs with "
    "--device cuda, hold).",
)
@click.option(
    "--ray-threads",
    type=click.IntRange(min=1),
    default=None,
    metavar="T",
    help="CPU threads of each Ray worker (default 1).",
)
def score(
    out: Path,
    overwrite: bool,
    model_ids: tuple[str, ...],
    ray_address: str | None,
    ray_workers: int | None,
    ray_threads: int | None,
    **given: Any,
) -> None:
    """Score MODEL_ID (a sentence-transformers id or local folder, a model of mteb's registry, or a
    null model, hteb:random or hteb:constant; default: the PyPI-shipped all-MiniLM-L6-v2) on an HTEB
    revision: the original data and every transformation and seed.

    Each unique (text, prompt) is embedded once; retrieval and reranking corpora are never
    re-embedded. Writes OUT/result_card.json, OUT/result_card.md and mteb-format JSON of the
    original scores under OUT/mteb/. Every option is checked before any data is read or the
    model loads.

    Several MODEL_IDs, or --ray-address, make a run of work units, one per model and dataset,
    each kept in OUT as it finishes: OUT/<model>/ gets each model's card and OUT/comparison/ the
    comparison and report page of several models (docs/ray.md).
    """
    from hteb_score.scoring.parts import PART_FILE, check_joins

    started = time.perf_counter()
    joins = given.pop("joins")
    if joins is not None and given.get("part") is None:
        raise HtebError("--joins names the parts a --part will be merged with: give --part, or drop it")
    if ray_address is None and (ray_workers, ray_threads) != (None, None):
        raise HtebError("--ray-workers and --ray-threads size the workers of --ray-address; give it, or drop them")
    if len(model_ids) > 1 or ray_address is not None:
        _units(model_ids, given, out, overwrite, (ray_address, ray_workers, ray_threads))
        return
    opts = checked_options(model_id=model_ids[0] if model_ids else None, **given)
    output = OutputFolder.check(
        out, marker=CARD_FILE if opts.part is None else PART_FILE, overwrite=overwrite, stores=_local_stores(opts)
    )
    if opts.encoder == "sentence-transformers":  # an mteb model was found in mteb's registry
        check_model(opts.model_id)
    if joins is not None:
        check_joins(joins)
    with output.staged() as folder:
        summary = _run(opts, folder, started)
    echo(f"{summary} -> {output.path}")


def _local_stores(opts: ScoreOptions) -> tuple[Path, ...]:
    """The run's store when it is a local folder (an output inside it is refused)."""
    if opts.store is None or opts.store.startswith("hf://"):
        return ()
    return (Path(opts.store.removeprefix("file://")),)


def _executor(address: str | None, workers: int | None, threads: int | None, device: str) -> Executor:
    """Where the units run: on the Ray cluster at `address`, else one after the other in this process."""
    if address is None:
        from hteb_score.scoring.unit_scorer import InProcess

        return InProcess()
    from hteb_score.scoring.ray_units import RayCluster

    return RayCluster(options.text(address, "--ray-address"), workers, threads or 1, device)


def _units(
    model_ids: tuple[str, ...],
    given: dict[str, Any],
    out: Path,
    overwrite: bool,
    ray: tuple[str | None, int | None, int | None],
) -> None:
    """The run of work units: every model's options checked first, then the units (cli/unit_run.py)."""
    from hteb_contract.stores.local import enclosing_store
    from hteb_score.cli.unit_run import RESERVED, run_units
    from hteb_score.report.compare.comparison_files import model_folders

    twice = next((m for i, m in enumerate(model_ids) if m in model_ids[:i]), None)
    if twice is not None:
        raise HtebError(f"MODEL_ID {twice} is given twice")
    if given.get("part") is not None:
        raise HtebError(
            "--part scores one work unit of one model; a run of several models or --ray-address plans "
            "its own units: drop --part"
        )
    if len(model_ids) > 1 and (given.get("model_revision"), given.get("model_name")) != (None, None):
        raise HtebError("--model-revision and --model-name apply to one model; give one MODEL_ID with them")
    checked = [checked_options(model_id=model, **given) for model in (model_ids or (None,))]
    out = options.writable_location(out, "--out")
    for opts in checked:
        store = enclosing_store(out, *_local_stores(opts))
        if store is not None:
            raise HtebError(f"--out {out} is inside the store {store}: a store holds published revisions only")
        if opts.encoder == "sentence-transformers":
            check_model(opts.model_id)
    executor = _executor(*ray, checked[0].device)
    names = [_shown(opts) for opts in checked]
    folders = model_folders([*RESERVED, *names])
    settings = {"models": list(model_ids), **{key: _recorded(value) for key, value in given.items() if key != "quiet"}}
    with executor:
        lines = run_units(
            {folders[name]: opts for name, opts in zip(names, checked)},
            settings,
            out,
            overwrite=overwrite,
            executor=executor,
            echo=lambda line: echo(line, err=True),
        )
    for line in lines:
        echo(line)


def _shown(opts: ScoreOptions) -> str:
    """A model's name in the run: its --model-name, a local folder's name, or its Hub id."""
    if opts.model_choice.name is not None:
        return opts.model_choice.name
    if opts.model_id is None:
        return DEFAULT_MODEL_ID
    return Path(opts.model_id).name if Path(opts.model_id).exists() else opts.model_id


def _recorded(value: Any) -> Any:
    """A setting as the run folder records it (a protocol by its name, a path as text)."""
    if isinstance(value, Path):
        return str(value)
    return getattr(value, "name", value) if not isinstance(value, (str, int, float, bool, type(None))) else value


def _runtime(backend: str, precision: str | None, device: str) -> tuple[str, str]:
    """The backend `auto` resolves to on this device and why, checked with the precision before any model loads."""
    from hteb_score.encoding.backends import check_backend, resolve_backend

    kind = device.split(",")[0]
    if device == "auto":
        import torch

        kind = "cuda" if backend in ("auto", "torch") and torch.cuda.is_available() else "cpu"
    backend, why = resolve_backend(backend, kind, precision)
    resolved = precision or ("fp16" if kind.startswith("cuda") and backend == "torch" else "fp32")
    check_backend(backend, resolved, kind)
    return backend, f"backend: {backend} {resolved} on {kind} ({why})"


def checked_options(
    *,
    model_id: str | None,
    store: str | None,
    ref: str | None,
    source_dir: Path | None,
    datasets: str | None,
    transformations: str | None,
    seeds: str | None,
    encoder: str,
    device: str,
    cache_dir: Path | None,
    preset: str | None,
    min_judge: float | None,
    corpus_robustness: bool,
    backend: str,
    precision: str | None,
    token_budget: int | None,
    model_revision: str | None,
    model_name: str | None,
    part: str | None = None,
    hard_twins_from: str | None = None,
    hard_twins_store: str | None = None,
    **settled: Any,
) -> ScoreOptions:
    """The command line's options as one ScoreOptions, every one checked before any data is read: a
    bad one is a one-line HtebError naming it. `settled`: the options click has checked already."""
    from hteb_contract.taxonomy import axis_of
    from hteb_score.encoding.choice import choose

    store, ref = options.text(store, "--store"), options.text(ref, "--revision")
    wanted_t = options.names(transformations, "--transformations")
    for name in wanted_t or ():
        axis_of(name)
    wanted_s = options.seeds(seeds)
    if cache_dir is not None:
        cache_dir = options.writable_location(cache_dir, "--cache-dir")
    if source_dir is not None:
        if store or ref or wanted_t or wanted_s or corpus_robustness or preset or min_judge is not None:
            raise HtebError(
                "--source-dir scores original data only: drop --store/--revision/--transformations/--seeds"
                "/--corpus-robustness/--preset/--min-judge"
            )
        options.readable_folder(source_dir, "--source-dir")
    else:
        if store is not None:
            options.store(store)
        store, ref = store or DEFAULT_STORE, ref or SAMPLE_REVISION
    hard_twins = _hard_twins(hard_twins_from, hard_twins_store, store, source_dir)
    wanted_d = options.names(datasets, "--datasets")
    if preset is not None and (wanted_d or wanted_t):
        raise HtebError(
            f"--preset {preset} chooses the datasets and transformations itself: drop --datasets/--transformations"
        )
    device = options.device(device)
    model_revision = options.text(model_revision, "--model-revision")
    choice = choose(encoder, model_id, revision=model_revision)
    encoder = choice.kind
    model_choice = choose_model(model_id, model_revision, options.text(model_name, "--model-name"), encoder)
    if encoder in OWN_RUNTIME:
        if (backend, precision, token_budget) != ("auto", None, None) or "," in device:
            raise HtebError(
                "--backend, --precision, --token-budget and device lists apply to sentence-transformers "
                f"models; {OWN_RUNTIME[encoder]} (drop them, or pass --encoder sentence-transformers)"
            )
        why = f"encoder: {encoder} for {model_id} ({OWN_RUNTIME[encoder]})"
    else:
        backend, why = _runtime(backend, precision, device)
    return ScoreOptions(
        model_id=model_id,
        encoder=encoder,
        store=store,
        ref=ref,
        source_dir=source_dir,
        datasets=wanted_d,
        transformations=wanted_t,
        seeds=wanted_s,
        device=device,
        cache_dir=cache_dir,
        preset=preset,
        min_judge=min_judge,
        corpus_robustness=corpus_robustness,
        backend=backend,
        precision=precision,
        token_budget=token_budget,
        model_choice=model_choice,
        runtime_note=why,
        encoder_reason=choice.reason,
        encoder_note=choice.note(model_id),
        part=options.names(part, "--part"),
        hard_twins=hard_twins,
        **settled,
    )


def _hard_twins(
    ref: str | None, store: str | None, run_store: str | None, source_dir: Path | None
) -> tuple[str, str] | None:
    """(store, revision) of --hard-twins-from, its store the run's unless --hard-twins-store names one."""
    ref, store = options.text(ref, "--hard-twins-from"), options.text(store, "--hard-twins-store")
    if ref is None:
        if store is not None:
            raise HtebError("--hard-twins-store names the store of --hard-twins-from: give both, or drop it")
        return None
    if source_dir is not None or run_store is None:
        raise HtebError("--hard-twins-from scores a Sensitivity revision's minimal pairs: drop --source-dir")
    if store is not None:
        options.store(store, "--hard-twins-store")
    return store or run_store, ref


def _run(opts: ScoreOptions, folder: Path, started: float) -> str:
    """Score into `folder` (the staged output); returns the one-line summary."""
    from hteb_score.report.card.run_outputs import publish, summary
    from hteb_score.scoring.unit_scorer import UnitScorer

    part = UnitScorer(opts, announce=lambda note: echo(note, err=True)).score(opts.part, started)
    if opts.part is not None:  # a work unit: its part, merged later (`hteb-score merge`)
        part.write(folder)
        return (
            f"{part.identity.model['model_id']} [{opts.protocol.name}] part: "
            f"{', '.join(u.dataset for u in part.units)} of {len(part.planned)} planned dataset(s)"
        )
    return summary(publish(part, folder))
