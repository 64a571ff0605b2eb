"""One pair's two transcripts side by side (orchestrator/diverge/view.py), as escaped HTML and as Markdown.

Everything shown came from an agent or a model: every value is escaped here, and the texts were already
cut to a bounded length by the view.
"""

from __future__ import annotations

import html

from orchestrator.diverge.view import CallView, PairRow, PairView


def _mark(equal: bool | None) -> str:
    return "same" if equal else ("-" if equal is None else "differs")


def _cell(call: CallView | None, part: str) -> str:
    if call is None:
        return "<td class='none'>(no call)</td>"
    text = call.request if part == "request" else call.response
    head = f"[{call.speaker}] " if call.speaker and part == "request" else ""
    status = f" ({call.outcome}, {call.status})" if part == "response" and call.outcome != "ok" else ""
    return f"<td>{html.escape(head + text + status)}</td>"


def _row(row: PairRow) -> str:
    differs = row.request_equal is False or row.response_equal is False or row.a is None or row.b is None
    cls = " ".join(c for c in ("first" if row.first_divergence else "", "differs" if differs else "") if c)
    label = f"{row.index}" + (" &#9664; first divergence" if row.first_divergence else "")
    return (
        f"<tr class='{cls}' data-call='{row.index}'><td class='idx'>{label}<br>request {_mark(row.request_equal)}"
        f"<br>response {_mark(row.response_equal)}</td>"
        f"{_cell(row.a, 'request')}{_cell(row.b, 'request')}{_cell(row.a, 'response')}{_cell(row.b, 'response')}</tr>"
    )


def pair_html(view: PairView) -> str:
    """The side-by-side table: call, A's and B's request, A's and B's response; the first divergence marked."""
    first = (
        "none: the runs are identical"
        if view.first_divergence is None
        else (f"call {view.first_divergence} ({view.divergence_class})")
    )
    where = "".join(f"<li><code>{html.escape(w)}</code></li>" for w in view.where)
    rows = []
    for row in view.rows:
        rows.append(_row(row))
        if row.index in view.gaps:
            rows.append("<tr class='gap'><td colspan='5'>... calls left out ...</td></tr>")
    return (
        f"<h3>Task {html.escape(view.task)}, repeat {view.repeat}: run {html.escape(view.run_a)} (A) and "
        f"{html.escape(view.run_b)} (B)</h3>"
        f"<p>Calls: A {view.calls_a}, B {view.calls_b}. First divergence: {html.escape(first)}.</p>"
        + (f"<p>Where it differs first:</p><ul>{where}</ul>" if where else "")
        + "<div class='scroll'><table class='pair' data-table='pair'><thead><tr><th>call</th><th>A asked</th>"
        "<th>B asked</th><th>A was answered</th><th>B was answered</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


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
