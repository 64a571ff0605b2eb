"""The viewer's pages over HTTP: what each shows, that agent text stays text (parsed, not searched for), that
the server is read-only and local, and that a bad address is a 404 or 400, never a traceback."""

from __future__ import annotations

import urllib.error
import urllib.request
from html.parser import HTMLParser
from urllib.parse import quote

import pytest

from orchestrator.ledger.fields import short_run_id
from orchestrator.view import ViewServer
from orchestrator.view.server import HOST, PAGE_POLICY

from .conftest import HOSTILE, Built


class _Page(HTMLParser):
    """Every element with its attributes, and the text outside tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def links(self) -> list[str]:
        return [a["href"] or "" for t, a in self.tags if t == "a" and "href" in a]


def _get(server: ViewServer, path: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, dict(exc.headers), exc.read().decode()


def _parse(body: str) -> _Page:
    page = _Page()
    page.feed(body)
    return page


def _assert_inert(page: _Page) -> None:
    """No element an agent wrote is live: no script, no event handler, no injected element."""
    assert not [t for t, _ in page.tags if t in ("script", "img", "iframe", "object")]
    assert not [(t, k) for t, a in page.tags for k in a if k.startswith("on")]
    assert not [t for t, a in page.tags if a.get("id") == "injected"]


def test_studies_and_a_study(built: Built, viewer: ViewServer) -> None:
    status, headers, body = _get(viewer, "/")
    assert status == 200 and headers["Content-Security-Policy"] == PAGE_POLICY
    page = _parse(body)
    assert "/study/demo" in page.links() and "/study/bugs" in page.links()
    status, _, body = _get(viewer, "/study/demo")
    assert status == 200
    page = _parse(body)
    text = " ".join(page.text)
    assert "0.7800" in text  # claude/m2's best holdout, as the final table prints it
    assert f"/run/{built.runs['best']}" in page.links()
    assert short_run_id(built.runs["best"]) in text
    assert "/runs?study=demo&pairing=codex/m1" in page.links()
    assert "no HTML report yet" in text
    # the tests study shows graded and passed instead of scores
    bugs = " ".join(_parse(_get(viewer, "/study/bugs")[2]).text)
    assert "graded" in bugs and "mean holdout" not in bugs


def test_the_report_is_linked_and_served_once_written(built: Built, viewer: ViewServer) -> None:
    report = built.home.report_dir("demo") / "report.html"
    report.parent.mkdir(parents=True)
    report.write_text("<!doctype html><title>the report</title><p>figures</p>")
    assert "/study/demo/report" in _parse(_get(viewer, "/study/demo")[2]).links()
    status, _, body = _get(viewer, "/study/demo/report")
    assert status == 200 and "<title>the report</title>" in body
    for bad in ("/study/..%2F..%2Fledger.sqlite/report", "/study/../report", "/study/bugs/report"):
        assert _get(viewer, bad)[0] == 404


def test_the_served_report_links_its_run_ids_to_this_viewer(built: Built, viewer: ViewServer) -> None:
    """The file links run ids at the address it was written with; served here, they are /run/ID on this
    viewer (it runs on a port the file could not know), and each opens its run."""
    import pandas as pd

    from orchestrator.report.render import Section, TableSpec, write_report

    ids = [built.runs["best"], built.runs["hostile"]]
    frame = pd.DataFrame({"run": [short_run_id(r) for r in ids], "note": [HOSTILE, "x"], "run_id": ids})
    section = Section("runs", "Runs", tables=[TableSpec("runs", "Runs", frame, runs={"run": "run_id"})])
    write_report(built.home.report_dir("demo"), "the report", [], [section], viewer="https://elsewhere:1/v/")
    on_disk = (built.home.report_dir("demo") / "report.html").read_text()
    assert f'href="https://elsewhere:1/v/run/{ids[0]}"' in on_disk
    status, _, body = _get(viewer, "/study/demo/report")
    assert status == 200
    page = _parse(body)
    assert [a["href"] for t, a in page.tags if t == "a" and a.get("class") == "run"] == [f"/run/{r}" for r in ids]
    assert HOSTILE in " ".join(page.text)  # the agent's text is still text: only the template's links moved
    assert [t for t, a in page.tags if a.get("id") == "injected"] == []
    status, _, run = _get(viewer, f"/run/{ids[0]}")
    assert status == 200 and f"Run {ids[0]}" in run


def test_run_list_pages_filters_and_links(built: Built, viewer: ViewServer) -> None:
    status, _, body = _get(viewer, "/runs?study=demo&verdict=flagged&sort=score")
    assert status == 200
    page = _parse(body)
    runs = [link for link in page.links() if link.startswith("/run/")]
    assert runs == [f"/run/{built.runs['flagged']}", f"/run/{built.runs['hostile']}"]  # best score first
    assert "2 runs, page 1 of 1." in " ".join(page.text)
    _assert_inert(page)
    assert _get(viewer, "/runs?study=demo&sort=nonsense")[0] == 400
    assert _get(viewer, "/runs?study=demo&page=two")[0] == 400
    assert _get(viewer, "/runs?study=nope")[0] == 404


def test_a_run_page_shows_everything_and_runs_nothing(built: Built, viewer: ViewServer) -> None:
    run_id = built.runs["hostile"]
    status, _, body = _get(viewer, f"/run/{short_run_id(run_id)}")  # the short id the CLI prints
    assert status == 200
    page = _parse(body)
    _assert_inert(page)
    text = "".join(page.text)
    assert text.count(HOSTILE) >= 8  # reason-free fields: meta, event, experiment note, evidence, notes, transcript
    for shown in ("train.py:12", "train.py:40", "labels reach fit", "eval_labels_in_fit", "flagged",
                  "Call #0", "Call #1", "tool call Bash", "tool result", "done ", "$0.002400", "agent_said"):
        assert shown in text, shown
    assert "/study/demo" in page.links()
    # an agent failure's reason is on its page, escaped
    failed = _parse(_get(viewer, f"/run/{built.runs['failed']}")[2])
    _assert_inert(failed)
    assert f"agent crashed {HOSTILE}" in "".join(failed.text)


def test_a_graded_run_shows_its_tests(built: Built, viewer: ViewServer) -> None:
    text = " ".join(_parse(_get(viewer, f"/run/{built.runs['tests#2']}")[2]).text)
    assert "tests: 2 passed, 1 not passed" in text and "tests_failed" in text


def test_overridden_verdict_shows_the_reviewer(built: Built, viewer: ViewServer) -> None:
    text = " ".join(_parse(_get(viewer, f"/run/{built.runs['overridden']}")[2]).text)
    assert "overridden from flagged" in text and "the labels are the train split's" in text


def test_bad_addresses_and_methods(built: Built, viewer: ViewServer) -> None:
    assert _get(viewer, "/run/ffffffffff")[0] == 404
    assert _get(viewer, "/nothing/here")[0] == 404
    assert _get(viewer, f"/study/{quote('<script>')}")[0] == 404
    status, _, body = _get(viewer, f"/study/{quote(HOSTILE, safe='')}")
    assert status == 404
    _assert_inert(_parse(body))
    req = urllib.request.Request(viewer.url + "run/x", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=30)
    with err.value:
        assert err.value.code == 405


def test_the_viewer_listens_on_loopback_only(viewer: ViewServer) -> None:
    assert viewer.server_address[0] == HOST == "127.0.0.1"


def test_a_study_running_now_reloads_itself(built: Built, viewer: ViewServer) -> None:
    from orchestrator.study.runner import study_lock

    assert 'http-equiv="refresh"' not in _get(viewer, "/study/demo")[2]
    with study_lock(built.home, "demo"):
        body = _get(viewer, "/study/demo")[2]
    assert 'http-equiv="refresh"' in body and "Running" in body
