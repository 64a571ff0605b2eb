"""One row per run attempt, for pandas, R and `sbx report`: the report's runs-table columns first,
then the rest of what the ledger knows (scores per dataset, batch check, timestamps, node and slot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from compliance.store import load_records
from orchestrator.failures import ConfigError
from orchestrator.ledger import Ledger
from orchestrator.scoring.store import load_scores


def _delivered_eval_score(record: dict[str, Any]) -> float | None:
    """The eval score the agent saw for the version it delivered: its last experiment on that train.py."""
    best = None
    for x in record["experiments"]:
        if x["train_sha256"] == record["delivered_sha256"] and x["eval_score"] is not None:
            best = x["eval_score"]
    return best


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def runs_frame(ledger: Ledger, study_id: str) -> pd.DataFrame:
    rows = []
    for run in ledger.list_runs(study_id=study_id):
        r = ledger.run_record_json(run.run_id)
        with ledger.connection() as conn:
            scores = load_scores(conn, run.run_id)
            audits = {a.rule: a.final_verdict for a in load_records(conn, run.run_id)}
        h = scores.get("holdout")
        later = scores.get("later")
        row: dict[str, Any] = {
            "pairing": r["pairing"], "agent": r["agent"], "model": r["model"], "task": r["task"],
            "repeat": r["repeat"], "status": r["status"], "failure_class": r["failure_class"],
            "counted": r["counted"],
            # the agent's own eval score for what it delivered; else the one train.py printed when retrained
            "eval_score": _first(_delivered_eval_score(r), h.eval_score if h else None),
            "holdout_score": h.auc if h else None, "later_score": later.auc if later else None,
            "holdout_positives": h.positives if h else None,
            "holdout_negatives": (h.n - h.positives) if h and h.n is not None and h.positives is not None else None,
            "eval_labels_in_fit": audits.get("eval_labels_in_fit"), "frame_statistics": audits.get("frame_statistics"),
            "cpu_seconds": r["cpu_seconds_metered"],
            "cost_usd": None, "input_tokens": None, "cached_input_tokens": None, "output_tokens": None,
            # beyond the report's columns
            "run_id": r["run_id"], "attempt": r["attempt"], "retry_of": r["retry_of"],
            "failure_reason": r["failure_reason"], "stop_reason": r["stop_reason"],
            "cpu_seconds_container": r["cpu_seconds_container"], "wall_seconds": r["wall_seconds"],
            "experiments_counted": r["experiments_counted"], "experiments_refused": r["experiments_refused"],
            "holdout_ap": h.ap if h else None, "holdout_auc_se": h.auc_se if h else None,
            "later_ap": later.ap if later else None,
            "scoring_error": f"{h.reason}" if h and h.status == "unscorable" else None,
            "batch_rows_checked": h.rows_checked if h else None, "batch_rows_changed": h.rows_changed if h else None,
            "batch_max_abs_change": h.max_abs_change if h else None, "batch_dependent": h.batch_dependent if h else None,
            "delivered_sha256": r["delivered_sha256"], "commits": r["commits"], "image": r["image"],
            "node": r["node"], "slot": r["slot"], "created_at": r["created_at"], "started_at": r["started_at"],
            "ended_at": r["ended_at"],
        }
        rows.append(row)
    return pd.DataFrame(rows)


def study_id_of(ledger: Ledger, name: str) -> str:
    found = ledger.get_study_by_name(name)
    if found is None:
        raise ConfigError(f"no study named {name!r} in the ledger {ledger.path}")
    return found.study_id


def export(ledger: Ledger, name: str, fmt: str, out: Path) -> Path:
    frame = runs_frame(ledger, study_id_of(ledger, name))
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        frame.to_csv(out, index=False)
    elif fmt == "parquet":
        try:
            frame.to_parquet(out, index=False)
        except ImportError:
            raise ConfigError("parquet export needs pyarrow: pip install 'sbx[parquet]'") from None
    else:
        raise ConfigError(f"unknown export format {fmt!r}; use csv or parquet")
    return out
