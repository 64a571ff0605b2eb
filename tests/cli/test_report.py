from pathlib import Path

import pandas as pd
import pytest

from orchestrator.cli import main


def _csv(tmp_path: Path) -> Path:
    rows = [
        {
            "pairing": p,
            "task": "t",
            "repeat": r,
            "holdout_score": 0.7 + 0.01 * i + 0.001 * r,
            "eval_score": 0.7 + 0.01 * i + 0.001 * r,
            "frame_statistics": "clear",
        }
        for i, p in enumerate(("a", "b"))
        for r in range(5)
    ]
    path = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_report_from_csv_prints_written_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert (
        main(["report", "--runs-csv", str(_csv(tmp_path)), "--out", str(out), "--exclusion", "nothing"]) == 0
    )
    printed = capsys.readouterr().out.split()
    assert str(out / "report.html") in printed and str(out / "summary.md") in printed
    assert all(Path(p).is_file() for p in printed)


def test_study_name_without_ledger_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SBX_HOME", str(tmp_path / "home"))
    assert main(["report", "my-study"]) == 2
    assert "ledger" in capsys.readouterr().err
    assert not (tmp_path / "home" / "ledger.sqlite").exists()  # reading never creates a ledger


def test_nothing_to_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report"]) == 2
    assert "--runs-csv" in capsys.readouterr().err


def test_missing_column_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("pairing,repeat,outcome\na,1,true\n")
    assert main(["report", "--runs-csv", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "'task'" in err


def test_help_lists_report(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "report" in capsys.readouterr().out
