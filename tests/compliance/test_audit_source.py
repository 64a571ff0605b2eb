"""audit_source / audit_paths: records per (file, rule), errors for unreadable files, folder walking."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.compliance.audit import audit_paths, audit_source, python_files
from orchestrator.compliance.traces import RULES
from orchestrator.failures import DataError

VIOLATION = """\
import pandas as pd
EVAL = "data/eval.csv"
ev = pd.read_csv(EVAL)
X_all = pd.concat([X, ev])
model.fit(X_all, y_all)
"""


def test_one_record_per_rule() -> None:
    records = audit_source("x = 1\n", "a.py")
    assert [r.rule for r in records] == [r.name for r in RULES]
    assert all(r.verdict == "clear" and r.file == "a.py" and r.rule_version for r in records)


def test_flagged_record_carries_checkable_evidence() -> None:
    record = next(r for r in audit_source(VIOLATION, "t.py") if r.rule == "eval_labels_in_fit")
    assert record.verdict == "flagged"
    steps = record.evidence[0].steps
    assert [(s.file, s.line) for s in steps] == [("t.py", 2), ("t.py", 3), ("t.py", 4), ("t.py", 5)]
    assert [s.code for s in steps] == VIOLATION.splitlines()[1:]
    assert steps[2].names == ["ev", "X_all"]
    assert "line 2" in record.evidence[0].summary and "line 5" in record.evidence[0].summary


def test_unparseable_source_is_an_error_never_clear() -> None:
    records = audit_source("def broken(:\n    pass\n", "bad.py")
    assert {r.verdict for r in records} == {"error"}
    evidence = records[0].evidence[0]
    assert evidence.kind == "parse_error" and "does not parse" in evidence.summary
    assert evidence.steps[0].line == 1


def test_null_bytes_are_an_error() -> None:
    assert {r.verdict for r in audit_source("x = 1\x00\n", "nul.py")} == {"error"}


def test_missing_predict_proba_is_noted() -> None:
    record = next(r for r in audit_source("x = 1\n", "a.py") if r.rule == "frame_statistics")
    assert record.verdict == "clear"
    assert any("predict_proba" in n for n in record.notes)


def test_folders_give_every_python_file(tmp_path: Path) -> None:
    (tmp_path / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "runs" / "r1" / "train.py").write_text("x = 1\n")
    (tmp_path / "variant_b.py").write_text(VIOLATION)
    (tmp_path / "notes.txt").write_text("not python")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "skip.py").write_text("x = 1\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "skip.py").write_text("x = 1\n")
    files = python_files([tmp_path])
    assert files == [tmp_path / "runs" / "r1" / "train.py", tmp_path / "variant_b.py"]
    records = audit_paths([tmp_path])
    assert len(records) == 2 * len(RULES)


def test_binary_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert {r.verdict for r in audit_paths([path])} == {"error"}


def test_missing_path_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        audit_paths([tmp_path / "nope.py"])


def test_a_function_no_call_reaches_is_checked_and_says_so() -> None:
    source = (
        "import pandas as pd\n"
        "def retrain_all():\n"
        "    full = pd.concat([pd.read_csv('data/train.csv'), pd.read_csv('data/eval.csv')])\n"
        "    model.fit(full, full.y)\n"
    )
    record = next(r for r in audit_source(source, "t.py") if r.rule == "eval_labels_in_fit")
    assert record.verdict == "flagged"
    assert "retrain_all(), which no call in the file was seen to reach" in record.evidence[0].summary


def test_an_internal_error_is_an_error_record(monkeypatch: pytest.MonkeyPatch) -> None:
    import orchestrator.compliance.audit as audit_module

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(audit_module, "analyze_tree", broken)
    records = audit_source("x = 1\n", "a.py")
    assert {r.verdict for r in records} == {"error"}
    assert "internal error" in records[0].evidence[0].summary
