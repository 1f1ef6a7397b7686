"""Work units and their merge: a scoring run is a set of (model, dataset) units; each can run alone
(`hteb-score MODEL --part DATASETS`) and write a `ScorePart`, and `merge_parts` joins parts into the
one run they belong to, from which the card and every output are written exactly as a single run
writes them (a single run is itself the merge of its one part: report/card/run_outputs.py).

A part holds, per dataset, everything the card and the statistics are built from (score records,
evaluator results for the mteb files, drift rows, error-policy counts, flags, evaluation settings),
and the `identity` of what it scored: the revision (store, label, content hash), the planned datasets
of the whole run, the protocol, the model and how it encoded (backend, precision, ...), the
selection (preset, --min-judge, --on-error, transformations, seeds) and the software. Parts whose
identities differ are refused in one line naming the first difference; a dataset given twice must
be identical; a planned dataset no part holds is flagged `missing_dataset`, never averaged away.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import math
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hteb_contract.common import json_input
from hteb_contract.common.atomic import atomic_write_text
from hteb_contract.errors import HtebError
from hteb_contract.validation import check_finite
from hteb_contract.taxonomy import RECORDED, Taxonomy
from hteb_score import __version__
from hteb_score.evaluators.base import TaskScore
from hteb_score.evaluators.outcomes import Outcomes
from hteb_score.flags import Flag
from hteb_score.scoring.coverage import Coverage
from hteb_score.scoring.error_policy import ErrorPolicyCount
from hteb_score.scoring.options import ScoreOptions
from hteb_score.scoring.part_checks import check_part, check_part_shape, check_timings
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.scoring.sensitivity import COLUMNS as SENSITIVITY_COLUMNS
from hteb_score.scoring.sensitivity import HARD_COLUMNS

if TYPE_CHECKING:  # for an annotation only: the run imports the encoder and every evaluator
    from hteb_score.scoring.run import ScoreRun

PART_FILE = "hteb_part.json"  # marks a folder as a part (cli/output.py's marker)
PART_SUFFIX = ".hteb_part.json.gz"  # a part as a repository keeps it: DATASET.hteb_part.json.gz (the findings rounds)
FORMAT = "hteb-score part/1"
#: a drift row's columns, its per-item measures (scoring/item_measures.py) last
DRIFT_COLUMNS = (
    "transformation",
    "drift",
    "quality",
    "edit_distance",
    "changed",
    "applicable",
    "language",
    "baseline_drift",
    "top10_changed",
    "order_discordance",
)
# identity fields that are unions over the parts, not compared: the prompts an mteb model gave each task,
# the prompt types a factory's encoder was given per task
UNION_FIELDS = (
    ("encode", "prompts"),
    ("model", "mteb", "prompts"),
    ("model", "python", "tasks"),
    # the planned datasets' languages, read off the revision: both are compared, so this one is not (a part of
    # another plan is named by its planned datasets, not by a language of a dataset the other did not plan)
    ("dataset", "languages"),
)
#: identity fields hteb-score records since a later version: a part written before lacks the key (never null),
#: which agrees with any value (the merged identity takes the recorded one), so its units still merge with
#: fresh ones of the same run (the noise-1339 parts carried to noise2-1339); a recorded value must agree
LATER_FIELDS = (
    ("model", "encoder"),
    ("model", "encoder_reason"),
    ("taxonomy",),
    ("dataset", "citation"),
    ("dataset", "languages"),
)
#: identity fields that are measurements of the engine where a unit ran, not settings: OpenVINO's or a lower
#: precision's largest difference from torch fp32 on the probe texts moves by ~1e-7 between machines (another
#: CPU's kernels) for the same model, backend, precision and packages. Not compared; the merged identity holds
#: the largest any part measured, so the card states the worst difference any of its units ran with.
MEASURED_FIELDS = (("encode", "max_diff_vs_torch_fp32"),)
TIMING_TOTAL = "total_s"
#: the packages whose versions a run records (its identity, and the card's `package_versions`)
PACKAGES = (
    "hteb-score",
    "sentence-transformers",
    "transformers",
    "torch",
    "numpy",
    "scipy",
    "scikit-learn",
    "faiss-cpu",
    "pytrec-eval-terrier",
    "datasets",
    "huggingface-hub",
)

VariantKey = tuple[str, str, "int | None"]  # (dataset, transformation, seed)


@dataclass(frozen=True)
class RunIdentity:
    """What parts of one run share: every setting that changes a score or what the card states, the
    weightiest first (a merge names the first difference). Its JSON is a part's `identity`, field by
    field in this order."""

    dataset: dict[str, Any]  # the data's provenance (the card's `dataset` block less its datasets)
    protocol: str
    model: dict[str, Any]  # the encoder's card_model()
    encode: dict[str, Any]  # the encoder's settings()
    on_error: str
    selection: dict[str, Any]  # {"preset", "min_judge"}
    transformations: list[str] | None
    seeds: list[int] | None
    corpus_robustness: bool
    planned: list[str]  # the datasets of the whole run, in its order
    hteb_score_version: str
    package_versions: dict[str, str]
    #: the part of the revision the run scores (datasets, transformations, seeds; `scoring.data.chosen_part`);
    #: a part written before it was recorded has none
    chosen: dict[str, Any] = field(default_factory=dict)
    #: the axes the revision states it was made by (`Taxonomy.to_json`); None for a revision made before the specs
    #: block, a dataset folder, or a part written before it was recorded (LATER_FIELDS: agrees with any)
    taxonomy: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["taxonomy"] is None:
            del data["taxonomy"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunIdentity:
        optional = ("chosen", "taxonomy")
        return cls(
            **{f.name: data[f.name] for f in fields(cls) if f.name not in optional},
            chosen=dict(data.get("chosen", {})),
            taxonomy=data.get("taxonomy"),
        )


@dataclass(frozen=True)
class UnitResult:
    """One dataset of a run, scored: what the card and the statistics need of it."""

    dataset: str
    task: dict[str, Any]  # DatasetInfo.to_json()
    settings: dict[str, Any] | None  # what its evaluator used (None: nothing was evaluated)
    scores: list[ScoreRecord]
    results: dict[VariantKey, TaskScore]
    drift: list[dict[str, Any]]
    error_policy: list[ErrorPolicyCount]
    flags: list[Flag]
    corpus_robustness: dict[str, Any] | None = None  # its block of the corpus-robustness section
    coverage: list[Coverage] = field(default_factory=list)  # per transformed variant: the subsets its figure rests on
    explorer: list[dict[str, Any]] = field(default_factory=list)  # its items in the explorer, with their texts
    #: its minimal pairs' item rows (scoring/sensitivity.py): stored only where it has some, so other parts read as before
    sensitivity: list[dict[str, Any]] = field(default_factory=list)
    #: its hard-twin rows (--hard-twins-from; scoring/hard_twins.py): stored only where it has some
    hard: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        rows = self.drift
        return {
            "dataset": self.dataset,
            "task": self.task,
            "settings": self.settings,
            "scores": [{**r.to_json(), "value": _number(r.value)} for r in self.scores],
            "results": [_result_json(variant, result) for variant, result in self.results.items()],
            "drift": {column: [row[column] for row in rows] for column in DRIFT_COLUMNS},
            "error_policy": [e.to_json() for e in self.error_policy],
            "flags": [f.to_json() for f in self.flags],
            "corpus_robustness": self.corpus_robustness,
            **({"coverage": [c.to_json() for c in self.coverage]} if self.coverage else {}),
            "explorer": self.explorer,
            **(
                {"sensitivity": {c: [row[c] for row in self.sensitivity] for c in SENSITIVITY_COLUMNS}}
                if self.sensitivity
                else {}
            ),
            **({"hard_twins": {c: [row[c] for row in self.hard] for c in HARD_COLUMNS}} if self.hard else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UnitResult:
        name = data["dataset"]
        columns = data["drift"]
        n = len(columns["drift"])
        keys = ("dataset", *DRIFT_COLUMNS)
        drift = [dict(zip(keys, row)) for row in zip([name] * n, *(columns.get(c, [None] * n) for c in DRIFT_COLUMNS))]
        return cls(
            name,
            dict(data["task"]),
            data["settings"],
            [ScoreRecord.from_json({**r, "value": _from_number(r["value"])}) for r in data["scores"]],
            dict(_result_from_json(r) for r in data["results"]),
            drift,
            [ErrorPolicyCount.from_json(e) for e in data["error_policy"]],
            [Flag(**f) for f in data["flags"]],
            data["corpus_robustness"],
            [Coverage.from_json(c) for c in data.get("coverage", ())],  # a part written before coverage has none
            list(data.get("explorer", [])),
            _sensitivity_rows(name, data.get("sensitivity")),
            _sensitivity_rows(name, data.get("hard_twins"), HARD_COLUMNS),
        )


def _sensitivity_rows(
    dataset: str, columns: Mapping[str, list[Any]] | None, names: Sequence[str] = SENSITIVITY_COLUMNS
) -> list[dict[str, Any]]:
    if not columns:
        return []
    n = len(columns["pair"])
    return [{"dataset": dataset, **dict(zip(names, row))} for row in zip(*(columns.get(c, [None] * n) for c in names))]


@dataclass(frozen=True)
class ScorePart:
    """Units of one run that share an identity, and the time they took (summed when merged)."""

    identity: RunIdentity
    units: list[UnitResult]
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def planned(self) -> list[str]:
        """The datasets of the whole run, in its order."""
        return list(self.identity.planned)

    @property
    def missing(self) -> list[str]:
        held = {u.dataset for u in self.units}
        return [name for name in self.planned if name not in held]

    def flags(self, extra: Sequence[Flag] = ()) -> list[Flag]:
        """Every unit's flags and `extra` (run-wide, e.g. reduced precision), dataset by dataset in
        the planned order: the same list whichever way the run was split."""
        order = {name: i for i, name in enumerate(self.planned)}
        found = [f for unit in self.units for f in unit.flags] + list(extra)
        found += [
            Flag(
                "missing_dataset",
                f"{name}: no work unit merged; not scored, left out of every aggregate and statistic",
                name,
            )
            for name in self.missing
        ]
        return sorted(found, key=lambda f: len(order) if f.dataset is None else order.get(f.dataset, len(order)))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "identity": self.identity.to_dict(),
            "units": [u.to_json() for u in self.units],
            "timings": self.timings,
        }

    def write(self, folder: Path) -> Path:
        """FOLDER/hteb_part.json, compact strict JSON written atomically, its keys in the run's order
        (the card lists settings and package versions in it)."""
        path = Path(folder) / PART_FILE
        data = self.to_json()
        check_finite(data, what="part")
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        atomic_write_text(path, text + "\n")
        return path


def read_part(path: Path) -> ScorePart:
    """A part written by `ScorePart.write`: its folder or the file, or that file gzipped (`*.gz`, how
    parts are kept in a repository: mostly drift rows, they shrink about sevenfold); anything else is a
    one-line error."""
    path = Path(path)
    file = path / PART_FILE if path.is_dir() else path
    if not file.is_file():
        raise HtebError(f"{path}: no {PART_FILE} (a folder written by hteb-score --part)")
    try:
        raw = file.read_bytes()
    except OSError as err:
        raise HtebError(f"{file}: not JSON ({err})") from None
    return parse_part(raw, str(file), gzipped=file.suffix == ".gz", checked_as=str(path))


def parse_part(raw: bytes, name: str, gzipped: bool, checked_as: str | None = None) -> ScorePart:
    """The part whose file's bytes are `raw` (gzipped or not), named `name` in its errors: a file on disk or
    a blob of a commit (a finished round's parts are read from the commit they left the tree at)."""
    try:
        raw = gzip.decompress(raw) if gzipped else raw
    except (OSError, EOFError) as err:
        raise HtebError(f"{name}: not JSON ({err})") from None
    data = json_input.loads(raw, name, HtebError)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise HtebError(f"{name}: not a part of this hteb-score (format {found!r}, expected {FORMAT!r})")
    check_timings(data.get("timings"), name)  # stated times, before they are read as floats
    check_part_shape(data, name)  # every field of its writer's type and shape, before any is read
    try:
        part = ScorePart(
            RunIdentity.from_dict(data["identity"]),
            [UnitResult.from_json(u) for u in data["units"]],
            {k: float(v) for k, v in data["timings"].items()},
        )
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as err:  # what the shape check missed
        raise HtebError(f"{name}: damaged part ({type(err).__name__}: {err})") from None
    check_part(part, checked_as or name)
    return part


def merge_parts(parts: Sequence[ScorePart], names: Sequence[str] | None = None) -> ScorePart:
    """One part of every unit, in the planned order: identities must agree (one line naming the
    first difference), a dataset held twice must be the same unit. `names`: what to call each part
    in an error (default: part 1, part 2, ...)."""
    if not parts:
        raise HtebError("merge: no parts given")
    names = list(names or (f"part {i + 1}" for i in range(len(parts))))
    identity = parts[0].identity
    made_by = identity.hteb_score_version
    if made_by != __version__:
        raise HtebError(f"{names[0]} was written by hteb-score {made_by}; this is {__version__}: score it again")
    for part, name in zip(parts[1:], names[1:]):
        differs = difference(identity.to_dict(), part.identity.to_dict())
        if differs is not None:
            raise HtebError(f"{names[0]} and {name} differ in {differs}: they are not parts of one run")
        identity = RunIdentity.from_dict(_union(identity.to_dict(), part.identity.to_dict()))
    held: dict[str, tuple[UnitResult, str]] = {}
    timings: dict[str, float] = {}
    for part, name in zip(parts, names):
        fresh = False
        for unit in part.units:
            if unit.dataset not in identity.planned:
                raise HtebError(f"{name}: dataset {unit.dataset} is not one of its run's planned datasets")
            if unit.dataset in held:
                first, where = held[unit.dataset]
                if unit.to_json() != first.to_json():
                    raise HtebError(
                        f"{where} and {name} both hold {unit.dataset} with different results; give one of them"
                    )
                continue
            held[unit.dataset] = (unit, name)
            fresh = True
        if fresh:  # a part wholly given before adds no time
            for key, value in part.timings.items():
                timings[key] = timings.get(key, 0.0) + value
    units = [held[d][0] for d in identity.planned if d in held]
    return ScorePart(identity, units, timings)


def read_parts(paths: Iterable[Path], datasets: Sequence[str] | None = None) -> ScorePart:
    """The parts at `paths`, merged; narrowed to `datasets` when given (see `narrowed`)."""
    paths = list(paths)
    parts, names = [read_part(p) for p in paths], [str(p) for p in paths]
    if datasets is not None:
        if not datasets:
            raise HtebError("merge --datasets: no dataset named")
        kept = [(narrowed(part, datasets, name), name) for part, name in zip(parts, names)]
        kept = [(part, name) for part, name in kept if part.units]
        if not kept:
            raise HtebError(f"merge --datasets: no part holds any of {', '.join(datasets)}")
        parts, names = [part for part, _ in kept], [name for _, name in kept]
    return merge_parts(parts, names)


def narrowed(part: ScorePart, datasets: Sequence[str], name: str) -> ScorePart:
    """`part` as a part of the run over `datasets` (in that order) instead of its own plan: what
    `hteb-score --datasets` scoring them plans, so parts of a whole-revision run also make the card of
    any subset of it. A dataset folder run cannot be narrowed: its identity digests its whole plan."""
    unknown = [d for d in datasets if d not in part.planned]
    if unknown:
        raise HtebError(
            f"merge --datasets {unknown[0]}: not one of {name}'s planned datasets: {', '.join(part.planned)}"
        )
    if str(part.identity.dataset.get("repo_id", "")).startswith("local:"):
        raise HtebError(
            f"merge --datasets: {name} scored dataset folders, whose digest covers its whole plan; "
            "score the folders you want with --datasets instead"
        )
    identity = replace(part.identity, planned=list(datasets))
    if identity.chosen and set(datasets) != set(part.planned):  # the part of the revision (data.chosen_part)
        identity = replace(identity, chosen={**identity.chosen, "datasets": sorted(datasets)})
    return ScorePart(identity, [u for u in part.units if u.dataset in datasets], part.timings)


def difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two identities first differ ('model.identity: X vs Y'); None when they agree."""
    if any(path == ".".join(f) for f in (*UNION_FIELDS, *MEASURED_FIELDS)):
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            where = f"{path}.{key}" if path else key
            if (key not in a or key not in b) and any(where == ".".join(f) for f in LATER_FIELDS):
                continue
            found = difference(a.get(key), b.get(key), where)
            if found is not None:
                return found
        return None
    return None if a == b else f"{path}: {_short(a)} vs {_short(b)}"


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _union(a: dict[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """`a` with each UNION_FIELDS mapping of `b` added to its own (keys in first-seen order), each
    LATER_FIELDS value `a` lacks taken from `b`, and each MEASURED_FIELDS value the larger of the two."""
    out = json_input.plain(a)
    for *parent, key in MEASURED_FIELDS:
        mine, theirs = _at(out, parent), _at(b, parent)
        if isinstance(mine, dict) and isinstance(theirs, Mapping):
            measured = [v for v in (mine.get(key), theirs.get(key)) if v is not None]
            if measured:
                mine[key] = max(measured)
    for *parent, key in LATER_FIELDS:  # recorded by one part, absent from an earlier one's
        mine, theirs = _at(out, parent), _at(b, parent)
        if isinstance(mine, dict) and isinstance(theirs, Mapping) and key not in mine and key in theirs:
            mine[key] = theirs[key]
    for path in UNION_FIELDS:
        mine, theirs = _at(out, path), _at(b, path)
        if isinstance(mine, dict) and isinstance(theirs, Mapping):
            for key, value in theirs.items():
                if isinstance(value, Mapping) and isinstance(mine.get(key), dict):
                    mine[key].update(value)
                else:
                    mine.setdefault(key, value)
    return out


def _at(data: Any, path: Sequence[str]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data


def _number(value: float | int | None) -> float | str | None:
    """A score as strict JSON: a non-finite value as its name ('nan', 'inf'), read back exactly."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else str(value)


def _from_number(value: float | str | None) -> float | None:
    return None if value is None else float(value)


def _result_json(variant: VariantKey, result: TaskScore) -> dict[str, Any]:
    """What the mteb result files read of an evaluator's result (numeric details only, as they do) and
    its per-item outcomes, column by column."""
    dataset, transformation, seed = variant
    outcomes = result.outcomes
    return {
        "dataset": dataset,
        "transformation": transformation,
        "seed": seed,
        "main_metric": result.main_metric,
        "value": _number(result.value),
        "subsets": {k: _number(v) for k, v in result.subsets.items()},
        "details": {
            subset: {k: _number(v) for k, v in metrics.items() if isinstance(v, (int, float))}
            for subset, metrics in result.details.items()
        },
        "outcomes": None if outcomes is None else asdict(outcomes),
    }


def _result_from_json(data: Mapping[str, Any]) -> tuple[VariantKey, TaskScore]:
    found = data.get("outcomes")  # a part written before outcomes has none
    outcomes = (
        None
        if found is None
        else Outcomes(
            found["measure"],
            tuple(found["subset"]),
            tuple(found["item"]),
            tuple(found["gold"]),
            tuple(found["predicted"]),
        )
    )
    result = TaskScore(
        data["main_metric"],
        {k: _from_number(v) for k, v in data["subsets"].items()},
        _from_number(data["value"]),
        {
            subset: {k: float(v) for k, v in metrics.items()}  # written from numbers only
            for subset, metrics in data["details"].items()
        },
        {},
        outcomes=outcomes,
    )
    return (data["dataset"], data["transformation"], data["seed"]), result


def package_versions() -> dict[str, str]:
    """The installed versions of PACKAGES in this process (a Ray worker's own, on its node)."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def scored_elsewhere(identity: RunIdentity, packages: Mapping[str, str]) -> str | None:
    """Where the environment `identity` was scored under (hteb-score's version, its package versions) differs
    from this hteb-score's with `packages` ('package_versions.X: A vs B'), as `merge_parts` compares them; None
    when they agree. One answer for the two places that foresee merge's refusal: `check_joins` and a resumed
    run of units (`cli/unit_run.py`)."""
    theirs = {"hteb_score_version": identity.hteb_score_version, "package_versions": identity.package_versions}
    here = {"hteb_score_version": __version__, "package_versions": dict(packages)}
    return difference(theirs, here)


def check_joins(folder: Path) -> None:
    """Refuse, before a unit is scored, to add a part to `folder`'s parts (FILE.hteb_part.json.gz or
    PART/hteb_part.json; none is fine) that `merge_parts` would refuse afterwards for what this environment
    decides: its hteb-score or a package version (a resumed run on a machine whose install took another
    release)."""
    folder = Path(folder)
    if not folder.is_dir():
        if folder.exists():
            raise HtebError(f"--joins {folder}: not a folder of parts")
        return
    found = sorted([*folder.glob(f"*{PART_SUFFIX}"), *(p.parent for p in folder.glob(f"*/{PART_FILE}"))])
    here = package_versions()
    for path in found:
        identity = read_part(path).identity
        differs = scored_elsewhere(identity, here)
        if differs is not None:
            raise HtebError(
                f"--joins {folder}: {path.name} was scored under another environment ({differs}, its vs this "
                "one's): merge would refuse this part beside it; score that part again here, or "
                + _to_have(identity, here)
            )


def _to_have(identity: RunIdentity, here: Mapping[str, str]) -> str:
    """What makes this environment (its package versions `here`) the one `identity` was scored under: the
    hteb-score it had, the exact pip install of the package versions it had, or the uninstall of a recorded
    package it lacked."""
    if identity.hteb_score_version != __version__:
        return f"use hteb-score {identity.hteb_score_version}, which scored it"
    theirs = identity.package_versions
    pins = [f"{name}=={version}" for name, version in theirs.items() if here.get(name) != version]
    if pins:
        return f"install what it had: pip install {' '.join(map(shlex.quote, pins))}"
    return f"uninstall what it lacked: pip uninstall {' '.join(sorted(set(here) - set(theirs)))}"


def run_identity(
    options: ScoreOptions,
    planned: Sequence[str],
    provenance: Mapping[str, Any],
    model: Mapping[str, Any],
    encode: Mapping[str, Any],
    packages: Mapping[str, str],
    *,
    chosen: Mapping[str, Any],
    taxonomy: Taxonomy,
) -> RunIdentity:
    """The identity of the run `options` describe, its data's `provenance`, its model and encoding;
    `chosen`: the part of the revision the run scores (`scoring.data.chosen_part`, what the options and
    the plan come to), which the card's selection states beside --preset and --min-judge."""
    return RunIdentity(
        {k: v for k, v in provenance.items() if k != "datasets"},
        options.protocol.name,
        dict(model),
        dict(encode),
        options.on_error,
        {"preset": options.preset, "min_judge": options.min_judge},
        options.transformations,
        options.seeds,
        options.corpus_robustness,
        list(planned),
        __version__,
        dict(packages),
        dict(chosen),
        taxonomy.to_json() if taxonomy.source == RECORDED else None,
    )


def units_of_run(
    run: ScoreRun,
    tasks: Mapping[str, Mapping[str, Any]],
    error_policy: Sequence[ErrorPolicyCount],
    corpus_robustness: Mapping[str, Any] | None,
) -> list[UnitResult]:
    """A scoring run split into its datasets' units, in the run's order."""
    units = []
    for name, task in tasks.items():
        units.append(
            UnitResult(
                name,
                dict(task),
                run.settings.get(name),
                [r for r in run.scores if r.dataset == name],
                {v: r for v, r in run.results.items() if v[0] == name},
                [row for row in run.drift if row["dataset"] == name],
                [e for e in error_policy if e.dataset == name],
                [f for f in run.flags if f.dataset == name],
                None if corpus_robustness is None else corpus_robustness.get("datasets", {}).get(name),
                [c for c in run.coverage if c.dataset == name],
                [row for row in run.explorer if row["dataset"] == name],
                [row for row in run.sensitivity if row["dataset"] == name],
                [row for row in run.hard if row["dataset"] == name],
            )
        )
    return units
