"""Divergence analyses of studies in the ledger: definitions filed first, arms paired, transcripts from the
artifact store compared against the stand-in's logged ground truth, and the analysis stored with its check."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from orchestrator.artifacts import ArtifactStore
from orchestrator.diverge.compare import DivergenceClass
from orchestrator.failures import ConfigError, DataError
from orchestrator.ledger import Ledger
from orchestrator.study.divergence import analyse_arms, analyse_imported, file_definitions
from tests.diverge.gateway_runs import RecordedRun, StandInGateway, expected
from tests.study.divergence_helpers import Planted, add_run

TASKS, REPEATS = 8, 2
DEFINITIONS = {
    "agreement": {"kind": "score", "pass_threshold": 0.72},
    "thresholds": {"min_at_risk": 4, "n_resamples": 500},
    "causes": [
        {
            "name": "stop_reason",
            "observe": "response_value_differs",
            "key": "stop_reason",
            "control": {"at_call": 0},
        }
    ],
}


def _score(run: RecordedRun) -> float:
    return 0.70 + 0.01 * sum(v >= 0 for _, v in run.played)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int, str], RecordedRun]:
    """Arms A and B (the same sbx seed; the model's own draws differ per run) and a control arm C."""
    folder = tmp_path_factory.mktemp("gateway")
    runs = {}
    with StandInGateway(folder).running() as gw:
        for t in range(TASKS):
            for r in range(1, REPEATS + 1):
                for arm in "ABC":
                    changed = 2 if (arm == "B" and t % 3 == 0) else None  # the environment differs at step 2
                    key = (f"task{t}", r, arm)
                    runs[key] = gw.run(
                        f"{arm}-{t}-{r}", 1000 * t + 10 * r + "ABC".index(arm), tool_result_at=changed
                    )
    return runs


@pytest.fixture
def ledger(tmp_path: Path):
    with Ledger(tmp_path / "ledger.sqlite") as led:
        yield led


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts")


def _definitions(tmp_path: Path, data: dict = DEFINITIONS, name: str = "defs.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def _study(ledger: Ledger, store: ArtifactStore, recorded) -> str:
    study = ledger.get_study_by_name("s1")
    study_id = study.study_id if study else ledger.create_study("s1")
    for (task, r, arm), run in recorded.items():
        seed = 5000 + r if arm == "C" else r
        add_run(
            ledger,
            store,
            study_id,
            Planted(
                task,
                arm,
                r,
                seed=seed,
                score=_score(run),
                transcript=run.transcript,
                node=f"n{r % 2}",
                slot=int(task[-1]) % 2,
                order=len(recorded),
            ),
        )
    return study_id


def test_every_pair_matches_the_ground_truth_the_stand_in_logged(tmp_path, ledger, store, recorded) -> None:
    study_id = ledger.create_study("s1")
    filed, new, name, started = file_definitions(ledger, "s1", _definitions(tmp_path))
    assert new and filed.version == 1 and name == "s1" and started is None
    _study(ledger, store, recorded)
    result = analyse_arms(ledger, store, "s1", "A", "B", control="C", seed=3)
    assert result.definitions.preregistered and result.definitions.version == 1 and not result.problems
    main = [p for p in result.pairs if p.a.seed == p.b.seed]
    assert len(main) == TASKS * REPEATS and len(result.pairs) == 2 * TASKS * REPEATS
    truth = {}
    for p in result.pairs:
        arm_b = "B" if p in main else "C"
        truth[(p.task, p.repeat, arm_b)] = want = expected(
            recorded[(p.task, p.repeat, "A")], recorded[(p.task, p.repeat, arm_b)]
        )
        assert (p.comparison.first_divergence, p.comparison.divergence_class) == want, (
            p.task,
            p.repeat,
            arm_b,
        )
    analysis = result.analysis
    classes = [kind for (_, _, arm), (_, kind) in truth.items() if arm == "B"]
    assert analysis.divergence_classes.value == {
        "response": classes.count(DivergenceClass.RESPONSE),
        "request": classes.count(DivergenceClass.REQUEST),
        "call_order": 0,
        "call_count": 0,
        "identical": classes.count(None),
    }
    assert classes.count(DivergenceClass.REQUEST) >= 1 and classes.count(DivergenceClass.RESPONSE) >= 5
    assert analysis.check.same_seed == 16 and analysis.check.different_seed == 16
    assert not analysis.outcome_table.exploratory and analysis.hazard.value.rows[0].at_risk == 16
    (cause,) = analysis.causes
    assert cause.name == "stop_reason" and not cause.exploratory and cause.refused is None
    # the analysis is stored with the definitions version it used and the check of every pair
    (stored,) = ledger.divergence.analyses(study_id)
    assert stored.id == result.stored_id and stored.definitions_version == 1 and stored.preregistered
    assert stored.pair_check["counts"] == {
        "main: seeds equal, configs equal": 16,
        "control: seeds different, configs equal": 16,
    }
    assert len(stored.pair_check["pairs"]) == 32 and stored.arms == {
        "a": "s1:A",
        "b": "s1:B",
        "control": "s1:C",
    }
    assert stored.analysis["divergence_classes"]["value"] == analysis.divergence_classes.value
    assert stored.analysis["definitions_used"]["preregistered"] is True
    assert [p["first_divergence"] for p in stored.analysis["pairs"]] == [
        p.comparison.first_divergence for p in result.pairs
    ]


def test_definitions_filed_after_the_runs_started_make_everything_exploratory(
    tmp_path, ledger, store, recorded
) -> None:
    _study(ledger, store, recorded)
    time.sleep(0.01)
    filed, _, _, started = file_definitions(ledger, "s1", _definitions(tmp_path))
    assert started is not None and filed.filed_at > started
    result = analyse_arms(ledger, store, "s1", "A", "B", seed=0)
    assert not result.definitions.preregistered and "filed after the runs started" in result.definitions.note
    assert result.analysis.outcome_table.exploratory and result.analysis.hazard.exploratory
    assert all(c.exploratory for c in result.analysis.causes)
    assert not ledger.divergence.analyses(ledger.get_study_by_name("s1").study_id)[0].preregistered


def test_a_changed_definition_is_a_new_version_and_the_filed_one_can_still_be_used(
    tmp_path, ledger, store, recorded
) -> None:
    ledger.create_study("s1")
    first = _definitions(tmp_path)
    file_definitions(ledger, "s1", first)
    _study(ledger, store, recorded)
    changed = _definitions(
        tmp_path, DEFINITIONS | {"thresholds": {"min_at_risk": 2, "n_resamples": 500}}, "v2.yaml"
    )
    filed, new, _, _ = file_definitions(ledger, "s1", changed)
    assert new and filed.version == 2
    assert not file_definitions(ledger, "s1", changed)[1]  # the same content again is no new version
    latest = analyse_arms(ledger, store, "s1", "A", "B", seed=0, store_result=False)
    assert latest.definitions.version == 2 and not latest.definitions.preregistered
    original = analyse_arms(ledger, store, "s1", "A", "B", definitions_path=first, seed=0, store_result=False)
    assert original.definitions.version == 1 and original.definitions.preregistered
    never = _definitions(tmp_path, DEFINITIONS | {"declared": ["hazard"]}, "never.yaml")
    unfiled = analyse_arms(ledger, store, "s1", "A", "B", definitions_path=never, seed=0, store_result=False)
    assert unfiled.definitions.version is None and "never filed" in unfiled.definitions.note
    assert unfiled.analysis.hazard.exploratory


def test_without_filed_definitions_the_defaults_are_used_and_marked_exploratory(
    ledger, store, recorded
) -> None:
    _study(ledger, store, recorded)
    result = analyse_arms(ledger, store, "s1", "A", "B", seed=0)
    assert result.definitions.version is None and "no definitions were filed" in result.definitions.note
    assert result.analysis.disagreement.exploratory
    # pass/fail agreement on runs that only have scores: every pair lacks an outcome, and the result says why
    assert result.analysis.check.excluded == {"outcome missing": 16}
    assert any("declare agreement" in p for p in result.problems)


def test_filing_refuses_a_cause_without_control_and_can_record_the_study_from_its_file(
    tmp_path, ledger
) -> None:
    spec = tmp_path / "study.yaml"
    spec.write_text(
        "name: paired\ntask: flight-delays\nbudget: smoke\nrepeats: 2\npairings:\n  - agent: hpo\n"
        "  - {agent: hpo, label: hpo-b, seed_as: hpo}\n"
    )
    _, new, name, started = file_definitions(ledger, spec, _definitions(tmp_path))
    assert new and name == "paired" and started is None
    assert ledger.get_study_by_name("paired").spec["pairings"][1]["seed_as"] == "hpo"
    uncontrolled = DEFINITIONS | {
        "causes": [{"name": "fp", "observe": "response_value_differs", "key": "system_fingerprint"}]
    }
    with pytest.raises(ConfigError, match="cause fp has no base-rate control"):
        file_definitions(ledger, "paired", _definitions(tmp_path, uncontrolled, "bad.yaml"))
    with pytest.raises(DataError, match="no study named 'ghost'"):
        file_definitions(ledger, "ghost", _definitions(tmp_path))
    assert [f.version for f in ledger.divergence.filed(ledger.get_study_by_name("paired").study_id)] == [1]


def test_a_study_made_elsewhere_is_analysed_from_a_csv_and_its_transcripts(tmp_path, recorded) -> None:
    folder = next(iter(recorded.values())).transcript.parent
    lines = ["task,repeat,run_a,run_b,score_a,score_b,seed"]
    for t in range(TASKS):
        for r in range(1, REPEATS + 1):
            a, b = recorded[(f"task{t}", r, "A")], recorded[(f"task{t}", r, "B")]
            lines.append(f"task{t},{r},{a.run_id},{b.run_id},{_score(a)},{_score(b)},{r}")
    (tmp_path / "pairs.csv").write_text("\n".join(lines) + "\n")
    result = analyse_imported(
        tmp_path / "pairs.csv", definitions_path=_definitions(tmp_path), transcripts=folder
    )
    for p in result.pairs:
        want = expected(recorded[(p.task, p.repeat, "A")], recorded[(p.task, p.repeat, "B")])
        assert (p.comparison.first_divergence, p.comparison.divergence_class) == want
    assert not result.definitions.preregistered and result.analysis.outcome_table.exploratory
    assert result.analysis.check.same_seed == 16 and len(result.transcript_of) == 32
