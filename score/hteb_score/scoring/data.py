"""What a run scores, read and checked before the model loads: a revision's variants (or the
original data of dataset folders), the error-policy counts, the data's provenance for the card,
the perturbed corpora of --corpus-robustness and the flags the checks raised. Bad data is refused
here, before any model loads or text is embedded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hteb_contract.citations import bibliography
from hteb_contract.errors import HtebError, IntegrityError
from hteb_contract.item_columns import ItemColumns
from hteb_contract.revision import Revision
from hteb_contract.revision.manifest import source_languages
from hteb_contract.sources import DatasetInfo, SourceDataset, list_source_dirs, read_source_dir
from hteb_contract.stores import open_store
from hteb_contract.tasks import TextRef
from hteb_contract.taxonomy import BEFORE_SPECS, Taxonomy, minimal_pairs, of_manifest
from tqdm.auto import tqdm

from hteb_score.evaluators import EVALUATORS
from hteb_score.evaluators import task_settings
from hteb_score.evaluators.protocol import Protocol
from hteb_score.flags import Flag
from hteb_score.scoring.coverage import SubsetShare, revision_shares
from hteb_score.scoring.corpus_robustness import CorpusVariant, corpus_variants
from hteb_score.scoring.error_policy import ACTIONS, ErrorPolicyCount
from hteb_score.scoring.hard_twin_source import HardTwins, open_hard_twins
from hteb_score.scoring.options import ScoreOptions
from hteb_score.scoring.selection import PRESETS, judge_kept, judge_means, require_judge_scores


@dataclass
class RunData:
    """The data of one run: its variants dataset by dataset (read again whenever they are iterated),
    the error-policy counts, its provenance (the card's `dataset` block), the perturbed corpora
    (--corpus-robustness), what `check_variants` found, and the datasets of the whole run it is
    part of (`planned`: with --part, more than it scores)."""

    groups: DatasetGroups
    error_policy: list[ErrorPolicyCount]
    provenance: dict[str, Any]
    checked: list[Flag]
    protocol: Protocol  # the run's, on the dataset rows the revision was made by (`Protocol.on`)
    corpus: list[CorpusVariant] = field(default_factory=list)
    planned: list[str] = field(default_factory=list)
    chosen: dict[str, Any] = field(default_factory=dict)  # the card's selection of the revision (`chosen_part`)
    taxonomy: Taxonomy = BEFORE_SPECS  # the axes the revision was made by (dataset folders: this release's)
    hard: HardTwins | None = None  # --hard-twins-from's revision (scoring/hard_twins.py)


def read_data(options: ScoreOptions) -> RunData:
    """The run's data: dataset folders (--source-dir) or a revision of a store."""
    if options.source_dir is not None:
        return read_source_folders(options, options.source_dir)
    return read_revision(options)


def planned_datasets(options: ScoreOptions) -> list[str]:
    """The datasets of the whole run the options choose, checked as the readers check them, none of
    them read: what a run of several work units plans before any is scored."""
    if options.source_dir is not None:
        return _source_plan(options.source_dir, options.datasets)
    return _revision_plan(options)[1]


def _source_plan(source_dir: Path, names: list[str] | None) -> list[str]:
    available = list_source_dirs(source_dir)
    if not available:
        raise HtebError(f"{source_dir}: no dataset folders (folders with a dataset.json)")
    planned = names or available
    unknown = [n for n in planned if n not in available]
    if unknown:
        raise HtebError(f"{source_dir}: no dataset folder {unknown[0]!r}; it has: {', '.join(available)}")
    return planned


def read_source_folders(options: ScoreOptions, source_dir: Path) -> RunData:
    """The original data of the dataset folders in `source_dir`, checked, and its provenance (a digest of the files)."""
    planned = _source_plan(source_dir, options.datasets)
    chosen = units_of_part(planned, options.part)
    datasets = [read_source_dir(source_dir / name) for name in chosen]
    for folder, dataset in zip(chosen, datasets):  # a dataset is scored and named once, by its own name
        if dataset.name != folder:
            raise HtebError(
                f"{source_dir / folder}: its dataset.json names the dataset {dataset.name!r}; a dataset "
                "folder is named after its dataset (rename the folder or fix dataset.json)"
            )
    digest = hashlib.sha256()
    for name in planned:  # the whole run's data: every part of it names the same digest
        for path in sorted((source_dir / name).glob("*")):
            if path.is_file():
                digest.update(f"{name}/{path.name}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
    info = {
        "repo_id": f"local:{source_dir.resolve()}",
        "label": None,
        "revision": f"sha256:{digest.hexdigest()}",
        "datasets": chosen,
    }
    by_name = dict(zip(chosen, datasets))
    groups = DatasetGroups(
        chosen, lambda name: [Variant(by_name[name], "original", None)], [d.info for d in datasets], len(chosen)
    )
    part = {"datasets": None if options.datasets is None else sorted(planned), "transformations": None, "seeds": None}
    return RunData(
        groups, [], info, check_variants(groups, options.protocol), options.protocol, planned=planned, chosen=part
    )


def read_revision(options: ScoreOptions) -> RunData:
    """A revision's variants to score, each read and checked once here. `preset` chooses the
    datasets and transformations; `min_judge` drops the items the judge rated below it. Unless `quiet`,
    a bar over the datasets read, with its total and the time left."""
    revision, planned, transformations = _revision_plan(options)
    protocol = options.protocol.on(task_settings.of_manifest(revision.manifest))
    seeds = options.seeds
    chosen = units_of_part(planned, options.part)
    hard = None if options.hard_twins is None else open_hard_twins(*options.hard_twins, revision, planned, chosen)

    def load(name: str):
        return revision_variants(
            revision,
            name,
            transformations=transformations,
            seeds=seeds,
            on_error=options.on_error,
            min_judge=options.min_judge,
        )

    policy: list[ErrorPolicyCount] = []
    flags: list[Flag] = []
    infos: list[DatasetInfo] = []
    total = 0
    # shown once the stage has run 5 s (a full-size revision), so a refusal of small data stays one line
    for name in tqdm(chosen, desc="reading and checking", unit="dataset", disable=options.quiet, delay=5):
        variants, counts = load(name)  # one dataset's variants in memory at a time
        if hard is not None:
            hard.check_sources(name, [v.items for v in variants if v.items is not None])
        total += len(variants)
        policy.extend(counts)
        flags.extend(check_variants([variants], protocol, filtered=options.min_judge is not None))
        infos.append(variants[0].dataset.info)
    require_judge_scores(revision, policy, options.min_judge)
    groups = DatasetGroups(chosen, lambda name: load(name)[0], infos, total)
    languages = source_languages(revision.manifest)
    citation = bibliography(revision.manifest, options.revision_at()[0])
    info = {
        "repo_id": options.store,
        "label": revision.label,
        "revision": revision.revision_id,
        # --hard-twins-from's revision is named in the identity: runs with two never merge as one
        **({} if hard is None else {"hard_twins": hard.provenance()}),
        "datasets": chosen,
        "citation": citation if hard is None else f"{citation}\n{hard.citation()}",
        "languages": {name: languages[name] for name in planned},  # the run's: one identity for all its parts
    }
    corpus = []
    if options.corpus_robustness:
        corpus = corpus_variants(revision, chosen, transformations=transformations, seeds=seeds)
    return RunData(
        groups,
        policy,
        info,
        flags,
        protocol,
        corpus,
        planned,
        chosen_part(revision, planned, transformations, seeds),
        of_manifest(revision.manifest),
        hard,
    )


def chosen_part(
    revision: Revision, datasets: Sequence[str], transformations: Sequence[str] | None, seeds: Sequence[int] | None
) -> dict[str, Any]:
    """What of the revision a run scores, for the card's selection: each of datasets, transformations
    and seeds None where it is all the revision has (however it was asked for), else sorted. A Hub
    result's task ids carry a part (hteb_contract.hub_eval.Selection)."""
    whole = {
        "datasets": [s["name"] for s in revision.manifest["sources"]],
        "transformations": revision.manifest["transformations"],
        "seeds": revision.manifest["seeds"],
    }
    asked = {"datasets": datasets, "transformations": transformations, "seeds": seeds}
    return {k: None if v is None or set(v) == set(whole[k]) else sorted(v) for k, v in asked.items()}


def _revision_plan(options: ScoreOptions) -> tuple[Revision, list[str], list[str] | None]:
    """The revision, the run's datasets and its transformations (a preset chooses both), checked."""
    names, transformations = options.datasets, options.transformations
    store, ref = options.revision_at()
    revision = open_store(store).fetch(ref, datasets=names)
    if options.preset is not None:
        names, transformations = PRESETS.get(options.preset).choose(revision)
    planned = names or revision.dataset_names()
    check_selection(revision, planned, transformations, options.seeds)
    return revision, list(planned), transformations


@dataclass
class Variant:
    """One evaluable version of a dataset: `original` (seed None, no items) or (transformation, seed)
    with the items it scores (those --min-judge keeps), whose drift is measured."""

    dataset: SourceDataset
    transformation: str
    seed: int | None
    items: ItemColumns | None = None
    shares: tuple[SubsetShare, ...] = ()  # per subset, how many texts the transformation changed (`coverage`)
    recorded: bool = False  # `shares` are the revision's change_shares (else counted from the texts)
    axis: str = ""  # its transformation's axis, as the revision states it (none for the original)
    #: a minimal-pair rule's (changed rule, kept twin), as the revision states them (scoring/sensitivity.py)
    pair: tuple[str, str] | None = None


def _policy_lookup(items: ItemColumns, on_error: str, where: str, keep: Sequence[bool]):
    by_ref = {ref: at for at, ref in enumerate(items.refs())}

    def lookup(ref: TextRef) -> str | None:
        at = by_ref.get((ref.table, ref.item_id, ref.field))
        if at is None:
            raise IntegrityError(f"{where}: no item record for {ref.table}/{ref.item_id}/{ref.field}")
        if not keep[at]:  # below --min-judge: the item is not scored
            return None
        if not items.with_errors[at]:
            return items.transformed_text[at]
        return ACTIONS[on_error](ref.text, items.transformed_text[at])

    return lookup


def revision_variants(
    revision: Revision,
    name: str,
    *,
    transformations: Sequence[str] | None,
    seeds: Sequence[int] | None,
    on_error: str,
    min_judge: float | None = None,
) -> tuple[list[Variant], list[ErrorPolicyCount]]:
    """The original and each selected (transformation, seed) of one dataset, plus error-policy counts
    (and, with `min_judge`, how many items the judge filter dropped and how many no judge rated)."""
    source = revision.source(name)
    taxonomy = of_manifest(revision.manifest)
    pairs = minimal_pairs(revision.manifest)
    available = revision.variants(name)
    chosen = [
        (t, s)
        for t, s in available
        if (transformations is None or t in transformations) and (seeds is None or s in seeds)
    ]
    variants = [Variant(source, "original", None)]
    counts: list[ErrorPolicyCount] = []
    for transformation, seed in chosen:
        items = revision.item_columns(name, transformation, seed)
        means = judge_means(items)
        keep = judge_kept(means, min_judge)
        where = f"{name}/{transformation}_{seed}"
        data = source.with_texts(_policy_lookup(items, on_error, where, keep))
        variants.append(
            Variant(
                data,
                transformation,
                seed,
                items if min_judge is None else items.where(keep),
                *revision_shares(revision.manifest, items),
                axis=taxonomy.axis_of(transformation),
                pair=pairs.get(transformation),
            )
        )
        filtered = min_judge is not None  # the judge counts are kept with --min-judge only
        counts.append(
            ErrorPolicyCount(
                name,
                transformation,
                seed,
                len(items),
                sum(items.with_errors),
                on_error,
                keep.count(False) if filtered else None,
                means.count(None) if filtered else None,
            )
        )
    return variants, counts


def check_selection(
    revision: Revision, names: Sequence[str], transformations: Sequence[str] | None, seeds: Sequence[int] | None
) -> None:
    """Refuse a transformation or seed that the revision does not hold, naming what it has."""
    present = {v for name in names for v in revision.variants(name)}
    if transformations is not None:
        known = sorted({t for t, _ in present})
        unknown = [t for t in transformations if t not in known]
        if unknown:
            raise HtebError(
                f"revision {revision.label} has no transformation {unknown[0]!r}; it has: {', '.join(known)}"
            )
    if seeds is not None:
        known_seeds = sorted({s for _, s in present})
        unknown_seeds = [s for s in seeds if s not in known_seeds]
        if unknown_seeds:
            raise HtebError(
                f"revision {revision.label} has no seed {unknown_seeds[0]}; it has: {', '.join(map(str, known_seeds))}"
            )


def check_variants(groups: Iterable[list[Variant]], protocol: Protocol, *, filtered: bool = False) -> list[Flag]:
    """Every variant through its evaluator's `check`, before any model loads or text is embedded:
    data no model could score is a one-line HtebError; the flags of what is scored with a caveat.
    `filtered` (--min-judge): a transformed variant the filter left unscorable is flagged
    `filtered_too_far` (and not scored) instead, as the filter, not the data, emptied it."""
    flags = []
    for variants in groups:
        evaluator = EVALUATORS.get(variants[0].dataset.info.task_type)
        for variant in variants:
            where = (variant.dataset.info.name, variant.transformation, variant.seed)
            try:
                found = evaluator.check(variant.dataset, protocol)
            except HtebError as err:
                if filtered and variant.seed is not None:
                    flags.append(Flag("filtered_too_far", str(err), *where))
                    continue
                raise type(err)(f"{err} (variant: {_variant_name(variant)})") from None
            flags.extend(f.of(*where) for f in found)
    return flags


def _variant_name(variant: Variant) -> str:
    return variant.transformation if variant.seed is None else f"{variant.transformation} seed {variant.seed}"


class DatasetGroups:
    """The variants of a run, dataset by dataset, read again from the revision each time they are
    iterated: a run holds one dataset's records and texts at a time (beside the embeddings), never
    the whole revision's. A plain list of variant lists serves as well where data is small."""

    def __init__(
        self, names: Sequence[str], load: Callable[[str], list[Variant]], infos: Sequence[DatasetInfo], variants: int
    ) -> None:
        self.names, self._load, self.infos = list(names), load, list(infos)
        self.variants = variants  # how many variants the datasets hold together (the progress bar's total)

    def __iter__(self) -> Iterator[list[Variant]]:
        return (self._load(name) for name in self.names)

    def __len__(self) -> int:
        return len(self.names)


def units_of_part(planned: Sequence[str], part: Sequence[str] | None) -> list[str]:
    """The planned datasets this process scores: all, or those --part names (in the planned order)."""
    if part is None:
        return list(planned)
    unknown = [name for name in part if name not in planned]
    if unknown:
        raise HtebError(f"--part {unknown[0]} is not one of the run's datasets: {', '.join(planned)}")
    return [name for name in planned if name in part]
