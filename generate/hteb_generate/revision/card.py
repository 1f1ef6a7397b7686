"""The dataset card (README.md) of a revision: how the data was made, the error-rate table in
the layout of the paper's Table 5, judge summaries, and every choice the paper left open.

Everything here is computed from the item records and the configuration only (no timings, no
cache counters), so a resumed or cached rerun writes the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import mean
from typing import Any

from hteb_contract.card import HTEB_CITATION, SourceLicense, source_pin
from hteb_contract.records import ItemRecord, Judge
from hteb_contract.tasks import task_type
from hteb_contract.validation import SCHEMA_VERSIONS

from hteb_generate.checks.detectors import ERROR_TYPES, error_rates
from hteb_generate.sources.sources_table import source_citation
from hteb_generate.transform.cleanup import CLEANUPS
from hteb_generate.transform.langid import UNSUPPORTED_BENCHMARK_LANGUAGES

SHORT = {
    "identical": "ident.", "empty": "empty", "ellipsis": "ellip.", "json_fragment": "json",
    "reasoning_leak": "reason.", "prefix_leak": "prefix", "wrong_language": "lang.", "runaway": "runaway",
    "truncated": "trunc.", "summary_too_long": "sum>in",
}

#: (choice, whether it applies to rule-made texts too): a card lists the ones that apply to its revision.
OPEN_CHOICES: tuple[tuple[str, bool], ...] = (
    ("Prompt layout: the prompt set's instruction is the system message and the text is the user message "
     "(App. D gives the prompt texts, not the chat layout).", False),
    ("Classification transforms the evaluation split only; the training split stays original.", True),
    ("Summarisation (SummEval) transforms both the human and the machine summaries; the source articles stay "
     "original.", True),
    ("Retrieval and reranking transform the queries only (App. E).", True),
    ("Translation: one target per run, the first of a seeded ranking of {Spanish, French, German, Turkish, Arabic} "
     "that differs from the text's language (Arabic dialects count as Arabic).", False),
    ("Random choices (targets, pivots) are read off sha256(seed, dataset, transformation, table/item id/field); "
     "generation seeds off sha256(seed, dataset, transformation, text, languages, attempt).", False),
    ("Identical texts of a dataset with the same languages are transformed once and shared by every item holding "
     "them.", False),
    ("Retries: an output with any error is regenerated with a new derived seed, at `retry_temperature` (a greedy "
     "retry would repeat the same answer), up to `max_attempts`; the kept output is the first attempt without "
     "errors, else the last; `fallback` marks items whose every attempt has errors. Nothing is replaced by the "
     "original text.", False),
    ("Backtranslation: the pivot output is checked as a translation into the pivot language too; its errors count "
     "for the item.", False),
    ("Two-step transformations are judged and checked against the original text, not the intermediate.", False),
    ("Light clean-ups of a raw output, in this order: " + ", ".join(CLEANUPS.names()) + ". Each attempt names "
     "those that changed its output (`cleanup`) and keeps the raw steps; the detectors read the cleaned output.",
     False),
    ("An engine step that stopped at its token limit (finish reason `length`) makes the attempt `truncated`.", False),
    ("Every text carries its own language: a pair subset `xx-yy` (mteb's naming) has a first text in xx and a "
     "second in yy, and each side is transformed, checked and judged in its own language.", True),
    ("Language identification: lingua; languages it cannot recognise are never flagged as wrong_language: "
     + ", ".join(sorted(UNSUPPORTED_BENCHMARK_LANGUAGES)) + ".", False),
)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def error_table(records: Sequence[ItemRecord]) -> str:
    """Per dataset x transformation (over seeds): each error type's rate and the total, in percent."""
    groups: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for record in records:
        groups.setdefault((record.dataset, record.transformation), []).append(record.errors)
    header = "| dataset | transformation | n | " + " | ".join(SHORT[e] for e in ERROR_TYPES) + " | total |"
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


def _rules_version(config: Mapping[str, Any]) -> str:
    """The noise rules' version where the config names one (version 1's revisions, noise-1339, name none)."""
    return f"rules version {config['noise_rules']} (per script: hteb_contract/specs/noise_scripts.yaml), " \
        if "noise_rules" in config else ""


def _decoding(config: Mapping[str, Any]) -> str:
    per_step = f"max_tokens {config['max_tokens']}"
    if config.get("max_tokens_ceiling"):
        per_step += (f" per step, raised with the step's input for growing templates up to "
                     f"{config['max_tokens_ceiling']} (`hteb_generate.transform.budget`)")
    return f"temperature {config['temperature']}, top_p {config['top_p']}, {per_step}"


def _corpus_line(corpus: Mapping[tuple[str, str, int], int]) -> str:
    """What --corpus-noise added: which corpora, under which rules, where (the queries' splits are unchanged)."""
    counts: dict[str, int] = {}
    for (dataset, _, _), rows in corpus.items():
        counts[dataset] = counts.get(dataset, 0) + rows
    rules = sorted({rule for _, rule, _ in corpus})
    return ("- Corpus perturbed (`--corpus-noise`): the corpus titles and texts of "
            + ", ".join(f"{name} ({n} records)" for name, n in sorted(counts.items()))
            + f" under {', '.join(rules)}, each seeded as the queries are, in config `<dataset>-corpus` "
            "(`corpus/<dataset>/<transformation>_<seed>.parquet`); for corpus robustness (SAGE Task 5), "
            "scored with the original queries.")


def _licenses(licenses: Sequence[SourceLicense]) -> str:
    """One line per source: its license as the source states it, and where."""
    return "\n".join(f"- **{s.dataset}**: {s.name} (`{s.license}`)" + (f", {s.link}" if s.link else "")
                     for s in sorted(licenses, key=lambda s: s.dataset)) or "- none stated"


def _pin(source: Mapping[str, Any]) -> str:
    """A source's Hub pin and where it was read from (a source without a pin: only the latter)."""
    pin, origin = source_pin(source), source["origin"]
    return f"`{pin}`; read from `{origin}`" if pin != origin else f"no Hub pin; read from `{origin}`"


def _citations(sources: Sequence[Mapping[str, Any]]) -> str:
    """HTEB's BibTeX, then each source's (mteb's; sources citing the same work share one entry)."""
    cited: dict[str, list[str]] = {}
    uncited = []
    for source in sorted(sources, key=lambda s: s["name"]):
        bibtex = source_citation(source["name"])
        if bibtex is None:
            uncited.append(f"`{source['name']}` ({source_pin(source)})")
        else:
            cited.setdefault(bibtex, []).append(source["name"])
    entries = "\n\n".join(f"{', '.join(names)}:\n\n```bibtex\n{bibtex}\n```" for bibtex, names in cited.items())
    none = (f"\n\nNo BibTeX is recorded for {', '.join(uncited)} (mteb gives none, or the dataset is not in HTEB's "
            "registry): cite the source's own page." if uncited else "")
    return f"""HTEB:

```bibtex
{HTEB_CITATION}
```

The source datasets, as mteb's task metadata cites them (each source keeps its own citation):

{entries or "none recorded"}{none}"""


def _loading(manifest_like: Mapping[str, Any]) -> str:
    """How to read the revision with `datasets` and the contract (the first dataset as the example)."""
    first = manifest_like["sources"][0]
    name, split = first["name"], f"{manifest_like['transformations'][0]}_{manifest_like['seeds'][0]}"
    original = f"{name}-original-queries" if "queries" in task_type(first["task_type"]).tables else f"{name}-original"
    return f"""```python
from datasets import load_dataset
items = load_dataset(REPO, "{name}", split="{split}")  # the records of one variant
originals = load_dataset(REPO, "{original}")  # the untouched source rows
from hteb_contract.views import side_by_side
table = side_by_side(FOLDER, "{name}", "{split}")  # one row per item: its texts side by side
```

`REPO` is the Hub repository (with `revision=` its commit) or this folder (`FOLDER`); in a local store
the folder of a label is `hteb_contract.views.revision_folder(STORE, LABEL)`. Each `<dataset>-original`
config holds the source's evaluation (and training) rows; a retrieval or reranking source has
`<dataset>-original-corpus`, `-queries` and `-qrels` (and `-top_ranked`) instead: together the task.
`_hteb_item_id` is the `item_id` the records name."""


def card_body(manifest_like: Mapping[str, Any], records: Sequence[ItemRecord], rule_names: Sequence[str] = (),
              languages_not_in_mteb: Mapping[str, Sequence[str]] | None = None,
              corpus: Mapping[tuple[str, str, int], int] | None = None,
              licenses: Sequence[SourceLicense] = ()) -> str:
    """The dataset card below its front matter (which the revision writer adds).

    `records`: what the LLM made; `rule_names`: the noise rules that made texts;
    `languages_not_in_mteb`: per dataset, languages the paper lists that mteb's data lacks (said, not generated);
    `corpus`: the perturbed corpus's records per (dataset, rule, seed) (--corpus-noise), said only when there is
    one. A revision made
    by the rules alone says what applies to rule-made texts and nothing else: no generator, decoding or
    judge, no error or judge tables, none of the LLM's choices.
    """
    config = manifest_like["config"]
    generator, judge = manifest_like["generator"], manifest_like["judge"]
    missing = languages_not_in_mteb or {}
    sources = "\n".join(
        f"- **{s['name']}** ({s['task_type']}; mteb `{s['mteb_task']}`; {_pin(s)}): "
        f"transformed {', '.join(s['transformed_fields'])}; subsets {_subsets(s)}"
        + (f"; the paper also lists {', '.join(missing[s['name']])}, which mteb's data does not have"
           if missing.get(s["name"]) else "")
        for s in manifest_like["sources"]
    )
    by_llm = bool(records) or not rule_names
    seeds = (f"- Seeds: {', '.join(map(str, manifest_like['seeds']))}. "
             f"Transformations: {', '.join(manifest_like['transformations'])}.")
    rows = f"- Rows: {_sampling(config)}."
    if by_llm:
        judge_line = (
            f"`{judge['model_id']}` (revision `{judge['revision']}`), prompts `{config['judge_prompts']}`, "
            f"ParaPLUIE template `{config['parapluie_template']}`"
            if judge else "none (no judge scores)"
        )
        made = [f"- Generator: `{generator['model_id']}` (revision `{generator['revision']}`) on "
                f"`{generator['engine']}`,\n  prompt set `{config['prompt_set']}` (sha256 `{config['prompt_set_sha256']}`).",
                f"- Decoding: {_decoding(config)};\n  retries at temperature {config['retry_temperature']}, at most "
                f"{config['max_attempts']} attempts.", seeds, f"- Judge: {judge_line}.", rows]
        what = "LLM-transformed"
        holds = ("the original and kept text, every attempt, the errors the kept output still has, and judge "
                 "scores")
    else:
        made, what = [seeds, rows], "Rule-transformed (noise)"
        holds = ("the original and the noised text, made in one step by a rule (no decoding settings, no errors "
                 "checked, no judge)")
    not_applicable = ""
    if rule_names:
        made.insert(-1, f"- Noise rules (no LLM, no judge; `hteb_generate.transform.noise`, "
                        f"{_rules_version(config)}definitions sha256 `{config['noise_rules_sha256']}`): "
                        f"{', '.join(rule_names)}; each text's noise is drawn from (seed, dataset, transformation, "
                        "text) alone.")
        not_applicable = (f"\n\nNot applicable to the noise rules ({', '.join(rule_names)}): their outputs are "
                          "made by rules, not checked for LLM errors and not judged.")
    if corpus:
        made.insert(-1, _corpus_line(corpus))
    how = "\n".join(made)
    checks = f"""

## Error rates (% of items, Table 5 layout; total counts an item once)

{error_table(records)}{not_applicable}

## Judge scores

{judge_table(records)}{not_applicable}""" if by_llm else ""
    choices = "\n".join(f"- {choice}" for choice, for_rules in OPEN_CHOICES if by_llm or for_rules)
    return f"""
# HTEB revision `{manifest_like['label']}`

{what} versions of MTEB datasets for the Harder Text Embedding Benchmark. Each split
`<transformation>_<seed>` of a dataset config holds one record per transformed text
(schema `{SCHEMA_VERSIONS['item']}`): {holds}. The untouched sources are under `source/`, and
configs `<dataset>-original...` read them.

## Loading

{_loading(manifest_like)}

## How it was made

{how}

### Sources

{sources}

## Licenses

Each source keeps its own license, as the source states it (`source_licenses` in the front matter):

{_licenses(licenses)}{checks}

## Choices the paper left open

{choices}

## Citation

{_citations(manifest_like["sources"])}
"""
