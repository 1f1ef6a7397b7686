"""Does one revision reproduce another? Texts compared exactly, judge numbers within a tolerance.

A revision's identity is its content hash (`revision.content_hash`): every byte of every file
but manifest.json. Two machines that compute the same texts can still disagree in the last bits
of a log-probability (other CPU kernels, BLAS, thread counts, GPU batch shapes), and a ParaPLUIE
value published to 3 decimals then falls on the other side of a rounding step: same texts,
another content hash. A label never moves, so such a regeneration is not the published revision;
it *reproduces* it when `compare_revisions` finds:

- every source file (`source/...`, and any other file but the two below) byte-identical;
- the same item records, matched on (dataset, transformation, seed, split, item_id, field,
  subset), none missing and none extra, every field identical (texts, attempts, errors, models,
  prompts, sampling) except the judge's numbers: ParaPLUIE within `Tolerance.parapluie`
  (default 0.002: two 3-decimal rounding steps, i.e. a last-bits difference of a
  log p(yes) - log p(no) that happened to straddle a rounding boundary; a different model,
  prompt or template moves it by far more) and the 1-5 quality and fluency ratings within
  `Tolerance.rating` (default 0: they are parsed from greedy text, which must be identical);
- the manifest's description of the content identical (config and its hash, sources, seeds,
  transformations, generator and judge models, revisions and prompt sets), a field that an older
  revision lacks read as its stated default (`revision.MANIFEST_DEFAULTS`).

Not compared: manifest.json's fields that describe the machine or the run (`NOT_COMPARED`), the
data files' bytes (their records are compared instead), and the dataset card README.md, which is
derived from the records and the config (its judge summaries move with the judge numbers).

Use: `compare_revisions(Revision.open(ours), store.fetch("sample-1339")).render()`, or from the
shell `hteb-generate reproduce --store S --revision R [--candidate DIR]`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from hteb_contract.errors import HtebError
from hteb_contract.records import ItemRecord
from hteb_contract.revision import CARD, EVAL, MANIFEST, Revision, with_defaults
from hteb_contract.validation import SCHEMA_VERSIONS, validate

#: Manifest fields that describe the machine or the run, not the content (why, for the report).
NOT_COMPARED: dict[str, str] = {
    "created": "when the run started",
    "runtime": "the machine: software versions, GPUs",
    "counters": "LLM calls and cache hits of this run; the rest is derived from the records",
    "change_shares": "derived from the records, which are compared",
    "repo_id": "where it is published",
    "label": "a name, not content",
    "hteb_generate_version": "the program; what it made is compared",
    "files": "file hashes: the records and source files are compared instead",
    "content_hash": "the identity this comparison replaces",
    "schema_version": "the format; the records are read through it",
}
NOT_COMPARED_FILES = {
    CARD: "the dataset card, derived from the records and the config",
    EVAL: "the benchmark's task ids, derived from the label and the datasets",
}
ABSENT = "(absent)"
KEY_FIELDS = ("dataset", "transformation", "seed", "split", "item_id", "field", "subset")


@dataclass(frozen=True)
class Tolerance:
    """How far a judge number may move and still reproduce (absolute, in the value's own unit)."""

    parapluie: float = 0.002
    rating: float = 0.0

    def __post_init__(self) -> None:
        if self.parapluie < 0 or self.rating < 0:
            raise HtebError(f"tolerances must be >= 0, got ParaPLUIE {self.parapluie}, rating {self.rating}")

    def describe(self) -> str:
        return f"ParaPLUIE ±{self.parapluie:g}, ratings ±{self.rating:g}"

    def of(self, what: str) -> float | None:
        """The tolerance of a record field (`judge.parapluie`, ...); None: compared exactly."""
        pick = _JUDGE_TOLERANCES.get(what)
        return None if pick is None else pick(self)


_JUDGE_TOLERANCES = {
    "judge.parapluie": lambda t: t.parapluie,
    "judge.quality": lambda t: t.rating,
    "judge.fluency": lambda t: t.rating,
}


@dataclass(frozen=True)
class Difference:
    """One thing that does not reproduce: where (dataset/transformation/seed/split/item_id/field/subset
    for a record, a file path, or `manifest`), what (the field) and both values."""

    where: str
    what: str
    ours: Any
    theirs: Any

    def render(self) -> str:
        return f"{self.where}: {self.what}: ours {_short(self.ours)}, theirs {_short(self.theirs)}"


@dataclass(frozen=True)
class ReproductionReport:
    """The comparison of a candidate revision (ours) with a reference one (theirs)."""

    candidate: dict[str, str]  # label, content_hash, revision_id
    reference: dict[str, str]
    tolerance: Tolerance
    records_compared: int  # records present on both sides
    identical: int
    within_tolerance: int  # records whose only differences are judge numbers within the tolerance
    judge_values_within_tolerance: int
    differing: int  # records with a difference beyond the tolerance
    missing: int  # records of the reference that the candidate lacks
    extra: int  # records of the candidate that the reference lacks
    files_compared: int  # source files on both sides
    differences_total: int
    differences: tuple[Difference, ...] = field(default_factory=tuple)  # the first ones, bounded

    @property
    def reproduced(self) -> bool:
        return self.differences_total == 0

    def first(self, n: int = 3) -> str:
        """The first `n` differences on one line (for an error message)."""
        shown = "; ".join(d.render() for d in self.differences[:n])
        more = self.differences_total - min(n, len(self.differences))
        return shown + (f"; and {more} more" if more else "")

    def render(self) -> str:
        """A few plain lines: the verdict, the counts, what was not compared, the differences listed."""
        ref, cand = self.reference, self.candidate
        verdict = "reproduced" if self.reproduced else "NOT reproduced"
        lines = [
            f"{ref['label']} ({ref['content_hash'][:12]}) {verdict} by {cand['label']} ({cand['content_hash'][:12]}); "
            f"texts compared exactly, {self.tolerance.describe()}",
            f"records: {self.records_compared} compared: {self.identical} identical, {self.within_tolerance} within "
            f"tolerance ({self.judge_values_within_tolerance} judge values), {self.differing} differing; "
            f"{self.missing} missing, {self.extra} extra",
            f"source files: {self.files_compared} compared",
            "not compared: "
            + "; ".join(f"{name} ({why})" for name, why in NOT_COMPARED_FILES.items())
            + "; manifest "
            + ", ".join(NOT_COMPARED),
        ]
        if self.differences_total:
            lines.append(f"differences (first {len(self.differences)} of {self.differences_total}):")
            lines += [f"  {d.render()}" for d in self.differences]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON (schema `hteb.reproduction/1`)."""
        data = {
            "schema_version": SCHEMA_VERSIONS["reproduction"],
            "reproduced": self.reproduced,
            **asdict(self),
            "not_compared": {**NOT_COMPARED_FILES, **{f"manifest.{k}": why for k, why in NOT_COMPARED.items()}},
        }
        data["differences"] = [asdict(d) for d in self.differences]
        validate("reproduction", data, what="reproduction report")
        return data


def compare_revisions(
    ours: Revision, theirs: Revision, tolerance: Tolerance = Tolerance(), *, limit: int = 50
) -> ReproductionReport:
    """Compare a candidate revision with a reference one under `tolerance`; at most `limit`
    differences are listed (all are counted)."""
    found = _Collector(limit)
    for what, a, b in _leaves_compared(described(ours.manifest), described(theirs.manifest)):
        found.add(Difference("manifest", what, a, b))
    mine, others = _compared_files(ours), _compared_files(theirs)
    for path in sorted(mine.keys() | others.keys()):
        if mine.get(path) != others.get(path):
            found.add(Difference(path, "sha256", mine.get(path, ABSENT), others.get(path, ABSENT)))
    counts = dict.fromkeys(
        (
            "records_compared",
            "identical",
            "within_tolerance",
            "judge_values_within_tolerance",
            "differing",
            "missing",
            "extra",
        ),
        0,
    )
    for dataset, transformation, seed in sorted(_variants(ours) | _variants(theirs)):
        a, b = _records(ours, dataset, transformation, seed), _records(theirs, dataset, transformation, seed)
        for key in sorted(a.keys() | b.keys()):
            where = "/".join(str(part) for part in key)
            if key not in a or key not in b:
                counts["missing" if key in b else "extra"] += 1
                found.add(
                    Difference(where, "record", "present" if key in a else ABSENT, "present" if key in b else ABSENT)
                )
                continue
            counts["records_compared"] += 1
            within = 0
            beyond = []
            for what, x, y in _leaves_compared(a[key].to_row(), b[key].to_row()):
                if _within(x, y, tolerance.of(what)):
                    within += 1
                else:
                    beyond.append(Difference(where, what, x, y))
            counts["judge_values_within_tolerance"] += within
            counts["differing" if beyond else "within_tolerance" if within else "identical"] += 1
            for difference in beyond:
                found.add(difference)
    return ReproductionReport(
        candidate=_identity(ours),
        reference=_identity(theirs),
        tolerance=tolerance,
        **counts,
        files_compared=len(mine.keys() & others.keys()),
        differences_total=found.total,
        differences=tuple(found.listed),
    )


class _Collector:
    """Counts every difference, keeps the first `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total = limit, 0
        self.listed: list[Difference] = []

    def add(self, difference: Difference) -> None:
        self.total += 1
        if len(self.listed) < self.limit:
            self.listed.append(difference)


def _identity(revision: Revision) -> dict[str, str]:
    manifest = revision.manifest
    return {"label": manifest["label"], "content_hash": manifest["content_hash"], "revision_id": revision.revision_id}


def described(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest's description of the content: everything but `NOT_COMPARED`, a field that an older
    revision lacks read as its stated default (`revision.MANIFEST_DEFAULTS`)."""
    return {k: v for k, v in with_defaults(manifest).items() if k not in NOT_COMPARED}


def _compared_files(revision: Revision) -> dict[str, str]:
    """path -> sha256 of the files compared byte-wise: all but the manifest, the card and item files."""
    return {
        entry["path"]: entry["sha256"]
        for entry in revision.manifest["files"]
        if entry["path"] not in NOT_COMPARED_FILES
        and entry["path"] != MANIFEST
        and PurePosixPath(entry["path"]).parts[0] != "data"
    }


def _variants(revision: Revision) -> set[tuple[str, str, int]]:
    return {
        (name, transformation, seed)
        for name in revision.dataset_names()
        for transformation, seed in revision.variants(name)
    }


def _records(revision: Revision, dataset: str, transformation: str, seed: int) -> dict[tuple, ItemRecord]:
    if dataset not in revision.dataset_names() or (transformation, seed) not in revision.variants(dataset):
        return {}
    return {tuple(getattr(r, k) for k in KEY_FIELDS): r for r in revision.items(dataset, transformation, seed)}


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, leaf) of a JSON-like value: `judge.parapluie`, `attempts[1].steps[0]`."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        if not value:
            yield path, []
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def _leaves_compared(ours: Any, theirs: Any) -> Iterator[tuple[str, Any, Any]]:
    """(path, ours, theirs) of every leaf that is not equal on both sides, in ours' order then theirs'."""
    a, b = dict(_leaves(ours)), dict(_leaves(theirs))
    for path in [*a, *(p for p in b if p not in a)]:
        x, y = a.get(path, ABSENT), b.get(path, ABSENT)
        if x != y:
            yield path, x, y


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _within(ours: Any, theirs: Any, tolerance: float | None) -> bool:
    """A judge number within its tolerance (1e-9 absorbs float noise of 3-decimal values)."""
    return tolerance is not None and _numbers(ours, theirs) and abs(ours - theirs) <= tolerance + 1e-9


def _short(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
