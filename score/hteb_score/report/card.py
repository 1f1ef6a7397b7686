"""Result cards: result_card.json (schemas/result_card.v1), result_card.md, and mteb-format JSON
for every variant (mteb 2.x TaskResult layout, each variant under its own task name, floats rounded
to 6 decimals: docs/mteb-results.md), built and rendered here and written by report/outputs.py.
A card names the protocol and, per dataset, the evaluation settings its evaluator used, and lists
its `flags`: an undefined score is null (never NaN) with a flag saying why. Every file is strict
JSON; a non-finite number anywhere else is refused in one line before anything is written."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hteb_contract.common.escape import md_code, md_text
from hteb_contract.taxonomy import AXES, AXIS_LABELS, AXIS_OF, PAPER_AXES
from hteb_contract.validation import SCHEMA_VERSIONS, validate
from hteb_score import __version__
from hteb_score.evaluators.protocol import Protocol
from hteb_score.flags import Flag
from hteb_contract.hub_eval import selection_tag
from hteb_score.mteb_interop.layout import DATASET_KEY, variant_task_name
from hteb_score.report.formatting import confidence_interval, number, p_value
from hteb_score.scoring.aggregate import aggregate, aggregate_flags
from hteb_score.scoring.corpus_robustness import markdown_lines as corpus_robustness_lines
from hteb_score.scoring.error_policy import ErrorPolicyCount
from hteb_score.scoring.parts import package_versions
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.strict_json import finite_or_none

@dataclass(frozen=True)
class CardSubject:
    """What a card says was scored and how: the model, its encoding, the data (`dataset`: provenance and
    the datasets scored), the protocol, the error policy and selection, and the package versions the
    scores were made with (None: this process's)."""

    model: Mapping[str, Any]
    encode: Mapping[str, Any]
    dataset: Mapping[str, Any]
    protocol: Protocol
    on_error: str
    selection: Mapping[str, Any] | None = None
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


def build_card(subject: CardSubject, results: CardResults) -> dict[str, Any]:
    """Assemble and validate a result card. A non-finite score value becomes null, flagged
    `undefined_score` unless a flag of that variant already says why; each undefined main score is
    flagged as skipped."""
    protocol, mteb_tasks = subject.protocol, results.mteb_tasks
    scores, flags = _defined_scores(results.scores, list(results.flags))
    flags += aggregate_flags(scores)
    card = {
        "schema_version": SCHEMA_VERSIONS["result_card"],
        "model": dict(subject.model),
        "encode": dict(subject.encode),
        "dataset": dict(subject.dataset),
        "hteb_score_version": __version__,
        "protocol": protocol.name,
        "evaluation": {"protocol": protocol.name, "description": protocol.description,
                       "mteb_version": protocol.mteb_version,
                       "datasets": {name: dict(used) for name, used in results.settings.items()},
                       **({} if mteb_tasks is None else {"mteb_tasks": dict(mteb_tasks)})},
        "on_error": subject.on_error,
        "selection": dict(subject.selection or {"preset": None, "min_judge": None}),
        "package_versions": dict(subject.packages) if subject.packages is not None else package_versions(),
        "scores": [record.to_json() for record in scores],
        "aggregates": aggregate(scores),
        "error_policy": [count.to_json() for count in results.error_policy],
        "statistics": results.statistics,
        "timings": {k: float(v) for k, v in results.timings.items()},
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "flags": [f.to_json() for f in flags],
    }
    if results.corpus_robustness is not None:
        card["corpus_robustness"] = dict(results.corpus_robustness)
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
                flags.append(Flag("undefined_score", f"subset {record.subset!r}: {record.metric} is {value!r}, "
                                  "not a number; written as null", *record.variant))
            value = None
        out.append(record.with_value(value))
    return out, flags


def _encoder_line(model: Mapping[str, Any]) -> list[str]:
    """What loaded the model and why (cards written before the reason was recorded: no line)."""
    if "encoder_reason" not in model:
        return []
    return [f"- encoder: {md_text(model.get('encoder', 'sentence-transformers'))} ({md_text(model['encoder_reason'])})"]


def _mteb_model_lines(meta: Mapping[str, Any] | None) -> list[str]:
    """The mteb registry entry the model was encoded through, and the prompt each task got."""
    if meta is None:
        return []
    lines = [f"- encoded through mteb: {md_code(meta['name'])} revision {md_code(meta['revision'] or 'unknown')}, "
             f"loader {md_code(meta['loader'])}"
             + ("" if meta["prompts_known"] else "; its prompts are not known to hteb-score")]
    for task, prompts in sorted(meta["prompts"].items()):
        given = ", ".join(f"{md_text(kind)} {md_text(json.dumps(text)) if text else 'none'}"
                          for kind, text in sorted(prompts.items()) if kind != "type")
        lines.append(f"  - {md_text(task)} ({md_text(prompts['type'])}): {given}")
    return lines


def _python_model_lines(python: Mapping[str, Any] | None) -> list[str]:
    """--encoder python: the factory and what its encoder declares."""
    if python is None:
        return []
    return [f"- encoded by the factory {md_code(python['factory'])}, which declares "
            + (f"identity {md_code(python['identity'])}" if python["identity"] else "no identity")]


def _encode_line(card: Mapping[str, Any]) -> str:
    """Batch size, precision, device and prompts; a factory's engine keeps its precision and device to itself."""
    encode = card["encode"]
    runtime = ("precision and device the factory's engine's own" if "python" in card["model"]
               else md_text(f"{_runtime(encode)}, {encode['device']}"))
    prompts = "per mteb task as above" if "mteb" in card["model"] else md_text(encode["prompts"] or "none")
    return f"- encode: batch {encode['batch_size']}, {runtime}, prompts {prompts}"


def render_markdown(card: Mapping[str, Any]) -> str:
    """A card a person reads: header with provenance, per-dataset table, per-transformation table."""
    agg = card["aggregates"]
    data = card["dataset"]
    beside = _beside_total(agg)
    lines = [
        f"# HTEB result card: {md_text(card['model']['model_id'])}",
        "",
        f"- model revision: {md_code(card['model']['revision'] or 'unknown')}"
        + (f" (pinned by --model-revision {md_code(card['model']['pinned'])})" if card["model"].get("pinned") else ""),
        *_encoder_line(card["model"]),
        *_mteb_model_lines(card["model"].get("mteb")),
        *_python_model_lines(card["model"].get("python")),
        f"- dataset: {md_code(data['repo_id'])} label {md_code(data['label'])} revision {md_code(data['revision'])}",
        (f"- protocol: **{md_text(card['protocol'])}**; items with errors: {md_text(card['on_error'])}; "
         f"hteb-score {md_text(card['hteb_score_version'])}"),
        _encode_line(card),
        "- software: " + ", ".join(md_text(f"{name} {version}") for name, version in card["package_versions"].items())
        + " (k-means results depend on scikit-learn: MiniBatchKMeans samples differently from 1.9 on)",
        "",
        "Scores in points (x100); deltas are HTEB - Original.",
        *_beside_total_lines(agg, beside),
        "",
        f"| | Original | {' | '.join(AXIS_LABELS[a] for a in PAPER_AXES)} | HTEB | delta |"
        + "".join(f" {AXIS_LABELS[a]} | {AXIS_LABELS[a]} delta |" for a in beside),
        "|---|---|" + "---|" * len(PAPER_AXES) + "---|---|" + "---|---|" * len(beside),
        f"| **model** | {number(agg['original'])}{_on(agg['hteb_datasets'], agg)} | "
        + " | ".join(_axis_cell(agg, a) for a in PAPER_AXES)
        + f" | {number(agg['hteb_total'])}{_on(agg['hteb_datasets'], agg)} | {number(agg['delta'], sign=True)} |"
        + "".join(f" {_axis_cell(agg, a)} | {number(_pair(agg, a).get('delta'), sign=True)} |" for a in beside),
    ]
    for row in agg["per_dataset"]:
        hteb = number(row["hteb"]) + (f" ± {row['hteb_sd']:.2f}" if row.get("hteb_sd") is not None else "")
        lines.append(f"| {md_text(row['dataset'])} ({md_text(row['metric'])}) | {number(row['original'])} | "
                     + " | ".join(number(row["axes"].get(a)) for a in PAPER_AXES)
                     + f" | {hteb} | {number(row['delta'], sign=True)} |"
                     + _beside_cells(row["axes"], row["original"], beside))
    lines += _paired_lines(agg)
    if agg["per_transformation"]:
        lines += ["", "## Per transformation (mean over datasets)", "",
                  "| transformation | axis | mean | delta | datasets |", "|---|---|---|---|---|"]
        for name, entry in agg["per_transformation"].items():
            mean, delta = number(entry["mean"]), number(entry["delta"], sign=True)
            lines.append(f"| {md_text(name)} | {AXIS_LABELS[AXIS_OF[name]]} | {mean} | {delta} | {entry['datasets']} |")
    stats = card.get("statistics")
    if stats and stats.get("per_transformation"):
        families = [line for a in beside
                    for line in (f"Holm corrects the paper's transformations and {AXIS_LABELS[a]}'s apart.", "")]
        lines += ["", "## Effects across datasets (Hodges-Lehmann shift, Wilcoxon, Holm)", "", *families,
                  "| transformation | HL shift | 95% CI | p | p (Holm) |", "|---|---|---|---|---|"]
        for name, entry in stats["per_transformation"].items():
            shift, ci = number(entry.get("hl_shift"), sign=True), confidence_interval(entry)
            p, p_holm = p_value(entry.get("p_value")), p_value(entry.get("p_holm"))
            lines.append(f"| {md_text(name)} | {shift} | {ci} | {p} | {p_holm} |")
    lines += corpus_robustness_lines(card.get("corpus_robustness"))
    lines += _flag_lines(card.get("flags", []))
    lines += _evaluation_lines(card["evaluation"])
    flagged = [e for e in card["error_policy"] if e["with_errors"]]
    if flagged:
        lines += ["", f"## Items whose transformation kept errors (policy: {md_text(card['on_error'])})", "",
                  "| dataset | transformation | seed | items | with errors |", "|---|---|---|---|---|"]
        lines += [f"| {md_text(e['dataset'])} | {md_text(e['transformation'])} | {e['seed']} | {e['items']} | "
                  f"{e['with_errors']} |" for e in flagged]
    lines += _selection_lines(card.get("selection") or {}, card["error_policy"])
    timings = card["timings"]
    lines += ["", f"Embedded {int(timings.get('unique_texts', 0))} unique texts "
              f"({int(timings.get('texts_encoded', 0))} encoded, the rest from cache) for "
              f"{int(timings.get('texts_requested', 0))} requested; total {timings.get('total_s', 0):.1f} s.", ""]
    return "\n".join(lines)


def _selection_lines(selection: Mapping[str, Any], policy: Sequence[Mapping[str, Any]]) -> list[str]:
    """The preset and the judge filter's counts per variant (kept = items - dropped)."""
    lines = []
    if selection.get("preset"):
        lines += ["", f"Preset: **{md_text(selection['preset'])}** (`--preset`: the datasets and transformations above)."]
    if selection.get("min_judge") is not None:
        lines += ["", f"## Quality filter: judge mean >= {selection['min_judge']:g}", "",
                  "Transformed items below it are not scored; items no judge rated are kept.", "",
                  "| dataset | transformation | seed | items | kept | dropped | unjudged |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {md_text(e['dataset'])} | {md_text(e['transformation'])} | {e['seed']} | {e['items']} | "
                  f"{e['items'] - e['judge_dropped']} | {e['judge_dropped']} | {e['unjudged']} |" for e in policy]
    return lines


def _pair(agg: Mapping[str, Any], axis: str) -> Mapping[str, Any]:
    return agg["axis_pairs"].get(axis, {})


def _on(n: int, agg: Mapping[str, Any]) -> str:
    """` (6 of 8 datasets)` beside a model-level figure that rests on fewer datasets than the card has."""
    return f" ({n} of {agg['datasets']} datasets)" if 0 < n < agg["datasets"] else ""


def _axis_cell(agg: Mapping[str, Any], axis: str) -> str:
    pair = _pair(agg, axis)
    return number(pair.get("score")) + (_on(pair["datasets"], agg) if pair else "")


def _paired_lines(agg: Mapping[str, Any]) -> list[str]:
    """Each axis against the Original of the same datasets, and where the headline's Original
    differs from the Original over all datasets, both."""
    lines = ["", "## Per axis (each against the Original of the same datasets)", "",
             "| axis | datasets | Original | score | delta |", "|---|---|---|---|---|"]
    lines += [f"| {AXIS_LABELS[a]} | {p['datasets']} of {agg['datasets']} | {number(p['original'])} | "
              f"{number(p['score'])} | {number(p['delta'], sign=True)} |" for a, p in agg["axis_pairs"].items()]
    if agg["hteb_total"] is not None and agg["hteb_datasets"] < agg["datasets"]:
        lines += ["", f"The HTEB total rests on {agg['hteb_datasets']} of {agg['datasets']} datasets; the headline "
                  f"Original is theirs ({number(agg['original'])}); over all {agg['datasets']} it is "
                  f"{number(agg['original_all'])}."]
    return lines if agg["axis_pairs"] else []


def _beside_total(agg: Mapping[str, Any]) -> list[str]:
    """The axes outside the HTEB total (Noise) that the card has a score for: only those get columns,
    so a card without them reads as before."""
    scored = set(agg["per_axis"]).union(*(row["axes"] for row in agg["per_dataset"]))
    return [a for a in AXES if a not in PAPER_AXES and a in scored]


def _beside_total_lines(agg: Mapping[str, Any], beside: Sequence[str]) -> list[str]:
    if not beside:
        return []
    names = ", ".join(AXIS_LABELS[a] for a in beside)
    lines = ["", f"{names} is reported beside HTEB, not in its total: HTEB is the mean of the paper's axes "
             f"({', '.join(AXIS_LABELS[a] for a in PAPER_AXES)}), comparable with the paper."]
    if agg["hteb_total"] is None:
        lines.append("No transformation of the paper's axes was scored: the HTEB total is undefined (-), "
                     f"and only {names} is reported.")
    return lines


def _beside_cells(axes: Mapping[str, float], original: float | None, beside: Sequence[str]) -> str:
    cells = []
    for a in beside:
        value = axes.get(a)
        delta = None if value is None or original is None else value - original
        cells += [number(value), number(delta, sign=True)]
    return "".join(f" {c} |" for c in cells)


def _flag_lines(flags: list[Mapping[str, Any]]) -> list[str]:
    if not flags:
        return []
    lines = ["", "## Flags", "", "Scores given with a caveat or not at all (null: undefined).", "",
             "| dataset | variant | flag | what |", "|---|---|---|---|"]
    for f in flags:
        variant = f["transformation"] or "-"
        if f["seed"] is not None:
            variant += f" seed {f['seed']}"
        lines.append(f"| {md_text(f['dataset'] or '-')} | {md_text(variant)} | {md_code(f['code'])} | {md_text(f['message'])} |")
    return lines


def _evaluation_lines(evaluation: Mapping[str, Any]) -> list[str]:
    lines = ["", "## Evaluation settings", "",
             f"Protocol **{evaluation['protocol']}**: {evaluation['description']}.", "",
             "| dataset | settings |", "|---|---|"]
    for name, used in evaluation["datasets"].items():
        lines.append(f"| {md_text(name)} | " + "; ".join(md_text(f"{key}: {_setting(value)}") for key, value in used.items())
                     + " |")
    return lines


def _runtime(encode: Mapping[str, Any]) -> str:
    """`float32`, or `onnx int8 (max diff vs torch fp32 7.99e-02)` for another backend or precision."""
    if "backend" not in encode or (encode["backend"], encode["precision"]) == ("torch", "fp32"):
        return encode["dtype"]
    diff = encode.get("max_diff_vs_torch_fp32")
    return f"{encode['backend']} {encode['precision']}" + ("" if diff is None else f" (max diff vs torch fp32 {diff:.2e})")


def _setting(value: Any) -> str:
    if value is None:
        return "-"
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def mteb_result_files(card: Mapping[str, Any], results: Mapping[tuple[str, str, int | None], Any],
                 tasks: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """mteb-format JSON of every scored variant: {task name: TaskResult-like dict}, each variant under
    its own name (`hteb_score.mteb_interop.layout.variant_task_name`: mteb's cache keys results by name).
    The original's dataset_revision is the source's Hub pin (mteb's data), a variant's the HTEB
    revision; two datasets of one mteb task (SemRel2024, SemRel2024-eng) share its file, each subset once."""
    selection = selection_tag(min_judge=(card.get("selection") or {}).get("min_judge"), on_error=card["on_error"])
    out: dict[str, dict[str, Any]] = {}
    for (dataset, transformation, seed), result in results.items():
        task = tasks[dataset]
        split = task["eval_split"]
        name = variant_task_name(task.get("mteb_task") or dataset, card["dataset"]["revision"], transformation, seed,
                                 selection)
        revision = card["dataset"]["revision"]
        if transformation == "original" and task.get("hf_revision") is not None:
            revision = task["hf_revision"]
        entry = out.setdefault(name, {
            "dataset_revision": revision,
            "task_name": name,
            "mteb_version": card["evaluation"]["mteb_version"],
            "evaluation_protocol": f"hteb-score {card['hteb_score_version']} ({card['protocol']})",
            DATASET_KEY: dataset,
            "scores": {split: []},
            "evaluation_time": None,
            "kg_co2_emissions": None,
        })
        held = {e["hf_subset"] for e in entry["scores"][split]}
        if held:  # a second dataset of the same task: the file names the task, not one dataset
            entry.pop(DATASET_KEY, None)
        for subset, details in result.details.items():
            if subset in held:
                continue
            scores: dict[str, Any] = {k: _rounded(v) for k, v in details.items() if isinstance(v, (int, float))}
            scores.update(main_score=_rounded(result.subsets[subset]), hf_subset=subset,
                          languages=[subset] if subset != "default" else list(task["languages"]))
            entry["scores"][split].append(scores)
    return out


def _rounded(value: float | None) -> float | None:
    """6 decimals as mteb writes them; an undefined value (None, NaN, inf) is null."""
    return None if value is None or finite_or_none(value) is None else round(float(value), 6)
