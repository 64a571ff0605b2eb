"""The runs table: one row per run attempt, the input of every report.

`sbx report --runs-csv FILE` reads it from CSV; the ledger's export produces the same columns. Only
`pairing`, `task` and `repeat` are required, plus at least one outcome column (`outcome`, `eval_score`
or `holdout_score`). Every other column is optional: a report section that needs a missing column is
skipped and the report says which column it needed. Unknown columns are kept and ignored.

Blank cells mean "not known" (a failed run has no score, an unaudited run has no verdict). They are
dropped and counted by each statistic, never read as 0 or as "clear".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from orchestrator.failures import DataError
from orchestrator.stats.exclusion import ALL_RULES

Kind = Literal["text", "int", "float", "bool", "verdict", "time"]


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    required: bool
    description: str


#: the documented columns, in the order the ledger export writes them
SCHEMA: tuple[Column, ...] = (
    Column("pairing", "text", True, "agent x model endpoint the run belongs to, e.g. 'codex/gpt-5'"),
    Column("agent", "text", False, "agent name (with `model`, enables the interaction contrasts)"),
    Column("model", "text", False, "model endpoint name"),
    Column("task", "text", True, "task name; paired comparisons match runs of two pairings by task"),
    Column("repeat", "int", True, "repeat number of this (pairing, task), from 1 or 0"),
    Column("status", "text", False, "final ledger state, e.g. audited, scored, failed"),
    Column("failure_class", "text", False, "for failed runs: infra, agent or unscorable"),
    Column("counted", "bool", False, "false for attempts that do not count (infra retries); blank = true"),
    Column("outcome", "bool", False, "pass/fail result for pass/fail tasks (true = pass)"),
    Column("outcome_reason", "text", False, "why a pass/fail run failed: tests_failed, timeout, agent_failed, ..."),
    Column("grade_repeats", "int", False, "gradings of the run's delivery (a tests task's grade_repeats)"),
    Column("gradings_agree", "bool", False, "every grading of the delivery gave the same verdict and test outcomes"),
    Column("flaky_tests", "int", False, "expected tests whose outcome differed between the gradings"),
    Column("judge_outcome", "bool", False, "a judge's pass/fail verdict, compared with `outcome` by kappa"),
    Column("judge_cost_usd", "float", False, "what the judge's call cost (its own gateway row, not the agent's)"),
    Column("judge_reason", "text", False, "why judge_outcome is what it is: pass, fail, unparsed, not_delivered "
                                          "(a counted run that delivered nothing: not judged, counted apart), or "
                                          "the judge call's failure (error, provider_error, ...)"),
    Column("judge_spec_sha256", "text", False, "which judge gave judge_outcome (its spec's digest): a judge-only "
                                              "study's report names that judge's calibration"),
    Column("eval_score", "float", False, "score on the evaluation split, computed by sbx from the scorer's "
                                         "predictions (selects best-of-k)"),
    Column("holdout_score", "float", False, "score on the holdout the agent never saw (the reported score)"),
    Column("later_score", "float", False, "score of the same artifact on later-period data"),
    Column("holdout_positives", "int", False, "positives in the holdout (for the AUC's Hanley-McNeil SE)"),
    Column("holdout_negatives", "int", False, "negatives in the holdout"),
    Column("eval_labels_in_fit", "verdict", False, "audit verdict: flagged / clear / blank (not audited); any "
                                                   "other verdict (unanalysable) is counted apart, never as clear"),
    Column("frame_statistics", "verdict", False, "audit verdict: flagged / clear / blank (not audited) / other"),
    Column("eval_features_in_fit", "verdict", False, "audit verdict (reported, not in the default exclusion)"),
    *(Column(f"{rule}_version", "text", False, f"the {rule} rule version the verdict came from")
      for rule in ALL_RULES),
    *(Column(f"{rule}_previous", "verdict", False, f"{rule}'s verdict under the version before (after a re-audit)")
      for rule in ALL_RULES),
    Column("cpu_seconds_metered", "float", False, "metered CPU-seconds the run used"),
    Column("budget_cpu_seconds", "float", False, "the run's CPU-second budget (budget use = metered / this)"),
    Column("cost_usd", "float", False, "model spend of the run in US dollars"),
    Column("input_tokens", "float", False, "input tokens sent to the model, cached ones included"),
    Column("cached_input_tokens", "float", False, "input tokens served from the provider's cache"),
    Column("output_tokens", "float", False, "output tokens, reasoning included"),
    Column("reasoning_tokens", "float", False, "reasoning (thinking) output tokens"),
    Column("model_calls", "float", False, "model calls the gateway recorded, refused ones included"),
    Column("reported_input_tokens", "float", False, "input tokens by the agent CLI's own report"),
    Column("reported_output_tokens", "float", False, "output tokens by the agent CLI's own report"),
    Column("reported_cost_usd", "float", False, "cost by the agent CLI's own report (list prices, if any)"),
    Column("reported_calls", "float", False, "model calls by the agent CLI's own report"),
    Column("node", "text", False, "the machine the run ran on (the placement checks)"),
    Column("slot", "text", False, "the slot (its cores) on that machine"),
    Column("started_at", "time", False, "when the run started: ISO 8601 (no offset: UTC) or unix seconds"),
    Column("run_order", "int", False, "the run's position in the study's plan, from 0"),
)
COLUMNS = {c.name: c for c in SCHEMA}
OUTCOME_COLUMNS = ("outcome", "eval_score", "holdout_score")

_TRUE = {"true", "t", "yes", "y", "1", "1.0", "pass", "passed"}
_FALSE = {"false", "f", "no", "n", "0", "0.0", "fail", "failed"}
_FLAGGED = {"flagged", "flag", "true", "1", "1.0", "yes"}
_CLEAR = {"clear", "false", "0", "0.0", "no"}


def _blank(v: object) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    return isinstance(v, str) and v.strip() in ("", "nan", "NaN", "NA", "<NA>", "None", "null")


class _BadCell(Exception):
    def __init__(self, value: object, expected: str) -> None:
        self.value, self.expected = value, expected


def _parse(value: object, kind: Kind) -> object:
    if _blank(value):
        return None if kind in ("text", "verdict") else np.nan
    if kind == "text":
        return str(value).strip()
    if kind == "time":
        return _seconds(value)
    if kind in ("float", "int"):
        if isinstance(value, (bool, np.bool_)):
            raise _BadCell(value, "a number")
        try:
            text = str(value).strip() if isinstance(value, str) else value
            number = float(text)  # type: ignore[arg-type]  # any other object: float() raises TypeError
        except (TypeError, ValueError):
            raise _BadCell(value, "a number") from None
        if not math.isfinite(number):
            raise _BadCell(value, "a finite number")
        if kind == "int" and number != round(number):
            raise _BadCell(value, "a whole number")
        return number
    text = str(value).strip().lower()
    if kind == "bool":
        if isinstance(value, (bool, np.bool_)):
            return 1.0 if value else 0.0
        if text in _TRUE:
            return 1.0
        if text in _FALSE:
            return 0.0
        raise _BadCell(value, "true/false (or pass/fail, 1/0)")
    if text in _FLAGGED:
        return "flagged"
    if text in _CLEAR:
        return "clear"
    # any other verdict (an audit's "unanalysable", or one sbx does not know yet) is kept as written: the
    # report counts it apart and never as compliant
    return text


def _seconds(value: object) -> float:
    """A time as unix seconds: a datetime (naive = UTC), ISO 8601 text, or a number of seconds."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        number = float(value)
    elif isinstance(value, datetime):
        number = (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    else:
        text = str(value).strip()
        try:
            number = float(text)
        except ValueError:
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                raise _BadCell(value, "an ISO 8601 time or unix seconds") from None
            number = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    if not math.isfinite(number):
        raise _BadCell(value, "a finite time")
    return number


def validate_runs(runs: pd.DataFrame, *, source: str = "runs table") -> pd.DataFrame:
    """Check a runs table against the schema and return a normalised copy.

    Text columns become object columns of str/None; int, float and bool columns become float64 with
    NaN for blanks (bools as 1.0/0.0); verdicts become "flagged"/"clear"/None, or any other verdict in
    lower case (counted apart, never as compliant). Rows with
    `counted` = false are kept (the report counts and drops them). Raises DataError naming `source`,
    the column and, for a bad value, the row (as a 1-based data line, header excluded).
    """
    if not isinstance(runs, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(runs).__name__}")
    missing = [c.name for c in SCHEMA if c.required and c.name not in runs.columns]
    if missing:
        raise DataError(
            f"{source}: missing required column {', '.join(repr(m) for m in missing)} "
            f"(required: pairing, task, repeat; see orchestrator/report/runs_table.py)"
        )
    if not any(c in runs.columns for c in OUTCOME_COLUMNS):
        raise DataError(f"{source}: no outcome column; need at least one of {', '.join(OUTCOME_COLUMNS)}")
    if runs.empty:
        raise DataError(f"{source}: the runs table has no rows")
    duplicated = [name for name in runs.columns if list(runs.columns).count(name) > 1]
    if duplicated:
        raise DataError(f"{source}: column {duplicated[0]!r} appears more than once")
    out = pd.DataFrame(index=pd.RangeIndex(len(runs)))
    for name in runs.columns:
        values = runs[name].tolist()
        column = COLUMNS.get(str(name))
        if column is None:
            out[name] = pd.Series(values, dtype=object)
            continue
        parsed = []
        for row, value in enumerate(values, start=1):
            try:
                parsed.append(_parse(value, column.kind))
            except _BadCell as bad:
                raise DataError(
                    f"{source}: column {name!r}, row {row}: expected {bad.expected}, got {bad.value!r}"
                ) from None
        dtype = object if column.kind in ("text", "verdict") else np.float64  # time: unix seconds
        out[name] = pd.Series(parsed, dtype=dtype)
    for name in ("pairing", "task", "repeat"):
        blank = out[name].isna()
        if blank.any():
            raise DataError(f"{source}: column {name!r} is blank in row {int(np.flatnonzero(blank)[0]) + 1}")
    counted = out["counted"].fillna(1.0) == 1.0 if "counted" in out else pd.Series(True, index=out.index)
    keys = out.loc[counted, ["pairing", "task", "repeat"]]
    dup = keys.duplicated()
    if dup.any():
        row = int(keys.index[np.flatnonzero(dup.to_numpy())[0]]) + 1
        p, t, r = keys.loc[row - 1]
        raise DataError(
            f"{source}: row {row} repeats pairing {p!r}, task {t!r}, repeat {r:g} "
            "(only one counted attempt per repeat; mark retried attempts counted = false)"
        )
    for name in (
        "cpu_seconds_metered",
        "budget_cpu_seconds",
        "cost_usd",
        "input_tokens",
        "cached_input_tokens",
        "output_tokens",
        "reasoning_tokens",
        "model_calls",
        "reported_input_tokens",
        "reported_output_tokens",
        "reported_cost_usd",
        "reported_calls",
        "holdout_positives",
        "holdout_negatives",
    ):
        if name in out and (out[name] < 0).any():
            raise DataError(f"{source}: column {name!r} has a negative value")
    return out


def load_runs_csv(path: Path | str) -> pd.DataFrame:
    """Read a runs table from CSV (one row per run) and validate it; errors name the file and column."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a readable CSV file: {exc}") from None
    raw.columns = [str(c).strip() for c in raw.columns]
    return validate_runs(raw, source=str(path))


def present(runs: pd.DataFrame, *columns: str) -> bool:
    """Does the table have all these columns with at least one non-blank value each?"""
    return all(c in runs.columns and runs[c].notna().any() for c in columns)


def schema_markdown() -> str:
    """The schema as a Markdown table (for docs and the report's appendix)."""
    lines = ["| column | type | required | meaning |", "| --- | --- | --- | --- |"]
    for c in SCHEMA:
        lines.append(f"| `{c.name}` | {c.kind} | {'yes' if c.required else 'no'} | {c.description} |")
    return "\n".join(lines)
