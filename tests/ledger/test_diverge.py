"""Divergence definitions and analyses in the ledger: versions kept, filing time, the analysis and its check."""

from __future__ import annotations

import sqlite3
import time

import pytest

from orchestrator.failures import InvalidLedgerWrite
from orchestrator.ledger import Ledger, RunState
from orchestrator.ledger.diverge import definitions_sha256
from tests.ledger.ledger_helpers import drive, plan

V1 = {"version": 1, "thresholds": {"min_at_risk": 20}}
V2 = {"version": 1, "thresholds": {"min_at_risk": 10}}


def test_filing_keeps_every_version_and_the_same_content_is_not_a_new_one(ledger: Ledger) -> None:
    study = ledger.create_study("s1")
    before = time.time()
    first, new = ledger.divergence.file_definitions(study, V1)
    assert new and first.version == 1 and first.definitions == V1 and before <= first.filed_at <= time.time()
    # key order does not matter
    again, new = ledger.divergence.file_definitions(study, dict(reversed(list(V1.items()))))
    assert not new and again == first
    second, new = ledger.divergence.file_definitions(study, V2)
    assert new and second.version == 2 and second.sha256 == definitions_sha256(V2) != first.sha256
    # going back is a change too: a new version, v1 kept
    back, new = ledger.divergence.file_definitions(study, V1)
    assert new and back.version == 3 and back.sha256 == first.sha256
    assert [(f.version, f.definitions) for f in ledger.divergence.filed(study)] == [
        (1, V1),
        (2, V2),
        (3, V1),
    ]


def test_definitions_need_a_study(ledger: Ledger) -> None:
    with pytest.raises(InvalidLedgerWrite, match="no study"):
        ledger.divergence.file_definitions("s-ghost", V1)


def test_first_run_started_is_the_earliest_start_of_the_study(ledger: Ledger) -> None:
    study = ledger.create_study("s1")
    assert ledger.divergence.first_run_started(study) is None
    a = plan(ledger, study_id=study, pairing="A", repeat=1)
    plan(ledger, study_id=study, pairing="B", repeat=1)
    assert ledger.divergence.first_run_started(study) is None  # planned runs have not started
    drive(ledger, a, RunState.RUNNING)
    started = ledger.get_run(a).started_at
    assert started is not None and ledger.divergence.first_run_started(study) == started


def test_an_analysis_is_stored_with_its_definitions_version_and_pair_check(ledger: Ledger) -> None:
    study = ledger.create_study("s1")
    filed, _ = ledger.divergence.file_definitions(study, V1)
    check = {"pairs": [{"task": "t", "repeat": 1, "seed": "equal", "config": "equal"}]}
    aid = ledger.divergence.save_analysis(
        study,
        definitions_version=filed.version,
        definitions_sha256=filed.sha256,
        preregistered=True,
        arms={"a": "A", "b": "B"},
        pair_check=check,
        analysis={"outcome_table": {"both": 1}},
    )
    (stored,) = ledger.divergence.analyses(study)
    assert stored.id == aid and stored.definitions_version == 1 and stored.preregistered
    assert stored.pair_check == check and stored.arms == {"a": "A", "b": "B"}
    assert stored.analysis == {"outcome_table": {"both": 1}}


def test_an_analysis_cannot_name_a_version_never_filed_or_claim_preregistration_without_one(
    ledger: Ledger,
) -> None:
    study = ledger.create_study("s1")
    sha = definitions_sha256(V1)
    with pytest.raises(InvalidLedgerWrite, match="FOREIGN KEY"):
        ledger.divergence.save_analysis(
            study,
            definitions_version=7,
            definitions_sha256=sha,
            preregistered=False,
            arms={},
            pair_check={},
            analysis={},
        )
    with pytest.raises(InvalidLedgerWrite, match="not preregistered"):
        ledger.divergence.save_analysis(
            study,
            definitions_version=None,
            definitions_sha256=sha,
            preregistered=True,
            arms={},
            pair_check={},
            analysis={},
        )
    ledger.divergence.save_analysis(
        study,
        definitions_version=None,
        definitions_sha256=sha,
        preregistered=False,
        arms={},
        pair_check={},
        analysis={},
    )
    # the table itself refuses it too, whoever writes
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        ledger._connection().execute(
            "INSERT INTO diverge_analyses (study_id, definitions_version, definitions_sha256, preregistered,"
            " arms_json, pair_check_json, analysis_json, created_at) VALUES (?, NULL, ?, 1, '{}', '{}', '{}', 0)",
            (study, sha),
        )
