"""Every page and card the report writes is a template in report/templates/, read as package data:
`*.md.j2` and `*.html.j2` hold the documents and their words, `*.js` and `*.css` the pages' scripts
and styles. Rooms hand a template the figures it shows, already formatted and escaped where they
were made (hteb_contract.common.escape: the `md`, `code` and `html` filters for what the template
writes itself).

A page is self-contained: its scripts and styles are inlined, minified (rjsmin, rcssmin), and a
Content Security Policy admits exactly them by their SHA-256, computed here from the text inlined,
and forbids every fetch, so a page works offline and copied anywhere and nothing else can run in it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import rcssmin
import rjsmin
from jinja2 import Environment, PackageLoader, StrictUndefined

from hteb_contract.common.escape import html_text, md_code, md_text

_OPTIONS: dict[str, Any] = {
    "trim_blocks": True,
    "lstrip_blocks": True,
    "keep_trailing_newline": True,
    "undefined": StrictUndefined,
    "autoescape": False,
}
#: Markdown documents (result_card.md): `md` escapes prose and table cells, `code` writes a code span.
MARKDOWN = Environment(loader=PackageLoader("hteb_score.report", "templates"), **_OPTIONS)
MARKDOWN.filters.update(md=md_text, code=md_code)
#: HTML pages: `html` escapes an element's text or a quoted attribute value.
HTML = Environment(loader=PackageLoader("hteb_score.report", "templates"), **_OPTIONS)
HTML.filters.update(html=html_text)

_MINIFY = {".js": rjsmin.jsmin, ".css": rcssmin.cssmin}


@cache
def asset(name: str) -> str:
    """A script or style of report/templates/, minified as a page inlines it (its comments dropped)."""
    suffix = name[name.rindex(".") :]
    text = (resources.files("hteb_score.report") / "templates" / name).read_text(encoding="utf-8")
    return _MINIFY[suffix](text).strip()


def csp_source(text: str) -> str:
    """A CSP source expression admitting exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def page(
    template: str, *, title: str, scripts: Sequence[str], styles: Sequence[str], images: bool = False, **context: Any
) -> str:
    """A self-contained page: `template` (extending page.html.j2) with `scripts` and `styles` of
    report/templates/ inlined in their order and admitted by their hashes; `images` admits data: images."""
    script = "\n".join(asset(name) for name in scripts)
    style = "\n".join(asset(name) for name in styles)
    csp = (
        "default-src 'none'; "
        + ("img-src data:; " if images else "")
        + f"style-src {csp_source(style)}; script-src {csp_source(script)}; base-uri 'none'; form-action 'none'"
    )
    return HTML.get_template(template).render(title=title, csp=csp, script=script, style=style, **context)
