"""One escaping rule per output kind, for every value that came from a user or another machine (model
ids and names, engine identities, dataset, subset, label and transformation names, store paths):
Markdown (`md_text` for table cells, headings and running text; `md_code` for code spans), HTML
(`html_text`, also right in an attribute value), the terminal (`terminal`), matplotlib labels
(`plot_label`), file or folder names (`safe_filename`) and a BibTeX field (`bibtex_text`). A plain name
(letters, digits, `/ . - _ :`, spaces) comes out of each unchanged, so files written before read the same,
but for BibTeX, where LaTeX reads `_` as a subscript.

>>> md_text("a|b <img src=x> *c*")
'a\\\\|b &lt;img src=x&gt; \\\\*c\\\\*'
>>> md_code("x`y"), terminal("\\x1b]0;owned\\x07ok")
('``x`y``', '\\\\x1b]0;owned\\\\x07ok')
>>> plot_label("$x^2$"), safe_filename(".."), safe_filename("org/model")
('\\\\$x^2\\\\$', '__', 'org_model')
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata

#: What `str.splitlines` breaks at (a Markdown row must stay one line for every reader, ours included).
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: Bidirectional embeddings, overrides and isolates: they reorder what a reader sees around them.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
#: Markdown's own characters, backslash-escaped (both Python-Markdown, which the docs site uses, and
#: CommonMark read these escapes); the others as entities, which both read and neither takes as markup
#: (Python-Markdown has no escape for `<`, `&` or GFM's strikethrough `~`).
_MD_BACKSLASHED = set("\\`*[]|#")
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "~": "&#126;"}
#: Characters no file name of ours holds: separators, what Windows refuses, and the shell's quoting.
_UNSAFE_IN_NAME = re.compile(r"[/\\:*?\"<>|\s]")
_MAX_NAME = 120


def _shown(char: str) -> str:
    """A character that would act rather than show (a control, a separator, a bidi mark, a lone
    surrogate), written as its Python escape: `\\x1b`, `\\u202e`."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _acts(char: str, keep: str = "") -> bool:
    return char not in keep and (unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") or char in _BIDI)


def visible(value: object, keep: str = "") -> str:
    """`value` as text with every control character (C0 but those in `keep`, DEL, C1), line or
    paragraph separator, bidi control and lone surrogate written as its escape, never sent."""
    return "".join(_shown(c) if _acts(c, keep) else c for c in str(value))


def terminal(value: object) -> str:
    """A message for the terminal: escape sequences and carriage returns shown as `\\x1b`, `\\r`;
    line breaks and tabs (the message's own layout) kept."""
    return visible(value, keep="\n\t")


def _underscore(text: str, i: int) -> str:
    """`_` stays as it is between two letters or digits (where no Markdown reads it as emphasis:
    `character_deletion`), and is escaped anywhere else."""
    inside = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
    return "_" if inside else "\\_"


def md_text(value: object) -> str:
    """Text for a Markdown table cell, a heading or a line of prose: one line (line breaks become
    spaces), every character Markdown reads as markup escaped, controls shown as escapes."""
    text = "".join(" " if c in _LINE_BREAKS else c for c in str(value))
    out = []
    for i, c in enumerate(text):
        if c in _MD_BACKSLASHED:
            out.append("\\" + c)
        elif c in _MD_ENTITIES:
            out.append(_MD_ENTITIES[c])
        elif c == "_":
            out.append(_underscore(text, i))
        else:
            out.append(_shown(c) if _acts(c) else c)
    return "".join(out)


def md_code(value: object) -> str:
    """A Markdown code span of `value` (one line): fenced by more backticks than its longest run,
    padded with a space where it starts or ends with a backtick. Not for table cells (a `|` in it
    would still split the cell): there, `md_text`."""
    text = visible("".join(" " if c in _LINE_BREAKS else c for c in str(value)))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(value: object, language: str = "") -> str:
    """A fenced Markdown code block of `value` (its lines kept): fenced by more backticks than its longest run,
    at least three, so no line of it can close the block.

    >>> print(md_block("@misc{x,}", "bibtex"))
    ```bibtex
    @misc{x,}
    ```
    """
    text = visible(str(value), keep="\n\t").rstrip("\n")
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"{fence}{language}\n{text}\n{fence}"


def md_unescape(cell: str) -> str:
    """What `md_text` was given, from its output (for a file of ours read back, as MANIFEST.md's
    rows are); line breaks and controls it changed do not come back."""
    return html.unescape(re.sub(r"\\([\\`*\[\]|#_])", r"\1", cell))


#: What a spreadsheet reads as the start of a formula in a text cell (OWASP, CSV injection); OWASP's tab and CR
#: never start a cell here: `visible` writes them as escapes first.
_FORMULA_STARTS = ("=", "+", "-", "@")


def csv_cell(value: object) -> str:
    r"""A cell of a CSV a spreadsheet opens: controls, line breaks and bidi controls shown as escapes (a cell stays
    one cell of one row, and reads as it is), and text a spreadsheet would take for a formula behind a single quote;
    a number (`-1.5`, `1e3`) stays a number.

    >>> csv_cell("=HYPERLINK(1)"), csv_cell("-1.5"), csv_cell("-x"), csv_cell("a\rb"), csv_cell("org/x\u202e")
    ("'=HYPERLINK(1)", '-1.5', "'-x", 'a\\x0db', 'org/x\\u202e')
    """
    text = visible(value)
    if text.startswith(_FORMULA_STARTS) and not _is_number(text):
        return "'" + text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def html_text(value: object) -> str:
    """Text for an HTML element or a quoted attribute value: `& < > " '` as entities, controls shown."""
    return html.escape(visible(value, keep="\n\t"), quote=True)


#: LaTeX's special characters, as a BibTeX field must write them to be typeset as themselves (braces balanced).
_LATEX = {
    "\\": "\\textbackslash{}",
    "{": "\\{",
    "}": "\\}",
    "%": "\\%",
    "$": "\\$",
    "&": "\\&",
    "#": "\\#",
    "_": "\\_",
    "^": "\\^{}",
    "~": "\\~{}",
}


def bibtex_text(value: object) -> str:
    """Text for a BibTeX field: LaTeX's special characters escaped, so a store path or a name is typeset as
    itself and no brace of it ends the field; line breaks and controls shown, so the entry stays its lines.

    >>> bibtex_text("file:///x/my_store {50%}")
    'file:///x/my\\\\_store \\\\{50\\\\%\\\\}'
    """
    return "".join(_LATEX.get(c, c) for c in visible(value))


def plot_label(value: object) -> str:
    """Text for a matplotlib label: `$` escaped, so no name is read as mathtext (a name holding
    `$x^2$` would be typeset, and one holding an unbalanced `$\\frac` would end the drawing), and
    controls shown."""
    return visible(value).replace("$", "\\$")


def safe_filename(value: object) -> str:
    """One file or folder name made from `value`: separators, whitespace, controls and the characters
    Windows refuses become `_`; a name of dots alone (`.`, `..`) has them as `_` too; a long name is
    cut and ends with its hash. Never empty.

    >>> safe_filename("../etc"), safe_filename("org/My Model"), safe_filename("")
    ('.._etc', 'org_My_Model', '_')
    """
    text = str(value)
    name = "".join("_" if _acts(c) or _UNSAFE_IN_NAME.match(c) else c for c in text)
    if set(name) <= {"."}:
        name = "_" * max(len(name), 1)
    if len(name.encode("utf-8", "surrogatepass")) > _MAX_NAME:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        name = name.encode("utf-8", "surrogatepass")[: _MAX_NAME - 13].decode("utf-8", "ignore") + "-" + digest
    return name
