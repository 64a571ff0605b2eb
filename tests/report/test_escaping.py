"""Agent- and model-written text full of markup and script is shown as text in every HTML view, never live.

Each view (the study report, a run's transcript page, the divergence report with its side-by-side pair) is
rendered with hostile text in every field an agent, a model or a ledger row controls, and the page is read
with an HTML parser: no script but the report's own, no event-handler attribute, no `javascript:` link, no
element the writers do not make, and each hostile string found whole in the page's text.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.diverge.analysis import PairedRuns, RunSide, analyse, pair_evidence
from orchestrator.diverge.compare import compare_runs
from orchestrator.diverge.view import CallView as PairCall
from orchestrator.diverge.view import PairRow, PairView, pair_view
from orchestrator.report import build_report
from orchestrator.report.diverge_view import pair_html
from orchestrator.report.divergence import DivergenceReportInput, write_divergence_report
from orchestrator.report.render import FigureSpec, Section, TableSpec, render_html
from orchestrator.report.transcript import call_views, html_page
from orchestrator.specs.diverge import BaseRateControl, Cause, DivergeDefinitions, Thresholds
from orchestrator.specs.transcript import CallRecord
from tests.diverge.standin import AGENTS, Step, run_transcript

from .conftest import make_ml_study, make_pass_fail_study

#: a run's page in `sbx view` at its default address, as the report links a run id (render.py run_link)
_RUN_PAGE = re.compile(r"http://127\.0\.0\.1:8700/run/[A-Za-z0-9%._~-]+")

HOSTILE = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "'><svg onload=alert(1)>",
    "</td></tr></table><script>alert(2)</script>",
    "</pre></details><iframe src=javascript:alert(3)>",
    "{{ 7*7 }}",
    "{% raw %}",
    "javascript:alert(4)",
    '<a href="javascript:alert(5)">click</a>',
)
#: one agent text carrying every hostile string
BLOB = " ".join(HOSTILE)

#: every element the writers make; anything else in a page came from the text
TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "nav", "ul", "li", "a", "section",
    "figure", "img", "figcaption", "div", "table", "thead", "tbody", "tr", "th", "td", "br", "code", "script",
    "pre", "details", "summary",
}


class _Page(HTMLParser):
    """What a browser would make live of a page: elements, attributes, scripts, and the text shown."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []  # (tag, name, value)
        self.scripts: list[str] = []
        self.texts: list[str] = []
        self._raw: str | None = None  # inside <script> or <style>
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, name, value or "") for name, value in attrs]
        if tag in ("script", "style"):
            self._raw = tag
            if tag == "script":
                self.scripts.append("")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self._raw = None

    def handle_endtag(self, tag: str) -> None:
        if tag == self._raw:
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw == "script":
            self.scripts[-1] += data
        elif self._raw is None:
            self.texts.append(data)

    def problems(self, own_scripts: list[str]) -> list[str]:
        """Everything live that the writers did not put there; empty for a safe page."""
        found = [f"element <{t}>" for t in sorted(set(self.tags) - TAGS)]
        if self.scripts != own_scripts:
            found.append(f"scripts {self.scripts!r}, the report ships {own_scripts!r}")
        for tag, name, value in self.attrs:
            if name.startswith("on"):
                found.append(f"handler <{tag} {name}={value!r}>")
            if value.strip().lower().startswith("javascript:"):
                found.append(f"javascript: URL <{tag} {name}={value!r}>")
            # the only links out of the page: a run's page in `sbx view`, its id one quoted path segment
            if tag == "a" and name == "href" and not value.startswith("#") and not _RUN_PAGE.fullmatch(value):
                found.append(f"link out of the page <a href={value!r}>")
            if tag == "img" and name == "src" and not value.startswith("data:image/png;base64,"):
                found.append(f"image from elsewhere <img src={value!r}>")
        return found

    def shows(self, text: str) -> bool:
        return any(text in t for t in self.texts)


def _check(page: str, *, own_scripts: list[str], shown: tuple[str, ...] = HOSTILE) -> None:
    doc = _Page(page)
    assert doc.problems(own_scripts) == []
    missing = [h for h in shown if not doc.shows(h)]
    assert missing == [], "hostile text not shown as text (a template that evaluated {{ 7*7 }} shows 49)"


#: the report page's own scripts, as an empty report ships them: the figure check, and only it
OWN_SCRIPTS = _Page(render_html("t", [], [])).scripts


def test_the_checker_finds_live_markup() -> None:
    """The parser check can fail: raw hostile text in a page is found."""
    assert len(OWN_SCRIPTS) == 1 and "sbxCheckFigures" in OWN_SCRIPTS[0]
    for raw in HOSTILE[:5]:
        page = f"<!DOCTYPE html><html><body><table><tr><td>{raw}</td></tr></table></body></html>"
        assert _Page(page).problems([]) != [], raw
    assert _Page("<p><a href='javascript:alert(1)'>x</a></p>").problems([]) != []


# --- the study report --------------------------------------------------------------------------------------


def _hostile_ml_study():
    runs = make_ml_study(runs=6)
    agents = {"codex": HOSTILE[0], "claude": HOSTILE[1]}
    models = {"m-small": HOSTILE[2], "m-mid": HOSTILE[3], "m-large": HOSTILE[4]}
    runs["agent"] = runs["agent"].map(agents)
    runs["model"] = runs["model"].map(models)
    runs["pairing"] = runs["agent"] + " / " + runs["model"]
    runs["task"] = BLOB
    return runs


def _hostile_pass_fail_study():
    runs = make_pass_fail_study(tasks=len(HOSTILE), repeats=3)
    runs["task"] = runs["task"].map({f"task-{i:02d}": h for i, h in enumerate(HOSTILE)})
    runs["pairing"] = runs["pairing"].map({"a/x": HOSTILE[5], "b/x": HOSTILE[6], "c/y": HOSTILE[8]})
    return runs


@pytest.mark.parametrize("study", ["ml", "pass_fail"])
def test_the_study_report_shows_hostile_names_as_text(tmp_path: Path, study: str) -> None:
    runs = _hostile_ml_study() if study == "ml" else _hostile_pass_fail_study()
    page = build_report(runs, tmp_path / "report", title=BLOB, seed=0, source=BLOB).html.read_text()
    _check(page, own_scripts=OWN_SCRIPTS)


def test_a_raw_fragment_is_escaped_unless_the_writer_marked_it_safe() -> None:
    """Section.html is a writer's slot for a block it built; a plain string put there is text, not markup.

    Also every other field of a section, the figure's alt (an attribute) and caption among them."""
    s = Section("x", BLOB, intro=BLOB, notes=[BLOB], html=BLOB)  # a str where Markup is asked: a careless writer
    s.tables.append(TableSpec("t", BLOB, pd.DataFrame({BLOB: [BLOB, 1.5]}), note=BLOB))
    s.figures.append(FigureSpec("f", BLOB, b"\x89PNG", alt=BLOB))
    skipped = Section("y", BLOB, skipped=BLOB)
    page = render_html(BLOB, [BLOB], [s, skipped])
    _check(page, own_scripts=OWN_SCRIPTS)


# --- a run's transcript page --------------------------------------------------------------------------------


def _hostile_run(agent: str, seed: int = 1, **options) -> list[CallRecord]:
    steps = (Step(f"echo {BLOB}", f"{BLOB}\n", reasoning=BLOB), Step(None, text=BLOB, reasoning=BLOB))
    records = run_transcript(agent, seed, steps, prompt=BLOB, thinking=True, reasoning=True, **options)
    out = []
    for r in records:
        body = json.loads(r.request.body or "{}")
        body["model"] = BLOB
        request = r.request.model_copy(update={"body": json.dumps(body)})
        out.append(r.model_copy(update={"request": request, "error": BLOB, "path": f"/v1/{BLOB}"}))
    return out


@pytest.mark.parametrize("agent", AGENTS)
def test_the_transcript_page_shows_hostile_calls_as_text(agent: str) -> None:
    views = call_views(_hostile_run(agent))
    page = html_page(views, title=f"Model calls of run {BLOB}", summary={"run": BLOB, BLOB: BLOB})
    _check(page, own_scripts=[])


def test_a_long_hostile_text_folded_away_is_still_text() -> None:
    """Over 1500 characters a part is folded into <details>, with its first line as the summary."""
    views = call_views(run_transcript("claude-code", 3, (Step(None, text=BLOB * 40),), prompt=BLOB * 40))
    page = html_page(views, title="t", summary={})
    assert "<details>" in page
    _check(page, own_scripts=[])


# --- the divergence report and its side-by-side pair -------------------------------------------------------

D = DivergeDefinitions(
    thresholds=Thresholds(min_at_risk=2, n_resamples=200),
    causes=(
        Cause(name="fp", observe="response_value_differs", key="system_fingerprint",
              control=BaseRateControl(at_call=0)),
        Cause(name="bare", observe="outcome_differs"),
    ),
)


def _hostile_pairs() -> tuple[list[PairedRuns], PairView]:
    pairs, view = [], None
    for i in range(6):
        a = _hostile_run("opencode", 2 * i)
        b = _hostile_run("opencode", 2 * i + 1, stop_after=2 if i % 2 else None)
        comparison, causes = pair_evidence(a, b, D)
        task = HOSTILE[i % len(HOSTILE)]
        pairs.append(PairedRuns(
            task, i,
            RunSide(f"{BLOB}-a{i}", outcome=True, seed=1, node=HOSTILE[0], slot=HOSTILE[1], order=i),
            RunSide(f"{BLOB}-b{i}", outcome=i % 3 != 0, seed=1, node=HOSTILE[2], slot=HOSTILE[3], order=6 + i),
            comparison, causes,
        ))
        if i == 1:
            view = pair_view(BLOB, i, f"{BLOB}-a{i}", f"{BLOB}-b{i}", a, b, compare_runs(a, b))
    assert view is not None
    return pairs, view


def test_the_divergence_report_shows_hostile_transcripts_as_text(tmp_path: Path) -> None:
    pairs, view = _hostile_pairs()
    assert view.first_divergence is not None and any(r.a is None or r.b is None for r in view.rows)
    extra = DivergenceReportInput(BLOB, BLOB, {BLOB: 6}, (BLOB,), view)
    paths = write_divergence_report(analyse(pairs, D, seed=0), extra, tmp_path / "d", title=BLOB)
    page = paths.html.read_text()
    assert "data-table='pair'" in page
    _check(page, own_scripts=OWN_SCRIPTS)


def test_every_field_of_the_pair_view_is_text() -> None:
    """The side-by-side table with hostile text in each field a PairView carries (speaker, outcome too)."""
    call = PairCall(speaker=BLOB, outcome=BLOB, status=500, request=BLOB, response=BLOB)
    view = PairView(BLOB, 0, BLOB, BLOB, 1, BLOB, (BLOB, BLOB), 2, 1,
                    (PairRow(0, call, call, True, True, False), PairRow(1, call, None, None, None, True)), (0,))
    s = Section("pair", "One pair side by side")
    s.html = pair_html(view)
    _check(render_html("t", [], [s]), own_scripts=OWN_SCRIPTS)
    s.html = pair_html(view, "http://127.0.0.1:8700/")  # the run ids as links: quoted into the address, escaped
    _check(render_html("t", [], [s]), own_scripts=OWN_SCRIPTS)


# --- the writers have no way around the escaping ----------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def test_no_writer_escapes_by_hand_or_marks_text_safe() -> None:
    """HTML is written only through the templates: no hand escaping, no |safe, Markup made in one place."""
    sources = {p.relative_to(ROOT).as_posix(): p.read_text() for p in (ROOT / "orchestrator").rglob("*.py")}
    assert [p for p, text in sources.items() if "html.escape" in text or "import html\n" in text] == []
    makers = {p for p, text in sources.items() if re.search(r"Markup\((?!\"\"\))", text)}
    assert makers == {"orchestrator/report/templating.py"}  # render_fragment: a rendered template only
    templates = sorted([*(ROOT / "orchestrator" / "report" / "templates").glob("*.html.j2"),
                        *(ROOT / "orchestrator" / "view" / "templates").glob("*.html.j2")])
    assert {t.name for t in templates} == {"report.html.j2", "pair.html.j2", "transcript.html.j2",
                                           "transcript_calls.html.j2", "base.html.j2", "error.html.j2",
                                           "run.html.j2", "runs.html.j2", "studies.html.j2", "study.html.j2"}
    for t in templates:
        code = re.sub(r"\{#.*?#\}", "", t.read_text(), flags=re.S)  # the comments may say what is banned
        assert not re.search(r"\|\s*safe|autoescape|Markup", code), t.name
