"""Result cards: result_card.json (schemas/result_card.v1), result_card.md, and mteb-format JSON
for every variant (mteb 2.x TaskResult layout, each variant under its own task name, floats rounded
to 6 decimals: docs/mteb-results.md), built and rendered here and written by report/card/outputs.py.
A card names the protocol and, per dataset, the evaluation settings its evaluator used, and lists
its `flags`: an undefined score is null (never NaN) with a flag saying why. Every file is strict
JSON; a non-finite number anywhere else is refused in one line before anything is written."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hteb_contract.common.escape import md_block, md_code, md_text
from hteb_contract.specs.noise_scripts import APPLIED_SHARE
from hteb_contract.taxonomy import BEFORE_SPECS, RECORDED, Taxonomy, recorded_in
from hteb_contract.validation import SCHEMA_VERSIONS, validate
from hteb_score import __version__
from hteb_score.evaluators.protocol import Protocol
from hteb_score.flags import Flag
from hteb_contract.hub_eval import selection_tag
from hteb_score.mteb_interop.layout import DATASET_KEY, variant_task_name
from hteb_score.report.card.card_sections import corpus_robustness_lines, item_measures_lines, sensitivity_lines
from hteb_score.report.formatting import confidence_interval, number, p_value
from hteb_score.report.rendering import MARKDOWN
from hteb_score.scoring.aggregate import aggregate, aggregate_flags
from hteb_score.scoring.coverage import Coverage
from hteb_score.scoring.error_policy import ErrorPolicyCount
from hteb_score.scoring.parts import package_versions
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.scoring.statistics import effect_least_p
from hteb_score.strict_json import finite_or_none


@dataclass(frozen=True)
class CardSubject:
    """What a card says was scored and how: the model, its encoding, the data (`dataset`: provenance and
    the datasets scored), the protocol, the error policy and selection, the axes the revision was made by
    (stated in the card when the revision states them) and the package versions the scores were made with
    (None: this process's)."""

    model: Mapping[str, Any]
    encode: Mapping[str, Any]
    dataset: Mapping[str, Any]
    protocol: Protocol
    on_error: str
    selection: Mapping[str, Any] | None = None
    taxonomy: Taxonomy = BEFORE_SPECS
    packages: Mapping[str, str] | None = None


@dataclass(frozen=True)
class CardResults:
    """What a run produced for its card: score records, the time it took, each dataset's evaluation
    `settings`, the error-policy counts, the `statistics` block, the `flags` the run stated, the
    corpus-robustness section (outside the aggregates) and `mteb_tasks` (dataset -> its mteb task:
    how `compare` matches mteb result files)."""

    scores: Sequence[ScoreRecord]
    timings: Mapping[str, float]
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    error_policy: Sequence[ErrorPolicyCount] = ()
    statistics: dict[str, Any] | None = None
    flags: Sequence[Flag] = ()
    corpus_robustness: Mapping[str, Any] | None = None
    mteb_tasks: Mapping[str, str | None] | None = None
    coverage: Sequence[Coverage] = ()
    item_measures: Mapping[str, Any] | None = None  # label-free per-item robustness, outside the aggregates
    sensitivity: Mapping[str, Any] | None = None  # minimal pairs: does the model hear meaning (never aggregated)


def build_card(subject: CardSubject, results: CardResults) -> dict[str, Any]:
    """Assemble and validate a result card. A non-finite score value becomes null, flagged
    `undefined_score` unless a flag of that variant already says why; each undefined main score is
    flagged as skipped."""
    protocol, mteb_tasks = subject.protocol, results.mteb_tasks
    taxonomy = subject.taxonomy
    scores, flags = _defined_scores(results.scores, list(results.flags))
    flags += aggregate_flags(scores, taxonomy)
    card = {
        "schema_version": SCHEMA_VERSIONS["result_card"],
        "model": dict(subject.model),
        "encode": dict(subject.encode),
        "dataset": dict(subject.dataset),
        "hteb_score_version": __version__,
        "protocol": protocol.name,
        "evaluation": {
            "protocol": protocol.name,
            "description": protocol.description,
            "mteb_version": protocol.mteb_version,
            "datasets": {name: dict(used) for name, used in results.settings.items()},
            **({} if mteb_tasks is None else {"mteb_tasks": dict(mteb_tasks)}),
        },
        "on_error": subject.on_error,
        "selection": dict(subject.selection or {"preset": None, "min_judge": None}),
        "package_versions": dict(subject.packages) if subject.packages is not None else package_versions(),
        "scores": [record.to_json() for record in scores],
        "aggregates": aggregate(scores, taxonomy),
        "error_policy": [count.to_json() for count in results.error_policy],
        "statistics": results.statistics,
        "timings": {k: float(v) for k, v in results.timings.items()},
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "flags": [f.to_json() for f in flags],
    }
    if taxonomy.source == RECORDED:  # else read with this release's table, as a card made before the block was
        card["taxonomy"] = taxonomy.to_json()
    if results.coverage:  # a card merged from parts scored before coverage was recorded has none, as before
        card["coverage"] = [c.to_json() for c in results.coverage]
    if results.corpus_robustness is not None:
        card["corpus_robustness"] = dict(results.corpus_robustness)
    if results.item_measures is not None:
        card["item_measures"] = dict(results.item_measures)
    if results.sensitivity is not None:
        card["sensitivity"] = dict(results.sensitivity)
    validate("result_card", card, what="result card")
    return card


def _defined_scores(scores: Sequence[ScoreRecord], flags: list[Flag]) -> tuple[list[ScoreRecord], list[Flag]]:
    """Score records with every non-finite value as None, and the flags with one `undefined_score`
    per variant that had none."""
    said = {(f.dataset, f.transformation, f.seed) for f in flags if f.code in ("undefined_score", "filtered_too_far")}
    out = []
    for record in scores:
        value = record.value
        if value is not None and finite_or_none(value) is None:
            if record.variant not in said:
                said.add(record.variant)
                flags.append(
                    Flag(
                        "undefined_score",
                        f"subset {record.subset!r}: {record.metric} is {value!r}, not a number; written as null",
                        *record.variant,
                    )
                )
            value = None
        out.append(record.with_value(value))
    return out, flags


def _mteb_view(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The mteb registry entry the model was encoded through, and the prompt each task got."""
    if meta is None:
        return None
    tasks = [
        {
            "name": task,
            "type": prompts["type"],
            "given": ", ".join(
                f"{md_text(kind)} {md_text(json.dumps(text)) if text else 'none'}"
                for kind, text in sorted(prompts.items())
                if kind != "type"
            ),
        }
        for task, prompts in sorted(meta["prompts"].items())
    ]
    return {**meta, "tasks": tasks}


def _encode_view(card: Mapping[str, Any]) -> dict[str, Any]:
    """Batch size, precision, device and prompts; a factory's engine keeps its precision and device to itself."""
    encode = card["encode"]
    runtime = (
        "precision and device the factory's engine's own"
        if "python" in card["model"]
        else md_text(f"{_runtime(encode)}, {encode['device']}")
    )
    prompts = "per mteb task as above" if "mteb" in card["model"] else md_text(encode["prompts"] or "none")
    return {"batch_size": encode["batch_size"], "runtime": runtime, "prompts": prompts}


#: result_card.md's words (report/templates/): the template reads the figures `markdown_view` formats from the
#: JSON. What came from a user is escaped where it is written (hteb_contract.common.escape): `md` in prose and
#: table cells, `code` as a code span; the view below escapes the table cells it builds.
TEMPLATE = MARKDOWN.get_template("result_card.md.j2")


def _moved(effect: Mapping[str, Any]) -> list[str]:
    """An effect's reach, from its counts: the datasets whose score moved (the test's n; a zero difference
    carries no sign) of those it rests on, and the least p the exact test can give that many."""
    total, zero = effect.get("n_datasets"), effect.get("n_zero")
    if total is None or zero is None:
        return ["-", "-"]
    return [f"{total - zero} of {total}", p_value(effect_least_p(effect))]


def render_markdown(card: Mapping[str, Any]) -> str:
    """A card a person reads: header with provenance, per-dataset table, per-transformation table
    (the words in report/templates/result_card.md.j2, the figures from `markdown_view`)."""
    return TEMPLATE.render(markdown_view(card))


def markdown_view(card: Mapping[str, Any]) -> dict[str, Any]:
    """Every figure result_card.md shows, formatted from the card's JSON, by the name the template uses."""
    agg, taxonomy = card["aggregates"], recorded_in(card)
    labels, paper = taxonomy.labels, list(taxonomy.paper_axes)
    beside = _beside_total(agg, taxonomy)
    stats = card.get("statistics") or {}
    selection = card.get("selection") or {}
    timings = card["timings"]
    averaged = _p_values_averaged(card)
    return {
        "citation": md_block(card["dataset"]["citation"], "bibtex") if card["dataset"].get("citation") else None,
        "model": card["model"],
        "mteb": _mteb_view(card["model"].get("mteb")),
        "python": card["model"].get("python"),
        "null_model": card["model"].get("null"),
        "collapsed": [md_text(f["dataset"]) for f in card.get("flags", []) if f["code"] == "collapsed"],
        "dataset": card["dataset"],
        "axes": _axes_source(card, taxonomy),
        "protocol": card["protocol"],
        "on_error": card["on_error"],
        "version": card["hteb_score_version"],
        "encode": _encode_view(card),
        "software": ", ".join(md_text(f"{name} {version}") for name, version in card["package_versions"].items()),
        "beside": [labels[a] for a in beside],
        "beside_names": ", ".join(labels[a] for a in beside),
        "paper_labels": [labels[a] for a in paper],
        "hteb_undefined": agg["hteb_total"] is None,
        "model_cells": _model_cells(agg, paper, beside),
        "dataset_rows": [_dataset_cells(row, paper, beside, row["dataset"] in averaged) for row in agg["per_dataset"]],
        "p_values_averaged": [md_text(name) for name in averaged],
        "axis_pairs": [
            [
                labels[a],
                f"{p['datasets']} of {agg['datasets']}",
                number(p["original"]),
                number(p["score"]),
                number(p["delta"], sign=True),
            ]
            for a, p in agg["axis_pairs"].items()
        ],
        "hteb_rests": (
            {
                "datasets": agg["hteb_datasets"],
                "all": agg["datasets"],
                "original": number(agg["original"]),
                "original_all": number(agg["original_all"]),
            }
            if agg["hteb_total"] is not None and agg["hteb_datasets"] < agg["datasets"]
            else None
        ),
        "per_transformation": [
            [
                md_text(name),
                labels[taxonomy.axis_of(name)],
                number(entry["mean"]),
                number(entry["delta"], sign=True),
                entry["datasets"],
            ]
            for name, entry in sorted(agg["per_transformation"].items(), key=lambda kv: taxonomy.order(kv[0]))
        ],
        "effects": [
            [
                md_text(name),
                number(entry.get("hl_shift"), sign=True),
                confidence_interval(entry),
                p_value(entry.get("p_value")),
                p_value(entry.get("p_holm")),
                *_moved(entry),
            ]
            for name, entry in sorted(
                (stats.get("per_transformation") or {}).items(), key=lambda kv: taxonomy.order(kv[0])
            )
        ],
        "corpus_robustness": corpus_robustness_lines(card.get("corpus_robustness")),
        "item_measures": item_measures_lines(card.get("item_measures")),
        "sensitivity": sensitivity_lines(card.get("sensitivity")),
        "flags": [_flag_cells(f) for f in card.get("flags", [])],
        "coverage": [coverage_cells(c) for c in card.get("coverage", [])],
        "noise_coverage": any(
            c["transformation"] in taxonomy.transformations_of("noise") for c in card.get("coverage", [])
        ),
        "applied_share": f"{APPLIED_SHARE:.0%}",
        "evaluation": {
            **card["evaluation"],
            "rows": [
                [md_text(name), "; ".join(md_text(f"{key}: {_setting(value)}") for key, value in used.items())]
                for name, used in card["evaluation"]["datasets"].items()
            ],
        },
        "kept_errors": [
            [md_text(e["dataset"]), md_text(e["transformation"]), e["seed"], e["items"], e["with_errors"]]
            for e in card["error_policy"]
            if e["with_errors"]
        ],
        "preset": selection.get("preset"),
        "min_judge": None if selection.get("min_judge") is None else f"{selection['min_judge']:g}",
        "judge_rows": [
            [
                md_text(e["dataset"]),
                md_text(e["transformation"]),
                e["seed"],
                e["items"],
                e["items"] - e["judge_dropped"],
                e["judge_dropped"],
                e["unjudged"],
            ]
            for e in card["error_policy"]
            if selection.get("min_judge") is not None
        ],
        "timings": {
            "unique": int(timings.get("unique_texts", 0)),
            "encoded": int(timings.get("texts_encoded", 0)),
            "requested": int(timings.get("texts_requested", 0)),
            "total": f"{timings.get('total_s', 0):.1f}",
            "item_measures": _item_measures_cost(timings),
        },
    }


def _axes_source(card: Mapping[str, Any], taxonomy: Taxonomy) -> str | None:
    """Whose axes the card's figures were aggregated by (`Taxonomy.source`: the revision's, or this release's for a
    revision made before it recorded them); None for dataset folders (their Original alone: no axis)."""
    return None if str(card["dataset"]["repo_id"]).startswith("local:") else taxonomy.source


def _item_measures_cost(timings: Mapping[str, float]) -> str | None:
    """The per-item measures' time, and its share of the run's (None where the card has no such timing)."""
    spent, total = timings.get("item_measures_s"), timings.get("total_s", 0.0)
    if spent is None:
        return None
    return f"{spent:.2f} s" + (f" ({100 * spent / total:.1f}% of it)" if total > 0 else "")


def _model_cells(agg: Mapping[str, Any], paper: Sequence[str], beside: Sequence[str]) -> list[str]:
    """The model row: Original, each paper axis, HTEB and its delta, then each axis beside the total."""
    cells = [
        number(agg["original"]) + _on(agg["hteb_datasets"], agg),
        *(_axis_cell(agg, a) for a in paper),
        number(agg["hteb_total"]) + _on(agg["hteb_datasets"], agg),
        number(agg["delta"], sign=True),
    ]
    for a in beside:
        cells += [_axis_cell(agg, a), number(_pair(agg, a).get("delta"), sign=True)]
    return cells


def _p_values_averaged(card: Mapping[str, Any]) -> list[str]:
    """The datasets scored by mteb's deprecated summarization evaluator (the mteb protocol's SummEval): their main
    score averages each document's Spearman with its p-value, so chance there is near 0.25, not 0."""
    return [name for name, used in card["evaluation"]["datasets"].items() if used.get("deprecated_evaluator")]


def _dataset_cells(
    row: Mapping[str, Any], paper: Sequence[str], beside: Sequence[str], p_values_averaged: bool
) -> list[str]:
    hteb = number(row["hteb"]) + (f" ± {row['hteb_sd']:.2f}" if row.get("hteb_sd") is not None else "")
    cells = [
        f"{md_text(row['dataset'])} ({md_text(row['metric'])}{'†' if p_values_averaged else ''})",
        number(row["original"]),
        *(number(row["axes"].get(a)) for a in paper),
        hteb,
        number(row["delta"], sign=True),
    ]
    for a in beside:
        value = row["axes"].get(a)
        delta = None if value is None or row["original"] is None else value - row["original"]
        cells += [number(value), number(delta, sign=True)]
    return cells


def _pair(agg: Mapping[str, Any], axis: str) -> Mapping[str, Any]:
    return agg["axis_pairs"].get(axis, {})


def _on(n: int, agg: Mapping[str, Any]) -> str:
    """` (6 of 8 datasets)` beside a model-level figure that rests on fewer datasets than the card has."""
    return f" ({n} of {agg['datasets']} datasets)" if 0 < n < agg["datasets"] else ""


def _axis_cell(agg: Mapping[str, Any], axis: str) -> str:
    pair = _pair(agg, axis)
    return number(pair.get("score")) + (_on(pair["datasets"], agg) if pair else "")


def _beside_total(agg: Mapping[str, Any], taxonomy: Taxonomy) -> list[str]:
    """The axes outside the HTEB total (Noise) that the card has a score for: only those get columns,
    so a card without them reads as before."""
    scored = set(agg["per_axis"]).union(*(row["axes"] for row in agg["per_dataset"]))
    return [a for a in taxonomy.members if not taxonomy.in_total(a) and a in scored]


def _flag_cells(flag: Mapping[str, Any]) -> list[str]:
    variant = flag["transformation"] or "-"
    if flag["seed"] is not None:
        variant += f" seed {flag['seed']}"
    return [md_text(flag["dataset"] or "-"), md_text(variant), md_code(flag["code"]), md_text(flag["message"])]


def coverage_cells(entry: Mapping[str, Any]) -> list[str]:
    """One variant's row of "What each figure rests on": its subsets, its texts changed, what was left out."""
    left = "; ".join(
        f"{md_text(e['subset'])} ({e['reason'].replace('_', ' ')}: {md_text(e['detail'])})" for e in entry["left_out"]
    )
    changed = f"{entry['changed']} of {entry['items']} ({entry['changed_share']:.0%})"
    return [
        md_text(entry["dataset"]),
        md_text(f"{entry['transformation']} seed {entry['seed']}"),
        f"{entry['subsets_scored']} of {entry['subsets_total']}",
        changed + (" **mostly unchanged**" if entry["flagged_unchanged"] else ""),
        left or "-",
    ]


def _runtime(encode: Mapping[str, Any]) -> str:
    """`float32`, or `onnx int8 (max diff vs torch fp32 7.99e-02)` for another backend or precision."""
    if "backend" not in encode or (encode["backend"], encode["precision"]) == ("torch", "fp32"):
        return encode["dtype"]
    diff = encode.get("max_diff_vs_torch_fp32")
    return f"{encode['backend']} {encode['precision']}" + (
        "" if diff is None else f" (max diff vs torch fp32 {diff:.2e})"
    )


def _setting(value: Any) -> str:
    if value is None:
        return "-"
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def mteb_result_files(
    card: Mapping[str, Any], results: Mapping[tuple[str, str, int | None], Any], tasks: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """mteb-format JSON of every scored variant: {task name: TaskResult-like dict}, each variant under
    its own name (`hteb_score.mteb_interop.layout.variant_task_name`: mteb's cache keys results by name).
    The original's dataset_revision is the source's Hub pin (mteb's data), a variant's the HTEB
    revision; two datasets of one mteb task (SemRel2024, SemRel2024-eng) share its file, each subset once."""
    selection = selection_tag(min_judge=(card.get("selection") or {}).get("min_judge"), on_error=card["on_error"])
    out: dict[str, dict[str, Any]] = {}
    for (dataset, transformation, seed), result in results.items():
        task = tasks[dataset]
        split = task["eval_split"]
        name = variant_task_name(
            task.get("mteb_task") or dataset, card["dataset"]["revision"], transformation, seed, selection
        )
        revision = card["dataset"]["revision"]
        if transformation == "original" and task.get("hf_revision") is not None:
            revision = task["hf_revision"]
        entry = out.setdefault(
            name,
            {
                "dataset_revision": revision,
                "task_name": name,
                "mteb_version": card["evaluation"]["mteb_version"],
                "evaluation_protocol": f"hteb-score {card['hteb_score_version']} ({card['protocol']})",
                DATASET_KEY: dataset,
                "scores": {split: []},
                "evaluation_time": None,
                "kg_co2_emissions": None,
            },
        )
        held = {e["hf_subset"] for e in entry["scores"][split]}
        if held:  # a second dataset of the same task: the file names the task, not one dataset
            entry.pop(DATASET_KEY, None)
        for subset, details in result.details.items():
            if subset in held:
                continue
            scores: dict[str, Any] = {k: _rounded(v) for k, v in details.items() if isinstance(v, (int, float))}
            scores.update(
                main_score=_rounded(result.subsets[subset]),
                hf_subset=subset,
                languages=[subset] if subset != "default" else list(task["languages"]),
            )
            entry["scores"][split].append(scores)
    return out


def _rounded(value: float | None) -> float | None:
    """6 decimals as mteb writes them; an undefined value (None, NaN, inf) is null."""
    return None if value is None or finite_or_none(value) is None else round(float(value), 6)
