"""Writers: one self-contained HTML file (figures embedded as base64 PNG), a Markdown summary, CSV tables."""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass
class TableSpec:
    name: str  # file stem of the CSV
    title: str
    frame: pd.DataFrame
    note: str = ""


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
    #: a block made by sbx's own code with every value escaped (the paired transcript view), and its Markdown
    html: str = ""
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


def _html_table(spec: TableSpec) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in spec.frame.columns)
    body = []
    for row in spec.frame.itertuples(index=False):
        cells = []
        for v in row:
            text = html.escape(format_cell(v))
            numeric = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            cells.append(f'<td class="num">{text}</td>' if numeric else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="note">{html.escape(spec.note)}</p>' if spec.note else ""
    return (
        f'<h3>{html.escape(spec.title)}</h3>{note}<div class="scroll"><table data-table="{spec.name}">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        f'<p class="csv">CSV: tables/{html.escape(spec.name)}.csv</p>'
    )


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em} h3{font-size:1em}
table{border-collapse:collapse;font-size:.85em;margin:.4em 0}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums} th{background:#f4f4f4}
.scroll{overflow-x:auto} .note,.csv{color:#555;font-size:.85em;margin:.2em 0} .skipped{color:#8a6d00}
figure{margin:1em 0} figure img{max-width:100%} figcaption{color:#555;font-size:.85em}
nav ul{columns:2;font-size:.9em}
table.pair td{white-space:pre-wrap;vertical-align:top;max-width:34em;font-family:ui-monospace,monospace;font-size:.8em}
table.pair tr.first td{background:#fff3cd} table.pair tr.differs td.idx{color:#c62828;font-weight:bold}
"""

#: marks each embedded figure data-rendered="yes" once the browser has decoded it (checked by the tests)
_CHECK_SCRIPT = """
<script>
function sbxCheckFigures(){var imgs=document.querySelectorAll('img[data-figure]');var ok=0;
for(var i=0;i<imgs.length;i++){var im=imgs[i];var r=im.complete&&im.naturalWidth>0;
im.setAttribute('data-rendered',r?'yes':'no');if(r){ok++;}}
document.body.setAttribute('data-figures-rendered',ok+'/'+imgs.length);}
window.addEventListener('load',sbxCheckFigures);
</script>
"""


def render_html(title: str, preamble: list[str], sections: list[Section]) -> str:
    """The whole report as one HTML document with no external resources."""
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    parts += [f"<p>{html.escape(line)}</p>" for line in preamble]
    parts.append(
        "<nav><ul>"
        + "".join(
            f"<li><a href='#{s.key}'>{html.escape(s.title)}</a>"
            + (" (skipped)" if s.skipped else "")
            + "</li>"
            for s in sections
        )
        + "</ul></nav>"
    )
    for s in sections:
        parts.append(f"<section id='{s.key}'><h2>{html.escape(s.title)}</h2>")
        if s.skipped:
            parts.append(f"<p class='skipped'>Skipped: {html.escape(s.skipped)}</p></section>")
            continue
        if s.intro:
            parts.append(f"<p>{html.escape(s.intro)}</p>")
        for f in s.figures:
            data = base64.b64encode(f.png).decode("ascii")
            parts.append(
                f"<figure><img data-figure='{f.name}' alt='{html.escape(f.alt, quote=True)}' "
                f"src='data:image/png;base64,{data}'><figcaption>{html.escape(f.title)}</figcaption>"
                "</figure>"
            )
        for t in s.tables:
            parts.append(_html_table(t))
        if s.html:
            parts.append(s.html)
        parts += [f"<p class='note'>{html.escape(n)}</p>" for n in s.notes]
        parts.append("</section>")
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f"<p class='note'>Written by sbx report, {stamp}.</p>{_CHECK_SCRIPT}</body></html>")
    return "\n".join(parts)


def _md_table(frame: pd.DataFrame) -> str:
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(format_cell(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def render_markdown(title: str, preamble: list[str], sections: list[Section]) -> str:
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
            out += [_md_table(t.frame), "", f"CSV: `tables/{t.name}.csv`", ""]
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


def write_report(out_dir: Path, title: str, preamble: list[str], sections: list[Section]) -> ReportPaths:
    """Write report.html (self-contained), summary.md, tables/*.csv and figures/*.png under `out_dir`."""
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
    html_path.write_text(render_html(title, preamble, sections), encoding="utf-8")
    md_path.write_text(render_markdown(title, preamble, sections), encoding="utf-8")
    return ReportPaths(html_path, md_path, tables, figures)
