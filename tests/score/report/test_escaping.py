"""Names from anyone's machine rendered safely (issue 35): a model and a dataset named with any Unicode text,
markup, pipes, line breaks, terminal escape sequences, `$...$` or `..` give a card, a comparison.md, a
report.html, a findings table, plots, folder names and terminal lines of the same shape as plain names
do, with no markup of their own. The oracles are the parsers that read these files: Python-Markdown
with the docs site's extensions (mkdocs.yml), markdown-it-py's CommonMark with GFM tables (what GitHub
reads), and the standard library's HTML parser."""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from fuzz import examples

from hteb_contract.common.escape import (
    csv_cell,
    md_block,
    html_text,
    md_code,
    md_text,
    md_unescape,
    plot_label,
    safe_filename,
    terminal,
    visible,
)
from hteb_generate.revision import manifest_md
from hteb_score.cli import main
from hteb_score.mteb_interop.layout import result_folder
from hteb_score.report.compare import comparison_files
from hteb_score.report.compare import html_report
from hteb_score.report.compare import plots
from hteb_score.report.compare.analysis import compare
from hteb_score.report.card.card import render_markdown
from hteb_score.report.site.findings import model_groups, noise_effects, noise_models, noise_subsets
from hteb_score.report.compare.inputs import load_card

FINDINGS = Path(__file__).resolve().parents[3] / "docs" / "findings" / "noise2-1339"
CARDS = sorted(FINDINGS.glob("*/result_card.json"))
DATASET = "IsiZuluNews"  # a dataset of every committed card, renamed in each (a test checks it is)

#: docs/findings.md's tables drawn from a comparison's cards alone (the item tables read items.parquet beside them)
COMPARISON_TABLES = (noise_models, noise_effects, model_groups, noise_subsets)

#: The cases a security report tries first; the whole of Unicode (surrogates included) comes after them.
TARGETED = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<!-- hidden -->",
    "a|b",
    "| x | y |",
    "x\ny",
    "\r\n| injected | row |\n# heading",
    "\x1b]0;owned\x07\x1b[2J\x1b[31mred",
    "\x9b31m",
    "$x^2$",
    "$\\frac",
    "..",
    "../../etc",
    "a/b\\c",
    "# heading #",
    "`code` ``x`` ```",
    "*em* _em_ __s__ ~~s~~",
    "snake_case_name",
    "[link](javascript:alert(1))",
    "![i](x)",
    "&amp; &#60; &lt;",
    "\u202eevil",
    "\ud800",
    "\\",
    "\\|",
    "a\u2028b",
    "\x00\x02\x03",
    " lead and trail ",
    "https://example.com/<x>",
]
NAMES = st.one_of(st.sampled_from(TARGETED), st.text(st.characters(exclude_categories=()), min_size=1, max_size=24))
FEW = settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

PY_MARKDOWN = {
    "extensions": ["tables", "toc", "admonition", "pymdownx.superfences"],
    "extension_configs": {"toc": {"permalink": True}},
}
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")  # a name in a script DejaVu lacks
COMMONMARK = MarkdownIt("commonmark").enable(["table", "strikethrough"])


class Markup(HTMLParser):
    """The elements of an HTML text, each as (tag, attribute names), and its text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, ...]] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, *sorted(name for name, _ in attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.tags.append(("/" + tag,))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.append(("<!--",))


def renderings(text: str) -> list[Markup]:
    """A Markdown text as the docs site and as GitHub render it."""
    return [Markup(markdown.markdown(text, **PY_MARKDOWN)), Markup(COMMONMARK.render(text))]


def shown(name: str) -> str:
    """A name as a Markdown reader sees it: one line, controls as escapes."""
    return visible(re.sub(r"[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]", " ", name))


def renamed(value: Any, old: str, new: str) -> Any:
    """`value` with every string and key `old` as `new`."""
    if isinstance(value, dict):
        return {(new if k == old else k): renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v, old, new) for v in value]
    return new if value == old else value


def cards(model: str, dataset: str) -> list[dict[str, Any]]:
    """The committed cards, the first model named `model`, the dataset ArguAna named `dataset`."""
    read = [renamed(json.loads(path.read_text(encoding="utf-8")), DATASET, dataset) for path in CARDS]
    read[0]["model"]["model_id"] = model
    return read


def comparison(tmp: Path, model: str, dataset: str):
    paths = []
    for i, card in enumerate(cards(model, dataset)):
        path = tmp / f"{i}.json"
        path.write_text(json.dumps(card), encoding="utf-8")
        paths.append(path)
    return compare([load_card(path) for path in paths], n_splits=10)


@pytest.fixture(scope="module")
def plain_card() -> str:
    return render_markdown(cards("plain-model", "PlainSet")[0])


@pytest.fixture(scope="module")
def plain_comparison(tmp_path_factory: pytest.TempPathFactory):
    return comparison(tmp_path_factory.mktemp("plain"), "plain-model", "PlainSet")


@FEW
@given(model=NAMES, dataset=NAMES)
def test_a_card_with_any_names_has_the_shape_and_markup_of_a_plain_one(model, dataset, plain_card):
    text = render_markdown(cards(model, dataset)[0])
    assert len(text.splitlines()) == len(plain_card.splitlines())
    for mine, plain in zip(renderings(text), renderings(plain_card)):
        assert mine.tags == plain.tags
    assert f"HTEB result card: {shown(model)}".strip() in "".join(renderings(text)[0].text)


@FEW
@given(model=NAMES, dataset=NAMES)
def test_a_comparison_with_any_names_has_the_shape_and_markup_of_a_plain_one(
    model, dataset, plain_comparison, tmp_path
):
    mine = comparison(tmp_path, model, dataset)
    text, plain = mine.to_markdown(), plain_comparison.to_markdown()
    assert len(text.splitlines()) == len(plain.splitlines())
    for rendered, expected in zip(renderings(text), renderings(plain)):
        assert rendered.tags == expected.tags
    for table_of in COMPARISON_TABLES:  # docs/findings.md's tables of a comparison
        table, plain_table = table_of(mine), table_of(plain_comparison)
        assert [line.count("|") - line.count("\\|") for line in table.splitlines()] == [
            line.count("|") for line in plain_table.splitlines()
        ], table_of.__name__
        for rendered, expected in zip(renderings(table), renderings(plain_table)):
            assert rendered.tags == expected.tags, table_of.__name__
    page = Markup(html_report.render(mine, {}))
    assert page.tags == Markup(html_report.render(plain_comparison, {})).tags
    assert visible(model, keep="\n\t") in "".join(page.text)


@settings(max_examples=4, deadline=None)
@given(model=NAMES, dataset=NAMES)
def test_plots_draw_any_names(model, dataset, tmp_path_factory):
    drawn = comparison_files.figures(comparison(tmp_path_factory.mktemp("plots"), model, dataset))
    assert set(drawn) == {"axis_dumbbell.png", "delta_heatmap.png"}


@settings(max_examples=examples(40), deadline=None)
@given(name=NAMES)
def test_each_rule_alone(name, tmp_path_factory):
    """Markdown text and code spans read back as the name; HTML text and attributes too; the terminal
    gets no control character; a matplotlib label draws; a file name stays in its folder."""
    for rendered in renderings(f"x{md_text(name)}x"):
        assert rendered.tags == [("p",), ("/p",)] and "".join(rendered.text).rstrip("\n") == f"x{shown(name)}x"
    assert md_unescape(md_text(name)) == shown(name)
    for rendered in renderings(f"x {md_code(name)} x"):
        assert rendered.tags == [("p",), ("code",), ("/code",), ("/p",)]
        assert "".join(rendered.text).strip().startswith("x") and shown(name).strip() in "".join(rendered.text)
    page = Markup(f'<p title="{html_text(name)}">{html_text(name)}</p>')
    assert page.tags == [("p", "title"), ("/p",)] and "".join(page.text) == visible(name, keep="\n\t")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", terminal(name))
    figure = plots.new_figure(1, 1)
    figure.subplots().set_title(plot_label(name))
    figure.canvas.draw()
    folder = tmp_path_factory.getbasetemp()
    file = safe_filename(name)
    assert file not in ("", ".", "..") and "/" not in file and "\\" not in file and file == visible(file)
    assert (folder / file).resolve().parent == folder.resolve()
    assert result_folder(folder, name, name).resolve().parent.parent == (folder / "results").resolve()
    assert all(
        f == visible(f) and "/" not in f and f not in (".", "..")
        for f in comparison_files.model_folders([name, "x"]).values()
    )


@FEW
@given(store=NAMES, generator=NAMES)
def test_manifest_rows_with_any_names_read_back(store, generator):
    row = {column: "x" for column in manifest_md.COLUMNS}
    row.update(store=store, generator=generator, revision="sha256:" + "a" * 64)
    text = manifest_md.render([row])
    expected = {**row, "store": shown(store).strip(), "generator": shown(generator).strip()}
    assert manifest_md.parse(text) == [expected]
    for rendered in renderings(text):
        assert [t for t in rendered.tags if t[0] in ("tr", "td", "th")] == [
            t
            for t in renderings(manifest_md.render([dict(row, store="s", generator="g")]))[0].tags
            if t[0] in ("tr", "td", "th")
        ]


def test_compare_prints_no_escape_sequence_of_a_name(tmp_path, capsys):
    """The terminal shows `\\x1b` where a model's name holds ESC: its title and screen stay as they were."""
    paths = []
    for i, card in enumerate(cards("\x1b]0;owned\x07\x1b[2Jmodel\r", DATASET)):
        path = tmp_path / f"{i}.json"
        path.write_text(json.dumps(card), encoding="utf-8")
        paths.append(str(path))
    assert main(["compare", *paths, "--out", str(tmp_path / "out"), "--splits", "10"]) == 0
    out, err = capsys.readouterr()
    assert "\\x1b]0;owned\\x07\\x1b[2Jmodel\\x0d: original" in out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out + err)


def test_plain_names_are_left_as_they_are():
    """What the committed files hold reads the same: no escape where there is nothing to escape."""
    for name in ("sentence-transformers/all-MiniLM-L6-v2", "character_deletion", "STS22.v2", "hf://org/name@rev"):
        assert md_text(name) == terminal(name) == html_text(name) == plot_label(name) == name
    assert md_code("a`b") == "``a`b``" and safe_filename("org_model") == "org_model"


def test_the_renamed_dataset_is_in_every_card_and_every_table():
    """The dataset the name tests rename is in each card they read, and in the table that names datasets."""
    assert CARDS and all(DATASET in path.read_text(encoding="utf-8") for path in CARDS)
    assert f"| {DATASET} |" in noise_subsets(compare([load_card(path) for path in CARDS], n_splits=10))


@given(st.lists(st.text(), min_size=1, max_size=6))
@settings(max_examples=300, deadline=None)
def test_any_csv_cells_stay_their_row_and_never_start_a_formula(cells):
    """The leaderboard's CSV door (escape.csv_cell): whatever the texts, one row of as many cells, nothing that acts
    (a control, a line break, a bidi control) and no cell a spreadsheet reads as a formula, numbers kept."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([csv_cell(c) for c in cells])
    (row,) = list(csv.reader(io.StringIO(out.getvalue())))
    assert len(row) == len(cells)
    for cell in row:
        assert not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in "\u202e\u2066\u200f" for c in cell)
        if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
            float(cell)  # only a number may start so


@given(st.text(), st.sampled_from(["", "bibtex"]))
@settings(max_examples=300, deadline=None)
def test_any_text_stays_inside_its_markdown_code_block(text, language):
    """md_block (the cards' and comparisons' BibTeX, whose store path comes from the user): whatever the text, one
    fenced block holding exactly its text with controls shown; no line of it closes the block early."""
    tokens = [t for t in MarkdownIt("commonmark").parse(md_block(text, language)) if t.type == "fence"]
    assert len(tokens) == 1 and tokens[0].info == language
    assert tokens[0].content.rstrip("\n") == visible(text, keep="\n\t").rstrip("\n")
