// leaderboard.html: the board, its controls, tie groups, coverage and the pinned pair, all from the page's JSON
// island (every value put on the page as text: textContent, never HTML, through `visible`).
const data = JSON.parse(document.getElementById("hteb-data").textContent);
const $ = (id) => document.getElementById(id);
// as hteb_contract.common.escape.visible writes it: a control, line or paragraph separator, bidi mark or lone
// surrogate shown as its escape (\x1b, \u202e), so no name can reorder or hide what a reader sees around it
const ACTS = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
const hex = (n, width) => n.toString(16).padStart(width, "0");
const visible = (s) => String(s).replace(ACTS, (c) => { const n = c.charCodeAt(0); return n < 0x100 ? "\\x" + hex(n, 2) : "\\u" + hex(n, 4); });
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = visible(text); if (cls) e.className = cls; return e; };
const fixed = (v, n) => v === null || v === undefined ? "-" : v.toFixed(n);
// signed as the Python side writes it (report/formatting.py `number`): "-" for a loss, a value rounding to zero unsigned
const signed = (v) => { if (v === null || v === undefined) return "-"; const r = Number(v.toFixed(2)); return (r > 0 ? "+" : r < 0 ? "-" : "") + Math.abs(r).toFixed(2); };
const FACT = {
  parameters: (v) => v === null ? "-" : (v / 1e6).toFixed(1) + " M",
  embedding_dim: (v) => v === null ? "-" : String(v),
  max_tokens: (v) => v === null ? "-" : String(v),
  licence: (v) => v === null ? "-" : v,
  seconds_per_1000: (v) => v === null ? "-" : v.toFixed(1),
};
const state = { axis: Object.keys(data.axes).at(-1), language: "", dataset: "", sort: null, pinned: [] };
const short = (m) => m.split("/").at(-1);
const named = (m) => m.kind === "chance" ? m.label + ": " + short(m.model) : short(m.model);
const chance = new Set(data.models.filter((m) => m.kind === "chance").map((m) => m.model));
// each model's card on the Sensitivity revision, where the page has one (its section below the board)
const sensitivity = new Map(data.sensitivity ? data.sensitivity.models.map((m) => [m.model, m]) : []);

function option(select, value, text) { const o = el("option", text); o.value = value; select.append(o); }

function scope() {
  if (state.dataset) return "dataset:" + state.dataset;
  return state.language ? "language:" + state.language : "all";
}

function fillControls() {
  const axis = $("axis"), language = $("language");
  for (const [key, entry] of Object.entries(data.axes)) option(axis, key, entry.label);
  axis.value = state.axis;
  option(language, "", "All languages");
  const codes = [...new Set(data.datasets.flatMap((d) => d.languages))].sort();
  for (const code of codes) option(language, code, code);
  fillDatasets();
  fillRankBy();
}

function fillDatasets() {
  const select = $("dataset");
  select.replaceChildren();
  option(select, "", state.language ? "All datasets in " + state.language : "All datasets");
  for (const d of data.datasets) if (!state.language || d.languages.includes(state.language)) option(select, d.name, d.name);
  if (![...select.options].some((o) => o.value === state.dataset)) state.dataset = "";
  select.value = state.dataset;
}

function fillRankBy() {
  const select = $("rank-by");
  select.replaceChildren();
  for (const c of data.axes[state.axis].columns) option(select, c, data.labels[c]);
  select.value = data.axes[state.axis].columns[0];
}

// the ranked column and its delta right after the model (class "main"): on a phone they are on the first screen
function headers(columns) {
  const by = $("rank-by").value, rank = data.labels[by];
  return [
    ["pin", "Pin", "none"], ["rank", "Rank", "number"], ["model", "Model", "text"],
    ["score:" + by, rank, "number", "main"], ...(by !== "original" ? [["delta", rank + " \u0394", "number", "main"]] : []),
    ["interval", "Rank interval", "number"], ["group", "Tie group", "text"],
    ...columns.filter((c) => c !== by).map((c) => ["score:" + c, data.labels[c], "number"]),
    ...(data.sensitivity ? [["sensitivity", "Pairs heard", "number"]] : []),
    ...Object.entries(data.facts).map(([k, label]) => ["fact:" + k, label, k === "licence" ? "text" : "number"]),
  ];
}

function cellFor(key, model, view, columns) {
  const row = view.columns[$("rank-by").value].models[model.model];
  if (key === "model") return [named(model), model.model];
  if (model.kind === "chance" && ["rank", "interval", "group"].includes(key)) return ["-", null];
  if (key === "rank") return [String(row.rank), row.rank];
  if (key === "interval") return row.rank_low === undefined ? ["not tested", null]
    : ["[" + row.rank_low + "\u2013" + row.rank_high + "]", row.rank_low + row.rank_high / 100];
  if (key === "group") return row.group === undefined ? ["-", null] : [row.group, row.group];
  if (key === "delta") return [signed(row.delta), row.delta];
  if (key === "sensitivity") {
    const s = sensitivity.get(model.model);
    return s ? [s.heard + " of " + s.of_pairs, s.heard] : ["-", null];
  }
  if (key.startsWith("score:")) { const v = view.columns[key.slice(6)].models[model.model].score; return [fixed(v, 2), v]; }
  const fact = key.slice(5), v = model.facts[fact];
  return [FACT[fact](v), v];
}

// a rule's figure that is the model's Original on every dataset in view, the model's tokenizer lowercasing its input
const immuneIn = (m, column, view) => (m.immune[column] || []).length > 0 && view.datasets.every((d) => m.immune[column].includes(d));

function render() {
  const view = data.views[scope()], columns = data.axes[state.axis].columns.slice();
  if (state.axis !== "original") columns.unshift("original");
  const heads = headers(columns), table = $("board");
  const head = el("tr");
  for (const [key, label, type] of heads) {
    const th = el("th");
    th.dataset.type = type;
    th.scope = "col";
    if (type === "none") th.textContent = label;
    else {
      const b = el("button", label);
      b.type = "button";
      b.addEventListener("click", () => {
        state.sort = state.sort && state.sort.key === key && state.sort.dir === 1 ? { key, dir: -1 } : { key, dir: 1 };
        render();
      });
      th.append(b);
      if (state.sort && state.sort.key === key) th.setAttribute("aria-sort", state.sort.dir === 1 ? "ascending" : "descending");
    }
    if (key === "model") th.className = "model";
    if (key === "sensitivity") th.title = visible("Sensitivity: the minimal pairs the model hears, of all its card's pairs (one with no item is not heard), on "
      + data.sensitivity.revision + " (the section below the board)");
    head.append(th);
  }
  table.tHead.replaceChildren(head);
  const cellsOf = (m) => ({ m, cells: heads.map(([key]) => key === "pin" ? null : cellFor(key, m, view, columns)) });
  let rows = data.models.filter((m) => m.kind !== "chance").map(cellsOf);
  const rankAt = heads.findIndex(([k]) => k === "rank");
  rows.sort((a, b) => a.cells[rankAt][1] - b.cells[rankAt][1] || a.m.model.localeCompare(b.m.model));
  if (state.sort) {
    const at = heads.findIndex(([k]) => k === state.sort.key);
    if (at >= 0) {
      const text = heads[at][2] === "text";
      rows.sort((a, b) => {
        const x = a.cells[at][1], y = b.cells[at][1];
        if (x === null || y === null || x === undefined || y === undefined) return (x == null) - (y == null);
        return state.sort.dir * (text ? String(x).localeCompare(String(y)) : x - y);
      });
    }
  }
  rows = rows.concat(data.models.filter((m) => m.kind === "chance").map(cellsOf));
  const body = el("tbody");
  for (const { m, cells } of rows) {
    const tr = el("tr");
    tr.dataset.model = m.model;
    tr.className = [m.kind === "chance" ? "chance" : "", state.pinned.includes(m.model) ? "pinned" : ""].join(" ").trim();
    heads.forEach(([key, , type, role], i) => {
      const td = el(key === "model" ? "th" : "td", undefined, role);
      if (key === "pin") {
        const box = el("input");
        box.type = "checkbox";
        box.checked = state.pinned.includes(m.model);
        box.setAttribute("aria-label", "pin " + m.model);
        box.addEventListener("change", () => pin(m.model, box.checked));
        td.append(box);
      } else {
        td.textContent = visible(cells[i][0]);
        if (key.startsWith("score:") && immuneIn(m, key.slice(6), view)) {
          td.classList.add("immune");
          td.title = "within 0.01 of Original on every dataset in view: this model's tokenizer lowercases, so the rule changes "
            + "(almost) none of its input; immune by construction, not robust";
        }
        if (key === "model") {
          td.scope = "row"; td.className = "model"; td.title = visible(m.model);
          if (m.page) { const a = el("a", cells[i][0]); a.href = m.page; a.rel = "noopener"; td.replaceChildren(a); }
        }
        else if (type === "text") td.className = "text";
        if (key.startsWith("fact:") && m.facts.sources[key.slice(5)]) td.title = "from " + m.facts.sources[key.slice(5)];
        if (key === "sensitivity" && sensitivity.has(m.model)) {
          const pairs = Object.entries(sensitivity.get(m.model).pairs);
          td.title = visible(pairs.map(([p, f]) => p + ": " + fixed(f.accuracy, 3) + " " + (f.reading || "")).join("; ")
            + " (on " + data.sensitivity.revision + ")");
        }
      }
      tr.append(td);
    });
    body.append(tr);
  }
  table.tBodies[0].replaceWith(body);
  renderGroups(view);
  renderCoverage(view, columns);
  renderPinned(view);
}

const REASON = { not_applicable: "not applicable", mostly_unchanged: "mostly unchanged" };

function renderCoverage(view, columns) {
  const box = $("coverage"), items = [];
  box.replaceChildren();
  if (!Object.keys(data.coverage).length) {
    box.append(el("p", "These cards do not record what their figures rest on (they predate it)."));
    return;
  }
  for (const d of view.datasets) for (const c of columns) for (const s of ((data.coverage[d] || {})[c] || [])) {
    if (s.subsets_scored === s.subsets_total && !s.flagged_unchanged) continue;
    const out = s.left_out.map((e) => e.subset + " (" + (REASON[e.reason] || e.reason) + ")").join(", ");
    const who = s.models.length < data.models.length ? " [" + s.models.map(short).join(", ") + "]" : "";
    items.push(d + ", " + data.labels[c] + ": " + s.subsets_scored + " of " + s.subsets_total + " subsets, "
      + Math.round(100 * s.changed_share) + "% of texts changed" + (s.flagged_unchanged ? ", mostly unchanged" : "")
      + (out ? "; left out: " + out : "") + who);
  }
  box.append(el("p", items.length ? "Figures in view that rest on fewer than all their subsets (a rule's figure leaves out "
    + "the subsets it does not apply to and those whose texts it mostly left unchanged; an axis averages its rules):"
    : "Every figure in view rests on all its subsets."));
  if (!items.length) return;
  const list = el("ul");
  for (const text of items) list.append(el("li", text));
  box.append(list);
}

function renderGroups(view) {
  const column = $("rank-by").value, ranked = view.columns[column], box = $("groups");
  box.replaceChildren();
  const n = view.datasets.length;
  if (!ranked.groups) {
    box.append(el("p", data.labels[column] + " on one dataset: ranks by its score; no test, so no interval or group."));
    return;
  }
  const pairs = ranked.pairs.filter((p) => !chance.has(p.first) && !chance.has(p.second));
  const separated = pairs.filter((p) => p.separated).length;
  box.append(el("p", "Tie groups on " + data.labels[column] + " over " + n + " datasets (" + separated + " of "
    + pairs.length + " pairs separated, Shaffer p < " + data.alpha + "): models sharing a letter cannot be told apart."));
  const list = el("ul");
  for (const [letter, models] of Object.entries(ranked.groups)) {
    const li = el("li");
    li.append(el("span", letter, "letter"), document.createTextNode(visible(" " + models.map(short).join(", "))));
    list.append(li);
  }
  box.append(list);
  for (const m of data.models.filter((x) => x.kind === "chance")) {
    const own = ranked.pairs.filter((p) => [p.first, p.second].includes(m.model) && !(chance.has(p.first) && chance.has(p.second)));
    box.append(el("p", named(m) + ", the score of a model that knows nothing (no rank, no group): separated from "
      + own.filter((p) => p.separated).length + " of " + own.length + " models."));
  }
}

function pin(model, on) {
  state.pinned = state.pinned.filter((m) => m !== model);
  if (on) state.pinned.push(model);
  if (state.pinned.length > 2) state.pinned.shift();
  render();
}

function renderPinned(view) {
  const box = $("pinned"), [a, b] = state.pinned;
  box.replaceChildren();
  if (!b) { box.append(el("p", "Tick two models' boxes to see them side by side.")); return; }
  const column = $("rank-by").value, ma = data.models.find((m) => m.model === a), mb = data.models.find((m) => m.model === b);
  box.append(el("h3", named(ma) + " vs " + named(mb) + " on " + data.labels[column]));
  const pair = (view.columns[column].pairs || []).find((p) => (p.first === a && p.second === b) || (p.first === b && p.second === a));
  if (pair) {
    const flip = pair.first === a ? 1 : -1, lo = flip === 1 ? pair.ci_low : -pair.ci_high, hi = flip === 1 ? pair.ci_high : -pair.ci_low;
    box.append(el("p", "Paired over " + pair.n_datasets + " datasets, " + short(a) + " minus " + short(b) + ": HL shift "
      + signed(flip * pair.hl_shift) + " [" + signed(lo) + ", " + signed(hi) + "], Wilcoxon p " + fixed(pair.p_value, 3)
      + ", Shaffer p " + fixed(pair.p_shaffer, 3) + ": " + (pair.separated ? "separated, " + short(pair.winner) + " ahead." : "not separated.")));
  } else box.append(el("p", "One dataset: no paired test."));
  const table = el("table"), head = el("tr");
  table.id = "pinned-table";
  for (const h of ["Dataset", short(a), short(b), "\u0394"]) head.append(el("th", h));
  head.cells[0].dataset.type = "text";
  table.append(el("thead"), el("tbody"));
  table.tHead.append(head);
  for (const d of view.datasets) {
    const x = ma.scores[column][d], y = mb.scores[column][d], tr = el("tr");
    tr.append(el("td", d, "text"), el("td", fixed(x, 2)), el("td", fixed(y, 2)), el("td", signed(x - y)));
    table.tBodies[0].append(tr);
  }
  const frame = el("div", undefined, "scroll");
  frame.append(table);
  box.append(frame);
  const facts = el("table"), fhead = el("tr");
  for (const h of ["Fact", short(a), short(b)]) fhead.append(el("th", h));
  fhead.cells[0].dataset.type = "text";
  facts.append(el("thead"), el("tbody"));
  facts.tHead.append(fhead);
  for (const [k, label] of Object.entries(data.facts)) {
    const tr = el("tr");
    tr.append(el("td", label, "text"), el("td", FACT[k](ma.facts[k])), el("td", FACT[k](mb.facts[k])));
    facts.tBodies[0].append(tr);
  }
  const frame2 = el("div", undefined, "scroll");
  frame2.append(facts);
  box.append(frame2);
}

$("axis").addEventListener("change", (e) => { state.axis = e.target.value; state.sort = null; fillRankBy(); render(); });
$("language").addEventListener("change", (e) => { state.language = e.target.value; fillDatasets(); render(); });
$("dataset").addEventListener("change", (e) => { state.dataset = e.target.value; render(); });
$("rank-by").addEventListener("change", () => render());
fillControls();
render();
