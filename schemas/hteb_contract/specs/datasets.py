"""HTEB's datasets, one typed row each (`DatasetSpec`), read from the table `datasets.yaml` beside this
module: the 32 source datasets of the HTEB paper (Tables 9-10), then the mteb tasks ../shared/data and
the tests name that are not part of HTEB (`registry: false`: STS12-16, QuoraRetrieval, ...), kept for
the scorer's `mteb` protocol.

Why one table: the generator reads a dataset from the Hub (GPU profile) or from the local copies in
../shared/data (CPU profile) and states its licence in the revision's card; the scorer evaluates it
as its mteb task class does. Each fact is stated once, in the row, and tests/contract/
test_dataset_specs.py holds every row to the installed mteb's task metadata. Which fields are
transformed is not a column: it is hteb_contract.tasks.TASK_TYPES's job.

A row (the JSON Schema `datasets.schema.json` checks its shape on load; a bad row is a one-line
ContractError naming it):

- `name` in a revision, `mteb_task`, `task_type`, the Hub pin (`hf_path`, `hf_revision`),
  `eval_split` and `train_split`, `local` (the folder of ../shared/data holding the same data).
- `subsets`: mteb's hf_subsets, each with the language of each text (`en-de: [eng, deu]`: sentence1
  English, sentence2 German, mteb's eval_langs order). The English datasets (`english`, the paper's
  Table 9) keep the subsets mteb gives for `languages=["eng"]` (AmazonCounterfactual: `en-ext` and
  `en`); the multilingual ones (Table 10) keep all of mteb's. `paper_languages` is what the paper
  lists (SemRel2024 lists pan and spa, which mteb's data lacks: said on the dataset card).
- The paper counts SemRel2024 twice: `SemRel2024-eng` is the English STR dataset (mteb's SemRel24STS,
  subset `eng` only) and `SemRel2024` the multilingual one; both read the same pin and local folder.
- How mteb loads it from the Hub: `fast_loading` (one config split by its `lang` column) and
  `renames` (the task class's own column renames). Whether each Hub row is a set of texts clustered
  on its own (mteb's legacy clustering) is the evaluation's `kind`, not a column of its own.
- `main_score` where mteb's is not its task type's (SentimentAnalysisHindi: f1); `evaluation`: what
  the mteb task class sets apart from its abstract class's defaults (`mteb_settings.py`).
- `license` as mteb's task metadata records it, linked to the pinned Hub dataset whose card states it
  and mapped to a Hub licence id as mteb maps it (`not specified` -> `unknown`, a URL -> `other`);
  `release_license` where the original release states another licence, which then holds.
- `citation`: the BibTeX of mteb's `TaskMetadata.bibtex_citation`; `release_citation` where that cites
  another work than the dataset's own paper (SciFact: mteb's cites SPECTER, not Wadden et al. 2020),
  which `cite` and the result cards of a revision recording its rows then cite (`source_citation`).
- `hub_task_ids`: the Hub task ids mteb writes on its own dataset card for the task (most have none).
- `stats`: per subset of the eval split, one `[texts, distinct, characters, script]` per transformed
  field (retrieval and reranking: the queries; STS and pairs: both texts; classification and
  clustering: the text; summarisation: the human and the machine summaries), from the descriptive
  statistics mteb 2.26.24 ships, so `hteb-generate plan` needs no data. A text count a statistics
  file does not give (SciDocsRR's queries) is total characters / average characters.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from hteb_contract.card import OTHER_LICENSE, UNKNOWN_LICENSE, SourceLicense
from hteb_contract.errors import ContractError, HtebError
from hteb_contract.source_values import DEFAULT_SUBSET
from hteb_contract.sources import DatasetInfo
from hteb_contract.mteb_settings import ClusteringSettings, Settings
from hteb_contract.tasks import task_type

TABLE = Path(__file__).with_name("datasets.yaml")
SCHEMA = Path(__file__).with_name("datasets.schema.json")

Subsets = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class FieldStats:
    """One transformed field of one subset: texts (with repeats), distinct texts, characters, script."""

    texts: int
    unique: int
    chars: int
    script: str  # ISO 15924, e.g. Latn, Jpan


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset: where it comes from, how mteb evaluates it, its licence and citation."""

    name: str  # the dataset's name inside a revision
    task_type: str
    eval_split: str
    subsets: Subsets  # mteb hf_subset -> language of each text position (ISO 639-3)
    main_score: str  # mteb's main score
    evaluation: Settings  # mteb's evaluation settings of its task class
    mteb_task: str | None = None
    hf_path: str | None = None
    hf_revision: str | None = None
    train_split: str | None = None
    paper_languages: tuple[str, ...] = ()  # as the paper's Table 9/10 lists them
    english: bool = True  # in the paper's English datasets (Table 9), else its multilingual ones (Table 10)
    registry: bool = True  # one of HTEB's datasets; False: an mteb task only the scorer's protocol reads
    local: str | None = None  # folder name under shared/data
    fast_loading: bool = False  # mteb reads the default config once and splits it by its `lang` column
    renames: Mapping[str, str] = field(default_factory=dict)  # the mteb task's own column renames
    license: str | None = None  # as mteb's task metadata records it; None: stated nowhere
    release_license: SourceLicense | None = None  # the original release's, where it differs from mteb's
    citation: str | None = None  # BibTeX, as mteb's task metadata holds it
    release_citation: str | None = None  # the dataset's own paper, where mteb's citation is of another work
    hub_task_ids: tuple[str, ...] = ()  # the Hub task ids mteb maps the task's subtypes to (its own cards')
    stats: Mapping[str, tuple[FieldStats, ...]] | None = None  # eval split's subset -> transformed fields

    @classmethod
    def from_info(cls, info: DatasetInfo, *, local: str) -> DatasetSpec:
        """The spec of a source folder no row names, from its dataset.json and rows (no licence, no
        citation, its task type's defaults)."""
        return cls(
            info.name,
            info.task_type,
            info.eval_split,
            dict(info.subsets),
            task_type(info.task_type).mteb_main_score,
            task_type(info.task_type).evaluation({}, what=info.name),
            mteb_task=info.mteb_task,
            hf_path=info.hf_path,
            hf_revision=info.hf_revision,
            train_split=info.train_split,
            paper_languages=info.languages,
            local=local,
        )

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted({code for codes in self.subsets.values() for code in codes}))

    @property
    def languages_not_in_mteb(self) -> tuple[str, ...]:
        """Languages the paper lists for this dataset that mteb's subsets do not have (for the card)."""
        return tuple(sorted(set(self.paper_languages) - set(self.languages)))

    @property
    def multilingual_hub(self) -> bool:
        """mteb loads it subset by subset (or, fast loading, splits one config by subset)."""
        return tuple(self.subsets) != (DEFAULT_SUBSET,)

    @property
    def cluster_sets(self) -> bool:
        """Legacy clustering: each Hub row is a set of texts, clustered on its own."""
        return isinstance(self.evaluation, ClusteringSettings) and self.evaluation.kind == "legacy"

    @property
    def source_citation(self) -> str | None:
        """The BibTeX HTEB cites for the dataset: its own paper's where mteb's cites another work, else mteb's."""
        return self.release_citation or self.citation

    @property
    def source_license(self) -> SourceLicense:
        """The licence as the source states it, for the dataset card (see the module docstring)."""
        if self.release_license is not None:
            return self.release_license
        if self.license is None:
            return SourceLicense(self.name, UNKNOWN_LICENSE, "not stated", None)
        hub_page = f"https://huggingface.co/datasets/{self.hf_path}" if self.hf_path else None
        link = self.license if self.license.startswith("http") else hub_page
        return SourceLicense(self.name, hub_license(self.license), self.license, link)

    def info(self) -> DatasetInfo:
        return DatasetInfo(
            name=self.name,
            task_type=self.task_type,
            eval_split=self.eval_split,
            languages=self.languages,
            train_split=self.train_split,
            mteb_task=self.mteb_task,
            hf_path=self.hf_path,
            hf_revision=self.hf_revision,
            subsets=dict(self.subsets),
        )


def hub_license(mteb_license: str) -> str:
    """mteb's licence string as a Hub licence id, as mteb maps it for its own dataset cards.

    >>> hub_license("not specified"), hub_license("https://www.biorxiv.org/content/about-biorxiv"), hub_license("mit")
    ('unknown', 'other', 'mit')
    """
    if mteb_license == "not specified":
        return UNKNOWN_LICENSE
    return OTHER_LICENSE if mteb_license.startswith("http") else mteb_license


def _spec(row: dict[str, Any]) -> DatasetSpec:
    name, kind = row["name"], row["task_type"]
    task_type(kind)  # an unknown task type is a one-line error naming the known ones
    release = row.get("release_license")
    stats = row.get("stats")
    return DatasetSpec(
        name,
        kind,
        row["eval_split"],
        {s: tuple(codes) for s, codes in row["subsets"].items()},
        row.get("main_score") or task_type(kind).mteb_main_score,
        task_type(kind).evaluation(row.get("evaluation", {}), what="evaluation"),
        mteb_task=row.get("mteb_task"),
        hf_path=row.get("hf_path"),
        hf_revision=row.get("hf_revision"),
        train_split=row.get("train_split"),
        paper_languages=tuple(row.get("paper_languages", ())),
        english=row.get("english", True),
        registry=row.get("registry", True),
        local=row.get("local"),
        fast_loading=row.get("fast_loading", False),
        renames=dict(row.get("renames", {})),
        license=row.get("license"),
        citation=row.get("citation"),
        release_citation=row.get("release_citation"),
        hub_task_ids=tuple(row.get("hub_task_ids", ())),
        release_license=None if release is None else SourceLicense(name, *(release[k] for k in ("id", "name", "link"))),
        stats=None if stats is None else {s: tuple(FieldStats(*f) for f in fs) for s, fs in stats.items()},
    )


def _check_agree(specs: list[DatasetSpec], where: str) -> None:
    """Names are unique, and rows naming one mteb task evaluate it alike (the scorer reads it by task)."""
    seen: dict[str, DatasetSpec] = {}
    by_task: dict[str, DatasetSpec] = {}
    for spec in specs:
        if spec.name in seen:
            raise ContractError(f"{where}: dataset {spec.name!r} has two rows")
        seen[spec.name] = spec
        if spec.mteb_task is None:
            continue
        other = by_task.setdefault(spec.mteb_task, spec)
        if (other.task_type, other.main_score, other.evaluation) != (spec.task_type, spec.main_score, spec.evaluation):
            raise ContractError(
                f"{where}: rows {other.name!r} and {spec.name!r} name mteb task {spec.mteb_task} "
                f"but differ in task type, main score or evaluation settings"
            )


def load_dataset_specs(path: Path = TABLE) -> tuple[DatasetSpec, ...]:
    """Every row of the table at `path`, checked against its JSON Schema; a bad row is one line."""
    where = Path(path).name
    try:
        rows = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    except (OSError, yaml.YAMLError) as err:
        raise ContractError(f"{where}: cannot read the dataset table: {str(err).splitlines()[0]}") from None
    return parse_dataset_rows(rows, where)


def parse_dataset_rows(rows: Any, where: str) -> tuple[DatasetSpec, ...]:
    """Rows as the table states them (the packaged file's, or those a revision's `specs` block recorded), checked
    against the table's JSON Schema and each other; a bad row is a one-line ContractError naming `where`."""
    error = next(iter(sorted(_validator().iter_errors(rows), key=lambda e: list(e.absolute_path))), None)
    if error is not None:
        at = list(error.absolute_path)
        message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
        if not at:
            raise ContractError(f"{where}: (top level): {message}")
        named = f" ({rows[at[0]].get('name')})" if isinstance(rows[at[0]], dict) else ""
        inner = "/".join(str(p) for p in at[1:]) or "(row)"
        raise ContractError(f"{where}: row {at[0] + 1}{named}: {inner}: {message}")
    specs = []
    for index, row in enumerate(rows):
        try:
            specs.append(_spec(row))
        except HtebError as err:
            raise ContractError(f"{where}: row {index + 1} ({row['name']}): {err}") from None
    _check_agree(specs, where)
    return tuple(specs)


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))


@cache
def dataset_specs() -> tuple[DatasetSpec, ...]:
    """The rows of the packaged table, in its order, read once."""
    return load_dataset_specs(TABLE)


def registry_specs() -> tuple[DatasetSpec, ...]:
    """HTEB's datasets: the rows of the registry (the paper's 32, in its tables' order)."""
    return tuple(spec for spec in dataset_specs() if spec.registry)


def specs_by_mteb_task(specs: Iterable[DatasetSpec] | None = None) -> dict[str, DatasetSpec]:
    """mteb task -> the first row naming it (rows naming one task agree on how it is evaluated); of the
    packaged table, or of `specs`."""
    out: dict[str, DatasetSpec] = {}
    for spec in dataset_specs() if specs is None else specs:
        if spec.mteb_task is not None:
            out.setdefault(spec.mteb_task, spec)
    return out
