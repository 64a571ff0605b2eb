"""The viewer's pages: each reads what it shows (orchestrator/view/queries.py for lists and tables,
orchestrator/run/record.py `full_record` for one run, the gateway's transcript from the artifact store) and
renders a template of orchestrator/view/templates with autoescape on. Every value shown may be an agent's
text; none is marked safe here (the only Markup is a rendered template)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader

from orchestrator.artifacts import ArtifactStore
from orchestrator.failures import SbxError
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.ledger.fields import short_run_id
from orchestrator.report.templating import environment as report_environment
from orchestrator.view import queries
from orchestrator.view.queries import RunQuery

#: the file a study's report is written to (orchestrator/report/build.py), in HOME/reports/<study>/
REPORT_FILE = "report.html"


@cache
def environment() -> Environment:
    """The report's environment (autoescape on, undefined names fail), loading the viewer's templates first
    and the report's after them (the transcript's calls are the report's template)."""
    base = report_environment()
    assert base.loader is not None  # the report's PackageLoader
    return base.overlay(loader=ChoiceLoader([PackageLoader("orchestrator.view", "templates"), base.loader]))


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def when(unix: float | None) -> str:
    return "-" if unix is None else datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _common() -> dict[str, Any]:
    return {"when": when, "num": num, "short": short_run_id}


@dataclass(frozen=True)
class View:
    """What every page reads: the home (artifacts, reports, study locks) and the ledger, read-only."""

    home: Home
    ledger: Ledger
    conn: sqlite3.Connection

    def report_of(self, study_name: str) -> Path | None:
        path = self.home.report_dir(study_name) / REPORT_FILE
        return path if path.is_file() else None

    def running(self, study_name: str) -> int | None:
        """The pid of the driver running the study now, else None (its lock file)."""
        from orchestrator.study.status import lock_holder

        return lock_holder(self.home, study_name)


def studies_page(v: View) -> str:
    lines = queries.studies(v.conn)
    running = {s.study_id: v.running(s.name) for s in lines}
    return render("studies.html.j2", title="Studies", studies=lines, running=running,
                  live=any(running.values()), **_common())


def study_page(v: View, study_id: str) -> str:
    study = v.ledger.get_study(study_id)
    assert study is not None  # the caller found it
    results = queries.pairing_results(v.conn, study_id)
    graded = any(row["graded"] for row in results.values())
    running = v.running(study.name)
    return render("study.html.j2", title=f"Study {study.name}", study=study, results=results, graded=graded,
                  states=queries.pairing_states(v.conn, study_id), running=running, live=running is not None,
                  report=v.report_of(study.name) is not None, **_common())


def runs_page(v: View, q: RunQuery, study_name: str | None) -> str:
    from orchestrator.run.record import run_row

    page = queries.run_page(v.conn, q)
    rows = [run_row(v.ledger, run_id) for run_id in page.run_ids]  # one page: at most PAGE_SIZE runs

    def link(**change: Any) -> str:
        """This list's address with some parameters changed (a new filter starts at page 1)."""
        from urllib.parse import urlencode

        params = {"study": study_name, "pairing": q.pairing, "state": q.state, "verdict": q.verdict,
                  "sort": q.sort, "page": q.page} | change
        return "/runs?" + urlencode({k: val for k, val in params.items() if val not in (None, "", 1, "created")})

    return render("runs.html.j2", title="Runs" + (f" of study {study_name}" if study_name else ""), rows=rows,
                  page=page, q=q, study_name=study_name, link=link,
                  pairings=queries.pairings(v.conn, q.study_id), sorts=list(queries.SORTS),
                  verdicts=queries.VERDICTS, live=False,
                  states=["planned", "starting", "running", "delivered", "scored", "audited", "failed",
                          "cancelled"], **_common())


def _transcript(v: View, record: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The run's model calls as the transcript page shows them, or why there are none to show."""
    usage = record.get("model_usage")
    if not usage or not usage.get("transcript_sha256"):
        return [], "no model transcript (the run made no model calls through a gateway, or its socket never closed)"
    from orchestrator.diverge.reader import read_transcript
    from orchestrator.report.transcript import call_views, page_calls

    try:
        transcript = read_transcript(ArtifactStore(v.home.artifacts_dir).get_path(usage["transcript_sha256"]),
                                     partial=True)
    except SbxError as exc:
        return [], f"the transcript cannot be read: {exc}"
    return page_calls(call_views(transcript.calls)), "cut short" if transcript.truncated else None


#: the flat fields a run page lists in its record table, as (label, key); the sections show the rest
_FIELDS = (("study", "study_name"), ("task", "task"), ("pairing", "pairing"), ("agent", "agent"),
           ("agent version", "agent_version"), ("model", "model"), ("endpoint", "endpoint"),
           ("budget", "budget_name"), ("repeat", "repeat"), ("attempt", "attempt"), ("retry of", "retry_of"),
           ("counted", "counted"), ("stop reason", "stop_reason"), ("agent exit code", "agent_exit_code"),
           ("delivered train.py", "delivered_sha256"), ("commits", "commits"), ("image", "image"),
           ("environment", "environment"), ("node", "node"), ("slot", "slot"), ("container", "container_id"),
           ("artifact manifest", "artifact_manifest"))


def run_page(v: View, run_id: str) -> str:
    from orchestrator.run.record import full_record

    r = full_record(v.ledger, run_id)
    calls, transcript_note = _transcript(v, r)
    for audit in r["audits"]:  # one line per evidence step: file:line, the code, what happens there
        for e in audit["evidence"]:
            e["lines"] = [(f"{s['file']}:{s['line']}", s["code"], s["note"], ", ".join(s["names"]))
                          for s in e["steps"]]
    events = [(when(e["time"]), e["kind"], json.dumps(e["detail"], sort_keys=True) if e["detail"] else "")
              for e in r["events"]]
    fields = [(label, r[key]) for label, key in _FIELDS if r.get(key) is not None]
    from orchestrator.compliance.traces import REPORTED_ONLY

    return render("run.html.j2", title=f"Run {r['run_id']}", r=r, fields=fields, events=events, calls=calls,
                  transcript_note=transcript_note, live=False, reported_only=REPORTED_ONLY,
                  meta=json.dumps(r["meta"], sort_keys=True, indent=1) if r["meta"] else None, **_common())


__all__ = ["REPORT_FILE", "View", "environment", "run_page", "runs_page", "studies_page", "study_page"]
