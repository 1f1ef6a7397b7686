"""The transformation table (`transformations.yaml` beside this file): each transformation's axis,
steps, language plan, judge task, detectors and budget, stated once and read by both programs.

Why a table: a transformation once lived in five modules of two programs (its axis, its steps and
languages, its judge task, which error types apply, its token budget), each restating the names.
Now the taxonomy (hteb_contract.taxonomy), the generator's steps, plans, judge, detectors and
budget all read these rows; what stays code is behaviour (a prompt's text, a language plan, a
detector's rule, a noise perturbation), named by the rows. Adding a transformation is a row plus
its prompts (docs/extending/adding-a-transformation.md).

The file is checked on load: against `transformations.schema.json` first, then across rows (names
unique, an axis's rows together and in the axes' order, every axis used, templates and `check_as`
naming rows of the table). A bad row is one line naming the file, the row and what is wrong.

>>> table = transformation_table()
>>> spec = table.get("backtranslation")
>>> spec.axis, [s.template for s in spec.steps], spec.languages, spec.crosses_languages
('lexical', ['translate', 'translate'], 'item_pivot', True)
>>> [a.name for a in table.axes], table.get("numerisation").made_by
(['lexical', 'length', 'language', 'noise', 'sensitivity'], 'rules')
>>> table.template("expand").growth, table.get("summarisation").short_output
(6.0, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from hteb_contract.common import yaml_input
from hteb_contract.errors import ContractError
from hteb_contract.common.registry import Registry
from hteb_contract.specs.table import REQUIRED, Column, RowModel, TableFile

TABLE_PATH = Path(__file__).resolve().parent / "transformations.yaml"
SCHEMA_PATH = Path(__file__).resolve().parent / "transformations.schema.json"

_NAME = {"$ref": "#/$defs/name"}
LLM_ROWS = "LLM rows"  # a column an LLM row states and a rule row does not
RULE_COLUMNS = ("name", "axis", "made_by", "short", "needs", "meaning", "twin")  # all a rule row may state

AXES = RowModel(
    "axes",
    "the axes, in the paper's order",
    (
        Column("name", _NAME, "the axis's name, as a transformation's `axis` names it", REQUIRED),
        Column("label", {"type": "string", "minLength": 1}, "how tables and cards print it", REQUIRED),
        Column(
            "paper",
            {"type": "boolean"},
            "one of the paper's axes, whose mean alone is the HTEB total (Noise is reported beside it, never in it)",
            REQUIRED,
        ),
        Column(
            "own_revision",
            {"type": "boolean"},
            "its rules make revisions of their own, never mixed with another axis's rows (Sensitivity); such an "
            "axis is recorded in a revision's `specs` only when the revision uses it, so a revision made before "
            "the axis existed is remade as it was",
        ),
    ),
)
TEMPLATES = RowModel(
    "templates",
    "the prompt keys the LLM steps use, and the token budget of a step that uses one",
    (
        Column(
            "name",
            _NAME,
            "a prompt key: its text is in every prompt set of `hteb_generate.transform.transformations`",
            REQUIRED,
        ),
        Column(
            "growth",
            {"type": "number", "exclusiveMinimum": 0},
            "the room a step gets: max_tokens = growth x its input's tokens + 64, between the run's max_tokens "
            "and its ceiling (`hteb_generate.transform.budget`)",
            REQUIRED,
        ),
        Column(
            "expected",
            {"type": "number", "exclusiveMinimum": 0},
            "what a step is expected to write, in tokens of its input (what `hteb-generate plan` counts)",
            REQUIRED,
        ),
    ),
)
STEPS = RowModel(
    "steps",
    "the LLM calls of a transformation, in order",
    (
        Column("template", _NAME, "the template it uses, a row of `templates`", REQUIRED),
        Column(
            "language",
            {"enum": ["source", "target", "pivot"]},
            "the language it must answer in: the source text's, the target or the pivot",
            REQUIRED,
        ),
        Column(
            "check_as",
            _NAME,
            "an intermediate step's output is also checked with that transformation's detectors, in the "
            "step's language, and its errors count for the item",
        ),
    ),
)
ROWS = RowModel(
    "transformations",
    "one row per transformation, the rows of one axis together and in the axes' order (every table's and card's order)",
    (
        Column("name", _NAME, "the transformation's name in revisions, cards and `--transformations`", REQUIRED),
        Column("axis", _NAME, "its axis, a row of `axes`", REQUIRED),
        Column(
            "made_by",
            {"enum": ["llm", "rules"]},
            "`llm` (steps, a language plan, a judge task, detectors) or `rules` (a perturbation of "
            "`hteb_generate.transform.noise` under the same name: no LLM, never judged)",
            REQUIRED,
        ),
        Column.of_rows("steps", STEPS, "the LLM calls in order (the columns of `steps` below)", LLM_ROWS),
        Column(
            "languages",
            _NAME,
            "the language plan (`hteb_generate.transform.transformations.LANGUAGE_PLANS`): `source` (every step in "
            "the text's language), `run_target` (one target per run), `item_target` (a target drawn per text), "
            "`item_pivot` (a pivot drawn per text)",
            LLM_ROWS,
        ),
        Column(
            "judge_task",
            {"type": "string", "minLength": 1},
            "the intended transformation, as the judge's quality prompt states it",
            LLM_ROWS,
        ),
        Column(
            "detectors",
            {"type": "array", "uniqueItems": True, "items": _NAME},
            "the error types checked on the output (`hteb_generate.checks.detectors`), any order; a list several "
            "rows share is stated once, as a YAML anchor (`&every_check`) its rows name (`*every_check`)",
            LLM_ROWS,
        ),
        Column(
            "short_output",
            {"type": "boolean"},
            "the output is meant to be far shorter than its source, so `truncated`'s word rule applies only to "
            "sources of at most 3 words",
        ),
        Column(
            "needs",
            {"enum": ["layout", "digits", "case"]},
            "a rule row: what it needs of a text's script to change it, a key of "
            "`hteb_contract.specs.noise_scripts.NEEDS` (`layout`: a keyboard, `digits`: look-alike digits, `case`); "
            "without it the rule applies to every script",
        ),
        Column(
            "meaning",
            {"enum": ["changed", "kept"]},
            "a minimal-pair rule row (the Sensitivity axis): whether its edit changes the text's meaning or keeps it",
            "rows with a twin",
        ),
        Column(
            "twin",
            _NAME,
            "a minimal-pair rule row: the rule that edits the same span the other way (meaning kept for a changed "
            "row, changed for a kept one); the two rows name each other",
            "rows with a meaning",
        ),
        Column(
            "short",
            {"type": "string", "minLength": 1, "maxLength": 24},
            "how a narrow table heading names it (the findings tables, the leaderboard's rule columns); without it, "
            "its name spaced and capitalised",
        ),
    ),
)
ROWS = replace(
    ROWS,
    when={
        "if": {"properties": {"made_by": {"const": "llm"}}},
        "then": {"required": [c.name for c in ROWS.columns if c.needed == LLM_ROWS]},
        "else": {
            "description": "a rule-made row: " + ", ".join(RULE_COLUMNS) + " only",
            "additionalProperties": False,
            "properties": dict.fromkeys(RULE_COLUMNS, True),
        },
    },
)
PRESETS = RowModel(
    "presets",
    "named selections of hteb-score --preset",
    (
        Column("name", _NAME, "the preset's name (`--preset NAME`)", REQUIRED),
        Column("description", {"type": "string", "minLength": 1}, "its `--help` text", REQUIRED),
        Column(
            "slots",
            {"type": "array", "minItems": 1, "items": {"type": "array", "minItems": 1, "items": _NAME}},
            "per slot, the transformations that may fill it, the first a revision has winning; then one dataset per "
            "task type is taken (the revision's first that holds every chosen transformation); without slots: every "
            "dataset and transformation",
        ),
    ),
    min_rows=0,
)
#: transformations.yaml: its four tables. The checks across rows are `_check_rows`'.
TABLE_FILE = TableFile(
    "transformations.yaml",
    "HTEB transformation table",
    "transformations.yaml: the axes, the prompt templates with their token budgets, one row per transformation, "
    "and the scorer's presets. The checks across rows (names unique, an axis's rows together, templates, check_as "
    "and a preset's slots naming rows of the table) are hteb_contract.specs.transformations'.",
    (AXES, TEMPLATES, ROWS, PRESETS),
    required=("axes", "templates", "transformations"),
    defs={"name": {"type": "string", "pattern": "^[a-z][a-z_]*$"}},
)


@dataclass(frozen=True)
class Axis:
    """A robustness axis: its transformations, in the table's order, and its printed label;
    `paper`: one of the paper's axes, which alone make the HTEB total."""

    name: str
    label: str
    transformations: tuple[str, ...]
    paper: bool = True
    own_revision: bool = False  # its rules make revisions of their own (recorded only where used)


@dataclass(frozen=True)
class TemplateSpec:
    """A prompt key the LLM steps use, and the token budget of a step that uses it
    (hteb_generate.transform.budget): `growth` is its room, `expected` what it writes, in tokens of its input."""

    name: str
    growth: float
    expected: float


@dataclass(frozen=True)
class StepSpec:
    """One LLM call: which template, the language it must answer in (source, target or pivot) and,
    for an intermediate step, the transformation whose detectors also check its output. A table's
    steps hold the objects their names resolve to (`parse_transformation_table`): `budget`, the
    template's token budget, and `check`, the row `check_as` names, so nothing after the table looks
    a name up again."""

    template: str
    language: str
    check_as: str | None = None
    budget: TemplateSpec | None = field(default=None, compare=False)
    check: TransformationSpec | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class TransformationSpec:
    """One row of the table (what each field holds: its column in `ROWS`)."""

    name: str
    axis: str
    made_by: str  # "llm" or "rules"
    steps: tuple[StepSpec, ...] = ()
    languages: str | None = None  # the language plan; None for a rule
    judge_task: str | None = None  # None for a rule: never judged
    detectors: tuple[str, ...] = ()
    short_output: bool = False
    short: str | None = None  # a narrow heading's name for it; None: its column label
    needs: str | None = None  # a rule's need of a script (noise_scripts.NEEDS); None: it applies to every script
    meaning: str | None = None  # a minimal-pair rule's: "changed" or "kept"; None for every other row
    twin: str | None = None  # a minimal-pair rule's other rule (same span, the other meaning)

    @property
    def is_rule(self) -> bool:
        """Made by a noise rule of the generator, not by an LLM."""
        return self.made_by == "rules"

    @property
    def template_keys(self) -> tuple[str, ...]:
        """The templates its steps use, each once, in step order."""
        return tuple(dict.fromkeys(s.template for s in self.steps))

    @property
    def crosses_languages(self) -> bool:
        """Some step answers in another language than the source's (translation, backtranslation)."""
        return any(s.language != "source" for s in self.steps)


@dataclass(frozen=True)
class PresetSpec:
    """A named selection of `hteb-score --preset`: per slot, the transformations that may fill it (the first
    a revision has wins); no slots: every dataset and transformation. `description` is its --help text."""

    name: str
    description: str
    slots: tuple[tuple[str, ...], ...] | None = None


@dataclass(frozen=True)
class TransformationTable:
    """The axes, the templates, the transformations and the presets, in the table's order."""

    axes: tuple[Axis, ...]
    templates: tuple[TemplateSpec, ...]
    transformations: tuple[TransformationSpec, ...]
    presets: tuple[PresetSpec, ...] = ()
    _rows: Registry[TransformationSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rows: dict[str, TransformationSpec] = {}
        for row in self.transformations:
            rows.setdefault(row.name, row)  # a name twice is _check_rows' one-line error, not the registry's
        object.__setattr__(self, "_rows", Registry("transformation", entries=rows))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.transformations)

    def get(self, name: str) -> TransformationSpec:
        """The row of `name`; an unknown name is a one-line error with the closest known name."""
        return self._rows.get(name)

    def template(self, name: str) -> TemplateSpec:
        return next(t for t in self.templates if t.name == name)


def _where(path: Any, data: dict[str, Any]) -> str:
    """`transformations[3] (expansion).steps[0]` for a jsonschema error path."""
    parts = list(path)
    text = ""
    for index, part in enumerate(parts):
        if isinstance(part, int):
            text += f"[{part}]"
            row = data
            for key in parts[: index + 1]:
                row = row[key]
            if index == 1 and isinstance(row, dict) and isinstance(row.get("name"), str):
                text += f" ({row['name']})"
        else:
            text += f".{part}" if text else str(part)
    return text or "the table"


def _check_schema(data: Any, source: str) -> None:
    error = jsonschema.exceptions.best_match(TABLE_FILE.validator.iter_errors(data))
    if error is not None:
        where = _where(error.absolute_path, data) if isinstance(data, dict) else "the table"
        raise ContractError(f"{source}: {where}: {error.message}")


def _unique(names: list[str], what: str, source: str) -> None:
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ContractError(f"{source}: {what} {twice[0]!r} is defined twice")


def _check_rows(table: TransformationTable, source: str) -> None:
    """What one row cannot say about itself: names unique, axes and templates known, an axis's rows
    together and in the axes' order, every axis used, `check_as` on an intermediate step naming an
    LLM transformation, a preset's slots naming rows."""
    _unique([a.name for a in table.axes], "axis", source)
    _unique([t.name for t in table.templates], "template", source)
    _unique(list(table.names), "transformation", source)
    axes = [a.name for a in table.axes]
    templates = {t.name for t in table.templates}
    llm = {t.name for t in table.transformations if not t.is_rule}
    for index, row in enumerate(table.transformations):
        where = f"{source}: transformations[{index}] ({row.name})"
        if row.axis not in axes:
            raise ContractError(f"{where}: unknown axis {row.axis!r}; known: {', '.join(axes)}")
        if index and axes.index(row.axis) < axes.index(table.transformations[index - 1].axis):
            raise ContractError(f"{where}: its axis {row.axis!r} must stand with its other rows, in the axes' order")
        for number, step in enumerate(row.steps):
            if step.template not in templates:
                raise ContractError(
                    f"{where}: steps[{number}]: unknown template {step.template!r}; "
                    f"known: {', '.join(sorted(templates))}"
                )
            if step.check_as is not None and number == len(row.steps) - 1:
                raise ContractError(
                    f"{where}: steps[{number}]: check_as is for an intermediate step (the last "
                    "step is checked as the transformation itself)"
                )
            if step.check_as is not None and step.check_as not in llm:
                raise ContractError(
                    f"{where}: steps[{number}]: check_as {step.check_as!r} is no LLM transformation of the table"
                )
        _check_twin(table, row, where)
    unused = [a.name for a in table.axes if not a.transformations]
    if unused:
        raise ContractError(f"{source}: axis {unused[0]!r} has no transformation")
    _unique([p.name for p in table.presets], "preset", source)
    for preset in table.presets:
        for name in (n for slot in preset.slots or () for n in slot):
            if name not in table.names:
                raise ContractError(f"{source}: preset {preset.name!r} names {name!r}, not a row of the table")


def _check_twin(table: TransformationTable, row: TransformationSpec, where: str) -> None:
    """A minimal pair: both rows state meaning and twin, name each other, share an axis, and differ in meaning."""
    if (row.meaning is None) != (row.twin is None):
        raise ContractError(f"{where}: a minimal-pair row states both meaning and twin, or neither")
    if row.twin is None:
        return
    if row.twin not in table.names:
        raise ContractError(f"{where}: twin {row.twin!r} is not a row of the table")
    other = table.get(row.twin)
    if other.twin != row.name or other.axis != row.axis or other.meaning == row.meaning:
        raise ContractError(f"{where}: twin {row.twin!r} must name it back, on the same axis, with the other meaning")


def parse_transformation_table(data: Any, source: str = "transformations.yaml") -> TransformationTable:
    """The table from its parsed YAML; a bad row is a one-line ContractError naming `source`."""
    _check_schema(data, source)
    rows = tuple(
        TransformationSpec(
            name=row["name"],
            axis=row["axis"],
            made_by=row["made_by"],
            steps=tuple(StepSpec(s["template"], s["language"], s.get("check_as")) for s in row.get("steps", ())),
            languages=row.get("languages"),
            judge_task=row.get("judge_task"),
            detectors=tuple(row.get("detectors", ())),
            short_output=row.get("short_output", False),
            short=row.get("short"),
            needs=row.get("needs"),
            meaning=row.get("meaning"),
            twin=row.get("twin"),
        )
        for row in data["transformations"]
    )
    table = TransformationTable(
        axes=tuple(
            Axis(
                a["name"],
                a["label"],
                tuple(t.name for t in rows if t.axis == a["name"]),
                a["paper"],
                a.get("own_revision", False),
            )
            for a in data["axes"]
        ),
        templates=tuple(TemplateSpec(t["name"], float(t["growth"]), float(t["expected"])) for t in data["templates"]),
        transformations=rows,
        presets=tuple(
            PresetSpec(p["name"], p["description"], None if "slots" not in p else tuple(map(tuple, p["slots"])))
            for p in data.get("presets", ())
        ),
    )
    _check_rows(table, source)
    return _resolved(table)


def _resolved(table: TransformationTable) -> TransformationTable:
    """The table with every step holding its template's budget and the row its `check_as` names (that row as
    parsed: a check reads its detectors and language facts, never its own steps)."""
    templates = {t.name: t for t in table.templates}
    rows = {row.name: row for row in table.transformations}

    def steps(row: TransformationSpec) -> tuple[StepSpec, ...]:
        return tuple(
            replace(s, budget=templates[s.template], check=None if s.check_as is None else rows[s.check_as])
            for s in row.steps
        )

    return replace(table, transformations=tuple(replace(row, steps=steps(row)) for row in table.transformations))


def load_transformation_table(path: Path) -> TransformationTable:
    """The table in the YAML file `path`; unreadable YAML or a bad row is a one-line ContractError."""
    return parse_transformation_table(yaml_input.read(path), path.name)


@cache
def transformation_table() -> TransformationTable:
    """HTEB's table: the packaged transformations.yaml, read once."""
    return load_transformation_table(TABLE_PATH)


def is_pair_rule(name: str) -> bool:
    """A minimal-pair rule: its row names a twin (the Sensitivity axis); False for an unknown name."""
    table = transformation_table()
    return name in table.names and table.get(name).twin is not None


def transformation_spec(name: str) -> TransformationSpec:
    """The row of `name` in HTEB's table; an unknown name is a one-line error with a hint."""
    return transformation_table().get(name)
