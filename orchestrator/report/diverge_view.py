"""One pair's two transcripts side by side (orchestrator/diverge/view.py), as escaped HTML and as Markdown.

Everything shown came from an agent or a model: the HTML is rendered from templates/pair.html.j2 with
escaping by default, and the texts were already cut to a bounded length by the view.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from orchestrator.diverge.view import CallView, PairRow, PairView
from orchestrator.report.templating import render_fragment


def _mark(equal: bool | None) -> str:
    return "same" if equal else ("-" if equal is None else "differs")


def _cell(call: CallView | None, part: str) -> str | None:
    """A cell's text, None where the run made no call at this index."""
    if call is None:
        return None
    text = call.request if part == "request" else call.response
    head = f"[{call.speaker}] " if call.speaker and part == "request" else ""
    status = f" ({call.outcome}, {call.status})" if part == "response" and call.outcome != "ok" else ""
    return head + text + status


def _row(row: PairRow, gap: bool) -> dict[str, Any]:
    differs = row.request_equal is False or row.response_equal is False or row.a is None or row.b is None
    cls = " ".join(c for c in ("first" if row.first_divergence else "", "differs" if differs else "") if c)
    cells = [_cell(row.a, "request"), _cell(row.b, "request"), _cell(row.a, "response"), _cell(row.b, "response")]
    return {"cls": cls, "index": row.index, "first": row.first_divergence, "request": _mark(row.request_equal),
            "response": _mark(row.response_equal), "cells": cells, "gap": gap}


def pair_html(view: PairView, viewer: str | None = None) -> Markup:
    """The side-by-side table: call, A's and B's request, A's and B's response; the first divergence marked.
    With `viewer` (a ledger's runs), each run id links to its page in that `sbx view`."""
    from orchestrator.report.render import run_link

    first = (
        "none: the runs are identical"
        if view.first_divergence is None
        else (f"call {view.first_divergence} ({view.divergence_class})")
    )
    rows = [_row(row, row.index in view.gaps) for row in view.rows]
    links = ({"a": run_link(viewer, view.run_a), "b": run_link(viewer, view.run_b)} if viewer
             else {"a": None, "b": None})
    return render_fragment("pair.html.j2", view=view, first=first, rows=rows, links=links)


def _md(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    flat = flat if len(flat) <= limit else flat[:limit] + " ..."
    return flat.replace("|", "\\|").replace("`", "'")


def pair_markdown(view: PairView) -> str:
    """The same view as a Markdown table, each text cut to one short line."""
    first = (
        "none (identical)"
        if view.first_divergence is None
        else f"call {view.first_divergence} ({view.divergence_class})"
    )
    lines = [
        (
            f"Task `{_md(view.task, 80)}`, repeat {view.repeat}: run `{view.run_a}` (A) and `{view.run_b}` (B); "
            f"calls A {view.calls_a}, B {view.calls_b}; first divergence: {first}."
        ),
        "",
        *(f"- differs at `{_md(w, 200)}`" for w in view.where),
        "",
        "| call | request | response | A answered | B answered |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in view.rows:
        mark = " **first divergence**" if row.first_divergence else ""
        lines.append(
            f"| {row.index}{mark} | {_mark(row.request_equal)} | {_mark(row.response_equal)} | "
            f"{_md(row.a.response) if row.a else '(no call)'} | {_md(row.b.response) if row.b else '(no call)'} |"
        )
        if row.index in view.gaps:
            lines.append("| ... | | | | |")
    return "\n".join(lines)
