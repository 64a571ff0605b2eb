"""Studies, runs, attempts, measurements, events, experiments and the JSON record of a run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orchestrator.failures import (
    AmbiguousRunId,
    InvalidLedgerWrite,
    LedgerError,
    RunNotFound,
    SbxError,
)
from orchestrator.ledger import ADHOC, FailureClass, Ledger, RunRecord, RunState
from orchestrator.ledger.fields import MEASUREMENTS
from tests.ledger.ledger_helpers import drive, plan

S = RunState
RUN_ID = re.compile(r"r-\d{14}-[0-9a-f]{6}")
SHA = "ab" * 32


# --- studies and planning ---------------------------------------------------------------------------


def test_a_study_is_found_by_name_with_its_spec(ledger: Ledger) -> None:
    study_id = ledger.create_study("ref-2025", {"task": "flight-delays", "repeats": 52})
    found = ledger.get_study_by_name("ref-2025")
    assert found is not None and found.study_id == study_id
    assert found.spec == {"task": "flight-delays", "repeats": 52}
    assert ledger.get_study(study_id) == found
    assert ledger.get_study_by_name("nope") is None and ledger.get_study("s-nope") is None


def test_study_names_are_unique_and_adhoc_is_reserved(ledger: Ledger) -> None:
    ledger.create_study("one")
    with pytest.raises(InvalidLedgerWrite, match="already exists"):
        ledger.create_study("one")
    with pytest.raises(InvalidLedgerWrite, match="reserved"):
        ledger.create_study(ADHOC)


def test_a_run_outside_a_study_belongs_to_the_adhoc_study(ledger: Ledger) -> None:
    run_id = plan(ledger)
    record = ledger.get_run(run_id)
    assert (record.study_id, record.study_name) == (ADHOC, ADHOC)
    assert ledger.get_study_by_name(ADHOC) is not None
    assert ledger.get_run(plan(ledger, study_id=ADHOC)).study_id == ADHOC


def test_a_new_run_is_planned_attempt_one_with_a_sortable_id(ledger: Ledger) -> None:
    run_id = plan(ledger, agent="claude-code", model="sonnet")
    assert RUN_ID.fullmatch(run_id)
    record = ledger.get_run(run_id)
    assert record.status is S.PLANNED and record.attempt == 1 and record.repeat == 1
    assert record.counted is True and record.failure_class is None and record.retry_of is None
    assert record.pairing == "claude-code/sonnet"
    assert record.experiments_counted == 0 and record.cpu_seconds_metered is None  # None = not measured


def test_repeats_are_numbered_per_study_task_and_pairing(ledger: Ledger) -> None:
    study = ledger.create_study("s")
    a = [plan(ledger, study_id=study, agent="noop") for _ in range(3)]
    b = plan(ledger, study_id=study, agent="hpo")
    assert [ledger.get_run(r).repeat for r in a] == [1, 2, 3]
    assert ledger.get_run(b).repeat == 1
    assert ledger.get_run(plan(ledger, study_id=study, agent="noop", repeat=7)).repeat == 7
    with pytest.raises(InvalidLedgerWrite, match="cannot plan run"):
        plan(ledger, study_id=study, agent="noop", repeat=2)
    with pytest.raises(InvalidLedgerWrite, match="1-based"):
        plan(ledger, study_id=study, repeat=0)


def test_a_run_in_an_unknown_study_is_refused(ledger: Ledger) -> None:
    with pytest.raises(InvalidLedgerWrite, match="no study"):
        plan(ledger, study_id="s-missing")


# --- attempts --------------------------------------------------------------------------------------


def test_an_infra_failure_is_retried_as_attempt_two_of_the_same_repeat(ledger: Ledger) -> None:
    study = ledger.create_study("s")
    first = plan(ledger, study_id=study, repeat=4, meta={"seed": 7})
    drive(ledger, first, S.RUNNING)
    ledger.advance(first, S.FAILED, failure_class=FailureClass.INFRA, reason="dockerd restarted")
    second = ledger.retry(first)
    old, new = ledger.get_run(first), ledger.get_run(second)
    assert old.counted is False and old.status is S.FAILED  # the failed attempt is kept
    assert new.status is S.PLANNED and new.counted is True
    assert (new.attempt, new.repeat, new.study_id, new.pairing, new.retry_of) == (
        2,
        4,
        study,
        old.pairing,
        first,
    )
    assert new.meta == {"seed": 7}
    assert ledger.retry(first) == second  # idempotent: a restarted driver does not duplicate it
    drive(ledger, second, S.FAILED)
    third = ledger.retry(second)
    assert ledger.get_run(third).attempt == 3
    assert [r.attempt for r in ledger.list_runs(study_id=study)] == [1, 2, 3]


@pytest.mark.parametrize("state", [S.PLANNED, S.RUNNING, S.AUDITED, S.CANCELLED])
def test_only_an_infra_failure_is_retried(ledger: Ledger, state: RunState) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, state)
    with pytest.raises(InvalidLedgerWrite, match="only an infra failure is retried"):
        ledger.retry(run_id)


def test_an_agent_failure_is_not_retried(ledger: Ledger) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, S.RUNNING)
    ledger.advance(run_id, S.FAILED, failure_class="agent", reason="exit 1")
    with pytest.raises(InvalidLedgerWrite, match=r"failed \(agent\)"):
        ledger.retry(run_id)


# --- measurements ----------------------------------------------------------------------------------


def test_measurements_round_trip(ledger: Ledger) -> None:
    run_id = plan(ledger)
    ledger.update_measurements(
        run_id,
        stop_reason="agent_exit",
        wall_seconds=61,
        cpu_seconds_metered=1234.5,
        cpu_seconds_container=1300.25,
        delivered_sha256=SHA,
        commits=5,
        image="sha256:" + "0" * 64,
        resources={"cpuset": "0-1", "cpus": 2.0, "memory_mb": 4096, "pids": 512},
        node="host-a",
        slot=1,
        container_id="c0ffee",
        agent_exit_code=0,
        artifact_manifest="cd" * 32,
    )
    r = ledger.get_run(run_id)
    assert (r.stop_reason, r.wall_seconds, r.cpu_seconds_metered, r.cpu_seconds_container) == (
        "agent_exit",
        61.0,
        1234.5,
        1300.25,
    )
    assert isinstance(r.wall_seconds, float)  # STRICT REAL
    assert (r.delivered_sha256, r.commits, r.node, r.slot, r.container_id, r.agent_exit_code) == (
        SHA,
        5,
        "host-a",
        1,
        "c0ffee",
        0,
    )
    assert r.resources == {"cpuset": "0-1", "cpus": 2.0, "memory_mb": 4096, "pids": 512}
    ledger.update_measurements(run_id, node=None)
    assert ledger.get_run(run_id).node is None


def test_meta_is_merged_and_resources_replaced(ledger: Ledger) -> None:
    run_id = plan(ledger, meta={"a": 1})
    ledger.update_measurements(run_id, meta={"b": 2}, resources={"cpus": 4})
    ledger.update_measurements(run_id, meta={"a": 3}, resources={"memory_mb": 1})
    r = ledger.get_run(run_id)
    assert r.meta == {"a": 3, "b": 2} and r.resources == {"memory_mb": 1}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cpu_seconds": 1.0}, "unknown run field 'cpu_seconds'"),
        ({"status": "scored"}, "written by advance"),
        ({"counted": 0}, "written by advance"),
        ({"experiments_counted": 3}, "written by add_experiment"),
        ({"commits": 2.5}, "commits must be int"),
        ({"commits": True}, "commits must be int"),
        ({"wall_seconds": "60"}, "wall_seconds must be int or float"),
        ({"wall_seconds": float("nan")}, "must be finite"),
        ({"delivered_sha256": "ABC"}, "lowercase hex sha256"),
        ({"resources": {"x": object()}}, "not a JSON object"),
    ],
)
def test_unknown_owned_or_mistyped_fields_are_refused(ledger: Ledger, fields: dict, message: str) -> None:
    run_id = plan(ledger)
    before = ledger.get_run(run_id)
    with pytest.raises(InvalidLedgerWrite, match=message):
        ledger.update_measurements(run_id, **({"wall_seconds": 5.0} | fields))
    assert ledger.get_run(run_id) == before  # nothing of the call was written


def test_every_measurement_is_a_run_record_field() -> None:
    names = set(RunRecord.__dataclass_fields__)
    assert set(MEASUREMENTS) <= names


# --- events and experiments ------------------------------------------------------------------------


def test_events_round_trip_in_time_order(ledger: Ledger) -> None:
    run_id = plan(ledger)
    ledger.add_event(run_id, "budget.crossed", {"meter": "cpu", "used": 100.5, "limit": 100}, time=20.0)
    ledger.add_event(run_id, "gate.refused", {"pid": 42, "reason": "budget spent"}, time=10.0)
    ledger.add_event(run_id, "stop", time=20.0)
    events = ledger.events(run_id)
    assert [(e.time, e.kind, e.detail) for e in events] == [
        (10.0, "gate.refused", {"pid": 42, "reason": "budget spent"}),
        (20.0, "budget.crossed", {"meter": "cpu", "used": 100.5, "limit": 100}),
        (20.0, "stop", {}),
    ]
    assert [e.kind for e in ledger.events(run_id, kind="stop")] == ["stop"]


def test_an_event_of_an_unknown_run_or_without_a_kind_is_refused(ledger: Ledger) -> None:
    with pytest.raises(RunNotFound):
        ledger.add_event("r-nope", "kill", {})
    run_id = plan(ledger)
    # a detail value never makes the write fail (details carry what agents print): a non-finite number is text
    ledger.add_event(run_id, "kill", {"x": float("inf")})
    assert ledger.events(run_id, "kill")[0].detail == {"x": "inf"}
    with pytest.raises(InvalidLedgerWrite, match="needs a kind"):
        ledger.add_event(run_id, "", {})


def test_experiments_round_trip_and_keep_the_run_counters(ledger: Ledger) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, S.RUNNING)
    one = ledger.add_experiment(
        run_id,
        status="ok",
        commit_sha="a1b2c3",
        train_sha256=SHA,
        eval_score=0.7312,
        seconds=41.5,
        cpu_seconds=150.25,
        started_at=1000.0,
        note="baseline",
    )
    refused = ledger.add_experiment(run_id, status="refused", note="budget spent")
    two = ledger.add_experiment(run_id, status="crash", commit_sha="d4e5f6", seconds=2.0)
    three = ledger.add_experiment(run_id, status="timeout", seconds=120.0)
    assert [x.n for x in (one, refused, two, three)] == [1, None, 2, 3]
    assert [x.counted for x in (one, refused, two, three)] == [True, False, True, True]
    assert ledger.experiments(run_id) == [one, refused, two, three]
    r = ledger.get_run(run_id)
    assert (r.experiments_counted, r.experiments_refused) == (3, 1)
    ledger.add_experiment(run_id, status="refused")
    assert ledger.get_run(run_id).experiments_refused == 2


def test_experiment_numbers_are_unique_and_refusals_have_none(ledger: Ledger) -> None:
    run_id = plan(ledger)
    ledger.add_experiment(run_id, status="ok", n=1)
    with pytest.raises(InvalidLedgerWrite, match="cannot record experiment 1"):
        ledger.add_experiment(run_id, status="oom", n=1)
    with pytest.raises(InvalidLedgerWrite, match="has no number"):
        ledger.add_experiment(run_id, status="refused", n=2)
    with pytest.raises(InvalidLedgerWrite, match="status must be one of"):
        ledger.add_experiment(run_id, status="great")
    with pytest.raises(InvalidLedgerWrite, match="finite"):
        ledger.add_experiment(run_id, status="ok", eval_score=float("nan"))
    assert ledger.get_run(run_id).experiments_counted == 1  # failed writes changed nothing


def test_experiments_of_different_runs_are_numbered_separately(ledger: Ledger) -> None:
    a, b = plan(ledger), plan(ledger)
    assert ledger.add_experiment(a, status="ok").n == 1
    assert ledger.add_experiment(b, status="ok").n == 1


# --- the JSON record -------------------------------------------------------------------------------

RECORD_TYPES: dict[str, type | tuple[type, ...]] = {
    "run_id": str,
    "study_id": str,
    "study_name": str,
    "task": str,
    "pairing": str,
    "agent": str,
    "model": (str, type(None)),
    "budget_name": str,
    "repeat": int,
    "attempt": int,
    "retry_of": (str, type(None)),
    "status": str,
    "failure_class": (str, type(None)),
    "failure_reason": (str, type(None)),
    "counted": bool,
    "stop_reason": str,
    "created_at": float,
    "started_at": float,
    "ended_at": float,
    "wall_seconds": float,
    "cpu_seconds_metered": float,
    "cpu_seconds_container": float,
    "experiments_counted": int,
    "experiments_refused": int,
    "delivered_sha256": str,
    "commits": int,
    "image": str,
    "resources": dict,
    "node": str,
    "slot": int,
    "container_id": str,
    "agent_exit_code": int,
    "artifact_manifest": str,
    "meta": dict,
    "events": list,
    "experiments": list,
}


def _finished_run(ledger: Ledger) -> str:
    run_id = plan(ledger, model="m1")
    drive(ledger, run_id, S.RUNNING)
    ledger.add_event(run_id, "gate.refused", {"pid": 7})
    ledger.add_experiment(run_id, status="ok", eval_score=0.71, seconds=3.5, cpu_seconds=7.0)
    ledger.add_experiment(run_id, status="refused")
    ledger.update_measurements(
        run_id,
        stop_reason="cpu_budget",
        wall_seconds=100.0,
        cpu_seconds_metered=18000.0,
        cpu_seconds_container=18100.5,
        delivered_sha256=SHA,
        commits=3,
        image="sha256:" + "1" * 64,
        resources={"cpuset": "2-3", "cpus": 2, "memory_mb": 2048, "pids": 256},
        node="n1",
        slot=0,
        container_id="abc",
        agent_exit_code=137,
        artifact_manifest="ef" * 32,
    )
    ledger.advance(run_id, S.DELIVERED)
    ledger.advance(run_id, S.FAILED, failure_class="unscorable", reason="predictions not finite")
    return run_id


def test_run_record_json_has_every_key_with_its_type(ledger: Ledger) -> None:
    run_id = _finished_run(ledger)
    record = ledger.run_record_json(run_id)
    assert set(record) == set(RECORD_TYPES)
    for key, types in RECORD_TYPES.items():
        assert isinstance(record[key], types), (key, record[key])
    assert record["counted"] is True and record["failure_class"] == "unscorable"
    assert record["resources"]["cpuset"] == "2-3"
    assert record["experiments_counted"] == 1 and record["experiments_refused"] == 1
    for event in record["events"]:
        assert set(event) == {"time", "kind", "detail"}
        assert isinstance(event["time"], float) and isinstance(event["detail"], dict)
    assert [e["kind"] for e in record["events"]].count("transition") == 4
    assert "gate.refused" in [e["kind"] for e in record["events"]]
    assert record["experiments"][0] == {
        "n": 1,
        "status": "ok",
        "counted": True,
        "commit_sha": None,
        "train_sha256": None,
        "eval_score": 0.71,
        "seconds": 3.5,
        "cpu_seconds": 7.0,
        "started_at": None,
        "note": None,
    }
    assert json.loads(json.dumps(record)) == record  # plain JSON values only


def test_a_planned_run_record_has_nulls_for_what_was_not_measured(ledger: Ledger) -> None:
    record = ledger.run_record_json(plan(ledger))
    assert set(record) == set(RECORD_TYPES)
    assert record["cpu_seconds_metered"] is None and record["commits"] is None and record["resources"] == {}
    assert record["events"] == [] and record["experiments"] == []


# --- lookups ---------------------------------------------------------------------------------------


def test_get_run_of_an_unknown_id_is_run_not_found(ledger: Ledger) -> None:
    with pytest.raises(RunNotFound) as exc:
        ledger.get_run("r-missing")
    assert isinstance(exc.value, KeyError) and isinstance(exc.value, SbxError)
    assert str(exc.value).startswith("no run 'r-missing'")  # not quoted like a KeyError


def test_find_run_by_unique_prefix_or_hex_tail(ledger: Ledger) -> None:
    a, b = plan(ledger), plan(ledger)
    assert ledger.find_run(a).run_id == a
    tail_a, tail_b = a.rsplit("-", 1)[1], b.rsplit("-", 1)[1]
    # a one-character tail prefix is unique unless the other tail, or the ids' date (the leading r- may be
    # left out, so "2" also matches "r-2026..."), starts with it too
    if tail_a[0] != tail_b[0] and not a[2:].startswith(tail_a[0]):
        assert ledger.find_run(tail_a[0]).run_id == a
    assert ledger.find_run(tail_a).run_id == a
    assert ledger.find_run(a[:-1]).run_id == a  # all but the last character
    assert ledger.find_run(a[2:]).run_id == a  # without the leading r-


def test_find_run_reports_ambiguous_and_unknown_prefixes(ledger: Ledger) -> None:
    a, b = plan(ledger), plan(ledger)
    with pytest.raises(AmbiguousRunId, match=r"matches 2 runs") as exc:
        ledger.find_run("r-")
    assert a in str(exc.value) and b in str(exc.value)
    with pytest.raises(RunNotFound, match="no run 'zzz'"):
        ledger.find_run("zzz")
    with pytest.raises(RunNotFound):
        ledger.find_run("  ")


def test_list_runs_filters_by_study_and_status(ledger: Ledger) -> None:
    study = ledger.create_study("s")
    a, b = plan(ledger, study_id=study), plan(ledger, study_id=study)
    c = plan(ledger)
    drive(ledger, b, S.RUNNING)
    assert [r.run_id for r in ledger.list_runs()] == [a, b, c]
    assert [r.run_id for r in ledger.list_runs(study_id=study)] == [a, b]
    assert [r.run_id for r in ledger.list_runs(status="planned")] == [a, c]
    assert [r.run_id for r in ledger.list_runs(study_id=study, status=S.RUNNING)] == [b]
    assert ledger.list_runs(study_id="s-other") == []


# --- opening ---------------------------------------------------------------------------------------


def test_the_home_names_the_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.home import Home

    monkeypatch.setenv("SBX_HOME", str(tmp_path / "home"))
    with Ledger(Home.from_env().ledger_path) as led:
        assert led.path == tmp_path / "home" / "ledger.sqlite"
        plan(led)
    assert (tmp_path / "home" / "ledger.sqlite").exists()


def test_a_missing_ledger_is_not_created_when_create_is_false(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="no ledger at"):
        Ledger(tmp_path / "none.sqlite", create=False)
    assert not (tmp_path / "none.sqlite").exists()


def test_a_closed_ledger_says_so(tmp_path: Path) -> None:
    led = Ledger(tmp_path / "l.sqlite")
    led.close()
    led.close()  # idempotent
    with pytest.raises(LedgerError, match="closed"):
        led.list_runs()


def test_records_survive_reopening(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as led:
        run_id = _finished_run(led)
        before = led.run_record_json(run_id)
    with Ledger(tmp_path / "l.sqlite") as led:
        assert led.run_record_json(run_id) == before


def test_an_audited_run_is_final_but_a_failed_one_still_takes_late_measurements(ledger: Ledger) -> None:
    done = plan(ledger)
    drive(ledger, done, S.AUDITED)
    with pytest.raises(InvalidLedgerWrite, match="final"):
        ledger.update_measurements(done, cpu_seconds_metered=1.0)
    failed = plan(ledger)
    drive(ledger, failed, S.FAILED)
    ledger.update_measurements(failed, cpu_seconds_container=12.0)  # the last meter reading, after the kill
    assert ledger.get_run(failed).cpu_seconds_container == 12.0
