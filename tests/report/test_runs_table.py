from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orchestrator.failures import DataError
from orchestrator.report.runs_table import SCHEMA, load_runs_csv, schema_markdown, validate_runs


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "runs.csv"
    path.write_text(text)
    return path


def test_load_normalises_types_and_blanks(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "pairing,task,repeat,outcome,eval_score,eval_labels_in_fit,cost_usd,extra\n"
        "a/x, t1 ,1,pass,0.7,Flagged,1.5,zz\n"
        "a/x,t1,2,,,,,\n"
        "a/x,t1,3,false,0.71,clear,0.5,\n",
    )
    runs = load_runs_csv(path)
    assert runs["task"].tolist() == ["t1", "t1", "t1"]
    assert np.array_equal(runs["outcome"].to_numpy(), [1.0, np.nan, 0.0], equal_nan=True)
    assert runs["eval_labels_in_fit"].tolist() == ["flagged", None, "clear"]
    assert runs["eval_score"].dtype == np.float64 and runs["extra"].tolist()[0] == "zz"


def test_missing_required_column_names_file_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "pairing,repeat,outcome\na,1,true\n")
    with pytest.raises(DataError, match=rf"{path}: missing required column 'task'"):
        load_runs_csv(path)


def test_bad_value_names_column_and_row(tmp_path: Path) -> None:
    path = _write(tmp_path, "pairing,task,repeat,holdout_score\na,t,1,0.7\na,t,2,high\n")
    with pytest.raises(DataError, match=r"column 'holdout_score', row 2: expected a number, got 'high'"):
        load_runs_csv(path)


@pytest.mark.parametrize(
    "text,match",
    [
        ("pairing,task,repeat\na,t,1\n", "no outcome column"),
        ("pairing,task,repeat,outcome\na,t,1,maybe\n", "true/false"),
        ("pairing,task,repeat,outcome\na,t,1.5,true\n", "whole number"),
        ("pairing,task,repeat,outcome\na,t,1,true\na,t,1,false\n", "row 2 repeats pairing 'a'"),
        ("pairing,task,repeat,outcome\n,t,1,true\n", "'pairing' is blank in row 1"),
        ("pairing,task,repeat,outcome,cost_usd\na,t,1,true,-2\n", "negative"),
        ("pairing,task,repeat,outcome\n", "no rows"),
    ],
)
def test_validation_errors(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(DataError, match=match):
        load_runs_csv(_write(tmp_path, text))


def test_retried_attempts_may_repeat_a_key(tmp_path: Path) -> None:
    path = _write(tmp_path, "pairing,task,repeat,outcome,counted\na,t,1,,false\na,t,1,true,\n")
    assert len(load_runs_csv(path)) == 2


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        load_runs_csv(tmp_path / "nope.csv")


def test_dataframe_input_from_the_ledger_export_works() -> None:
    df = pd.DataFrame(
        {
            "pairing": ["a", "b"],
            "task": ["t", "t"],
            "repeat": [1, 1],
            "outcome": [True, False],
            "frame_statistics": [True, None],
        }
    )
    out = validate_runs(df, source="ledger export")
    assert out["outcome"].tolist() == [1.0, 0.0] and out["frame_statistics"].tolist() == ["flagged", None]


def test_schema_is_documented() -> None:
    text = schema_markdown()
    assert all(f"`{c.name}`" in text for c in SCHEMA)
    assert {c.name for c in SCHEMA if c.required} == {"pairing", "task", "repeat"}


def test_the_documented_runs_table_is_the_schema() -> None:
    from pathlib import Path

    from orchestrator.report.runs_table import SCHEMA

    doc = (Path(__file__).parents[2] / "docs" / "statistics.md").read_text()
    rows = [f"| `{c.name}` | {c.kind} | {'yes' if c.required else 'no'} | {c.description} |" for c in SCHEMA]
    assert "\n".join(rows) in doc  # docs/statistics.md lists every column, in order, as the code defines it


def test_rule_versions_without_previous_verdicts_report_no_re_audits(tmp_path) -> None:
    import pandas as pd

    from orchestrator.report import build_report

    runs = pd.DataFrame({"pairing": ["a", "a", "b"], "task": "t", "repeat": [1, 2, 1],
                         "holdout_score": [0.6, 0.7, 0.65], "frame_statistics": ["clear", "flagged", "clear"],
                         "frame_statistics_version": ["3", "3", "2"]})  # a CSV from elsewhere: no *_previous
    versions = pd.read_csv(build_report(runs, tmp_path, seed=1).tables["rule_versions"]).set_index("version")
    assert versions.loc[3, ["runs", "flagged", "clear", "re_audited"]].tolist() == [2, 1, 1, 0]
    assert versions.loc[2, ["runs", "clear", "flagged_to_clear"]].tolist() == [1, 1, 0]
