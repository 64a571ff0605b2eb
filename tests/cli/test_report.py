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


def _study_nothing_compliant(path: Path, audit: str) -> None:
    """Two pairings x 3 runs, each delivered and scored; `audit` "flagged": every run flagged by both rules;
    "one rule": every run audited by frame_statistics only (so under eval_labels_in_fit none is known)."""
    from orchestrator.ledger import Ledger, RunState, ScoreResult
    from orchestrator.ledger.audits import AuditRow

    rules = ("eval_labels_in_fit", "frame_statistics") if audit == "flagged" else ("frame_statistics",)
    with Ledger(path) as ledger:
        study = ledger.create_study("none-compliant")
        for i in range(6):
            pairing = ("claude/opus", "codex/gpt")[i % 2]
            agent, _, model = pairing.partition("/")
            run_id = ledger.new_run(task="flight-delays", agent=agent, model=model, pairing=pairing,
                                    budget_name="smoke", study_id=study, repeat=i // 2 + 1)
            for state in (RunState.STARTING, RunState.RUNNING, RunState.DELIVERED):
                ledger.advance(run_id, state)
            ledger.scores.save(run_id, ScoreResult(dataset="holdout", status="scored", auc=0.70 + 0.01 * i, n=100,
                                                  positives=30, eval_score=0.71 + 0.01 * i))
            ledger.advance(run_id, RunState.SCORED)
            ledger.audits.save(run_id, [AuditRow(rule, "1", "flagged" if audit == "flagged" else "clear", "[]",
                                                 "[]", None) for rule in rules])
            ledger.advance(run_id, RunState.AUDITED)


@pytest.mark.parametrize(("audit", "exclusion", "flagged", "unknown"), [
    ("flagged", "both", 6, 0),  # every run flagged by the audit
    ("one rule", "eval_labels_in_fit", 0, 6),  # no run audited by the rule applied (was KeyError 'pairing')
])
def test_a_study_with_no_compliant_attempt_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], audit: str, exclusion: str, flagged: int, unknown: int
) -> None:
    ledger = tmp_path / "ledger.sqlite"
    _study_nothing_compliant(ledger, audit)
    out = tmp_path / "report"
    assert main(["--log-level", "warning", "report", "none-compliant", "--ledger", str(ledger), "--out", str(out),
                 "--exclusion", exclusion]) == 0
    assert str(out / "report.html") in capsys.readouterr().out.split()
    md = (out / "summary.md").read_text()
    section = md.split("## Keeping the best compliant of k attempts", 1)[1].split("\n## ", 1)[0]
    assert section.strip() == (
        "Skipped: no pairing has a compliant attempt: of 6 counted runs, 0 have no eval_score or holdout_score, "
        f"{flagged} are excluded by the audit (exclusion: {exclusion}) and {unknown} were not audited by every "
        "rule the exclusion applies, so there is nothing to keep at any k"
    )
    assert "no pairing has a compliant attempt" in (out / "report.html").read_text()
    assert not (out / "tables" / "best_of_k.csv").exists() and not (out / "figures" / "best_of_k.png").exists()
    # the scores section is still there, with every run counted and none compliant
    pairings = pd.read_csv(out / "tables" / "pairings.csv")
    assert pairings["runs"].tolist() == [3, 3] and pairings["compliant"].tolist() == [0, 0]
