"""Writers: one self-contained HTML file (figures embedded as base64 PNG), a Markdown summary, CSV tables.

The HTML comes from templates/report.html.j2 through orchestrator/report/templating.py: every value is
escaped by default, since task and pairing names, run ids and transcripts are written by agents and models.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
from markupsafe import Markup

from orchestrator.report.templating import render_page

#: where a report's run ids link to: `sbx view`'s default address (orchestrator/cli/view.py DEFAULT_PORT).
#: A report is a file: it cannot know where a viewer will run, so it links the default one (`sbx report
#: --viewer-url` names another) and says so; `sbx view` serving the report points the links at itself
#: (templating.py `local_run_links`).
VIEWER_URL = "http://127.0.0.1:8700/"


@dataclass
class TableSpec:
    name: str  # file stem of the CSV
    title: str
    frame: pd.DataFrame
    note: str = ""
    #: columns whose cells link to a run in `sbx view`: {shown column: column of full run ids}. The id
    #: columns are kept in the CSV (a script wants the full id) and left out of the HTML and Markdown
    runs: dict[str, str] = field(default_factory=dict)

    def shown(self) -> pd.DataFrame:
        """The frame as the HTML and Markdown show it: without the columns of full ids behind the links."""
        return self.frame.drop(columns=[c for c in self.runs.values() if c in self.frame])


@dataclass
class FigureSpec:
    name: str  # file stem of the PNG
    title: str
    png: bytes
    alt: str


@dataclass
class Section:
    key: str
    title: str
    intro: str = ""
    tables: list[TableSpec] = field(default_factory=list)
    figures: list[FigureSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""  # why the section could not be built; empty when it was
    #: a block rendered from its own template (the paired transcript view; templating.render_fragment), and
    #: its Markdown; a plain str put here is escaped like any other value
    html: Markup = Markup("")
    markdown: str = ""


def _decimals(v: float) -> str:
    """Below 1: four decimals with trailing zeros kept (0.7400 is not 0.74), and more where four would round
    a value that is not whole to a whole number (0.999992 is not 1)."""
    for d in range(4, 13):
        text = f"{v:.{d}f}"
        if float(text) != round(float(text)) or v == round(v):
            return text
    return f"{v:.17g}"  # within 1e-12 of a whole number: every digit, never the whole number


def format_cell(value: object) -> str:
    """How a number reads in a rendered table: four decimals below 1 (more near a whole number, two
    significant digits below 0.001), four significant digits up to 10,000, ints as ints, blank if missing."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return ""
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if abs(v) < 1e-15:  # rounding noise of a difference that is zero (a p-value of 1e-13 is not)
            return "0"
        if v == round(v) and abs(v) < 1e15:
            return f"{round(v):,}" if abs(v) >= 1e4 else str(round(v))
        if abs(v) >= 1e4:
            return f"{v:,.0f}"
        if abs(v) < 1e-3:
            return f"{v:.2g}"
        if abs(v) < 1:
            return _decimals(v)
        for sig in range(4, 13):  # never a whole number for a value that is not whole (1.99999 is not 2)
            text = f"{v:.{sig}g}"
            if float(text) != round(float(text)):
                return text
        return f"{v:.12g}"
    return str(value)


def run_link(viewer: str, run_id: str) -> str:
    """The address of run `run_id`'s page in the viewer at `viewer` (the id quoted as one path segment)."""
    return f"{viewer.rstrip('/')}/run/{quote(run_id, safe='')}"


def _links(t: TableSpec, viewer: str) -> list[dict[str, str]]:
    """Per row, {shown column: the run page's address} for the table's run columns (none for a blank id)."""
    out: list[dict[str, str]] = [{} for _ in range(len(t.frame))]
    for shown, ids in t.runs.items():
        for i, run_id in enumerate(t.frame[ids].tolist()):
            if isinstance(run_id, str) and run_id:
                out[i][shown] = run_link(viewer, run_id)
    return out


def _cells(t: TableSpec, viewer: str) -> list[list[tuple[str, bool, str | None]]]:
    """Each row's shown cells as (text, numeric, link): numbers are right-aligned, run ids link to the viewer."""
    frame, links = t.shown(), _links(t, viewer)
    return [
        [(format_cell(v), isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool),
          links[i].get(str(c))) for c, v in zip(frame.columns, row, strict=True)]
        for i, row in enumerate(frame.itertuples(index=False))
    ]


def _base64(png: bytes) -> str:
    return base64.b64encode(png).decode("ascii")


def render_html(title: str, preamble: list[str], sections: list[Section], viewer: str = VIEWER_URL) -> str:
    """The whole report as one HTML document with no external resources; run ids link to `viewer`."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    linked = any(t.runs for s in sections for t in s.tables)
    return render_page("report.html.j2", title=title, preamble=preamble, sections=sections, stamp=stamp,
                       cells=lambda t: _cells(t, viewer), base64=_base64, viewer=viewer, linked=linked)


def _md_table(t: TableSpec, viewer: str = VIEWER_URL) -> str:
    frame = t.shown()
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for text_row in _cells(t, viewer):
        cells = [text.replace("|", "\\|") for text, _, _ in text_row]
        cells = [f"[{c}]({link})" if link and c else c for c, (_, _, link) in zip(cells, text_row, strict=True)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_markdown(title: str, preamble: list[str], sections: list[Section], viewer: str = VIEWER_URL) -> str:
    """The report as Markdown: the same tables, figures referenced as files under figures/."""
    out = [f"# {title}", ""]
    out += [line + "\n" for line in preamble]
    for s in sections:
        out += [f"## {s.title}", ""]
        if s.skipped:
            out += [f"Skipped: {s.skipped}", ""]
            continue
        if s.intro:
            out += [s.intro, ""]
        for f in s.figures:
            out += [f"![{f.alt}](figures/{f.name}.png)", ""]
        for t in s.tables:
            out += [f"### {t.title}", ""]
            if t.note:
                out += [t.note, ""]
            out += [_md_table(t, viewer), "", f"CSV: `tables/{t.name}.csv`", ""]
        if s.markdown:
            out += [s.markdown, ""]
        out += [n + "\n" for n in s.notes]
    return "\n".join(out).rstrip() + "\n"


@dataclass(frozen=True)
class ReportPaths:
    """Where a report's files were written."""

    html: Path
    markdown: Path
    tables: dict[str, Path]
    figures: dict[str, Path]

    def all(self) -> list[Path]:
        return [self.html, self.markdown, *self.tables.values(), *self.figures.values()]


def write_report(out_dir: Path, title: str, preamble: list[str], sections: list[Section],
                 viewer: str = VIEWER_URL) -> ReportPaths:
    """Write report.html (self-contained), summary.md, tables/*.csv and figures/*.png under `out_dir`; run ids
    link to their pages in the `sbx view` at `viewer`."""
    if not viewer.startswith(("http://", "https://")):  # a link, never javascript: or a file
        raise ValueError(f"the viewer's address must start with http:// or https://, got {viewer!r}")
    out_dir = Path(out_dir)
    (out_dir / "tables").mkdir(parents=True, exist_ok=True)
    (out_dir / "figures").mkdir(parents=True, exist_ok=True)
    tables: dict[str, Path] = {}
    figures: dict[str, Path] = {}
    for s in sections:
        for t in s.tables:
            tables[t.name] = out_dir / "tables" / f"{t.name}.csv"
            t.frame.to_csv(tables[t.name], index=False)
        for f in s.figures:
            figures[f.name] = out_dir / "figures" / f"{f.name}.png"
            figures[f.name].write_bytes(f.png)
    html_path, md_path = out_dir / "report.html", out_dir / "summary.md"
    html_path.write_text(render_html(title, preamble, sections, viewer), encoding="utf-8")
    md_path.write_text(render_markdown(title, preamble, sections, viewer), encoding="utf-8")
    return ReportPaths(html_path, md_path, tables, figures)
