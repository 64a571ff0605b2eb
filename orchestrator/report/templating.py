"""The one way sbx writes HTML: Jinja2 templates (orchestrator/report/templates/*.html.j2) with autoescape on.

Every page shows text an agent, a model or a ledger row controls (transcripts, tool output, task names, run
ids, error strings), so escaping is the default rather than a call each writer must remember: every `{{ }}`
is escaped unless its value is already `Markup`. The only `Markup` made here is a rendered template (escaped
by construction), so a writer can hand a block it built (the paired transcript view) to the page. Undefined
names fail the render (StrictUndefined) instead of printing nothing.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup


@cache
def environment() -> Environment:
    return Environment(
        loader=PackageLoader("orchestrator.report", "templates"),
        autoescape=True,  # every template, whatever its name: no extension can switch escaping off
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_page(template: str, **context: Any) -> str:
    """A whole document, every interpolated value escaped."""
    return environment().get_template(template).render(**context)


def render_fragment(template: str, **context: Any) -> Markup:
    """A block for another template to embed as is: rendered with escaping, so it is safe markup."""
    return Markup(environment().get_template(template).render(**context))  # escaped by the template itself


#: the opening of a run link as templates/report.html.j2 writes it. Escaped text cannot contain it (autoescape
#: turns `<` and `"` into entities), so only the template's own links match
_RUN_LINK = re.compile(r'<a class="run" href="[^"]*/run/')


def local_run_links(html: str) -> str:
    """A written report with its run links pointing at the viewer that serves it (`/run/ID` on its own
    address), whatever viewer address the file was written with (render.py VIEWER_URL, `--viewer-url`)."""
    return _RUN_LINK.sub('<a class="run" href="/run/', html)


__all__ = ["Markup", "environment", "local_run_links", "render_fragment", "render_page"]
