"""What a Hugging Face Hub evaluation result of HTEB names: its task ids, the selection that made
the scores, and the benchmark's `eval.yaml` that the Hub attaches results to.

Both programs read it: hteb-generate writes `eval.yaml` into every revision, and hteb-score's
`.eval_results/hteb-<label>.yaml` uses the same task ids, so a result attaches to the dataset it was
scored on (https://huggingface.co/docs/hub/eval-results: an entry's `task_id` must be a task of
the benchmark dataset's eval.yaml).

A task id is `<row>.<column><tags>`: the row a dataset or `average`, the column one figure of the
result card (`columns`), the tags what made it, each left out at its default:

- `.mteb`: the protocol, when not `hteb`;
- `.judge3`, `.onerror_drop`: the judge filter and the error policy (`selection_tag`);
- `.sel_<8 hex>`: a part of the revision (`--datasets`, `--transformations`, `--seeds`, `--preset`),
  a short hash of the selection, stated in full in the result's notes. A dataset's figures
  depend on the transformations and seeds chosen, the average's on the datasets too.

A revision's eval.yaml declares every id its whole-revision results can have: each dataset's and
the average's columns, under each protocol, unfiltered and (for a judged revision) at the paper's
judge threshold 3. A result on a part of the revision, another threshold or another error policy
is ad hoc: its ids are not declared, and the scorer writes the eval.yaml tasks they need beside it
(`adhoc_eval_yaml`).

>>> selection_tag(min_judge=3.0, on_error="original")
'.judge3'
>>> Selection(protocol="mteb", min_judge=3.0).tag("STSBenchmark")
'.mteb.judge3'
>>> Selection(datasets=("SciFact", "STSBenchmark")).tag("STSBenchmark"), Selection(datasets=("SciFact",)).tag(AVERAGE)
('', '.sel_9ccb3909')
>>> task_id("STSBenchmark", "hteb_total", ".judge3")
'STSBenchmark.hteb_total.judge3'
>>> columns(["paraphrasing", "expansion", "translation", "keyboard_typos"], average=False)[:5]
['original', 'hteb_total', 'hteb_total_delta', 'hteb_lexical', 'hteb_lexical_delta']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from hteb_contract.common import yaml_input
from hteb_contract.taxonomy import INSTALLED, Taxonomy, of_manifest

DEFAULT_PROTOCOL = "hteb"
#: The protocols a revision's eval.yaml declares ids for: hteb-score's (a scorer test checks they match).
PROTOCOLS = ("hteb", "mteb")
DEFAULT_ON_ERROR = "original"
#: The judge threshold a judged revision's eval.yaml declares (the paper accepts an item at 3).
DECLARED_MIN_JUDGE = 3.0
AVERAGE = "average"
#: The Hub's identifier of the framework (an enumeration the Hub keeps, huggingface.js `eval.ts`):
#: hteb-score evaluates with mteb's task types and metrics.
EVALUATION_FRAMEWORK = "mteb"
_COUNTS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def description(taxonomy: Taxonomy = INSTALLED) -> str:
    """An eval.yaml's description: what its task ids name, the axes as the revision's taxonomy has them."""
    counted = ", ".join(a for a in taxonomy.members if taxonomy.in_total(a))
    beside = ", ".join(a for a in taxonomy.members if not taxonomy.in_total(a))
    return (
        "Harder Text Embedding Benchmark: MTEB tasks on original and LLM-transformed text, scored in points "
        f"(0-100). Task ids are <dataset or average>.<figure>: original, hteb_total, hteb_<axis> "
        f"({counted}{f'; {beside}, not in the total' if beside else ''}), each with a _delta against the Original, "
        "and for the average each transformation's mean and delta; suffixes name what else made a "
        "score: .mteb (protocol), .judge<Q> (judge filter), .onerror_<policy>, .sel_<hash> (a part of "
        "the revision, stated in each result's notes)."
    )


def selection_tag(*, min_judge: float | None, on_error: str) -> str:
    """`.judge3`, `.onerror_drop`, both or "": which items a run's variants were scored on."""
    parts = [] if min_judge is None else [f".judge{min_judge:g}"]
    return "".join(parts + ([] if on_error == DEFAULT_ON_ERROR else [f".onerror_{on_error}"]))


def task_id(row: str, column: str, tags: str = "") -> str:
    """The task id of one figure (`column`) of one dataset or the average (`row`) under `tags`."""
    return f"{row}.{column}{tags}"


def selection_hash(chosen: Mapping[str, Any]) -> str:
    """8 hex digits of sha256 over the canonical JSON of a selection: stable across runs and machines."""
    text = json.dumps(dict(chosen), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


@dataclass(frozen=True)
class Selection:
    """What made a result's figures: protocol, judge filter, error policy and the part of the
    revision scored (`datasets`, `transformations`, `seeds`: None for all the revision has, else
    sorted); `preset` is only stated (what it chose is in the three fields)."""

    protocol: str = DEFAULT_PROTOCOL
    min_judge: float | None = None
    on_error: str = DEFAULT_ON_ERROR
    datasets: tuple[str, ...] | None = None
    transformations: tuple[str, ...] | None = None
    seeds: tuple[int, ...] | None = None
    preset: str | None = None

    def chosen(self, row: str) -> dict[str, list[Any]]:
        """The part of the revision `row`'s figures rest on, where it is not all of it."""
        fields = {"transformations": self.transformations, "seeds": self.seeds}
        if row == AVERAGE:
            fields["datasets"] = self.datasets
        return {k: list(v) for k, v in fields.items() if v is not None}

    def tag(self, row: str) -> str:
        """The suffix of `row`'s task ids (see the module docstring)."""
        chosen = self.chosen(row)
        return (
            ("" if self.protocol == DEFAULT_PROTOCOL else f".{self.protocol}")
            + selection_tag(min_judge=self.min_judge, on_error=self.on_error)
            + (f".sel_{selection_hash(chosen)}" if chosen else "")
        )

    def declared(self, row: str) -> bool:
        """Whether a revision's eval.yaml declares `row`'s ids under this selection (a whole-revision
        result under a declared protocol, unfiltered or at the declared threshold, default errors)."""
        return (
            self.protocol in PROTOCOLS
            and self.on_error == DEFAULT_ON_ERROR
            and self.min_judge in (None, DECLARED_MIN_JUDGE)
            and not self.chosen(row)
        )

    def notes(self, row: str) -> str:
        """The selection in words, for a result's notes: every setting, the chosen part in full."""
        said = {
            "protocol": self.protocol,
            "min_judge": self.min_judge,
            "on_error": self.on_error,
            "preset": self.preset,
        }
        words = [f"{k}={'none' if v is None else f'{v:g}' if isinstance(v, float) else v}" for k, v in said.items()]
        chosen = self.chosen(row)
        words += [
            f"{k}={','.join(map(str, chosen[k]))}" if k in chosen else f"{k}=all of the revision"
            for k in (["datasets"] if row == AVERAGE else []) + ["transformations", "seeds"]
        ]
        return "; ".join(words)


def columns(transformations: Iterable[str], *, average: bool, taxonomy: Taxonomy = INSTALLED) -> list[str]:
    """The figures a result card has for a row whose variants are `transformations`: Original, the
    HTEB total (all the paper's axes present) and each axis present, each with its delta against the
    Original; the average also has each transformation's mean and delta. The axes are `taxonomy`'s:
    the revision's (its manifest's specs), this release's for one made before them."""
    held = set(transformations)
    axes = [a for a, members in taxonomy.members.items() if held & set(members)]
    out = ["original"]
    if all(a in axes for a in taxonomy.paper_axes):
        out += ["hteb_total", "hteb_total_delta"]
    for axis in axes:
        out += [f"hteb_{axis}", f"hteb_{axis}_delta"]
    if average:
        for t in (t for t in taxonomy.transformations if t in held):
            out += [t, f"{t}_delta"]
    return out


def describe(column: str, taxonomy: Taxonomy = INSTALLED) -> str:
    """What a column measures, in words (points throughout), by `taxonomy`'s axes."""
    base, delta = (column[: -len("_delta")], True) if column.endswith("_delta") else (column, False)
    if base == "original":
        what = "Original: score on the untouched dataset"
    elif base == "hteb_total":
        what = f"HTEB total: mean of the paper's {_COUNTS[len(taxonomy.paper_axes)]} axes"
    elif base.startswith("hteb_"):
        axis = base.removeprefix("hteb_")
        what = f"HTEB {taxonomy.labels[axis]} axis" + ("" if taxonomy.in_total(axis) else " (not in the HTEB total)")
    else:
        what = f"{base} (mean over seeds and datasets)"
    return f"{what} minus the Original of the same datasets" if delta else what


def declared_tasks(
    variants: Mapping[str, Iterable[tuple[str, int]]], *, judged: bool, taxonomy: Taxonomy = INSTALLED
) -> list[dict[str, str]]:
    """eval.yaml's tasks for a revision whose datasets hold `variants` ((transformation, seed) pairs):
    every id a whole-revision result can have, a dataset's with its config (its items, one split per
    variant)."""
    held = {name: {t for t, _ in pairs} for name, pairs in variants.items()}
    rows = [(name, columns(ts, average=False, taxonomy=taxonomy)) for name, ts in held.items()]
    rows.append((AVERAGE, columns(set().union(*held.values()) if held else set(), average=True, taxonomy=taxonomy)))
    selections = [
        Selection(protocol=p, min_judge=j) for p in PROTOCOLS for j in (None, DECLARED_MIN_JUDGE) if judged or j is None
    ]
    return [
        {"id": task_id(row, column, s.tag(row)), **({} if row == AVERAGE else {"config": row})}
        for s in selections
        for row, names in rows
        for column in names
    ]


def _document(name: str, description: str, tasks: list[dict[str, str]]) -> str:
    """An eval.yaml with exactly the fields the Hub documents: name, description, evaluation_framework, tasks."""
    meta = {"name": name, "description": description, "evaluation_framework": EVALUATION_FRAMEWORK, "tasks": tasks}
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)


def eval_yaml(
    label: str, variants: Mapping[str, Iterable[tuple[str, int]]], *, judged: bool, taxonomy: Taxonomy = INSTALLED
) -> str:
    """The revision's `eval.yaml` (Hub benchmark datasets): every task id its results can have."""
    return _document(
        f"HTEB {label}".strip(), description(taxonomy), declared_tasks(variants, judged=judged, taxonomy=taxonomy)
    )


def revision_eval_yaml(manifest: Mapping[str, Any], variants: Mapping[str, Iterable[tuple[str, int]]]) -> str:
    """A revision's eval.yaml from its manifest (label, sources, judge) and each dataset's
    (transformation, seed) variants: what `write_revision` writes, and what the bundled sample's
    results are checked against."""
    held = {source["name"]: variants.get(source["name"], []) for source in manifest["sources"]}
    return eval_yaml(
        str(manifest.get("label") or ""), held, judged=manifest.get("judge") is not None, taxonomy=of_manifest(manifest)
    )


def adhoc_eval_yaml(label: str, tasks: Iterable[Mapping[str, str]], taxonomy: Taxonomy = INSTALLED) -> str:
    """The eval.yaml tasks a result's ad hoc ids need: to be added to the revision's eval.yaml on the
    Hub before its `.eval_results` attach (the revision does not declare them)."""
    return _document(
        f"HTEB {label}".strip(),
        description(taxonomy) + " These tasks are the ones this result needs beyond the revision's own eval.yaml.",
        [dict(t) for t in tasks],
    )


def declared_ids(text: str) -> set[str]:
    """The task ids an eval.yaml declares."""
    return {task["id"] for task in (yaml_input.loads(text, "eval.yaml") or {}).get("tasks", [])}
