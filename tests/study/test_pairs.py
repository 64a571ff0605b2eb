"""Two arms of studies in the ledger paired by (task, repeat), with each pair's seeds and configs checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.artifacts import ArtifactStore
from orchestrator.diverge.analysis import analyse
from orchestrator.failures import ConfigError, DataError
from orchestrator.ledger import Ledger, RunState
from orchestrator.specs.diverge import DivergeDefinitions, Thresholds
from orchestrator.study.pairs import Arm, pair_arms
from tests.study.divergence_helpers import CONFIG, Planted, add_run


@pytest.fixture
def ledger(tmp_path: Path):
    with Ledger(tmp_path / "ledger.sqlite") as led:
        yield led


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts")


def test_arms_are_pairing_or_study_and_pairing() -> None:
    assert Arm.parse("A", "s1") == Arm("s1", "A") and Arm.parse("s2:B", "s1") == Arm("s2", "B")
    assert Arm.parse("s2:codex/gpt-5", "s1") == Arm("s2", "codex/gpt-5")
    for bad in ("", ":A", "s2:"):
        with pytest.raises(ConfigError, match="PAIRING or STUDY:PAIRING"):
            Arm.parse(bad, "s1")


def test_pairs_match_task_and_repeat_and_carry_what_the_runs_recorded(
    ledger: Ledger, store: ArtifactStore
) -> None:
    study = ledger.create_study("s1")
    for r in (1, 2):
        for arm, node in (("A", "n1"), ("B", "n2")):
            add_run(
                ledger,
                store,
                study,
                Planted("t1", arm, r, seed=10 + r, score=0.6 + r / 10, node=node, slot=r, order=r * 2),
            )
    out = pair_arms(ledger, Arm("s1", "A"), Arm("s1", "B"))
    assert [(p.task, p.repeat) for p in out.pairs] == [("t1", 1), ("t1", 2)]
    first = out.pairs[0]
    assert first.a.seed == first.b.seed == 11 and first.a.config_hash == first.b.config_hash
    assert (first.a.node, first.b.node, first.a.slot, first.a.order) == ("n1", "n2", "1", 2)
    assert first.a.score == pytest.approx(0.7) and first.a.outcome is None and first.a.started_at is not None
    assert [(c.seed, c.config, c.left_out) for c in out.checks] == [("equal", "equal", None)] * 2
    assert out.check_json()["counts"] == {"main: seeds equal, configs equal": 2}


def test_the_check_of_seeds_and_configs_is_kept_and_contradicting_pairs_are_left_out(
    ledger: Ledger, store: ArtifactStore
) -> None:
    study = ledger.create_study("s1")
    other = ledger.create_study("s2")
    plants = [
        ("t1", 1, {}, {}),  # fine
        ("t1", 2, {}, {"config": CONFIG | {"model": "m2"}}),  # configs differ: the analysis excludes it
        ("t2", 1, {}, {"seed": 99}),  # seeds differ in a same-seed pair: left out
        ("t2", 2, {}, {"seed": None}),  # seed not recorded
        ("t3", 1, {}, {"status": RunState.RUNNING}),  # not finished
    ]
    for task, r, a, b in plants:
        add_run(ledger, store, study, Planted(task, "A", r, **a))
        add_run(ledger, store, other, Planted(task, "A", r, **b))
        add_run(ledger, store, study, Planted(task, "C", r, seed=1000 + r))  # a different-seed control arm
    out = pair_arms(ledger, Arm("s1", "A"), Arm("s2", "A"), Arm("s1", "C"))
    main = {(c.task, c.repeat): c for c in out.checks if c.role == "main"}
    assert main[("t1", 2)].config == "different" and main[("t1", 2)].config_differs == ("model",)
    assert main[("t2", 1)].seed == "different" and "seed_as" in main[("t2", 1)].left_out
    assert main[("t2", 2)].seed == "unknown" and main[("t2", 2)].left_out is None
    assert main[("t3", 1)].left_out == "not finished"
    control = [c for c in out.checks if c.role == "control"]
    assert len(control) == 5 and all(c.seed == "different" and c.config == "equal" for c in control)
    assert not any(c.left_out for c in control)  # arm A's runs all finished (the unfinished one is in s2)
    analysis = analyse(
        out.pairs,
        DivergeDefinitions(
            agreement={"kind": "score", "pass_threshold": 0.5}, thresholds=Thresholds(n_resamples=200)
        ),
        seed=0,
    )
    assert analysis.check.excluded == {"config hashes differ": 1, "seed unknown": 1}
    assert analysis.check.same_seed == 1 and analysis.check.different_seed == 5


def test_arms_must_have_the_same_tasks_and_repeats_and_the_latest_attempt_stands(
    ledger: Ledger, store: ArtifactStore
) -> None:
    study = ledger.create_study("s1")
    add_run(ledger, store, study, Planted("t1", "A", 1))
    add_run(ledger, store, study, Planted("t1", "B", 1))
    add_run(ledger, store, study, Planted("t1", "B", 2))
    with pytest.raises(DataError, match=r"only in s1:A: none; only in s1:B: t1#2"):
        pair_arms(ledger, Arm("s1", "A"), Arm("s1", "B"))
    with pytest.raises(DataError, match="no runs of pairing 'Z'"):
        pair_arms(ledger, Arm("s1", "A"), Arm("s1", "Z"))
    with pytest.raises(DataError, match="no study named 'nope'"):
        pair_arms(ledger, Arm("s1", "A"), Arm("nope", "A"))
    with pytest.raises(ConfigError, match="paired with itself"):
        pair_arms(ledger, Arm("s1", "A"), Arm("s1", "A"))
    failed = add_run(ledger, store, study, Planted("t1", "A", 2, failure_class="infra"))
    retry = ledger.retry(failed)
    ledger.update_measurements(retry, meta={"seed": 1})
    for to in (RunState.STARTING, RunState.RUNNING):
        ledger.advance(retry, to)
    ledger.advance(retry, RunState.FAILED, failure_class="agent", reason="crashed")
    out = pair_arms(ledger, Arm("s1", "A"), Arm("s1", "B"))
    second = next(p for p in out.pairs if p.repeat == 2)
    assert second.a.run_id == retry and second.a.failure_class == "agent"
