"""The per-run read of a run's row as it was before issue 23 (21 statements a run), kept verbatim as the
oracle the set-based reads (`Ledger.run_reads`, run/record.py) are checked against: each row is built here
from the ledger's per-run reads (`scores.of_run`, `audits.latest`, `audits.history`, `usage.of_run`,
`outcomes.of_run`, `judges.of_runs`, `experiments`), which the set-based SQL does not use."""

from __future__ import annotations

import dataclasses
from typing import Any

from orchestrator.compliance.records import is_compliant
from orchestrator.compliance.store import load_records
from orchestrator.ledger import GradedOutcome, Ledger, ModelUsage, RunRecord, ScoreResult
from orchestrator.ledger.judge_verdicts import reason as judge_reason
from orchestrator.run.record import RULE_COLUMNS, TIME_COLUMNS


def _delivered_eval_score(run: RunRecord, experiments: list[dict[str, Any]]) -> float | None:
    """The eval score the agent saw for the version it delivered: what its last experiment on that train.py
    printed (the agent's own claim, kept as reported; a value outside [0, 1] is no score)."""
    best = None
    for x in experiments:
        score = x["eval_score"]
        if x["train_sha256"] == run.delivered_sha256 and score is not None and 0.0 <= score <= 1.0:
            best = score
    return best


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


def _outcome(run: RunRecord, o: GradedOutcome | None) -> tuple[bool | None, str | None]:
    """A tests task's pass/fail: its grading's; an attempt whose agent failed (crashed, broke a limit,
    delivered nothing) is a fail without grading. None: an ml task, or not graded yet, or not counted."""
    if o is not None:
        return o.passed, o.reason
    if run.meta.get("task_kind") == "tests" and run.failure_class is not None and str(run.failure_class) == "agent":
        return False, "agent_failed"
    return None, None


def _rule_versions(ledger: Ledger, run_id: str) -> dict[str, str | None]:
    """Per rule: the version of the verdict in force (`<rule>_version`) and, after a re-audit under a newer
    version, the verdict the version before gave (`<rule>_previous`), so a report can say what changed."""
    out: dict[str, str | None] = {}
    history = ledger.audits.history(run_id)
    for rule in RULE_COLUMNS:
        records = [r for r in history if r.rule == rule]
        latest = records[-1] if records else None
        older = [r for r in records if latest is not None and r.rule_version != latest.rule_version]
        out[f"{rule}_version"] = latest.rule_version if latest else None
        out[f"{rule}_previous"] = older[-1].verdict if older else None
    return out


def old_run_row(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """The flat record of one attempt (see the module docstring)."""
    run = ledger.get_run(run_id)
    return _row(ledger, run, _delivered_eval_score(run, [x.to_json() for x in ledger.experiments(run_id)]))


def _row(ledger: Ledger, run: RunRecord, delivered_eval: float | None) -> dict[str, Any]:
    scores = ledger.scores.of_run(run.run_id)
    audits = load_records(ledger, run.run_id)
    verdicts = {a.rule: a.final_verdict for a in audits}
    h, later = scores.get("holdout"), scores.get("later")
    m = ledger.usage.of_run(run.run_id)
    o = ledger.outcomes.of_run(run.run_id)
    passed, outcome_reason = _outcome(run, o)
    judged = ledger.judges.of_runs([run.run_id])[:1]  # issue 26: the first judge's verdict, its own cost
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
        "gradings_passed": sum(g.passed for g in o.gradings) if o else None,
        "gradings_agree": o.agree if o else None, "flaky_tests": len(o.flaky) if o else None,
        "judge_outcome": (judged[0].verdict == "pass" if judged and judged[0].verdict else None),
        "judge_cost_usd": judged[0].cost_usd if judged else None,
        "judge_reason": judge_reason(judged[0]) if judged else None,
        "judge_spec_sha256": judged[0].spec_sha256 if judged else None,
        "run_id": run.run_id, "study_id": run.study_id, "study_name": run.study_name,
        "budget_name": run.budget_name, "attempt": run.attempt, "retry_of": run.retry_of,
        "failure_reason": run.failure_reason, "stop_reason": run.stop_reason,
        "cpu_seconds_container": run.cpu_seconds_container, "wall_seconds": run.wall_seconds,
        "experiments_counted": run.experiments_counted, "experiments_refused": run.experiments_refused,
        "holdout_ap": h.ap if h else None, "holdout_score_se": h.score_se if h else None,
        "later_ap": later.ap if later else None, "scoring_error": _scoring_error(h),
        # the agent's own eval score for what it delivered (its last experiment's printed line), else the
        # one train.py printed when the scorer retrained it: reported, never used to rank
        "eval_score_reported": _first(delivered_eval, h.eval_score_reported if h else None),
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
        **_rule_versions(ledger, run.run_id),
        **{t: getattr(run, t) for t in TIME_COLUMNS},
    }


def old_full_record(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """`run_row` plus resources, meta, events, experiments, every score and every audit record."""
    run = ledger.get_run(run_id)
    experiments = [x.to_json() for x in ledger.experiments(run_id)]
    record = _row(ledger, run, _delivered_eval_score(run, experiments))
    record["resources"], record["meta"] = run.resources, run.meta
    record["events"] = [e.to_json() for e in ledger.events(run_id)]
    record["experiments"] = experiments
    record["scores"] = {name: s.to_json() for name, s in ledger.scores.of_run(run_id).items()}
    record["audits"] = [a.model_dump(mode="json", exclude={"run_id"}) | {"final_verdict": a.final_verdict}
                        for a in load_records(ledger, run_id)]
    usage = ledger.usage.of_run(run_id)
    record["model_usage"] = usage.to_json() if usage else None
    outcome = ledger.outcomes.of_run(run_id)
    record["grading"] = outcome.summary() if outcome else None
    record["test_results"] = ([{"repeat": g.repeat, "test": t, "outcome": r} for g in outcome.gradings
                               for t, r in g.tests.items()] if outcome else None)
    # every judge's row in full (run_row's judge_outcome is the first judge's verdict only)
    record["judge_verdicts"] = [dataclasses.asdict(v) for v in ledger.judges.of_runs([run_id])]
    return record
