"""`sbx view` in a real browser: the system's headless Chromium, driven by Playwright (no browser download:
`executable_path` is the Chromium tests/report/conftest.py finds). The test starts `sbx view` as a user
would, on a ledger written through the ledger's API, loads the studies, opens a study, follows its links to
a run, to the run list and its filters, to the study's HTML report and from a run id in it back to the run,
checks that a transcript, event, note and evidence carrying `<script>` ran nothing, and that no table makes
a page scroll sideways, at 1280 and at 720 pixels. Screenshots are kept in the test's tmp dir and, when
SBX_TEST_ARTIFACTS names a folder, there too."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.ledger.fields import short_run_id
from tests.report.conftest import chromium_path

from .conftest import SCRIPT, Built

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def chromium() -> str:
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but no Chromium is installed (apt-get install chromium)")
        pytest.skip("Chromium not installed (apt-get install chromium)")
    return path


@pytest.fixture
def sbx_view(built: Built, tmp_path: Path) -> Iterator[str]:
    """`sbx view --port 0` in its own process; yields the URL it prints."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log = tmp_path / "view.log"
    with log.open("w") as err, subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "view", "--home", str(built.home.root), "--port", "0"],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            found = re.search(r"http://127\.0\.0\.1:\d+/", line)
            assert found, f"sbx view printed {line!r}; stderr: {log.read_text()}"
            yield found[0]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert proc.returncode == 0, f"sbx view stops cleanly on SIGTERM; stderr: {log.read_text()}"


def _shot(page: object, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    keep = os.environ.get("SBX_TEST_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / f"view-{name}.png")


def _fits(page: object, where: str) -> None:
    """No table makes the page scroll sideways: each sits in its own scroll box, and the page is no wider
    than the window (measured by the browser's layout, at the window's width)."""
    overflow = page.evaluate(  # type: ignore[attr-defined]
        "document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{where}: the page is {overflow}px wider than the window"
    loose = page.evaluate(  # type: ignore[attr-defined]
        "[...document.querySelectorAll('table')].filter(t => !t.parentElement.matches('.wrap, .scroll, .tablebox'))"
        ".map(t => t.outerHTML.slice(0, 80))")
    assert loose == [], f"{where}: tables outside a scroll box: {loose}"


def _write_report(built: Built) -> None:
    """The study's HTML report, written as `sbx study run --report` writes it."""
    from orchestrator.ledger import Ledger
    from orchestrator.report import build_report, validate_runs
    from orchestrator.study.export import runs_frame

    with Ledger(built.home.ledger_path) as ledger:
        runs = validate_runs(runs_frame(ledger, built.ml_study), source="study demo")
    build_report(runs, built.home.report_dir("demo"), title="sbx study demo", exclusion="both", seed=0,
                 source="study demo")


def test_view_in_chromium(built: Built, chromium: str, sbx_view: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    _write_report(built)  # read per request: the running viewer links it from now on
    url = sbx_view
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        expect(page.locator("h1")).to_have_text("Studies")
        _shot(page, tmp_path, "studies")

        page.get_by_role("link", name="demo", exact=True).click()
        expect(page.locator("h1")).to_have_text("Study demo")
        best = page.locator("#results").get_by_role("link", name=short_run_id(built.runs["best"]))
        expect(best).to_have_count(1)
        _shot(page, tmp_path, "study")
        _fits(page, "the study page")

        best.click()
        expect(page.locator("h1")).to_have_text(f"Run {built.runs['best']}")
        expect(page.locator("#state")).to_contain_text("audited")
        _shot(page, tmp_path, "run-best")

        # back to the study by its link, then its pairing's runs, then the list's own filter form
        page.locator("#study").click()
        page.locator("#results").get_by_role("link", name="codex/m1").click()
        expect(page.locator("#count")).to_contain_text("6 runs")
        page.locator("select[name=verdict]").select_option("flagged")
        page.get_by_role("button", name="show").click()
        assert "verdict=flagged" in page.url
        expect(page.locator("#count")).to_contain_text("2 runs")
        _shot(page, tmp_path, "runs-flagged")

        page.locator("#runs").get_by_role("link", name=short_run_id(built.runs["hostile"])).click()
        expect(page.locator("h1")).to_have_text(f"Run {built.runs['hostile']}")
        # the payload is on the page as text, and nothing of it ran or became an element
        expect(page.get_by_text(SCRIPT).first).to_be_visible()
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("script").count() == 0 and page.locator("#injected").count() == 0
        assert page.locator("img").count() == 0
        expect(page.locator("section.call")).to_have_count(2)
        expect(page.locator("#transcript")).to_be_visible()
        _shot(page, tmp_path, "run-hostile")
        _fits(page, "the hostile run's page")

        # the study's report, from the study page's link
        page.goto(url + "study/demo")
        page.locator("#report").click()
        expect(page).to_have_title(re.compile("sbx study demo"))
        page.wait_for_function("document.body.dataset.figuresRendered !== undefined", timeout=20_000)
        rendered = page.evaluate("document.body.dataset.figuresRendered")
        done, total = rendered.split("/")
        assert done == total and int(total) > 0, rendered
        _shot(page, tmp_path, "report")
        _fits(page, "the report")

        # a run id in the report links to the run in this viewer (the file was written for the default port)
        first = page.locator("table[data-table=highest_runs] a.run").first
        expect(first).to_have_text(short_run_id(built.runs["best"]))
        first.click()
        expect(page.locator("h1")).to_have_text(f"Run {built.runs['best']}")

        # on a narrow window too, the wide tables scroll in their boxes and long cells wrap
        page.set_viewport_size({"width": 720, "height": 900})
        for name, path in (("run-narrow", f"run/{built.runs['hostile']}"), ("runs-narrow", "runs?study=demo"),
                           ("report-narrow", "study/demo/report")):
            page.goto(url + path)
            _fits(page, path)
            _shot(page, tmp_path, name)
        assert errors == [], errors
        browser.close()
