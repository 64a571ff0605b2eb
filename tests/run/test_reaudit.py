"""Auditing the delivered runs of a study again, from the ledger (`sbx audit --study`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orchestrator.compliance.store import load_records
from orchestrator.failures import LedgerUnavailable
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run.audit import reaudit_study
from tests.compliance.study_helpers import deliver

VIOLATION = "import pandas as pd\nmodel.fit(pd.read_csv('data/eval.csv'), y)\n"


@pytest.fixture
def ledger(home: Home) -> Iterator[Ledger]:
    with Ledger(home.ledger_path) as led:
        yield led


def test_an_unknown_study_is_a_clear_error(home: Home, ledger: Ledger) -> None:
    with pytest.raises(LedgerUnavailable, match="no study 'nope'"):
        reaudit_study(home, ledger, "nope")


def test_audits_and_stores_every_delivered_run(home: Home, ledger: Ledger) -> None:
    study = ledger.create_study("s1")
    other = ledger.create_study("s2")
    flagged = deliver(home, ledger, study, VIOLATION)
    lost = deliver(home, ledger, study, VIOLATION.replace("eval", "train"), keep_file=False)
    crashed = deliver(home, ledger, study, None)
    elsewhere = deliver(home, ledger, other, VIOLATION)
    audited = reaudit_study(home, ledger, "s1")
    assert sorted(audited) == sorted([flagged, lost])  # the crashed run delivered nothing to audit
    assert {r.rule: r.verdict for r in load_records(ledger, flagged)}["eval_labels_in_fit"] == "flagged"
    assert {r.verdict for r in load_records(ledger, lost)} == {"error"}  # artifact missing: never clear
    assert load_records(ledger, elsewhere) == [] and load_records(ledger, crashed) == []


def test_a_re_audit_under_a_newer_rule_version_keeps_the_old_verdict_and_the_report_says_what_moved(
    home: Home, ledger: Ledger, tmp_path
) -> None:
    from orchestrator.compliance.records import AuditRecord
    from orchestrator.compliance.store import save_records
    from orchestrator.compliance.traces import RULES_BY_NAME
    from orchestrator.report import build_report
    from orchestrator.study.export import runs_frame

    study = ledger.create_study("s1")
    clean = deliver(home, ledger, study, "import pandas as pd\nmodel.fit(pd.read_csv('data/train.csv'), y)\n")
    # what an older sbx stored: frame_statistics v1 flagged the file (a false flag v2 no longer makes)
    save_records(ledger, clean, [AuditRecord(file="train.py", rule="frame_statistics", rule_version="1",
                                             verdict="flagged")])
    reaudit_study(home, ledger, "s1")
    current = RULES_BY_NAME["frame_statistics"].version
    assert current != "1"
    history = [(r.rule_version, r.verdict) for r in ledger.audits.history(clean) if r.rule == "frame_statistics"]
    assert history == [("1", "flagged"), (current, "clear")]  # the old record is kept

    runs = runs_frame(ledger, study).assign(holdout_score=0.7)
    row = runs.iloc[0]
    assert (row["frame_statistics"], row["frame_statistics_version"], row["frame_statistics_previous"]) == (
        "clear", current, "flagged")
    assert row["eval_labels_in_fit_previous"] is None  # audited under one version only

    paths = build_report(runs, tmp_path / "report", seed=1)
    table = paths.tables["rule_versions"]
    import pandas as pd

    versions = pd.read_csv(table).set_index("rule")
    fs = versions.loc["frame_statistics"]
    assert (str(fs["version"]), fs["runs"], fs["re_audited"], fs["flagged_to_clear"], fs["clear_to_flagged"]) == (
        current, 1, 1, 1, 0)
    assert versions.loc["eval_labels_in_fit", "re_audited"] == 0
    summary = paths.markdown.read_text()
    assert f"frame_statistics v{current}: {RULES_BY_NAME['frame_statistics'].changes[current]}" in summary
