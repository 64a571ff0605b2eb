import math

import numpy as np
import pandas as pd

from orchestrator.report.render import (
    FigureSpec,
    Section,
    TableSpec,
    format_cell,
    render_html,
    render_markdown,
)


def test_format_cell() -> None:
    assert format_cell(0.741234) == "0.7412"
    assert format_cell(20.0) == "20" and format_cell(np.int64(7)) == "7"
    assert format_cell(52_000_000.0) == "52,000,000" and format_cell(12345.6) == "12,346"
    assert format_cell(math.nan) == "" and format_cell(None) == "" and format_cell(math.inf) == "inf"
    assert format_cell(-5.5e-18) == "0" and format_cell(0.00049) == "0.00049"


def test_format_cell_never_hides_a_digit_that_matters() -> None:
    # the old rule (4 significant digits) printed 0.999992 as "1" and 0.7400 as "0.74"
    assert format_cell(0.999992) == "0.99999" and format_cell(0.9999999999886725) == "0.99999999999"
    assert format_cell(0.74) == "0.7400" and format_cell(0.0107) == "0.0107" and format_cell(-0.0081) == "-0.0081"
    assert format_cell(1.99999) == "1.99999" and format_cell(1234.5) == "1234.5" and format_cell(12.3456) == "12.35"
    assert format_cell(0.99999999999995) not in ("1", "1.000000000000") and format_cell(9.6e-13) == "9.6e-13"


def test_html_escapes_and_embeds(tmp_path: object) -> None:
    frame = pd.DataFrame({"pairing": ["<b>x</b>"], "mean": [0.5]})
    sections = [
        Section(
            "a",
            "A & B",
            intro="x < y",
            tables=[TableSpec("t", "T", frame)],
            figures=[FigureSpec("f", "F", b"\x89PNG", "alt 'q'")],
        ),
        Section("b", "Skipped one", skipped="needs column outcome"),
    ]
    html = render_html("Title <1>", ["line"], sections)
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "Title &lt;1&gt;" in html and "A &amp; B" in html
    assert "data:image/png;base64,iVBORw==" in html and "data-figure='f'" in html
    assert "Skipped: needs column outcome" in html
    md = render_markdown("Title", ["line"], sections)
    assert "| <b>x</b> | 0.5000 |" in md and "![alt 'q'](figures/f.png)" in md
