"""Three sections of a model's card, written from their blocks of result_card.json: the per-item measures
(scoring/item_measures.py makes the block), Sensitivity (scoring/sensitivity.py) and corpus robustness
(scoring/corpus_robustness.py). Scoring computes the blocks; this room writes them for a reader."""

from __future__ import annotations

from collections.abc import Mapping
from statistics import mean
from typing import Any

from hteb_contract.common.escape import md_text
from hteb_score.report.formatting import number, share_interval
from hteb_score.scoring.sensitivity import reading, readings
from hteb_score.stats.ranking import MIN_INTERVAL_PAIRS


def _cell(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _baselines(values: Mapping[str, float | None]) -> str:
    """A dataset's baseline drift: its one value, or the range over its languages."""
    defined = sorted(v for v in values.values() if v is not None)
    if not defined:
        return "-"
    if len(values) == 1:
        return _cell(defined[0])
    return f"{_cell(defined[0])}-{_cell(defined[-1])} ({len(values)} languages)"


def item_measures_lines(block: Mapping[str, Any] | None) -> list[str]:
    """The card's section: one row per transformation and dataset."""
    if not block:
        return []
    lines = [
        "",
        "## Per-item measures (label-free; not in the HTEB total)",
        "",
        "Per transformed text the transformation changed, in a subset its figure counts: drift = 1 - cosine of "
        f"its embedding with its original's; pass = drift <= {block['pass_drift']}; calibrated = drift / the "
        "model's baseline drift between unrelated texts of the language (1 = as far as an unrelated text), "
        f"calibrated pass = <= {block['calibrated_pass']}; top-{block['top_k']} changed (retrieval queries); "
        "order discordance = per pair, the share of the other pairs of its subset it changed order with (STS, "
        "STR, pair classification); rho = Spearman of drift with the judge's quality over the rated items, with its "
        f"95% interval (Bonett-Wright) from {MIN_INTERVAL_PAIRS} rated items on (their cost: the last line).",
        "",
        "| transformation | dataset | items | unchanged | left out | drift mean | p50 | p95 | pass | baseline "
        "| calibrated mean | calibrated pass | top-10 changed | order discordance | rho drift [95%] (rated) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for transformation, by_dataset in block["per_transformation"].items():
        for dataset, s in by_dataset.items():
            lines.append(
                f"| {md_text(transformation)} | {md_text(dataset)} | {s['n_items']} "
                f"| {_cell(s['unchanged_share'])} | {_cell(s['left_out_share'])} | {_cell(s['drift_mean'])} "
                f"| {_cell(s['drift_p50'])} | {_cell(s['drift_p95'])} | {_cell(s['pass_rate'])} "
                f"| {_baselines(s['baseline_drift'])} | {_cell(s['calibrated_drift_mean'])} "
                f"| {_cell(s['calibrated_pass_rate'])} | {_cell(s['top10_changed_share'])} "
                f"| {_cell(s['order_discordance'])} | {_quality_cell(s)} |"
            )
    return lines


def _quality_cell(summary: Mapping[str, Any]) -> str:
    """`0.412 [+0.21, +0.58] (40)`: rho, its interval where one is given, and the rated items it rests on."""
    rho = summary["quality_spearman"]["drift"]
    if rho is None:
        return "-"
    interval = (summary.get("quality_spearman_interval") or {}).get("drift")
    shown = "" if interval is None else f" [{number(interval[0], sign=True)}, {number(interval[1], sign=True)}]"
    return f"{_cell(rho)}{shown} ({summary['n_rated']})"


def _heard(figure: Mapping[str, Any]) -> str:
    """What the figure says (`reading`), as the card prints it."""
    found = reading(figure)
    return "-" if found is None else "hears it" if found == "hears" else found


def _pairs_heard(figures: Mapping[str, Mapping[str, Any]]) -> str:
    """'hears 3 of 4 pairs (a, b, c), inverted on 1 (d)': the section's headline, what the pairs (pair -> figure)
    say together, each count with the pairs it counts (a kind no pair is, but hearing, left out)."""
    kinds = readings(figures)
    words = {
        "hears": f"hears {len(kinds['hears'])} of {len(figures)} pair{'s' if len(figures) != 1 else ''}",
        "blind": f"blind to {len(kinds['blind'])}",
        "inverted": f"inverted on {len(kinds['inverted'])}",
    }
    return ", ".join(
        f"{said} ({', '.join(map(md_text, kinds[kind]))})" if kinds[kind] else said
        for kind, said in words.items()
        if kinds[kind] or kind == "hears"
    )


def _mean_of_pairs(figures: list[Mapping[str, Any]], mean_of: str, value: float | None) -> str:
    """The mean of the pairs' accuracies, said to be unweighted where the pairs' item counts differ."""
    items = sorted(f["items"] for f in figures)
    fewest = f"{items[0]:,} item{'s' if items[0] != 1 else ''}"
    weighs = f" (unweighted: a pair of {fewest} weighs as much as one of {items[-1]:,})"
    return f"Mean of the pairs' {mean_of}{weighs if items[0] != items[-1] else ''}: {_cell(value)}."


def sensitivity_lines(block: Mapping[str, Any] | None) -> list[str]:
    """The card's section: per minimal pair, then per pair and dataset (language rows in the JSON). Its
    headline is what the pairs say (how many it hears); the mean of their accuracies follows, said for what it is."""
    if not block:
        return []
    lines = [
        "",
        f"## Sensitivity (minimal pairs; not in the HTEB total): {_pairs_heard({p['pair']: p for p in block['pairs']})}",
        "",
        "Per item both rules of a pair edited (a meaning-changing rule and its twin, which edits the same span "
        "keeping the meaning): accuracy = the share whose twin is nearer the original than the changed text "
        "(0.5 blind, 1 separates every item; a tie counts 1/2), with its exact 95% (Clopper-Pearson) interval; margin = the "
        "same gap in units of the distance to an unrelated text; detectable = the smallest accuracy these items "
        "tell from 0.5 four times in five (exact binomial test, 5%): a blind figure below it may be a cue heard "
        "weakly. A task score that drops under a meaning change is the model listening, not fragility. "
        + _mean_of_pairs(block["pairs"], "accuracies", block["overall"]),
        "",
        "| pair | dataset | items | accuracy | 95% CI | detectable | margin | reads |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for figure in block["pairs"]:
        lines.append(
            f"| **{md_text(figure['pair'])}** | all | {figure['items']} | {_cell(figure['accuracy'])} "
            f"| {share_interval(figure['ci'])} | {_cell(figure['detectable'])} | {_cell(figure['margin'])} | {_heard(figure)} |"
        )
        for row in (r for r in block["datasets"] if r["pair"] == figure["pair"]):
            lines.append(
                f"| {md_text(row['pair'])} | {md_text(row['dataset'])} | {row['items']} | {_cell(row['accuracy'])} "
                f"| {share_interval(row['ci'])} | {_cell(row['detectable'])} | {_cell(row['margin'])} | {_heard(row)} |"
            )
    return lines + _hard_lines(block) + _top1_flip_lines(block)


def _hard_line(row: Mapping[str, Any], pair: str, dataset: str) -> str:
    hard = row["hard"]
    return (
        f"| {pair} | {md_text(dataset)} | {_cell(row['accuracy'])} | {md_text(', '.join(hard['twins']) or '-')} "
        f"| {hard['items']} | {_cell(hard['accuracy'])} | {share_interval(hard['ci'])} | {_cell(hard['detectable'])} "
        f"| {_heard(hard)} |"
    )


def _hard_lines(block: Mapping[str, Any]) -> list[str]:
    """The hard figures (--hard-twins-from) beside the rule twins' accuracy, per pair and per pair and dataset;
    none where the run had no second revision."""
    if "hard" not in block["method"]:
        return []
    hard = {f["pair"]: f["hard"] for f in block["pairs"] if f["hard"]["items"]}
    lines = [
        "",
        f"### Hard twins: {_pairs_heard(hard) + ' with a hard item' if hard else 'no pair has a hard item'}",
        "",
        "The same accuracy with an LLM revision's meaning-keeping rewrite of the same original text as "
        "the twin (dataset.hard_twins names the revision), over the items whose original it rewrote. The rewrite "
        "differs from the original in more than the edited span, so token overlap does not win it."
        + (" " + _mean_of_pairs(list(hard.values()), "hard accuracies", block["hard_overall"]) if hard else ""),
        "",
        "| pair | dataset | rule-twin accuracy | hard twins | items | hard accuracy | 95% CI | detectable | reads |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for figure in block["pairs"]:
        lines.append(_hard_line(figure, f"**{md_text(figure['pair'])}**", "all"))
        lines += [
            _hard_line(r, md_text(r["pair"]), r["dataset"]) for r in block["datasets"] if r["pair"] == figure["pair"]
        ]
    return lines


def _top1_flip_lines(block: Mapping[str, Any]) -> list[str]:
    """The retrieval datasets' top-1 flips (NevIR's question), per pair and dataset; none where no row has one."""
    rows = [r for r in block["datasets"] if "top1_flip" in r]
    if not rows:
        return []
    lines = [
        "",
        "Retrieval queries: top-1 flip = the share of items whose twin query's top-1 document is still the "
        "original's while the changed query's is not (cosine over the whole corpus; a tie goes to the earlier "
        "document), with its 95% exact interval and its two parts. Chance is about 0, not 0.5 (a model of random "
        "vectors rarely keeps a top-1 for the twin); it asks whether the answer moves, not whether the new one is "
        "right, so the accuracy above stays the primary figure.",
        "",
        "| pair | dataset | items | top-1 flip | 95% CI | twin keeps | changed loses |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        flip = row["top1_flip"]
        lines.append(
            f"| {md_text(row['pair'])} | {md_text(row['dataset'])} | {flip['items']} | {_cell(flip['share'])} "
            f"| {share_interval(flip['ci'])} | {_cell(flip['twin_keeps'])} | {_cell(flip['changed_loses'])} |"
        )
    return lines


def corpus_robustness_lines(section: Mapping[str, Any] | None) -> list[str]:
    """The card's section: per dataset, nDCG@10 (points) original and perturbed, retention, harmonic mean."""
    if not section:
        return []
    lines = [
        "",
        "## Corpus robustness (SAGE Task 5; not in the HTEB total or the Noise axis)",
        "",
        "Original queries against each perturbed corpus; retention = nDCG@10(perturbed corpus) / "
        "nDCG@10(original corpus); robustness = harmonic mean of the retentions.",
        "",
        "| dataset | perturbation | nDCG@10 | retention |",
        "|---|---|---|---|",
    ]
    for name, block in section["datasets"].items():
        lines.append(f"| {md_text(name)} | original | {_cell(_points(block['original']), 2)} | |")
        for transformation, by_seed in block["perturbed"].items():
            values = [v for v in by_seed.values() if v is not None]
            shown = _cell(_points(mean(values)), 2) if len(values) == len(by_seed) else "-"
            lines.append(
                f"| {md_text(name)} | {md_text(transformation)} | {shown} | {_cell(block['retention'][transformation])} |"
            )
        lines.append(f"| **{md_text(name)}** | **harmonic mean** | | **{_cell(block['harmonic_mean'])}** |")
    return lines


def _points(value: float | None) -> float | None:
    return None if value is None else 100 * value
