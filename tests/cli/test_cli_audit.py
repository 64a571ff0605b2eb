"""`sbx audit` end to end through the CLI entry point."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.compliance.audit import audit_source
from orchestrator.compliance.store import save_records
from orchestrator.ledger import Ledger

CORPUS = Path(__file__).parents[1] / "compliance" / "corpus"
CLEAN = CORPUS / "compliant" / "c01_starting_code.py"
FLAGGED = CORPUS / "violations" / "eval_labels_in_fit" / "e01_concat_train_eval.py"


def test_json_output_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--json", str(CLEAN)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {(p["rule"], p["verdict"]) for p in payload} == {
        ("eval_labels_in_fit", "clear"),
        ("frame_statistics", "clear"),
        ("eval_features_in_fit", "clear"),
    }
    assert all(set(p) >= {"file", "rule", "rule_version", "verdict", "evidence"} for p in payload)

    assert main(["audit", "--json", str(CLEAN), str(FLAGGED)]) == 1
    payload = json.loads(capsys.readouterr().out)
    flagged = [p for p in payload if p["verdict"] == "flagged"]
    assert len(flagged) == 1 and flagged[0]["file"] == str(FLAGGED)
    step = flagged[0]["evidence"][0]["steps"][-1]
    assert set(step) >= {"file", "line", "code", "names"} and "fit" in step["code"]


def test_human_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(FLAGGED)]) == 1
    out = capsys.readouterr().out
    assert "VERDICT" in out and "flagged" in out and "eval_labels_in_fit" in out


def test_unparseable_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "train.py"
    bad.write_text("def (:\n")
    assert main(["audit", "--json", str(bad)]) == 1
    assert {p["verdict"] for p in json.loads(capsys.readouterr().out)} == {"error"}


def test_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_study_without_a_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--study", "s1", "--ledger", str(tmp_path / "ledger.sqlite")]) == 2
    assert "no ledger at" in capsys.readouterr().err


def test_study_audits_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from orchestrator.home import Home
    from tests.compliance.study_helpers import deliver

    monkeypatch.setenv("SBX_HOME", str(tmp_path))
    with Ledger(tmp_path / "ledger.sqlite") as led:
        deliver(Home(tmp_path), led, led.create_study("s1"), CLEAN.read_text())
    assert main(["audit", "--study", "s1", "--ledger", str(tmp_path / "ledger.sqlite")]) == 0
    assert "1 of 1 runs compliant" in capsys.readouterr().out


def test_review_records_an_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SBX_HOME", str(tmp_path))
    with Ledger(tmp_path / "ledger.sqlite") as led:
        r1 = led.new_run(task="t", agent="a", budget_name="b")
        save_records(led, r1, audit_source(FLAGGED.read_text(), str(FLAGGED), run_id=r1))
    assert (
        main(
            [
                "audit",
                "review",
                r1,
                "eval_labels_in_fit",
                "--verdict",
                "clear",
                "--reason",
                "reviewed: the concat is of training folds",
            ]
        )
        == 0
    )
    assert "reviewer verdict clear" in capsys.readouterr().out
    conn = sqlite3.connect(tmp_path / "ledger.sqlite")
    rows = conn.execute("SELECT run_id, rule, verdict, reason FROM audit_overrides").fetchall()
    conn.close()
    assert rows == [(r1, "eval_labels_in_fit", "clear", "reviewed: the concat is of training folds")]


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "review", "r1", "eval_labels_in_fit", "--verdict", "clear"],
        ["audit", "review", "r1", "--verdict", "clear", "--reason", "x"],
        ["audit", "--reason", "x", "train.py"],
        ["audit"],
    ],
)
def test_review_usage_errors(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBX_HOME", str(tmp_path))
    Ledger(tmp_path / "ledger.sqlite").close()
    assert main(argv) == 2
