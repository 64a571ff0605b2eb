"""The ledger's audit_verdicts table (schema.py, migration audit_verdicts): each (run, rule)'s verdict in
force, kept by triggers, is always what audits.py `load` reads (the latest audit, its latest override against
its rule version): after saves, re-audits at a new rule version, overrides, and rows changed or deleted by
hand; and the migration fills it for a ledger written before it."""

from __future__ import annotations

import random
from pathlib import Path

from orchestrator.ledger import Ledger
from orchestrator.ledger.audits import AuditRow
from orchestrator.ledger.schema import MIGRATIONS

RULES = ("eval_labels_in_fit", "frame_statistics", "eval_features_in_fit")


def _in_force(ledger: Ledger, run_ids: list[str]) -> dict[tuple[str, str], str]:
    """The oracle: `load`'s verdict of each rule, the override's where there is one."""
    return {(run_id, a.rule): (a.override.verdict if a.override else a.verdict)
            for run_id in run_ids for a in ledger.audits.latest(run_id)}


def _table(ledger: Ledger) -> dict[tuple[str, str], str]:
    rows = ledger._connection().execute("SELECT run_id, rule, verdict FROM audit_verdicts").fetchall()
    return {(r["run_id"], r["rule"]): r["verdict"] for r in rows}


def _row(rule: str, version: str, verdict: str) -> AuditRow:
    return AuditRow(rule=rule, rule_version=version, verdict=verdict, evidence_json="[]", notes_json="[]",
                    file=None)


def _runs(ledger: Ledger, n: int) -> list[str]:
    study = ledger.create_study("s")
    return [ledger.new_run(task="t", agent="a", budget_name="b", pairing="a", study_id=study, repeat=i + 1)
            for i in range(n)]


def test_the_table_follows_every_write_of_audits_and_overrides(tmp_path: Path) -> None:
    rng = random.Random(0)
    with Ledger(tmp_path / "l.sqlite") as ledger:
        ids = _runs(ledger, 6)
        conn = ledger._connection()
        for step in range(300):
            run_id, rule = rng.choice(ids), rng.choice(RULES)
            audited = (run_id, rule) in _in_force(ledger, [run_id])
            action = rng.random()
            if action < 0.4 or not audited:  # an audit, at one of two rule versions
                ledger.audits.save(run_id, [_row(rule, rng.choice("12"), rng.choice(("flagged", "clear",
                                                                                        "unanalysable")))])
            elif action < 0.75:  # a reviewer's override of the latest audit
                ledger.audits.add_override(run_id, rule, rng.choice(("flagged", "clear")), f"reason {step}")
            elif action < 0.85:  # rows changed by hand: a verdict, a version
                with conn:
                    conn.execute("UPDATE audits SET verdict = 'error' WHERE id = (SELECT MAX(id) FROM audits"
                                 " WHERE run_id = ? AND rule = ?)", (run_id, rule))
                    conn.execute("UPDATE audit_overrides SET rule_version = 'x' WHERE id = (SELECT MIN(id) FROM"
                                 " audit_overrides WHERE run_id = ?)", (run_id,))
            else:  # deleted by hand: the latest audit of a rule, then an override
                with conn:
                    conn.execute("DELETE FROM audit_overrides WHERE id = (SELECT MAX(id) FROM audit_overrides"
                                 " WHERE run_id = ? AND rule = ?)", (run_id, rule))
                    conn.execute("DELETE FROM audits WHERE id = (SELECT MAX(id) FROM audits WHERE run_id = ?"
                                 " AND rule = ?)", (run_id, rule))
            assert _table(ledger) == _in_force(ledger, ids), step
        # the sequence reached every case: overrides in force, overrides left behind by a newer version
        assert conn.execute("SELECT count(*) FROM audit_overrides").fetchone()[0] > 20
        assert len(_table(ledger)) > 12


def test_the_migration_fills_the_table_of_an_older_ledger(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    before = [m for m in MIGRATIONS if m.name not in ("audit_verdicts", "runs_retried")]
    with Ledger(path, migrations=tuple(before)) as old:
        ids = _runs(old, 3)
        old.audits.save(ids[0], [_row(r, "1", "flagged") for r in RULES])
        old.audits.add_override(ids[0], "eval_labels_in_fit", "clear", "a reviewer read it")
        old.audits.save(ids[1], [_row("frame_statistics", "1", "clear")])
        old.audits.add_override(ids[1], "frame_statistics", "flagged", "seen by hand")
        old.audits.save(ids[1], [_row("frame_statistics", "2", "clear")])  # the override was against v1
    with Ledger(path) as ledger:
        assert _table(ledger) == _in_force(ledger, ids) == {
            (ids[0], "eval_labels_in_fit"): "clear", (ids[0], "frame_statistics"): "flagged",
            (ids[0], "eval_features_in_fit"): "flagged", (ids[1], "frame_statistics"): "clear"}
