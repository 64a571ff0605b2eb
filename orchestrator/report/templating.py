"""The one way sbx writes HTML: Jinja2 templates (orchestrator/report/templates/*.html.j2) with autoescape on.

Every page shows text an agent, a model or a ledger row controls (transcripts, tool output, task names, run
ids, error strings), so escaping is the default rather than a call each writer must remember: every `{{ }}`
is escaped unless its value is already `Markup`. The only `Markup` made here is a rendered template (escaped
by construction), so a writer can hand a block it built (the paired transcript view) to the page. Undefined
names fail the render (StrictUndefined) instead of printing nothing.
"""

from __future__ import annotations

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


__all__ = ["Markup", "environment", "render_fragment", "render_page"]
