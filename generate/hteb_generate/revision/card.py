"""The dataset card (README.md) of a revision: how the data was made, the error-rate table in
the layout of the paper's Table 5, judge summaries, and every choice the paper left open.

Everything here is computed from the item records and the configuration only (no timings, no
cache counters), so a resumed or cached rerun writes the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from statistics import mean
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from hteb_contract.card import FIRST_CARD, HTEB_CITATION, SourceLicense, source_pin
from hteb_contract.citations import source_citations
from hteb_contract.common.escape import md_code
from hteb_contract.records import ItemRecord, Judge
from hteb_contract.tasks import task_type
from hteb_contract.specs.transformations import transformation_spec
from hteb_contract.validation import SCHEMA_VERSIONS

from hteb_generate.checks.detectors import ERROR_LABELS, ERROR_TYPES, error_rates
from hteb_generate.sources.sources_table import source_citation
from hteb_generate.transform.cleanup import CLEANUPS
from hteb_generate.transform.langid import UNSUPPORTED_BENCHMARK_LANGUAGES

#: (choice, whether it applies to rule-made texts too): a card lists the ones that apply to its revision.
OPEN_CHOICES: tuple[tuple[str, bool], ...] = (
    (
        "Prompt layout: the prompt set's instruction is the system message and the text is the user message "
        "(App. D gives the prompt texts, not the chat layout).",
        False,
    ),
    ("Classification transforms the evaluation split only; the training split stays original.", True),
    (
        "Summarisation (SummEval) transforms both the human and the machine summaries; the source articles stay "
        "original.",
        True,
    ),
    ("Retrieval and reranking transform the queries only (App. E).", True),
    (
        "Translation: one target per run, the first of a seeded ranking of {Spanish, French, German, Turkish, Arabic} "
        "that differs from the text's language (Arabic dialects count as Arabic).",
        False,
    ),
    (
        "Random choices (targets, pivots) are read off sha256(seed, dataset, transformation, table/item id/field); "
        "generation seeds off sha256(seed, dataset, transformation, text, languages, attempt).",
        False,
    ),
    (
        "Identical texts of a dataset with the same languages are transformed once and shared by every item holding "
        "them.",
        False,
    ),
    (
        "Retries: an output with any error is regenerated with a new derived seed, at `retry_temperature` (a greedy "
        "retry would repeat the same answer), up to `max_attempts`; the kept output is the first attempt without "
        "errors, else the last; `fallback` marks items whose every attempt has errors. Nothing is replaced by the "
        "original text.",
        False,
    ),
    (
        "Backtranslation: the pivot output is checked as a translation into the pivot language too; its errors count "
        "for the item.",
        False,
    ),
    ("Two-step transformations are judged and checked against the original text, not the intermediate.", False),
    (
        "Light clean-ups of a raw output, in this order: " + ", ".join(CLEANUPS.names()) + ". Each attempt names "
        "those that changed its output (`cleanup`) and keeps the raw steps; the detectors read the cleaned output.",
        False,
    ),
    ("An engine step that stopped at its token limit (finish reason `length`) makes the attempt `truncated`.", False),
    (
        "Every text carries its own language: a pair subset `xx-yy` (mteb's naming) has a first text in xx and a "
        "second in yy, and each side is transformed, checked and judged in its own language.",
        True,
    ),
    (
        "Language identification: lingua; languages it cannot recognise are never flagged as wrong_language: "
        + ", ".join(sorted(UNSUPPORTED_BENCHMARK_LANGUAGES))
        + ".",
        False,
    ),
)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def error_table(records: Sequence[ItemRecord]) -> str:
    """Per dataset x transformation (over seeds): each error type's rate and the total, in percent."""
    groups: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for record in records:
        groups.setdefault((record.dataset, record.transformation), []).append(record.errors)
    header = "| dataset | transformation | n | " + " | ".join(ERROR_LABELS[e] for e in ERROR_TYPES) + " | total |"
    lines = [header, "|" + "---|" * (len(ERROR_TYPES) + 4)]
    for (dataset, transformation), errors in sorted(groups.items()):
        rates = error_rates(errors)
        cells = [_pct(rates[e]) for e in ERROR_TYPES] + [_pct(rates["total"])]
        lines.append(f"| {dataset} | {transformation} | {len(errors)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def judge_table(records: Sequence[ItemRecord]) -> str:
    """Per transformation: mean quality, fluency, share accepted (mean of both >= 3), mean ParaPLUIE."""
    groups: dict[str, list[Judge]] = {}
    for record in records:
        groups.setdefault(record.transformation, []).append(record.judge)
    lines = [
        "| transformation | n | quality | fluency | accepted (mean >= 3) | ParaPLUIE | ParaPLUIE > 0 |",
        "|---|---|---|---|---|---|---|",
    ]

    def avg(values: list[float]) -> str:
        return f"{mean(values):.2f}" if values else "n/a"

    for transformation, judged in sorted(groups.items()):
        quality = [j.quality for j in judged if j.quality is not None]
        fluency = [j.fluency for j in judged if j.fluency is not None]
        both = [(j.quality + j.fluency) / 2 for j in judged if j.quality is not None and j.fluency is not None]
        para = [j.parapluie for j in judged if j.parapluie is not None]
        accepted = f"{_pct(sum(1 for b in both if b >= 3) / len(both))}%" if both else "n/a"
        positive = f"{_pct(sum(1 for p in para if p > 0) / len(para))}%" if para else "n/a"
        lines.append(
            f"| {transformation} | {len(judged)} | {avg(quality)} | {avg(fluency)} | {accepted} | {avg(para)} | {positive} |"
        )
    return "\n".join(lines)


def _sampling(config: Mapping[str, Any]) -> str:
    if config.get("sample") is None and config.get("max_texts") is None and config.get("max_list") is None:
        return "every row of each source"
    parts = []
    if config.get("sample") is not None:
        n = config["sample"]
        parts.append(
            f"{n} evaluation row(s) per language subset, dealt out label by label (round-robin over the labels in "
            f"order of first appearance; the first rows where rows have no label) and kept in dataset order; for "
            f"retrieval and reranking the first {n} queries with relevance judgements, their judged and candidate "
            f"documents and the first {10 * n} other documents"
        )
    if config.get("max_list") is not None:
        parts.append(f"at most {config['max_list']} elements of each summary list, with the score lists cut alike")
    if config.get("max_texts") is not None:
        parts.append(
            f"then whole rows up to {config['max_texts']} transformed texts per dataset (at least one row; "
            "retrieval and reranking keep their sampled queries)"
        )
    return "a sample: " + "; ".join(parts)


def _subsets(source: Mapping[str, Any]) -> str:
    """`en-de (eng, deu), en-en (eng)`: each mteb subset and the language of each of its text positions."""
    return ", ".join(f"{name} ({', '.join(codes)})" for name, codes in source["subsets"].items())


def _decoding(config: Mapping[str, Any]) -> str:
    per_step = f"max_tokens {config['max_tokens']}"
    if config.get("max_tokens_ceiling"):
        per_step += (
            f" per step, raised with the step's input for growing templates up to "
            f"{config['max_tokens_ceiling']} (`hteb_generate.transform.budget`)"
        )
    return f"temperature {config['temperature']}, top_p {config['top_p']}, {per_step}"


def _corpus(corpus: Mapping[tuple[str, str, int], int]) -> dict[str, list[str]]:
    """What --corpus-noise added: which corpora (records each) and under which rules."""
    counts: dict[str, int] = {}
    for (dataset, _, _), rows in corpus.items():
        counts[dataset] = counts.get(dataset, 0) + rows
    return {
        "counts": [f"{name} ({n} records)" for name, n in sorted(counts.items())],
        "rules": sorted({rule for _, rule, _ in corpus}),
    }


def _citations(manifest_like: Mapping[str, Any], card: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Each source's BibTeX (sources citing the same work share one entry), and the sources without one.
    The card is part of the revision's content hash: card 1 prints what revisions printed when they were made
    (mteb's citation of a registry dataset), so a published label rebuilds byte for byte; card 2 prints what
    `hteb-score cite` prints (hteb_contract.citations.source_citations: the rows the revision records, STS12-16
    too, SciFact by its own paper)."""
    lookup: Callable[[str], str | None] = source_citation
    if card != FIRST_CARD:
        lookup = {name: c.bibtex for c in source_citations(manifest_like) for name in c.datasets}.get
    cited: dict[str, list[str]] = {}
    uncited = []
    for source in sorted(manifest_like["sources"], key=lambda s: s["name"]):
        bibtex = lookup(source["name"])
        if bibtex is None:
            uncited.append(f"`{source['name']}` ({source_pin(source)})")
        else:
            cited.setdefault(bibtex, []).append(source["name"])
    return [{"bibtex": bibtex, "names": names} for bibtex, names in cited.items()], uncited


def _first(manifest_like: Mapping[str, Any]) -> dict[str, str]:
    """The Loading section's example: the first dataset, its first variant, its originals' config."""
    first = manifest_like["sources"][0]
    name = first["name"]
    original = f"{name}-original-queries" if "queries" in task_type(first["task_type"]).tables else f"{name}-original"
    return {
        "name": name,
        "split": f"{manifest_like['transformations'][0]}_{manifest_like['seeds'][0]}",
        "original": original,
    }


#: The card's words: the template reads what `card_body` formats from the records and the manifest.
ENVIRONMENT = Environment(
    loader=PackageLoader("hteb_generate.revision", "templates"),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=StrictUndefined,
    autoescape=False,
)
ENVIRONMENT.filters["code"] = md_code  # a name from a user as a Markdown code span (hteb_contract.common.escape)
TEMPLATE = ENVIRONMENT.get_template("dataset_card.md.j2")


def _pair_names(rule_names: Sequence[str]) -> list[str]:
    """ "changed vs kept" per minimal pair among the rules, in the table's order."""
    rows = [transformation_spec(n) for n in rule_names]
    return [f"{r.name} vs {r.twin}" for r in rows if r.meaning == "changed" and r.twin in rule_names]


def card_body(
    manifest_like: Mapping[str, Any],
    records: Sequence[ItemRecord],
    rule_names: Sequence[str] = (),
    languages_not_in_mteb: Mapping[str, Sequence[str]] | None = None,
    corpus: Mapping[tuple[str, str, int], int] | None = None,
    licenses: Sequence[SourceLicense] = (),
) -> str:
    """The dataset card below its front matter (which the revision writer adds), in the words of
    templates/dataset_card.md.j2.

    `records`: what the LLM made; `rule_names`: the noise rules that made texts;
    `languages_not_in_mteb`: per dataset, languages the paper lists that mteb's data lacks (said, not generated);
    `corpus`: the perturbed corpus's records per (dataset, rule, seed) (--corpus-noise), said only when there is
    one. A revision made by the rules alone says what applies to rule-made texts and nothing else: no generator,
    decoding or judge, no error or judge tables, none of the LLM's choices.
    """
    config = manifest_like["config"]
    missing = languages_not_in_mteb or {}
    by_llm = bool(records) or not rule_names
    cited, uncited = _citations(manifest_like, config.get("card", FIRST_CARD))
    return TEMPLATE.render(
        label=manifest_like["label"],
        schema=SCHEMA_VERSIONS["item"],
        by_llm=by_llm,
        first=_first(manifest_like),
        generator=manifest_like["generator"],
        judge=manifest_like["judge"],
        config=config,
        decoding=_decoding(config) if by_llm else None,
        seeds=manifest_like["seeds"],
        transformations=manifest_like["transformations"],
        rule_names=list(rule_names),
        pair_names=_pair_names(rule_names),
        noise_rules=config.get("noise_rules"),
        noise_hash=config.get("noise_rules_sha256"),
        corpus=_corpus(corpus) if corpus else None,
        sampling=_sampling(config),
        sources=[
            {**s, "pin": source_pin(s), "subsets": _subsets(s), "missing": missing.get(s["name"])}
            for s in manifest_like["sources"]
        ],
        licenses=sorted(licenses, key=lambda s: s.dataset),
        error_table=error_table(records) if by_llm else None,
        judge_table=judge_table(records) if by_llm else None,
        choices=[choice for choice, for_rules in OPEN_CHOICES if by_llm or for_rules],
        hteb_citation=HTEB_CITATION,
        cited=cited,
        uncited=uncited,
    )
