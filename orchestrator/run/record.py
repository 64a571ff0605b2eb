"""One record of a run, read by `sbx show`, the export and the report with the same field names.

`run_row` is the flat row (one per attempt): the runs table's columns (orchestrator/report/runs_table.py)
first, then everything else the ledger knows that fits in a cell. `full_record` is the row plus what does
not: resources, meta, events, experiments, every dataset's score and every audit record with its evidence,
and for a tests task its grading (every repeat's verdict) and per-test results.
Times are unix seconds here; the export writes them as ISO 8601.

Every row is built by `row_of` from what `Ledger.run_reads` read: a whole study at once for `study_rows`
(one query per table, issue 23), one run for `run_row` and `full_record`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from compliance.records import is_compliant
from compliance.store import load_records
from compliance.traces import RULES
from orchestrator.failures import RunNotFound
from orchestrator.ledger import (
    AuditVerdict,
    GradedCounts,
    Ledger,
    ModelUsage,
    RunReads,
    RunRecord,
    ScoreResult,
)
from orchestrator.ledger.judge_verdicts import reason as judge_reason

#: the verdict columns, one per compliance rule
RULE_COLUMNS: tuple[str, ...] = tuple(r.name for r in RULES)
#: run columns that are times (unix seconds in the ledger; ISO 8601 in exports)
TIME_COLUMNS = ("created_at", "started_at", "ended_at")


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def _scoring_error(h: ScoreResult | None) -> str | None:
    if h is None or h.status != "unscorable":
        return None
    lines = (h.detail or "").strip().splitlines()
    return f"{h.reason}: {lines[-1]}" if lines else h.reason


def _reported(m: ModelUsage | None, key: str) -> Any:
    """A number from the CLI's own usage report (None when it printed no complete one)."""
    if m is None or not m.self_report.get("complete"):
        return None
    return m.self_report.get(key)


def _outcome(run: RunRecord, o: GradedCounts | None) -> tuple[bool | None, str | None]:
    """A tests task's pass/fail: its grading's; an attempt whose agent failed (crashed, broke a limit,
    delivered nothing) is a fail without grading. None: an ml task, or not graded yet, or not counted."""
    if o is not None:
        return o.passed, o.reason
    if run.meta.get("task_kind") == "tests" and run.failure_class is not None and str(run.failure_class) == "agent":
        return False, "agent_failed"
    return None, None


def _rule_versions(history: tuple[AuditVerdict, ...]) -> dict[str, str | None]:
    """Per rule: the version of the verdict in force (`<rule>_version`) and, after a re-audit under a newer
    version, the verdict the version before gave (`<rule>_previous`), so a report can say what changed."""
    out: dict[str, str | None] = {}
    for rule in RULE_COLUMNS:
        records = [r for r in history if r.rule == rule]
        latest = records[-1] if records else None
        older = [r for r in records if latest is not None and r.rule_version != latest.rule_version]
        out[f"{rule}_version"] = latest.rule_version if latest else None
        out[f"{rule}_previous"] = older[-1].verdict if older else None
    return out


def run_row(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """The flat record of one attempt (see the module docstring)."""
    return row_of(_reads_of(ledger, run_id))


def _reads_of(ledger: Ledger, run_id: str) -> RunReads:
    found = ledger.run_reads(run_id=run_id)
    if not found:
        raise RunNotFound(f"no run {run_id!r} in the ledger {ledger.path}")
    return found[0]


def row_of(parts: RunReads) -> dict[str, Any]:
    """The flat row of one attempt from what `Ledger.run_reads` read of it."""
    run, audits, o = parts.run, parts.audits, parts.graded
    verdicts = {a.rule: a.final_verdict for a in audits}
    h, later = parts.scores.get("holdout"), parts.scores.get("later")
    m = parts.usage
    passed, outcome_reason = _outcome(run, o)
    judged = parts.judged  # issue 26: the first judge's verdict, its own cost
    return {
        # the runs table's columns (orchestrator/report/runs_table.py), in its order
        "pairing": run.pairing, "agent": run.agent, "model": run.model, "task": run.task, "repeat": run.repeat,
        "status": str(run.status), "failure_class": str(run.failure_class) if run.failure_class else None,
        # a tests task's graded pass/fail (None: not graded, or an ml task)
        "counted": run.counted, "outcome": passed,
        # computed by sbx from the scorer's predictions on the evaluation rows: what best-of-k ranks by
        "eval_score": h.eval_score if h else None,
        # the task's metric (the AUC for a binary task scored by AUC, as before metrics had names)
        "holdout_score": h.score if h else None, "later_score": later.score if later else None,
        "metric": h.metric if h else None,
        "holdout_positives": h.positives if h else None,
        "holdout_negatives": (h.n - h.positives) if h and h.n is not None and h.positives is not None else None,
        **{rule: verdicts.get(rule) for rule in RULE_COLUMNS},
        "compliant": is_compliant(audits) if audits else None,
        "cpu_seconds_metered": run.cpu_seconds_metered,
        # what the gateway measured of the run's model calls (None: the run talked to no model)
        "cost_usd": m.cost_usd if m else None, "input_tokens": m.input_tokens if m else None,
        "cached_input_tokens": m.cached_input_tokens if m else None,
        "output_tokens": m.output_tokens if m else None, "reasoning_tokens": m.reasoning_tokens if m else None,
        "model_calls": m.calls if m else None,
        # the CLI's own report of the same (never trusted; the gap is in the report)
        "reported_input_tokens": _reported(m, "input_tokens"), "reported_output_tokens": _reported(m, "output_tokens"),
        "reported_cost_usd": _reported(m, "cost_usd"), "reported_calls": _reported(m, "calls"),
        # beyond the report's columns
        "outcome_reason": outcome_reason, "grade_repeats": o.repeats if o else None,
        "gradings_passed": o.gradings_passed if o else None,
        "gradings_agree": o.agree if o else None, "flaky_tests": o.flaky_tests if o else None,
        "judge_outcome": (judged.verdict == "pass" if judged and judged.verdict else None),
        "judge_cost_usd": judged.cost_usd if judged else None,
        "judge_reason": judge_reason(judged) if judged else None,
        "judge_spec_sha256": judged.spec_sha256 if judged else None,
        "run_id": run.run_id, "study_id": run.study_id, "study_name": run.study_name,
        "budget_name": run.budget_name, "attempt": run.attempt, "retry_of": run.retry_of,
        "failure_reason": run.failure_reason, "stop_reason": run.stop_reason,
        "cpu_seconds_container": run.cpu_seconds_container, "wall_seconds": run.wall_seconds,
        "experiments_counted": run.experiments_counted, "experiments_refused": run.experiments_refused,
        "holdout_ap": h.ap if h else None, "holdout_score_se": h.score_se if h else None,
        "later_ap": later.ap if later else None, "scoring_error": _scoring_error(h),
        # the agent's own eval score for what it delivered (its last experiment's printed line), else the
        # one train.py printed when the scorer retrained it: reported, never used to rank
        "eval_score_reported": _first(parts.delivered_eval, h.eval_score_reported if h else None),
        "scorer_cpu_seconds": h.cpu_seconds if h else None, "scorer_cpu_limit_s": h.cpu_limit_s if h else None,
        "withheld_files": h.withheld_count if h else None, "batch_fresh_check": h.fresh_check if h else None,
        "batch_rows_checked": h.rows_checked if h else None, "batch_rows_changed": h.rows_changed if h else None,
        "batch_max_abs_change": h.max_abs_change if h else None, "batch_dependent": h.batch_dependent if h else None,
        "delivered_sha256": run.delivered_sha256, "commits": run.commits, "image": run.image,
        # the digest of the task's declared environment the run ran and was scored in (None: the standard images)
        "environment": run.meta.get("environment"),
        "agent_exit_code": run.agent_exit_code, "artifact_manifest": run.artifact_manifest,
        "node": run.node, "slot": run.slot, "run_order": run.meta.get("order"), "container_id": run.container_id,
        "endpoint": m.endpoint if m else None, "agent_version": m.agent_version if m else None,
        "model_calls_refused": m.refused if m else None, "model_provider_errors": m.provider_errors if m else None,
        "cache_write_tokens": m.cache_write_tokens if m else None,
        **_rule_versions(parts.history),
        **{t: getattr(run, t) for t in TIME_COLUMNS},
    }


def full_record(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """`run_row` plus resources, meta, events, experiments, every score and every audit record."""
    parts = _reads_of(ledger, run_id)
    run = parts.run
    record = row_of(parts)
    record["resources"], record["meta"] = run.resources, run.meta
    record["events"] = [e.to_json() for e in ledger.events(run_id)]
    record["experiments"] = [x.to_json() for x in ledger.experiments(run_id)]
    record["scores"] = {name: s.to_json() for name, s in parts.scores.items()}
    record["audits"] = [a.model_dump(mode="json", exclude={"run_id"}) | {"final_verdict": a.final_verdict}
                        for a in load_records(ledger, run_id)]
    record["model_usage"] = parts.usage.to_json() if parts.usage else None
    outcome = ledger.outcome(run_id)
    record["grading"] = outcome.summary() if outcome else None
    record["test_results"] = ([{"repeat": g.repeat, "test": t, "outcome": r} for g in outcome.gradings
                               for t, r in g.tests.items()] if outcome else None)
    # every judge's row in full (run_row's judge_outcome is the first judge's verdict only)
    record["judge_verdicts"] = [dataclasses.asdict(v) for v in ledger.judge_verdicts([run_id])]
    return record


def study_rows(ledger: Ledger, study_id: str) -> list[dict[str, Any]]:
    """Every attempt's `run_row` of one study, oldest first, read set-based (`Ledger.run_reads`: one query
    per table for the study, where each run's row took 21 statements before issue 23)."""
    return [row_of(parts) for parts in ledger.run_reads(study_id=study_id)]
