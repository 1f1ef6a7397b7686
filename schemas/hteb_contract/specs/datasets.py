"""HTEB's datasets, one typed row each (`DatasetSpec`), read from the table `datasets.yaml` beside this
module: the 32 source datasets of the HTEB paper (Tables 9-10), then the mteb tasks ../shared/data and
the tests name that are not part of HTEB (`registry: false`: STS12-16, QuoraRetrieval, ...), kept for
the scorer's `mteb` protocol.

Why one table: the generator reads a dataset from the Hub (GPU profile) or from the local copies in
../shared/data (CPU profile) and states its licence in the revision's card; the scorer evaluates it
as its mteb task class does. Each fact is stated once, in the row, and tests/contract/
test_dataset_specs.py holds every row to the installed mteb's task metadata. Which fields are
transformed is not a column: it is hteb_contract.tasks.TASK_TYPES's job.

A row's columns, what each holds and when a row needs it, are `ROW_MODEL` below (its JSON Schema,
`datasets.schema.json`, and docs/extending/adding-a-dataset.md's column table are written from it;
a bad row is a one-line ContractError naming it). What the columns do not say:

- The English datasets (`english`, the paper's Table 9) keep the subsets mteb gives for
  `languages=["eng"]` (AmazonCounterfactual: `en-ext` and `en`); the multilingual ones (Table 10)
  keep all of mteb's. SemRel2024 lists pan and spa in the paper, which mteb's data lacks: said on
  the dataset card.
- The paper counts SemRel2024 twice: `SemRel2024-eng` is the English STR dataset (mteb's SemRel24STS,
  subset `eng` only) and `SemRel2024` the multilingual one; both read the same pin and local folder.
  Whether each Hub row is a set of texts clustered on its own (mteb's legacy clustering) is the
  evaluation's `kind`, not a column of its own.
- A licence maps to a Hub licence id as mteb maps it (`not specified` -> `unknown`, a URL -> `other`),
  linked to the pinned Hub dataset whose card states it.
- A `stats` text count a statistics file does not give (SciDocsRR's queries) is total characters /
  average characters.

A row is read into a `DatasetSpec`, which holds the `DatasetInfo` every source carries (name, task
type, splits, pin, subsets) and adds what the table alone says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hteb_contract.card import OTHER_LICENSE, UNKNOWN_LICENSE, SourceLicense
from hteb_contract.common import yaml_input
from hteb_contract.errors import ContractError, HtebError
from hteb_contract.source_values import DEFAULT_SUBSET
from hteb_contract.sources import DatasetInfo
from hteb_contract.mteb_settings import ClusteringSettings, Settings
from hteb_contract.specs.table import REQUIRED, Column, RowModel, TableFile
from hteb_contract.tasks import task_type

TABLE = Path(__file__).with_name("datasets.yaml")
SCHEMA = Path(__file__).with_name("datasets.schema.json")

Subsets = Mapping[str, tuple[str, ...]]

_NAME = {"$ref": "#/$defs/name"}
_BIBTEX = {"type": "string", "pattern": "^@"}
_SPLIT = {"type": "string", "pattern": "^\\w+$"}
_FLAG = {"type": "boolean"}

#: The dataset table's columns, in the order its docs list them.
ROW_MODEL = RowModel(
    "datasets",
    "one row per dataset",
    (
        Column("name", _NAME, "the dataset's name in a revision (`--datasets NAME`)", REQUIRED),
        Column("task_type", {"type": "string"}, "one of `hteb_contract.tasks.TASK_TYPES`", REQUIRED),
        Column("eval_split", _SPLIT, "the split evaluated", REQUIRED),
        Column("train_split", _SPLIT, "the split a classifier is trained on", "Classification"),
        Column(
            "subsets",
            {
                "type": "object",
                "minProperties": 1,
                "propertyNames": _NAME,
                "additionalProperties": {"$ref": "#/$defs/languages"},
            },
            "mteb's `hf_subsets`, each with the ISO 639-3 language of each text position in mteb's "
            "`eval_langs` order (`en-de: [eng, deu]`: sentence1 English, sentence2 German)",
            REQUIRED,
        ),
        Column(
            "mteb_task",
            _NAME,
            "the mteb task it is; the scorer's `mteb` protocol reads its settings by this name",
            "mteb datasets",
        ),
        Column("hf_path", {"type": "string", "minLength": 1}, "the Hub dataset the GPU profile loads", "Hub datasets"),
        Column(
            "hf_revision",
            {"type": "string", "pattern": "^[0-9a-f]{40}$"},
            "the commit of `hf_path` it loads",
            "Hub datasets",
        ),
        Column("local", _NAME, "its folder in `../shared/data` (the CPU and noise profiles)", "local copies"),
        Column(
            "sample",
            {"type": "integer", "minimum": 1},
            "its place in the CPU profile's sample (the bundled sample's datasets, in this order); a fact of the "
            "profile, left out of the rows a revision records",
            recorded=False,
        ),
        Column(
            "english",
            _FLAG,
            "in the paper's English table (Table 9; default `true`), else its multilingual one (Table 10)",
        ),
        Column("paper_languages", {"$ref": "#/$defs/languages"}, "the languages the paper's table lists for it"),
        Column("fast_loading", _FLAG, "mteb reads one config and splits it by its `lang` column"),
        Column(
            "renames",
            {"type": "object", "additionalProperties": {"type": "string"}},
            "the mteb task class's own column renames",
        ),
        Column(
            "main_score",
            {"type": "string", "minLength": 1},
            "mteb's main score where it is not its task type's (SentimentAnalysisHindi: `f1`)",
        ),
        Column(
            "evaluation",
            {"type": "object", "properties": {"kind": {"enum": ["legacy", "fast"]}}},
            "what the mteb task class sets apart from its abstract class's defaults (`samples_per_label: 32`, "
            "`kind: fast`; `mteb_settings.py`)",
        ),
        Column("license", {"type": "string", "minLength": 1}, "the licence as mteb's task metadata records it"),
        Column(
            "release_license",
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "name", "link"],
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "name": {"type": "string", "minLength": 1},
                    "link": {"type": "string", "pattern": "^https://"},
                },
            },
            "the original release's licence (Hub id, name, link), where it differs from mteb's: it then holds",
        ),
        Column("citation", _BIBTEX, "the BibTeX of mteb's `TaskMetadata.bibtex_citation`"),
        Column(
            "release_citation",
            _BIBTEX,
            "the dataset's own paper, where mteb's citation is of another work (SciFact: mteb cites SPECTER); "
            "what HTEB cites",
        ),
        Column(
            "hub_task_ids",
            {"type": "array", "items": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"}, "uniqueItems": True},
            "the Hub task ids mteb writes on its own dataset card for the task",
        ),
        Column(
            "stats",
            {
                "type": "object",
                "propertyNames": _NAME,
                "additionalProperties": {"type": "array", "items": {"$ref": "#/$defs/field_stats"}, "minItems": 1},
            },
            "per subset of the eval split: `[texts, distinct, characters, script]` per transformed field "
            "(`DatasetInfo.transformed_fields`), from the descriptive statistics mteb 2.26.24 ships",
            "for `plan --counts stats`",
        ),
        Column(
            "registry",
            _FLAG,
            "`false` for an mteb task only the scorer's `mteb` protocol reads (STS12-16 and the like)",
        ),
    ),
)
TABLE_FILE = TableFile(
    "datasets.yaml",
    "HTEB dataset table (datasets.yaml)",
    "One row per dataset: what the generator loads and the scorer evaluates. hteb_contract/specs/datasets.py reads it.",
    (ROW_MODEL,),
    defs={
        "name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$"},
        "language": {"type": "string", "pattern": "^[a-z]{3}$"},
        "languages": {"type": "array", "items": {"$ref": "#/$defs/language"}, "minItems": 1},
        "field_stats": {
            "description": "one transformed field of a subset: [texts, distinct texts, characters, ISO 15924 script]",
            "type": "array",
            "prefixItems": [
                {"type": "integer", "minimum": 0},
                {"type": "integer", "minimum": 0},
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": "^[A-Z][a-z]{3}$"},
            ],
            "items": False,
            "minItems": 4,
        },
    },
)


@dataclass(frozen=True)
class FieldStats:
    """One transformed field of one subset: texts (with repeats), distinct texts, characters, script."""

    texts: int
    unique: int
    chars: int
    script: str  # ISO 15924, e.g. Latn, Jpan


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset: the facts every source carries (`info`: name, task type, splits, pin, subsets), and
    what the table alone says: how mteb evaluates it, its licence and citation (ROW_MODEL's columns)."""

    info: DatasetInfo
    main_score: str  # mteb's main score
    evaluation: Settings  # mteb's evaluation settings of its task class
    paper_languages: tuple[str, ...] = ()
    english: bool = True
    registry: bool = True
    local: str | None = None
    sample: int | None = None  # its place in the CPU profile's sample (None: not in it)
    fast_loading: bool = False
    renames: Mapping[str, str] = field(default_factory=dict)
    license: str | None = None  # None: stated nowhere
    release_license: SourceLicense | None = None
    citation: str | None = None
    release_citation: str | None = None
    hub_task_ids: tuple[str, ...] = ()
    stats: Mapping[str, tuple[FieldStats, ...]] | None = None  # eval split's subset -> transformed fields

    @classmethod
    def from_info(cls, info: DatasetInfo, *, local: str) -> DatasetSpec:
        """The spec of a source folder no row names, from its dataset.json and rows (no licence, no
        citation, its task type's defaults)."""
        kind = task_type(info.task_type)
        return cls(
            info,
            kind.mteb_main_score,
            kind.evaluation({}, what=info.name),
            paper_languages=info.languages,
            local=local,
        )

    @property
    def name(self) -> str:
        """the dataset's name inside a revision"""
        return self.info.name

    @property
    def task_type(self) -> str:
        return self.info.task_type

    @property
    def eval_split(self) -> str:
        return self.info.eval_split

    @property
    def train_split(self) -> str | None:
        return self.info.train_split

    @property
    def subsets(self) -> Subsets:
        """mteb hf_subset -> the language of each text position (ISO 639-3)"""
        return self.info.subsets

    @property
    def mteb_task(self) -> str | None:
        return self.info.mteb_task

    @property
    def hf_path(self) -> str | None:
        return self.info.hf_path

    @property
    def hf_revision(self) -> str | None:
        return self.info.hf_revision

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


def hub_license(mteb_license: str) -> str:
    """mteb's licence string as a Hub licence id, as mteb maps it for its own dataset cards.

    >>> hub_license("not specified"), hub_license("https://www.biorxiv.org/content/about-biorxiv"), hub_license("mit")
    ('unknown', 'other', 'mit')
    """
    if mteb_license == "not specified":
        return UNKNOWN_LICENSE
    return OTHER_LICENSE if mteb_license.startswith("http") else mteb_license


def _spec(row: dict[str, Any]) -> DatasetSpec:
    """A row the schema accepted, typed (the task type's main score and settings where it states none)."""
    name, kind = row["name"], task_type(row["task_type"])  # an unknown task type: one line naming the known ones
    release, stats = row.get("release_license"), row.get("stats")
    subsets = {s: tuple(codes) for s, codes in row["subsets"].items()}
    info = DatasetInfo(
        name=name,
        task_type=row["task_type"],
        eval_split=row["eval_split"],
        languages=tuple(sorted({code for codes in subsets.values() for code in codes})),
        train_split=row.get("train_split"),
        mteb_task=row.get("mteb_task"),
        hf_path=row.get("hf_path"),
        hf_revision=row.get("hf_revision"),
        subsets=subsets,
    )
    return DatasetSpec(
        info,
        row.get("main_score") or kind.mteb_main_score,
        kind.evaluation(row.get("evaluation", {}), what="evaluation"),
        paper_languages=tuple(row.get("paper_languages", ())),
        english=row.get("english", True),
        registry=row.get("registry", True),
        local=row.get("local"),
        sample=row.get("sample"),
        fast_loading=row.get("fast_loading", False),
        renames=dict(row.get("renames", {})),
        license=row.get("license"),
        release_license=None if release is None else SourceLicense(name, *(release[k] for k in ("id", "name", "link"))),
        citation=row.get("citation"),
        release_citation=row.get("release_citation"),
        hub_task_ids=tuple(row.get("hub_task_ids", ())),
        stats=None if stats is None else {s: tuple(FieldStats(*f) for f in fs) for s, fs in stats.items()},
    )


def _check_agree(specs: list[DatasetSpec], where: str) -> None:
    """Names and places in the sample are unique, and rows naming one mteb task evaluate it alike (the scorer
    reads it by task)."""
    seen: dict[str, DatasetSpec] = {}
    by_task: dict[str, DatasetSpec] = {}
    placed: dict[int, DatasetSpec] = {}
    for spec in specs:
        if spec.name in seen:
            raise ContractError(f"{where}: dataset {spec.name!r} has two rows")
        seen[spec.name] = spec
        if spec.sample is not None and placed.setdefault(spec.sample, spec) is not spec:
            raise ContractError(
                f"{where}: rows {placed[spec.sample].name!r} and {spec.name!r} both take place {spec.sample} of the sample"
            )
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
    return parse_dataset_rows(yaml_input.read(Path(path)), where)


def parse_dataset_rows(rows: Any, where: str) -> tuple[DatasetSpec, ...]:
    """Rows as the table states them (the packaged file's, or those a revision's `specs` block recorded), checked
    against the table's JSON Schema and each other; a bad row is a one-line ContractError naming `where`."""
    TABLE_FILE.check(rows, where)
    specs = []
    for index, row in enumerate(rows):
        try:
            specs.append(_spec(row))
        except HtebError as err:
            raise ContractError(f"{where}: row {index + 1} ({row['name']}): {err}") from None
    _check_agree(specs, where)
    return tuple(specs)


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
