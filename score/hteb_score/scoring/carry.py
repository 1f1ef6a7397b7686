"""A scored work unit carried to a newer revision whose texts for that dataset are the same: a new
revision that changes a few datasets (noise rules version 2 changes SemRel2024 and MasakhaNEWS, not
the English sets) needs only those scored again.

Why "the same" is checked on what the scorer reads, not on file bytes: a newer generator writes
other bytes for the same texts (each record names the rules' hash), so the item files differ while
every source file, every variant and every text, error and judge score the scorer reads are equal.
`scored_digest` hashes exactly that; a unit is carried only when the digests of both revisions agree,
and it is flagged `carried_from_revision` in every card built from it. Its coverage (what each figure rests
on) is the new revision's, as scoring it there gives; a unit whose figures would rest on other subsets
there than those it was scored on (a part scored before coverage, on a non-Latin subset) is refused."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from hteb_contract.citations import bibliography
from hteb_contract.errors import HtebError
from hteb_contract.revision import Revision, dataset_of
from hteb_contract.revision.manifest import source_languages
from hteb_contract.taxonomy import of_manifest

from hteb_score.flags import Flag
from hteb_score.scoring.coverage import Coverage, revision_shares, variant_coverage
from hteb_score.scoring.parts import RunIdentity, ScorePart, UnitResult


def scored_digest(revision: Revision, name: str) -> str:
    """sha256 of what scoring reads of dataset `name`: its source entry and source files, and per
    variant (queries and, where perturbed, corpus) each record's place, texts, errors and judge scores."""
    digest = hashlib.sha256()

    def add(value: Any) -> None:
        digest.update(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8") + b"\n")

    entry = next(s for s in revision.manifest["sources"] if s["name"] == name)
    add({k: v for k, v in entry.items() if k != "origin"})  # where the generator read it from is not content
    add(sorted((f["path"], f["sha256"]) for f in revision.manifest["files"] if f["path"].startswith(f"source/{name}/")))
    for transformation, seed in revision.variants(name):
        columns = revision.item_columns(name, transformation, seed)
        add(
            [
                transformation,
                seed,
                columns.refs(),
                columns.original_text,
                columns.transformed_text,
                columns.with_errors,
                columns.quality,
                columns.fluency,
            ]
        )
    for transformation, seed in revision.corpus_variants(name):
        records = revision.corpus_items(name, transformation, seed)
        add(["corpus", transformation, seed, [(r.ref, r.original_text, r.transformed_text) for r in records]])
    return digest.hexdigest()


#: the flags a unit's coverage raises (`Coverage.flags`), made again from the new revision's coverage
COVERAGE_FLAGS = ("mostly_unchanged", "subsets_left_out")


def unit_coverage(revision: Revision, name: str, identity: RunIdentity) -> list[Coverage]:
    """Each transformed variant's coverage of dataset `name` in `revision` that the run scores, as
    `scoring.run` finds it."""
    found = []
    taxonomy = of_manifest(revision.manifest)
    for transformation, seed in revision.variants(name):
        if (identity.transformations is not None and transformation not in identity.transformations) or (
            identity.seeds is not None and seed not in identity.seeds
        ):
            continue
        shares, recorded = revision_shares(revision.manifest, revision.item_columns(name, transformation, seed))
        found.append(
            variant_coverage(
                name,
                transformation,
                seed,
                shares,
                identity.protocol,
                axis=taxonomy.axis_of(transformation),
                recorded=recorded,
            )
        )
    return found


def check_rebuilt(scored: Mapping[str, Any], old: Revision, names: Sequence[str], name: str) -> None:
    """`old` holds, for each dataset of `names`, the very files of the revision whose manifest is `scored`
    (the one a part was scored on, rebuilt: `reproduce` rebuilds a revision whose dataset card has since
    changed, so its content hash differs while its data files do not)."""

    def files(entries: Sequence[Mapping[str, Any]]) -> dict[str, str]:
        return {e["path"]: e["sha256"] for e in entries if dataset_of(e["path"]) in names}

    want, have = files(scored["files"]), files(old.manifest["files"])
    for path in sorted(want.keys() | have.keys()):
        if want.get(path) != have.get(path):
            raise HtebError(
                f"{name}: {old.label} ({old.revision_id[:12]}) does not hold the data the part was scored "
                f"on ({scored['label']}, {scored['content_hash'][:12]}): file {path} differs"
            )


def carry_part(
    part: ScorePart, old: Revision, new: Revision, store: str, name: str, scored: Mapping[str, Any] | None = None
) -> ScorePart:
    """`part` (scored on `old`, or on the revision whose manifest is `scored` when `old` rebuilds its data)
    as the part of the same run on `new` (fetched from `store`): refused in one line naming the first unit
    whose data differ, or a plan the new revision does not hold."""
    scored_on = part.identity.dataset.get("revision")
    if scored_on != old.revision_id:
        if scored is None or scored.get("content_hash") != scored_on:
            raise HtebError(
                f"{name} was scored on revision {scored_on}, not on {old.label} ({old.revision_id}); "
                "where that one rebuilds its data, give its manifest (--scored-manifest)"
            )
        check_rebuilt(scored, old, [u.dataset for u in part.units], name)
    absent = [d for d in part.planned if d not in new.dataset_names()]
    if absent:
        raise HtebError(f"{name}: revision {new.label} has no dataset {absent[0]!r} of the part's plan")
    units: list[UnitResult] = []
    for unit in part.units:
        before, after = scored_digest(old, unit.dataset), scored_digest(new, unit.dataset)
        if before != after:
            raise HtebError(
                f"{name}: {unit.dataset}'s texts differ between {old.label} and {new.label} "
                f"(scored content {before[:12]} vs {after[:12]}): score it again on {new.label}"
            )
        coverage = unit_coverage(new, unit.dataset, part.identity)
        scored_on_fewer = {(c.transformation, c.seed): c.left_out for c in unit.coverage}
        narrowed = [c for c in coverage if c.left_out and scored_on_fewer.get((c.transformation, c.seed)) != c.left_out]
        if narrowed:  # its figure would be another one (scoring.coverage.adjusted_value)
            c = narrowed[0]
            raise HtebError(
                f"{name}: on {new.label}, {unit.dataset} {c.transformation}/{c.seed} rests on "
                f"{c.subsets_scored} of {c.subsets_total} subsets, not all it was scored on: score it again"
            )
        note = Flag(
            "carried_from_revision",
            f"{unit.dataset}: scored on {old.label} ({str(scored_on)[:12]}), "
            f"whose texts, errors and judge scores of it are those of this revision (scored content "
            f"{after[:12]})",
            unit.dataset,
        )
        own = [f for f in unit.flags if f.code not in COVERAGE_FLAGS]  # a part scored since coverage has them
        units.append(replace(unit, flags=[*own, *(f for c in coverage for f in c.flags()), note], coverage=coverage))
    dataset = {**part.identity.dataset, "repo_id": store, "label": new.label, "revision": new.revision_id}
    if "citation" in dataset:  # a part scored before the card recorded it stays without, as merged with its peers
        dataset["citation"] = bibliography(new.manifest, store)
    if "languages" in dataset:
        languages = source_languages(new.manifest)
        dataset["languages"] = {name: languages[name] for name in dataset["languages"] if name in languages}
    return ScorePart(replace(part.identity, dataset=dataset), units, part.timings)
