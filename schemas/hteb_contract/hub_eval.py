"""What a Hugging Face Hub evaluation result of HTEB names: its task ids, the selection that made
the scores, and the benchmark's `eval.yaml` that the Hub attaches results to.

Both programs read it: hteb-generate writes `eval.yaml` into every revision, and hteb-score's
`.eval_results/hteb.yaml` uses the same task ids, so a result attaches to the dataset it was
scored on. A filtered or `--on-error` run is a different selection of items: its task ids carry
it (`STSBenchmark.hteb_total.judge3`), so it never overwrites the unfiltered result.

>>> selection_tag(min_judge=3.0, on_error="original")
'.judge3'
>>> task_id("STSBenchmark", "hteb_total", ".judge3")
'STSBenchmark.hteb_total.judge3'
"""

from __future__ import annotations

from collections.abc import Iterable

import yaml

from hteb_contract.taxonomy import AXES, AXIS_LABELS, in_total

DEFAULT_ON_ERROR = "original"
AVERAGE = "average"
#: The score columns a result reports per dataset (and as averages over datasets), with what they measure.
COLUMNS = {"original": "score on the untouched dataset (points)",
           "hteb_total": "HTEB total: mean of the paper's three axes (points)",
           **{f"hteb_{a}": f"HTEB {AXIS_LABELS[a]} axis" + ("" if in_total(a) else ", not in the total") + " (points)"
              for a in AXES}}


def selection_tag(*, min_judge: float | None, on_error: str) -> str:
    """`.judge3`, `.onerror_drop`, both or "": which items a run's variants were scored on."""
    parts = [] if min_judge is None else [f".judge{min_judge:g}"]
    return "".join(parts + ([] if on_error == DEFAULT_ON_ERROR else [f".onerror_{on_error}"]))


def task_id(dataset: str, column: str, selection: str = "") -> str:
    """The task id of one score column of one dataset (or `average`) under a selection."""
    return f"{dataset}.{column}{selection}"


def eval_yaml(label: str, datasets: Iterable[str]) -> str:
    """The benchmark's `eval.yaml` (Hub community evals): name, description, framework, metric and
    one task per dataset (and the averages) x score column, for the default selection."""
    names = [*sorted(datasets), AVERAGE]
    tasks = [{"id": task_id(d, column), "description": f"{d}: {what}"} for d in names for column, what in COLUMNS.items()]
    meta = {"name": f"HTEB {label}".strip(),
            "description": "Harder Text Embedding Benchmark: MTEB tasks on original and LLM-transformed text; "
                           "scores in points, filtered selections under task ids with their selection appended",
            "evaluation_framework": "hteb-score", "metrics": [{"id": "points"}], "tasks": tasks}
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
