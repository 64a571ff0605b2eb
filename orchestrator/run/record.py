"""One record of a run, read by `sbx show`, the export and the report with the same field names.

The flat row (one per attempt): the runs table's columns (orchestrator/report/runs_table.py) first, then
everything else the ledger knows that fits in a cell. `full_record` is the row plus what does not:
resources, meta, events, experiments, every dataset's score and every audit record with its evidence, and
for a tests task its grading (every repeat's verdict) and per-test results.
Times are unix seconds here; the export writes them as ISO 8601.

Rows are built column by column (`study_columns`) from the tuples `Ledger.run_reads` read: a whole study
at once for the export, the report and the end of a study (one query per table, issue 23), one run for
`run_row` and `full_record`. A column is one list over the study's attempts, made from the SQL values in
one pass each, so 100,000 runs cost no per-run objects (the export writes these lists straight to CSV).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from orchestrator.compliance.plain import audit_json
from orchestrator.compliance.verdicts import passes
from orchestrator.failures import RunNotFound
from orchestrator.ledger import Ledger
from orchestrator.ledger.study_reads import HOLDOUT_COLUMNS, RUN_COLUMNS, USAGE_COLUMNS, StudyReads
from orchestrator.stats.exclusion import ALL_RULES

#: the verdict columns, one per compliance rule (compliance.traces' RULES by name, without importing the
#: rules and their data-flow engine: tests/test_architecture.py holds the two lists equal)
RULE_COLUMNS: tuple[str, ...] = ALL_RULES
#: run columns that are times (unix seconds in the ledger; ISO 8601 in exports)
TIME_COLUMNS = ("created_at", "started_at", "ended_at")

#: a study's rows as columns: name -> one value per attempt, oldest first (the row's keys, in its order)
Columns = dict[str, list[Any]]


def _scoring_error(status: str, reason: str | None, detail: str | None) -> str | None:
    if status != "unscorable":
        return None
    lines = (detail or "").strip().splitlines()
    return f"{reason}: {lines[-1]}" if lines else reason


def _audit_columns(reads: StudyReads, run_ids: list[str]) -> Columns:
    """Per rule its verdict in force (the latest audit's, or the reviewer's override on that rule version),
    `compliant`, and per rule the version in force (`<rule>_version`) and, after a re-audit under a newer
    version, the verdict the version before gave (`<rule>_previous`), so a report can say what changed."""
    # run id -> rule -> (version, verdict, the last verdict of another version), audits read in id order
    latest: dict[str, dict[str, tuple[str, str, str | None]]] = {}
    for run_id, rule, version, verdict in reads.audits:
        rules = latest.setdefault(run_id, {})
        held = rules.get(rule)
        # the last audit of a version other than the newest is the one just before the version changed
        previous = None if held is None else held[2] if held[0] == version else held[1]
        rules[rule] = (version, verdict, previous)
    overrides = reads.overrides
    finals = [{rule: overrides.get((run_id, rule, v[0]), v[1]) for rule, v in latest.get(run_id, {}).items()}
              for run_id in run_ids]
    out: Columns = {rule: [f.get(rule) for f in finals] for rule in RULE_COLUMNS}
    out["compliant"] = [passes(f.items()) if f else None for f in finals]
    held_by_run = [latest.get(run_id, {}) for run_id in run_ids]
    for rule in RULE_COLUMNS:
        of_rule = [rules.get(rule) for rules in held_by_run]
        out[f"{rule}_version"] = [h[0] if h else None for h in of_rule]
        out[f"{rule}_previous"] = [h[2] if h else None for h in of_rule]
    return out


def study_columns(reads: StudyReads) -> Columns:
    """The flat rows of the attempts `reads` holds, as columns (see the module docstring)."""
    if not reads.runs:
        return {}
    run = dict(zip(RUN_COLUMNS, (list(c) for c in zip(*reads.runs, strict=True)), strict=True))
    run_ids: list[str] = run["run_id"]
    meta = [json.loads(m) for m in run["meta_json"]]
    failure = [f or None for f in run["failure_class"]]

    def part(table: dict[str, tuple[Any, ...]], names: tuple[str, ...]) -> dict[str, list[Any]]:
        got = [table.get(r) for r in run_ids]
        return {name: [t[i] if t is not None else None for t in got] for i, name in enumerate(names)}

    h = part(reads.holdout, HOLDOUT_COLUMNS)
    later = part(reads.later, ("score", "ap"))
    m = part(reads.usage, USAGE_COLUMNS)
    report = [json.loads(s) if s is not None else None for s in m["self_report_json"]]
    # the CLI's own usage report's numbers, when it printed a complete one
    reported = [r if r is not None and r.get("complete") else None for r in report]
    graded = [reads.graded.get(r) for r in run_ids]
    outcome: list[bool | None] = []
    outcome_reason: list[str | None] = []
    for g, fc, mt in zip(graded, failure, meta, strict=True):
        # a tests task's pass/fail: its grading's; an attempt whose agent failed (crashed, broke a limit,
        # delivered nothing) is a fail without grading. None: an ml task, or not graded yet, or not counted
        if g is not None:
            outcome.append(bool(g[0]))
            outcome_reason.append(g[1])
        elif mt.get("task_kind") == "tests" and fc == "agent":
            outcome.append(False)
            outcome_reason.append("agent_failed")
        else:
            outcome.append(None)
            outcome_reason.append(None)
    judged = [reads.judged.get(r) for r in run_ids]  # issue 26: the first judge's verdict, its own cost
    delivered = [reads.delivered_eval.get(r) for r in run_ids]
    audits = _audit_columns(reads, run_ids)
    hn, hp = h["n"], h["positives"]
    return {
        # the runs table's columns (orchestrator/report/runs_table.py), in its order
        "pairing": run["pairing"], "agent": run["agent"], "model": run["model"], "task": run["task"],
        "repeat": run["repeat"], "status": run["status"], "failure_class": failure,
        # a tests task's graded pass/fail (None: not graded, or an ml task)
        "counted": [bool(c) for c in run["counted"]], "outcome": outcome,
        # computed by sbx from the scorer's predictions on the evaluation rows: what best-of-k ranks by
        "eval_score": h["eval_score"],
        # the task's metric (the AUC for a binary task scored by AUC, as before metrics had names)
        "holdout_score": h["score"], "later_score": later["score"], "metric": h["metric"],
        "holdout_positives": hp,
        "holdout_negatives": [n - p if n is not None and p is not None else None for n, p in zip(hn, hp, strict=True)],
        **{rule: audits[rule] for rule in RULE_COLUMNS},
        "compliant": audits["compliant"],
        "cpu_seconds_metered": run["cpu_seconds_metered"],
        # what the gateway measured of the run's model calls (None: the run talked to no model)
        "cost_usd": m["cost_usd"], "input_tokens": m["input_tokens"], "cached_input_tokens": m["cached_input_tokens"],
        "output_tokens": m["output_tokens"], "reasoning_tokens": m["reasoning_tokens"], "model_calls": m["calls"],
        # the CLI's own report of the same (never trusted; the gap is in the report)
        **{f"reported_{key}": [r.get(key) if r is not None else None for r in reported]
           for key in ("input_tokens", "output_tokens", "cost_usd", "calls")},
        # beyond the report's columns
        "outcome_reason": outcome_reason,
        "grade_repeats": [max(1, g[4]) if g else None for g in graded],
        "gradings_passed": [g[5] if g else None for g in graded],
        "gradings_agree": [bool(g[2]) if g else None for g in graded],
        "flaky_tests": [len(json.loads(g[3])) if g else None for g in graded],
        "judge_outcome": [j[0] == "pass" if j and j[0] else None for j in judged],
        "judge_cost_usd": [j[2] if j else None for j in judged],
        # why the row has its verdict: the verdict, 'unparsed' (the call answered, the parse rule could not
        # read it) or the call's failed outcome (ledger/judge_verdicts.py `reason`)
        "judge_reason": [(j[0] if j[0] is not None else "unparsed" if j[1] == "ok" else j[1]) if j else None
                         for j in judged],
        "judge_spec_sha256": [j[3] if j else None for j in judged],
        "run_id": run_ids, "study_id": run["study_id"], "study_name": run["study_name"],
        "budget_name": run["budget_name"], "attempt": run["attempt"], "retry_of": run["retry_of"],
        "failure_reason": run["failure_reason"], "stop_reason": run["stop_reason"],
        "cpu_seconds_container": run["cpu_seconds_container"], "wall_seconds": run["wall_seconds"],
        "experiments_counted": run["experiments_counted"], "experiments_refused": run["experiments_refused"],
        "holdout_ap": h["ap"], "holdout_score_se": h["score_se"], "later_ap": later["ap"],
        "scoring_error": [_scoring_error(s, r, d) if s is not None else None
                          for s, r, d in zip(h["status"], h["reason"], h["detail"], strict=True)],
        # the agent's own eval score for what it delivered (its last experiment's printed line), else the
        # one train.py printed when the scorer retrained it: reported, never used to rank
        "eval_score_reported": [d if d is not None else e for d, e in zip(delivered, h["eval_score_reported"],
                                                                           strict=True)],
        "scorer_cpu_seconds": h["cpu_seconds"], "scorer_cpu_limit_s": h["cpu_limit_s"],
        "withheld_files": h["withheld_count"], "batch_fresh_check": h["fresh_check"],
        "batch_rows_checked": h["rows_checked"], "batch_rows_changed": h["rows_changed"],
        "batch_max_abs_change": h["max_abs_change"],
        "batch_dependent": [bool(b) if b is not None else None for b in h["batch_dependent"]],
        "delivered_sha256": run["delivered_sha256"], "commits": run["commits"], "image": run["image"],
        # the digest of the task's declared environment the run ran and was scored in (None: the standard images)
        "environment": [mt.get("environment") for mt in meta],
        "agent_exit_code": run["agent_exit_code"], "artifact_manifest": run["artifact_manifest"],
        "node": run["node"], "slot": run["slot"], "run_order": [mt.get("order") for mt in meta],
        "container_id": run["container_id"],
        "endpoint": m["endpoint"], "agent_version": m["agent_version"],
        "model_calls_refused": m["refused"], "model_provider_errors": m["provider_errors"],
        "cache_write_tokens": m["cache_write_tokens"],
        **{k: v for k, v in audits.items() if k.endswith(("_version", "_previous"))},
        **{t: run[t] for t in TIME_COLUMNS},
    }


def rows_of(columns: Columns) -> list[dict[str, Any]]:
    """The columns as one dict per attempt."""
    names = list(columns)
    return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def study_table(ledger: Ledger, study_id: str) -> Columns:
    """Every attempt of one study, oldest first, as columns, read set-based (`Ledger.run_reads`: one
    query per table for the study, where each run's row took 21 statements before issue 23)."""
    return study_columns(ledger.run_reads(study_id=study_id))


def study_rows(ledger: Ledger, study_id: str) -> list[dict[str, Any]]:
    """Every attempt's `run_row` of one study, oldest first."""
    return rows_of(study_table(ledger, study_id))


def run_row(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """The flat record of one attempt (see the module docstring)."""
    rows = rows_of(study_columns(ledger.run_reads(run_id=run_id)))
    if not rows:
        raise RunNotFound(f"no run {run_id!r} in the ledger {ledger.path}")
    return rows[0]


def full_record(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """`run_row` plus resources, meta, events, experiments, every score and every audit record."""
    record = run_row(ledger, run_id)
    run, usage = ledger.get_run(run_id), ledger.usage.of_run(run_id)
    record["resources"], record["meta"] = run.resources, run.meta
    record["events"] = [e.to_json() for e in ledger.events(run_id)]
    record["experiments"] = [x.to_json() for x in ledger.experiments(run_id)]
    record["scores"] = {name: s.to_json() for name, s in ledger.scores.of_run(run_id).items()}
    # AuditRecord.model_dump's dicts, read without pydantic (compliance/plain.py; issue 23)
    record["audits"] = [audit_json(run_id, row) for row in ledger.audits.latest(run_id)]
    record["model_usage"] = usage.to_json() if usage else None
    outcome = ledger.outcomes.of_run(run_id)
    record["grading"] = outcome.summary() if outcome else None
    record["test_results"] = ([{"repeat": g.repeat, "test": t, "outcome": r} for g in outcome.gradings
                               for t, r in g.tests.items()] if outcome else None)
    # every judge's row in full (run_row's judge_outcome is the first judge's verdict only)
    record["judge_verdicts"] = [dataclasses.asdict(v) for v in ledger.judges.of_runs([run_id])]
    return record
