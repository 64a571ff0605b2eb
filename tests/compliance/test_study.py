"""Auditing the delivered runs of a study from the ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance.store import load_records
from compliance.study import audit_study
from orchestrator.failures import LedgerUnavailable
from orchestrator.ledger import Ledger
from tests.compliance.study_helpers import deliver

VIOLATION = "import pandas as pd\nmodel.fit(pd.read_csv('data/eval.csv'), y)\n"


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SBX_HOME", str(tmp_path / "home"))
    with Ledger(tmp_path / "home" / "ledger.sqlite") as led:
        yield led


def test_an_unknown_study_is_a_clear_error(ledger: Ledger) -> None:
    with pytest.raises(LedgerUnavailable, match="no study 'nope'"):
        audit_study(ledger, "nope")


def test_audits_and_stores_every_delivered_run(ledger: Ledger) -> None:
    study = ledger.create_study("s1")
    other = ledger.create_study("s2")
    flagged = deliver(ledger, study, VIOLATION)
    lost = deliver(ledger, study, VIOLATION.replace("eval", "train"), keep_file=False)
    crashed = deliver(ledger, study, None)
    elsewhere = deliver(ledger, other, VIOLATION)
    audited = audit_study(ledger, "s1")
    assert sorted(audited) == sorted([flagged, lost])  # the crashed run delivered nothing to audit
    with ledger.connection() as conn:
        assert {r.rule: r.verdict for r in load_records(conn, flagged)}["eval_labels_in_fit"] == "flagged"
        assert {r.verdict for r in load_records(conn, lost)} == {"error"}  # artifact missing: never clear
        assert load_records(conn, elsewhere) == [] and load_records(conn, crashed) == []
