"""Open the HTML report in headless Chromium and check that every figure rendered."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from orchestrator.report import build_report

from .conftest import chromium_path, make_ml_study, make_pass_fail_study

pytestmark = pytest.mark.browser


def _dump_dom(html: Path, profile: Path) -> str:
    cmd = [
        chromium_path() or "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
        "--dump-dom",
        html.resolve().as_uri(),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("study", ["ml", "pass_fail"])
def test_every_figure_renders_in_chromium(tmp_path: Path, study: str) -> None:
    runs = make_ml_study(runs=20) if study == "ml" else make_pass_fail_study()
    paths = build_report(runs, tmp_path / "report", seed=0)
    dom = _dump_dom(paths.html, tmp_path / "profile")
    figures = re.findall(r"<img[^>]*data-figure=\"([^\"]+)\"[^>]*>", dom)
    assert sorted(figures) == sorted(paths.figures), "every figure file is embedded in the page"
    rendered = re.findall(r"<img[^>]*data-rendered=\"([^\"]+)\"[^>]*>", dom)
    assert rendered == ["yes"] * len(paths.figures), f"figures not rendered: {rendered}"
    assert f'data-figures-rendered="{len(paths.figures)}/{len(paths.figures)}"' in dom


def test_a_broken_figure_is_detected(tmp_path: Path) -> None:
    paths = build_report(make_pass_fail_study(tasks=4), tmp_path / "report", seed=0)
    html = paths.html.read_text()
    broken = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:image/png;base64,AAAA", html, count=1)
    page = tmp_path / "broken.html"
    page.write_text(broken)
    dom = _dump_dom(page, tmp_path / "profile")
    assert 'data-rendered="no"' in dom
