"""`sbx view` test setup: a home whose ledger is written through the ledger's own API (studies, runs in every
state, retries, scores, audits with evidence and an override, gradings, model usage and a gateway-format
transcript in the artifact store), with hostile agent text in every field a page shows."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from orchestrator.artifacts import ArtifactStore
from orchestrator.compliance.records import AuditRecord, Evidence, EvidenceStep
from orchestrator.compliance.store import add_override, save_records
from orchestrator.home import Home
from orchestrator.ledger import GradedOutcome, GradingRow, Ledger, ModelUsage, RunState, ScoreResult
from orchestrator.specs.transcript import CallRecord, encode_record
from orchestrator.view import ViewServer

#: what an agent might write to break out of a page: a script, an element with a handler, an attribute breaker
SCRIPT = "<script>window.pwned=1</script>"
HOSTILE = f'{SCRIPT}<img src=x onerror="window.pwned=2">"\'><b id="injected">bold</b>&amp;'

S = RunState


@dataclass
class Built:
    home: Home
    ml_study: str
    tests_study: str
    #: run ids by what they are: "hostile", "best", "flagged", "failed", "retried", "retry", "running", ...
    runs: dict[str, str] = field(default_factory=dict)


def _to(ledger: Ledger, run_id: str, state: RunState, **kw: str) -> None:
    """Move a run along the usual path from where it is to `state` (failed and cancelled from running)."""
    path = [S.PLANNED, S.STARTING, S.RUNNING, S.DELIVERED, S.SCORED, S.AUDITED]
    last = state if state in path else S.RUNNING
    for step in path[path.index(ledger.get_run(run_id).status) + 1: path.index(last) + 1]:
        ledger.advance(run_id, step)
    if state not in path:
        ledger.advance(run_id, state, **kw)


def _score(ledger: Ledger, run_id: str, holdout: float, later: float | None = None) -> None:
    ledger.scores.save(run_id, ScoreResult(dataset="holdout", status="scored", auc=holdout, ap=0.4, auc_se=0.002,
                                          n=1000, positives=200, seconds=3.0, metric="auc", score=holdout,
                                          score_se=0.002, eval_score=holdout - 0.01))
    if later is not None:
        ledger.scores.save(run_id, ScoreResult(dataset="later", status="scored", auc=later, ap=0.3, n=500,
                                              positives=90, seconds=2.0, metric="auc", score=later))


def _audit(ledger: Ledger, run_id: str, labels: str, frame: str = "clear", note: str = "") -> None:
    steps = [EvidenceStep(file="train.py", line=12, code=f"y = df['label']  # {note}", names=["y"], note="source"),
             EvidenceStep(file="train.py", line=40, code="model.fit(X, y)", names=["X", "y"], note="sink")]
    evidence = [Evidence(kind="static_trace", summary=f"labels reach fit {note}", steps=steps)] if labels != "clear" else []
    save_records(ledger, run_id, [
        AuditRecord(rule="eval_labels_in_fit", rule_version="1", verdict=labels, evidence=evidence,  # type: ignore[arg-type]
                    notes=[f"a note {note}"] if note else []),
        AuditRecord(rule="frame_statistics", rule_version="1", verdict=frame),  # type: ignore[arg-type]
        AuditRecord(rule="eval_features_in_fit", rule_version="1", verdict="flagged"),  # reported only
    ])


def _transcript(home: Home, text: str) -> str:
    """A two-call anthropic transcript (a tool call, its result, a final answer) carrying `text`."""
    first = {"model": "m1", "system": f"system {text}", "messages": [{"role": "user", "content": f"task {text}"}]}
    second = {**first, "messages": [*first["messages"],
              {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                 "input": {"command": f"echo '{text}'"}}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": f"out {text}"}]}]}
    answers = [{"content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": f"echo '{text}'"}}]},
               {"content": [{"type": "text", "text": f"done {text}"}]}]
    lines = []
    for i, (req, ans) in enumerate(zip((first, second), answers, strict=True)):
        lines.append(encode_record(CallRecord(
            v=1, index=i, api="anthropic", method="POST", path="/v1/messages", started_at=1_700_000_000.0 + i,
            ttfb_s=0.1, total_s=0.5, request={"headers": {}, "body": json.dumps(req)},  # type: ignore[arg-type]
            response={"status": 200, "headers": {}, "body": json.dumps(ans), "events": None},  # type: ignore[arg-type]
            stream=False, usage={"input": 100 + i, "cached_input": 10, "cache_write": 0, "output": 7 + i,  # type: ignore[arg-type]
                                 "reasoning": 0},
            cost_usd=0.0012, outcome="ok", error=None, speaker=None)))
    path = home.root / "t.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(lines)))
    return ArtifactStore(home.artifacts_dir).put_file(path)


def build(root: Path) -> Built:
    home = Home(root)
    with Ledger(home.ledger_path) as ledger:
        ml = ledger.create_study("demo", {"seed": 0})
        built = Built(home, ml, "")
        pairings = ("codex/m1", "claude/m2")
        for p, pairing in enumerate(pairings):
            for repeat in (1, 2, 3):
                run_id = ledger.new_run(task="flight-delays", agent=pairing.split("/")[0], model=pairing[-2:],
                                        budget_name="smoke", pairing=pairing, study_id=ml, repeat=repeat)
                holdout = 0.70 + 0.01 * repeat + 0.05 * p
                _to(ledger, run_id, S.AUDITED)
                _score(ledger, run_id, holdout, later=holdout - 0.02)
                _audit(ledger, run_id, "flagged" if (p, repeat) == (0, 2) else "clear")
                built.runs[f"{pairing}#{repeat}"] = run_id
        built.runs["best"] = built.runs["claude/m2#3"]
        built.runs["flagged"] = built.runs["codex/m1#2"]
        # an override clears the flag of codex/m1 #1's label rule... (flagged first, then cleared by a reviewer)
        overridden = ledger.new_run(task="flight-delays", agent="codex", model="m1", budget_name="smoke",
                                    pairing="codex/m1", study_id=ml, repeat=4)
        _to(ledger, overridden, S.AUDITED)
        _score(ledger, overridden, 0.69)
        _audit(ledger, overridden, "flagged")
        add_override(ledger, overridden, "eval_labels_in_fit", "clear", "a reviewer read it: the labels are the train split's")
        built.runs["overridden"] = overridden
        # an agent failure, an infra failure retried (the retry running), a planned run
        failed = ledger.new_run(task="flight-delays", agent="claude", model="m2", budget_name="smoke",
                                pairing="claude/m2", study_id=ml, repeat=4)
        _to(ledger, failed, S.FAILED, failure_class="agent", reason=f"agent crashed {HOSTILE}")
        built.runs["failed"] = failed
        infra = ledger.new_run(task="flight-delays", agent="claude", model="m2", budget_name="smoke",
                               pairing="claude/m2", study_id=ml, repeat=5)
        _to(ledger, infra, S.FAILED, failure_class="infra", reason="daemon gone")
        retry = ledger.retry(infra)
        _to(ledger, retry, S.RUNNING)
        built.runs["retried"], built.runs["retry"] = infra, retry
        built.runs["planned"] = ledger.new_run(task="flight-delays", agent="codex", model="m1", budget_name="smoke",
                                               pairing="codex/m1", study_id=ml, repeat=5)
        # the hostile run: agent text in its reason-free fields, notes, events, evidence, meta and transcript
        hostile = ledger.new_run(task="flight-delays", agent="codex", model="m1", budget_name="smoke",
                                 pairing="codex/m1", study_id=ml, repeat=6, meta={"note": HOSTILE})
        _to(ledger, hostile, S.RUNNING)
        ledger.add_event(hostile, "agent_said", {"text": HOSTILE})
        ledger.add_experiment(hostile, status="ok", n=1, eval_score=0.61, note=HOSTILE, seconds=4.0)
        sha = _transcript(home, HOSTILE)
        ledger.usage.save(hostile, ModelUsage(endpoint="standin", api="anthropic", model="m1", calls=2, ok=2,
                                                    input_tokens=201, cached_input_tokens=20, output_tokens=15,
                                                    cost_usd=0.0024, transcript_sha256=sha, closed=True))
        _to(ledger, hostile, S.AUDITED)
        _score(ledger, hostile, 0.5)
        _audit(ledger, hostile, "flagged", note=HOSTILE)
        built.runs["hostile"] = hostile

        # a tests study: graded runs, one agent failure (a fail without grading)
        tests = ledger.create_study("bugs")
        built.tests_study = tests
        for repeat, passed in ((1, True), (2, False), (3, True)):
            run_id = ledger.new_run(task="fix-bug", agent="codex", model="m1", budget_name="smoke", pairing="codex/m1",
                                    study_id=tests, repeat=repeat, meta={"task_kind": "tests"})
            _to(ledger, run_id, S.SCORED)
            tests_of = {"test_a": "passed", "test_b": "passed" if passed else "failed", "test_c": "passed"}
            ledger.outcomes.save(run_id, GradedOutcome(
                passed=passed, reason="passed" if passed else "tests_failed",
                gradings=(GradingRow(repeat=1, passed=passed, reason="passed" if passed else "tests_failed",
                                     tests=tests_of),),
                fail_to_pass=("test_b",), pass_to_pass=("test_a", "test_c")))
            built.runs[f"tests#{repeat}"] = run_id
        crashed = ledger.new_run(task="fix-bug", agent="codex", model="m1", budget_name="smoke", pairing="codex/m1",
                                 study_id=tests, repeat=4, meta={"task_kind": "tests"})
        _to(ledger, crashed, S.FAILED, failure_class="agent", reason="no delivery")
        built.runs["tests-crashed"] = crashed
    return built


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return build(tmp_path / "home")


@pytest.fixture
def viewer(built: Built) -> Iterator[ViewServer]:
    server = ViewServer(built.home, built.home.ledger_path, 0)
    server.serve_in_thread()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
