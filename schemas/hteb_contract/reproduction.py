"""Does a regenerated revision reproduce a published one?

A revision's identity is its content hash: every byte of every file but manifest.json
(`revision.content_hash`). Two runs of one configuration on different machines write identical
texts (seeded generation, cached calls) but may not write identical judge numbers: ParaPLUIE is a
difference of two next-token log-probabilities, rounded to 3 decimals, and another CPU or GPU
computes those log-probabilities a few ulps apart, which can move a value across a rounding step.
So "reproduces" is weaker than "is": the same configuration, byte-identical source files and, record
by record, every field identical except the judge's numbers, which may differ by at most
`PARAPLUIE_TOLERANCE` (two rounding steps) and `RATING_TOLERANCE` (quality and fluency are integer
ratings: by default they must be equal). Not compared: what describes a run rather than its data
(`created`, `runtime`, `counters`, `repo_id`) and the dataset card, which is written from the
records and the configuration only.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .records import ItemRecord
from .revision import Revision

PARAPLUIE_TOLERANCE = 0.002
RATING_TOLERANCE = 0.0
MANIFEST_FIELDS = ("config_hash", "config", "transformations", "seeds", "generator", "judge")
KEPT = 20  # differences listed in a report; the rest are counted


@dataclass(frozen=True)
class Difference:
    """One thing the candidate has otherwise than the reference."""

    where: str  # "manifest", "source/<Dataset>/<file>" or "<Dataset> <transformation>_<seed> <table>/<item>/<field>"
    what: str  # the field
    candidate: Any
    reference: Any


@dataclass
class Reproduction:
    """The comparison's result: counts, tolerances and the first differences."""

    candidate: str
    reference: str
    parapluie_tolerance: float
    rating_tolerance: float
    records: int = 0
    identical: int = 0
    judge_within_tolerance: int = 0
    differing: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.differing == 0

    def add(self, difference: Difference) -> None:
        self.differing += 1
        if len(self.differences) < KEPT:
            self.differences.append(difference)

    def summary(self) -> str:
        """One line: the verdict and the counts."""
        verdict = "reproduces" if self.reproduced else "does NOT reproduce"
        return (f"{self.candidate} {verdict} {self.reference}: {self.records} records, {self.identical} identical, "
                f"{self.judge_within_tolerance} with judge scores within tolerance (ParaPLUIE ±"
                f"{self.parapluie_tolerance:g}, ratings ±{self.rating_tolerance:g}), {self.differing} differences")

    def lines(self) -> list[str]:
        """The summary, then one line per listed difference."""
        out = [self.summary()]
        out += [f"  {d.where}: {d.what}: {d.candidate!r} here, {d.reference!r} in the reference"
                for d in self.differences]
        if self.differing > len(self.differences):
            out.append(f"  ... and {self.differing - len(self.differences)} more")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reproduced": self.reproduced}


def _key(record: ItemRecord) -> tuple[Any, ...]:
    return (record.dataset, record.transformation, record.seed, record.subset, record.split, record.item_id,
            record.field)


def _where(record: ItemRecord) -> str:
    return (f"{record.dataset} {record.transformation}_{record.seed} "
            f"{record.split}/{record.item_id}/{record.field}")


def _records(revision: Revision) -> Iterator[ItemRecord]:
    for name in revision.dataset_names():
        for transformation, seed in revision.variants(name):
            yield from revision.items(name, transformation, seed)


def _within(a: float | None, b: float | None, tolerance: float) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=0.0, abs_tol=tolerance + 1e-9)


def _compare_record(ours: ItemRecord, theirs: ItemRecord, report: Reproduction) -> None:
    where = _where(ours)
    for f in fields(ItemRecord):
        if f.name != "judge" and getattr(ours, f.name) != getattr(theirs, f.name):
            report.add(Difference(where, f.name, getattr(ours, f.name), getattr(theirs, f.name)))
            return
    if ours.judge == theirs.judge:
        report.identical += 1
        return
    tolerances = {"model": None, "quality": report.rating_tolerance, "fluency": report.rating_tolerance,
                  "parapluie": report.parapluie_tolerance}
    for name, tolerance in tolerances.items():
        a, b = getattr(ours.judge, name), getattr(theirs.judge, name)
        if a != b and (tolerance is None or not _within(a, b, tolerance)):
            report.add(Difference(where, f"judge.{name}", a, b))
            return
    report.judge_within_tolerance += 1


def compare_revisions(candidate: Revision, reference: Revision, *, parapluie_tolerance: float = PARAPLUIE_TOLERANCE,
                      rating_tolerance: float = RATING_TOLERANCE) -> Reproduction:
    """Compare `candidate` with `reference` under the rules of this module's docstring."""
    report = Reproduction(f"{candidate.label} ({candidate.manifest['content_hash'][:12]})",
                          f"{reference.label} ({reference.manifest['content_hash'][:12]})",
                          parapluie_tolerance, rating_tolerance)
    for name in MANIFEST_FIELDS:
        if candidate.manifest.get(name) != reference.manifest.get(name):
            report.add(Difference("manifest", name, candidate.manifest.get(name), reference.manifest.get(name)))
    sources = {
        label: {f["path"]: f["sha256"] for f in revision.manifest["files"] if f["path"].startswith("source/")}
        for label, revision in (("candidate", candidate), ("reference", reference))
    }
    for path in sorted(sources["candidate"].keys() | sources["reference"].keys()):
        ours, theirs = sources["candidate"].get(path), sources["reference"].get(path)
        if ours != theirs:
            report.add(Difference(path, "sha256", ours, theirs))
    theirs_by_key = {_key(r): r for r in _records(reference)}
    for record in _records(candidate):
        report.records += 1
        theirs = theirs_by_key.pop(_key(record), None)
        if theirs is None:
            report.add(Difference(_where(record), "record", "present", "absent"))
        else:
            _compare_record(record, theirs, report)
    for record in theirs_by_key.values():
        report.add(Difference(_where(record), "record", "absent", "present"))
    return report
