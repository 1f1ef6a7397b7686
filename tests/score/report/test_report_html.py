"""report.html: what `compare --out` writes as one self-contained page, read back as HTML and
opened in headless Chromium (Debian's chromium + chromedriver, driven by selenium)."""

from __future__ import annotations

import base64
import json
import os
import struct
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from cards import MODELS, make_card, write_card

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
#: Where the browser test keeps its screenshots (kept after the run: the page as a person sees it).
ARTEFACTS = Path(
    os.environ.get("HTEB_TEST_ARTEFACTS") or Path(__file__).resolve().parents[3] / "out" / "test-artefacts"
)
# A model name that would run if it reached the page unescaped, as a script or as an image's onerror.
EVIL = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three of the paper's models and a fourth named EVIL (Jasper-600M's scores under that name)."""
    folder = tmp_path_factory.mktemp("report-cards")
    paths = [write_card(folder, make_card(m, model_index=i)) for i, m in enumerate(MODELS[:3])]
    card = make_card(MODELS[3], model_index=3)
    card["model"]["model_id"] = EVIL
    evil = folder / "evil.json"
    evil.write_text(json.dumps(card), encoding="utf-8")
    return [*paths, evil]


@pytest.fixture(scope="module")
def report(cards: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hteb_score.cli import main

    out = tmp_path_factory.mktemp("report")
    assert main(["compare", *map(str, cards), "--out", str(out), "--splits", "20"]) == 0
    return out


@pytest.fixture(scope="module")
def uneven(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scores table whose Originals differ in digit count (numeric and text order disagree) and
    where Translation is scored on one dataset only (its tau SD is undefined)."""
    from hteb_score.cli import main

    folder = tmp_path_factory.mktemp("uneven")
    table = folder / "scores.csv"
    table.write_text(
        "model,dataset,task_type,original,paraphrasing,translation\n"
        "a,d1,STS,9,8,5\na,d2,STS,8,7.5,\nb,d1,STS,95,90,85\nb,d2,STS,99,98,95\n"
        "c,d1,STS,40,41,30\nc,d2,STS,45,44,35\n",
        encoding="utf-8",
    )
    assert main(["compare", "--scores-table", str(table), "--out", str(folder / "out"), "--splits", "5"]) == 0
    return folder / "out"


class _Elements(HTMLParser):
    """Every start tag with its attributes, and the text inside <td> cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, Any]]] = []
        self.cells: list[str] = []
        self._in_td = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "td":
            self._in_td, self.cells = True, [*self.cells, ""]

    def handle_endtag(self, tag: str) -> None:
        self._in_td = self._in_td and tag != "td"

    def handle_data(self, data: str) -> None:
        if self._in_td:
            self.cells[-1] += data


def parsed(out: Path) -> _Elements:
    parser = _Elements()
    parser.feed((out / "report.html").read_text(encoding="utf-8"))
    return parser


def test_report_is_one_self_contained_file(report):
    page = parsed(report)
    pngs = sorted(p.name for p in report.glob("*.png"))
    images = [attrs["src"] for tag, attrs in page.tags if tag == "img"]
    assert len(images) == len(pngs) == 2
    prefix = "data:image/png;base64,"
    assert sorted(base64.b64decode(src.removeprefix(prefix)) for src in images) == sorted(
        (report / name).read_bytes() for name in pngs
    )
    assert all(src.startswith(prefix) for src in images)
    # nothing is fetched: no stylesheet or script file, no other URL, and the policy forbids any
    assert not [(tag, a) for tag, a in page.tags if tag in ("link", "iframe", "object", "embed")]
    assert [a for tag, a in page.tags if tag == "script"] == [{}]
    urls = [v for tag, a in page.tags for k, v in a.items() if k in ("src", "href", "action") and tag != "img"]
    assert urls == []
    csp = next(a["content"] for tag, a in page.tags if a.get("http-equiv") == "Content-Security-Policy")
    assert csp.startswith("default-src 'none'; img-src data:;")


def test_report_is_rendered_from_the_comparison(report, cards):
    from hteb_score.report.compare import comparison_files
    from hteb_score.report.compare import html_report
    from hteb_score.report.compare.analysis import compare
    from hteb_score.report.compare.inputs import load_inputs

    comparison = compare(load_inputs(cards, []), n_splits=20)
    page = html_report.render(comparison, comparison_files.figures(comparison))
    assert page == (report / "report.html").read_text(encoding="utf-8")
    text = (report / "report.html").read_text(encoding="utf-8")
    assert "<script>window" not in text and "<img src=x" not in text
    assert EVIL in parsed(report).cells  # the name, escaped, reads back as itself


def test_significance_marks_follow_holm_p_and_are_explained(report):
    from hteb_score.report.compare.html_report import significance_mark

    assert [significance_mark(p) for p in (0.0004, 0.001, 0.009, 0.049, 0.05, 0.5, None)] == [
        "***",
        "**",
        "**",
        "*",
        "",
        "",
        "",
    ]
    text = (report / "report.html").read_text(encoding="utf-8")
    assert "<code>***</code> p (Holm) &lt; 0.001, <code>**</code> p (Holm) &lt; 0.01" in text
    result = json.loads((report / "comparison.json").read_text(encoding="utf-8"))
    assert all(e["p_holm"] < 0.001 for e in result["effects"]["transformations"].values())
    assert parsed(report).cells.count("***") == len(result["columns"]["transformations"]) + 3 + 1


# ---- in headless Chromium ------------------------------------------------------------------------

COLUMN = """
const table = document.getElementById(arguments[0]);
const index = Array.from(table.tHead.rows[0].cells).findIndex((c) => c.textContent === arguments[1]);
return Array.from(table.tBodies[0].rows, (row) => row.cells[index].textContent);
"""


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    # --no-sandbox: Chromium's sandbox refuses to start as root (CI containers); the page is our own file
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def open_page(browser, out: Path) -> None:
    browser.get((out / "report.html").as_uri())
    browser.get_log("browser")  # start each test with an empty console log


def column(browser, table: str, header: str) -> list[str]:
    return browser.execute_script(COLUMN, table, header)


def click(browser, table: str, header: str) -> str:
    """Click a header's button; return the header's aria-sort after it."""
    from selenium.webdriver.common.by import By

    button = next(b for b in browser.find_elements(By.CSS_SELECTOR, f"#{table} th button") if b.text == header)
    button.click()
    return button.find_element(By.XPATH, "..").get_attribute("aria-sort")


def test_page_loads_without_console_errors_and_shows_every_model(browser, report):
    browser.get((report / "report.html").as_uri())
    assert browser.title == "HTEB model comparison"
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    assert sorted(column(browser, "leaderboard", "Model")) == sorted([*MODELS[:3], EVIL])
    assert sorted(column(browser, "inputs", "Model")) == sorted([*MODELS[:3], EVIL])
    loaded = "return Array.from(document.images, (i) => i.complete && i.naturalWidth > 600)"
    assert browser.execute_script(loaded) == [True, True]


def test_script_in_a_model_name_shows_as_text_and_does_not_run(browser, report):
    open_page(browser, report)
    assert browser.execute_script("return window.pwned") is None
    assert browser.execute_script("return [document.scripts.length, document.images.length]") == [1, 2]
    assert EVIL in column(browser, "leaderboard", "Model")
    assert EVIL in browser.find_element("id", "leaderboard").text


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ("Model", lambda r: r["model"]),
        ("Original", lambda r: r["original"]),
        ("Language Δ", lambda r: r["axis_deltas"]["language"]),
        ("Rank change", lambda r: r["rank_change"]),
    ],
    ids=["text", "number", "axis-delta", "rank-change"],
)
def test_clicking_a_header_sorts_by_it_and_again_reverses(browser, report, header, key):
    open_page(browser, report)
    rows = json.loads((report / "comparison.json").read_text(encoding="utf-8"))["leaderboard"]
    ascending = [r["model"] for r in sorted(rows, key=key)]
    descending = [r["model"] for r in sorted(rows, key=key, reverse=True)]  # ties keep their order
    assert column(browser, "leaderboard", "Model") == [r["model"] for r in rows]  # as ranked on HTEB
    assert ascending != [r["model"] for r in rows]
    assert click(browser, "leaderboard", header) == "ascending"
    assert column(browser, "leaderboard", "Model") == ascending
    assert click(browser, "leaderboard", header) == "descending"
    assert column(browser, "leaderboard", "Model") == descending
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_numbers_sort_as_numbers(browser, uneven):
    open_page(browser, uneven)
    click(browser, "leaderboard", "Original")
    # b and c rest on more than the common set: flagged with a dagger (issue 23 item 1)
    assert column(browser, "leaderboard", "Model") == ["a", "c †", "b †"]  # 8.5 < 42.5 < 97, not "42.5" < "8.5"
    assert column(browser, "leaderboard", "Original") == ["8.50", "42.50", "97.00"]


def test_undefined_values_sort_last_both_ways(browser, uneven):
    open_page(browser, uneven)
    result = json.loads((uneven / "comparison.json").read_text(encoding="utf-8"))
    undefined = {name for name, s in result["ranking_stability"].items() if s["sd"] is None}
    assert undefined == {"translation", "language"}
    for direction in ("ascending", "descending"):
        assert click(browser, "stability", "SD") == direction
        sds = column(browser, "stability", "SD")
        assert all(sd == "-one dataset: no spread" for sd in sds[-2:]) and not any(
            sd.startswith("-") for sd in sds[:-2]
        )
        assert set(column(browser, "stability", "Transformation / axis")[-2:]) == {"Translation", "Language"}


# ---- layout at 1400 px and on a phone ---------------------------------------------------------------

#: (name, width in CSS px): a laptop and a phone (390 px: an iPhone 12-15 held upright).
WIDTHS = [("desktop", 1400), ("phone", 390)]
TIED = """model,dataset,task_type,original,paraphrasing,translation,numerisation
alpha-a-rather-long-model-name/with-an-organisation-v2,d1,STS,80,78,70,75
alpha-a-rather-long-model-name/with-an-organisation-v2,d2,Classification,70,69,60,
beta,d1,STS,80,76,72,74
beta,d2,Classification,70,68,61,66
beta,d3,STS,50,45,40,44
"""


@pytest.fixture(scope="module")
def tied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two models with equal Original scores on every dataset (so every Kendall τ and split-half ρ
    is undefined), a long model name, and five notices about the inputs."""
    from hteb_score.cli import main

    folder = tmp_path_factory.mktemp("tied")
    (folder / "scores.csv").write_text(TIED, encoding="utf-8")
    assert (
        main(["compare", "--scores-table", str(folder / "scores.csv"), "--out", str(folder / "out"), "--splits", "5"])
        == 0
    )
    return folder / "out"


LAYOUT = """
const page = document.documentElement, frame = document.getElementById("leaderboard").parentElement;
const before = (a, b) => !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
frame.scrollLeft = 100000;  // scrolled as far right as it goes: the model column must stay in view
const left = frame.getBoundingClientRect().left;
const models = Array.from(document.querySelectorAll("#leaderboard tr > :nth-child(2)"));
const notices = document.querySelectorAll("details.notices");
return {
  page: [page.scrollWidth, page.clientWidth],
  frame: [frame.scrollWidth, frame.clientWidth],
  sticky: models.map((cell) => getComputedStyle(cell).position),
  modelLeft: models.map((cell) => Math.round(cell.getBoundingClientRect().left - left)),
  notices: notices.length,
  open: notices.length ? notices[0].open : null,
  items: notices.length ? Array.from(notices[0].querySelectorAll("li"), (li) => li.textContent) : [],
  order: notices.length ? [before(document.querySelector(".headline"), notices[0]),
                           before(notices[0], document.getElementById("leaderboard"))] : [],
  banners: document.querySelectorAll(".warning").length,
  images: Array.from(document.images, (i) => [i.naturalWidth, i.clientWidth]),
};
"""


def _resize(browser, width: int) -> None:
    browser.set_window_size(width, 900)
    inner = browser.execute_script("return window.innerWidth")
    browser.set_window_size(2 * width - inner, 900)  # the window's frame aside: the page is `width` wide
    assert browser.execute_script("return window.innerWidth") == width


def _screenshot(browser, name: str, width: int) -> Path:
    """The whole page at this width, kept under ARTEFACTS."""
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(browser.get_window_size()["width"], min(height + 200, 16000))
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTEFACTS / f"report-{name}-{width}px.png"
    assert browser.save_screenshot(str(path))
    assert struct.unpack(">I", path.read_bytes()[16:20])[0] == width  # PNG width: the page as wide as asked
    return path


@pytest.mark.parametrize(("device", "width"), WIDTHS, ids=[name for name, _ in WIDTHS])
@pytest.mark.parametrize("page", ["report", "tied"])
def test_the_page_reads_at_1400_px_and_on_a_phone(browser, request, page, device, width):
    """No horizontal scroll of the page; the leaderboard fits, or scrolls in its own frame with the
    model column in view; the notices in one folded block after the headline; plots at drawn size."""
    from hteb_score.report.compare.html_report import CSS_DPI
    from hteb_score.report.compare.plots import DPI

    out = request.getfixturevalue(page)
    _resize(browser, width)
    open_page(browser, out)
    layout = browser.execute_script(LAYOUT)
    scroll_width, client_width = layout["page"]
    assert scroll_width <= client_width, layout  # the page itself never scrolls sideways
    if layout["frame"][0] > layout["frame"][1]:  # the leaderboard scrolls in its own frame ...
        assert set(layout["sticky"]) == {"sticky"} and set(layout["modelLeft"]) == {0}, layout  # ... model in view
    warnings = json.loads((out / "comparison.json").read_text(encoding="utf-8"))["warnings"]
    assert layout["banners"] == 0
    if warnings:
        assert layout["notices"] == 1 and layout["open"] is False and layout["order"] == [True, True]
        assert layout["items"] == warnings
    else:
        assert layout["notices"] == 0
    for natural, shown in layout["images"]:  # drawn size: text keeps its points (>= MIN_FONT_PT)
        assert shown == round(natural * CSS_DPI / DPI)
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    _screenshot(browser, page, width)


def test_the_headline_result_comes_first(report):
    result = json.loads((report / "comparison.json").read_text(encoding="utf-8"))
    top = next(r for r in result["leaderboard"] if r["rank_hteb"] == 1)
    text = (report / "report.html").read_text(encoding="utf-8")
    headline = text[text.index('<p class="headline">') :]
    assert headline.startswith(
        f'<p class="headline"><strong>{top["model"]}</strong> ranks first under HTEB: '
        f"{top['hteb']:.2f} ({top['delta']:+.2f} from its Original {top['original']:.2f}).</p>"
    )
    assert text.index('<p class="headline">') < text.index("<h2>Leaderboard</h2>")


def test_an_empty_statistic_says_why_where_it_stands(tied):
    result = json.loads((tied / "comparison.json").read_text(encoding="utf-8"))
    assert all(s["mean"] is None for s in result["ranking_stability"].values())
    cells = parsed(tied).cells
    said = [c for c in cells if c.startswith("-undefined on")]
    assert len(said) == len(result["ranking_stability"])
    assert (
        "-undefined on its one dataset: the models tie there on Original or on this column, and a tie is no "
        "ranking" in said
    )  # numerisation: scored for both models on d1 only
    # two models: split-half reliability (a Spearman rho over two is +1 or -1) says why once, where it would stand
    assert result["reliability"]["per_axis"] == {} and "needs three models" in result["reliability"]["reason"]
    text = (tied / "report.html").read_text(encoding="utf-8")
    section = text[text.index("<h2>Split-half reliability") :]
    assert section.split("</p>")[0].endswith("needs three models or more, and this comparison ranks 2.")


@pytest.mark.slow
def test_plot_text_is_at_least_10_pt(shared_data, report, cards):
    """Every text of every figure (titles, ticks, legends, annotations, heat-map cells) at >= 10 pt."""
    from matplotlib.text import Text

    from hteb_score.report.compare import plots
    from hteb_score.report.compare.analysis import compare
    from hteb_score.report.compare.inputs import load_inputs
    from hteb_score.scoring.statistics import drift_row

    comparison = compare(load_inputs(cards, []), n_splits=5)
    rows = [json.loads(line) for line in (shared_data / "STSBenchmark" / "test.jsonl").read_text().splitlines()[:20]]
    drift = {}
    for i, model in enumerate(MODELS[:3]):
        items = [
            drift_row(t, float(round(r["score"])) + 1, r["sentence1"], r["sentence2"], 1 - r["score"] / 5.5 + 0.01 * i)
            for t in ("paraphrasing", "translation", "expansion", "summarisation")
            for r in rows
        ]
        drift[model] = make_card(model, model_index=i, drift=items)["statistics"]["drift"]
    order, grid = comparison.heatmap_grid()  # as report/compare/comparison_files.figures draws them
    figures = {
        "dumbbell": plots.axis_dumbbell(comparison.leaderboard, comparison.leaderboard_axes(), comparison.taxonomy),
        "heatmap": plots.delta_heatmap(order, comparison.heatmap_columns, grid),
        "drift": plots.drift_vs_quality(drift),
    }
    for name, figure in figures.items():
        figure.canvas.draw()
        sizes = {t.get_text(): t.get_fontsize() for t in figure.findobj(Text) if t.get_visible() and t.get_text()}
        assert sizes and min(sizes.values()) >= plots.MIN_FONT_PT, (name, min(sizes.items(), key=lambda kv: kv[1]))
    width_px = struct.unpack(">I", plots.png_bytes(figures["drift"])[16:20])[0]
    assert width_px * 96 / plots.DPI < 1400 - 32  # four transformations: the drawn plot fits a 1400 px page
