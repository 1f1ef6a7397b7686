"""The front matter of a revision's dataset card (README.md): the metadata a Hugging Face dataset
page shows and filters on, and the configs `datasets.load_dataset` reads.

Why in the contract: the revision writer seals the card with the data, and what a config holds
is the revision format's business. The generator supplies what only it knows: each source's
license (`SourceLicense`, as the source states it).

Configs (Hub names: `^\\w+$` splits, so `load_dataset(repo, config, split=...)` works):

- `<dataset>`: the item records, one split `<transformation>_<seed>` per variant (the first
  dataset is the default config);
- `<dataset>-corpus`: the perturbed corpus records likewise, when there are any;
- `<dataset>-original`: the untouched source rows, one split per evaluation or training table
  (`test`, `train`), with `_hteb_item_id`, the `item_id` the records name;
- `<dataset>-original-<table>`: each other source table (`corpus`, `queries`, `qrels`,
  `top_ranked`), as the split named after the dataset's evaluation split.

Together the `-original` configs are every table the task needs (pairs and scores, texts and
labels, queries, corpus and qrels), so `load_dataset` alone rebuilds it. They point at the
`source/` parquet files the revision already holds: the card adds no data file.

Language codes are ISO 639-3 (every subset's, and the translation targets), as the revision states
them and as mteb writes them on the Hub. `license` is the sources' one license id where they share
it; where they differ it is `other`, named `hteb-source-licenses` and linked to the card's Licenses
section (the Hub's way for a collection under several licenses), and `source_licenses` names and
links each. `source_datasets` pins each source: its Hub dataset at the commit read
(`mteb/banking77@0fd18e...`), or the folder a source without a Hub copy was read from
(`local/STS12`). `task_ids` are the sources' Hub task ids as mteb's task metadata maps them.
"""

from __future__ import annotations

import re
from importlib import resources
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from hteb_contract.tasks import task_type

#: (exclusive upper bound, tag) of the Hub's size_categories, in order.
SIZE_CATEGORIES = (
    (10**3, "n<1K"),
    (10**4, "1K<n<10K"),
    (10**5, "10K<n<100K"),
    (10**6, "100K<n<1M"),
    (10**7, "1M<n<10M"),
    (10**8, "10M<n<100M"),
    (10**9, "100M<n<1B"),
    (10**10, "1B<n<10B"),
    (10**11, "10B<n<100B"),
    (10**12, "100B<n<1T"),
)
#: The Hub's license id for a source that states no license, and for terms the Hub has no id for.
UNKNOWN_LICENSE, OTHER_LICENSE = "unknown", "other"
TAGS = ("hteb", "mteb", "robustness", "embeddings")
#: The card's versions, a revision's config `card`: "1" is every revision's made before the setting (its bytes are
#: kept, so a published label rebuilds byte for byte); "2" follows the Hub's conventions: `source_datasets` as
#: `extended|<hub id>` (the pins stay in the card's Sources and the manifest), `language_creators`, `dataset_info`
#: (each config's features and split sizes), and every source cited by its own row.
FIRST_CARD, HUB_CARD = "1", "2"
CARD_VERSIONS = (FIRST_CARD, HUB_CARD)
#: How a revision's texts were made, as the Hub names it: the sources' as found, the variants by a machine.
LANGUAGE_CREATORS = ("found", "machine-generated")
#: The license name and link of a revision whose sources have differing licenses.
MIXED_LICENSE_NAME, LICENSES_SECTION = "hteb-source-licenses", "README.md#licenses"

#: The HTEB paper, as a revision's card and a result cite it: the entry of hteb.bib beside this module (data, not code).
HTEB_CITATION = "\n".join(
    line
    for line in (resources.files("hteb_contract") / "hteb.bib").read_text(encoding="utf-8").splitlines()
    if not line.startswith("%")
).strip()


@dataclass(frozen=True)
class SourceLicense:
    """A source dataset's license as the source states it: a Hub license id (`cc-by-4.0`, `mit`;
    `unknown` where it states none, `other` for terms without an id), its name as stated, and
    where it is stated."""

    dataset: str
    license: str
    name: str
    link: str | None  # None: stated nowhere

    def to_dict(self) -> dict[str, str]:
        entry = {"dataset": self.dataset, "license": self.license, "license_name": self.name}
        return entry if self.link is None else {**entry, "license_link": self.link}


@dataclass(frozen=True)
class SourceTables:
    """What the card needs of one source copy: its name, task type, splits and table names."""

    name: str
    task_type: str
    eval_split: str
    train_split: str | None
    tables: tuple[str, ...]


def size_category(rows: int) -> str:
    """The Hub's size tag of a number of rows.

    >>> size_category(416), size_category(25_000)
    ('n<1K', '10K<n<100K')
    """
    return next((tag for bound, tag in SIZE_CATEGORIES if rows < bound), "n>1T")


def original_configs(source: SourceTables) -> list[dict[str, Any]]:
    """The `-original` configs of one source copy (see the module docstring)."""
    kind = task_type(source.task_type)
    splits = kind.split_tables(source.eval_split, source.train_split)
    path = f"source/{source.name}/{{}}.parquet"
    configs = [
        {
            "config_name": f"{source.name}-original",
            "data_files": [{"split": t, "path": path.format(t)} for t in splits if t in source.tables],
        }
    ]
    configs += [
        {
            "config_name": f"{source.name}-original-{t}",
            "data_files": [{"split": source.eval_split, "path": path.format(t)}],
        }
        for t in source.tables
        if t not in splits
    ]
    return [c for c in configs if c["data_files"]]


def _variant_configs(
    variants: Mapping[str, Sequence[tuple[str, int]]],
    suffix: str,
    folder: str,
) -> list[dict[str, Any]]:
    return [
        {
            "config_name": f"{name}{suffix}",
            "data_files": [{"split": f"{t}_{s}", "path": f"{folder}/{name}/{t}_{s}.parquet"} for t, s in pairs],
        }
        for name, pairs in sorted(variants.items())
    ]


def license_fields(licenses: Sequence[SourceLicense]) -> dict[str, Any]:
    """`license`: the sources' one id, else `other`; then `license_name` and `license_link`, which
    the Hub reads only for `other`: the source's own where one set of terms holds, else
    `hteb-source-licenses` and the card's Licenses section; and `source_licenses`: each source's
    license, name and link, as the source states it.

    >>> license_fields([SourceLicense("A", "mit", "mit", None), SourceLicense("B", "cc-by-4.0", "cc-by-4.0", None)])
    ... # doctest: +ELLIPSIS
    {'license': 'other', 'license_name': 'hteb-source-licenses', 'license_link': 'README.md#licenses', ...}
    """
    ids = {entry.license for entry in licenses} or {UNKNOWN_LICENSE}
    fields: dict[str, Any]
    if len(ids) == 1 and OTHER_LICENSE not in ids:
        fields = {"license": ids.pop()}
    else:
        terms = {(_slug(entry.name), entry.link) for entry in licenses}
        name, link = terms.pop() if len(terms) == 1 else (MIXED_LICENSE_NAME, LICENSES_SECTION)
        fields = {"license": OTHER_LICENSE, "license_name": name, "license_link": link or LICENSES_SECTION}
    fields["source_licenses"] = [entry.to_dict() for entry in sorted(licenses, key=lambda e: e.dataset)]
    return fields


def _slug(text: str) -> str:
    """A license id of a stated name or URL: `https://www.biorxiv.org/content/about-biorxiv` ->
    `biorxiv-org-content-about-biorxiv`."""
    text = re.sub(r"^[a-z]+://(www\.)?", "", text.lower())
    return "-".join("".join(c if c.isalnum() else " " for c in text).split()) or OTHER_LICENSE


def hub_source(source: Mapping[str, Any]) -> str:
    """A manifest source as the Hub's `source_datasets` names what a dataset extends: `extended|<hub id>`,
    or `extended` for a source without a Hub copy.

    >>> hub_source({"hf_path": "mteb/banking77", "hf_revision": "0fd18e25"}), hub_source({"hf_path": None})
    ('extended|mteb/banking77', 'extended')
    """
    return f"extended|{source['hf_path']}" if source.get("hf_path") else "extended"


def source_pin(source: Mapping[str, Any]) -> str:
    """Where a manifest source's rows come from: its Hub dataset at the pinned commit, else the
    folder it was read from.

    >>> source_pin({"hf_path": "mteb/banking77", "hf_revision": "0fd18e25", "origin": "shared/data/Banking77"})
    'mteb/banking77@0fd18e25'
    >>> source_pin({"name": "STS12", "hf_path": None, "hf_revision": None, "origin": "local/STS12"})
    'local/STS12'
    """
    if source.get("hf_path") and source.get("hf_revision"):
        return f"{source['hf_path']}@{source['hf_revision']}"
    return str(source.get("origin") or source["name"])


def front_matter(
    label: str,
    sources: Sequence[SourceTables],
    variants: Mapping[str, Sequence[tuple[str, int]]],
    corpus_variants: Mapping[str, Sequence[tuple[str, int]]],
    *,
    languages: Iterable[str],
    rows: int,
    licenses: Sequence[SourceLicense] = (),
    source_datasets: Sequence[str] = (),
    task_ids: Iterable[str] = (),
    card: str = FIRST_CARD,
    describe: Callable[[Sequence[Mapping[str, Any]]], Any] | None = None,
) -> str:
    """The card's YAML front matter, `---` lines included (see the module docstring).

    `languages`: every language of the texts (sources and transformation targets); `rows`: the
    item records of the `<dataset>` configs; `source_datasets`: each source's `source_pin` (card 1)
    or `hub_source` (card 2); `task_ids`: the sources' Hub task ids; `card`: the card version
    (CARD_VERSIONS); `describe`: card 2's `dataset_info` of the configs (the generator's, which reads
    the files written).
    """
    configs = _variant_configs(variants, "", "data")
    if configs:
        configs[0]["default"] = True
    configs += _variant_configs(corpus_variants, "-corpus", "corpus")
    for source in sorted(sources, key=lambda s: s.name):
        configs += original_configs(source)
    codes = sorted(set(languages))
    meta = {
        "pretty_name": f"HTEB {label}",
        **license_fields(licenses),
        "language": codes,
        "multilinguality": "multilingual" if len(codes) > 1 else "monolingual",
        **({"language_creators": list(LANGUAGE_CREATORS)} if card == HUB_CARD else {}),
        "task_categories": sorted({task_type(s.task_type).hub_category for s in sources}),
        "task_ids": sorted(set(task_ids)),
        "size_categories": [size_category(rows)],
        "source_datasets": sorted(set(source_datasets)),
        "tags": list(TAGS),
        "configs": configs,
    }
    if card == HUB_CARD and describe is not None:
        meta["dataset_info"] = describe(configs)
    return (
        "---\n"
        + yaml.safe_dump({k: v for k, v in meta.items() if v != []}, sort_keys=False, allow_unicode=True)
        + "---\n"
    )
