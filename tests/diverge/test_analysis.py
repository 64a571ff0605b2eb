import math
import random
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats as sps

from orchestrator.diverge.analysis import PairedRuns, RunSide, analyse, pair_evidence
from orchestrator.diverge.compare import DivergenceClass
from orchestrator.specs.diverge import (
    BaseRateControl,
    Cause,
    DivergeDefinitions,
    NormalisationSpec,
    Thresholds,
)
from tests.diverge.standin import AGENTS, Variation, expected, pair

FINGERPRINT = Cause(
    name="fingerprint",
    observe="response_value_differs",
    key="system_fingerprint",
    control=BaseRateControl(at_call=0),
)


@dataclass(frozen=True)
class Truth:
    agent: str
    variation: Variation
    first_divergence: int | None
    divergence_class: DivergenceClass | None
    runs: tuple = ()


def _variation(rng: random.Random, sensitive: bool, agent: str) -> Variation:
    if rng.random() < (0.05 if sensitive else 0.3):
        return Variation()
    chat = agent in ("opencode", "mini-swe-agent")  # system_fingerprint is a Chat Completions field
    kind = rng.choice(["response", "tool_result", "fingerprint"] if chat else ["response", "tool_result"])
    if sensitive:  # these tasks part at the first or second call
        return Variation(kind, 0 if kind == "tool_result" else rng.randint(0, 1))
    return Variation(kind, 2 if kind == "tool_result" else rng.randint(2, 3))


def build_study(
    definitions: DivergeDefinitions,
    *,
    tasks: int = 24,
    repeats: int = 4,
    control_tasks: int = 0,
    seed: int = 0,
) -> tuple[list[PairedRuns], list[Truth]]:
    """A stand-in study: tasks run by one agent each, pairs varied at known steps, outcomes that flip more
    often when the runs part early. Half the tasks are 'sensitive' (they diverge early)."""
    rng = random.Random(seed)
    pairs, truth = [], []
    for t in range(tasks):
        agent = AGENTS[t % len(AGENTS)]
        sensitive = t % 2 == 0
        p_pass = rng.uniform(0.2, 0.8)
        for r in range(repeats + (2 if t < control_tasks else 0)):
            different_seed = r >= repeats
            variation = (
                _variation(rng, sensitive and not different_seed, agent)
                if not different_seed
                else Variation("response", 0)
            )
            a, b = pair(agent, seed * 10_000 + t * 100 + r, variation)
            comparison, causes = pair_evidence(
                a, b, definitions, extra_causes=[Cause(name="outcome", observe="outcome_differs")]
            )
            fd, kind = expected(agent, variation)
            truth.append(Truth(agent, variation, fd, kind, (a, b)))
            outcome_a = rng.random() < p_pass
            flip = fd is not None and rng.random() < (0.6 if fd <= 1 else 0.15)
            outcome_b = (rng.random() < p_pass) if flip else outcome_a
            pairs.append(
                PairedRuns(
                    task=f"task{t:02d}",
                    repeat=r,
                    a=RunSide(
                        f"a{t}-{r}",
                        outcome=outcome_a,
                        seed=r,
                        config_hash="cfg1",
                        node=f"n{r % 2}",
                        slot="s0",
                        started_at=1000.0 + 10 * (t * 6 + r),
                        order=t * 6 + r,
                    ),
                    b=RunSide(
                        f"b{t}-{r}",
                        outcome=outcome_b,
                        seed=r + 100 if different_seed else r,
                        config_hash="cfg1",
                        node=f"n{(r + 1) % 2}",
                        slot="s1",
                        started_at=5000.0 + 10 * (t * 6 + r),
                        order=500 + t * 6 + r,
                    ),
                    comparison=comparison,
                    causes=causes,
                )
            )
    return pairs, truth


@pytest.fixture(scope="module")
def study() -> tuple[list[PairedRuns], list[Truth]]:
    definitions = DivergeDefinitions(
        causes=(FINGERPRINT,), thresholds=Thresholds(min_at_risk=10, n_resamples=2000)
    )
    return build_study(definitions, control_tasks=8)


def test_every_pair_matches_the_ground_truth_the_stand_in_logged(study) -> None:
    pairs, truth = study
    assert len(pairs) == 24 * 4 + 8 * 2
    for p, t in zip(pairs, truth, strict=True):
        assert (p.comparison.first_divergence, p.comparison.divergence_class) == (
            t.first_divergence,
            t.divergence_class,
        )


def _same_seed(pairs, truth):
    return [(p, t) for p, t in zip(pairs, truth, strict=True) if p.a.seed == p.b.seed]


def test_hazard_classes_and_counts_follow_the_ground_truth(study) -> None:
    pairs, truth = study
    definitions = DivergeDefinitions(
        causes=(FINGERPRINT,), thresholds=Thresholds(min_at_risk=10, n_resamples=2000)
    )
    out = analyse(pairs, definitions, seed=1)
    main = _same_seed(pairs, truth)
    assert (
        out.check.same_seed == len(main) == 96 and out.check.different_seed == 16 and not out.check.excluded
    )
    classes = Counter(t.divergence_class.value if t.divergence_class else "identical" for _, t in main)
    assert out.divergence_classes.value == {k.value: classes.get(k.value, 0) for k in DivergenceClass} | {
        "identical": classes["identical"]
    }
    # the hazard's risk sets, from the ground truth by hand
    firsts = [t.first_divergence for _, t in main]
    horizons = [p.comparison.compared for p, _ in main]
    for row in out.hazard.value.rows:
        at_risk = sum(
            1
            for f, h in zip(firsts, horizons, strict=True)
            if (f is None or f >= row.index) and row.index < h
        )
        assert (row.at_risk, row.diverged) == (at_risk, firsts.count(row.index))
    assert all(r.at_risk >= 10 for r in out.hazard.value.rows)


def test_byte_for_byte_comparison_inflates_the_first_call_hazard_to_one(study) -> None:
    # the reference study's correction: compared with random ids left in, every pair "diverges" at once
    pairs, truth = study
    raw = DivergeDefinitions(
        normalisation=NormalisationSpec(ids=False, opaque=False, ignore_usage=False, ignore_pings=False),
        thresholds=Thresholds(min_at_risk=10, n_resamples=500),
    )
    raw_pairs = []
    for p, t in zip(pairs[:40], truth[:40], strict=True):
        comparison, causes = pair_evidence(*t.runs, raw)
        raw_pairs.append(PairedRuns(p.task, p.repeat, p.a, p.b, comparison, causes))
    inflated = analyse(raw_pairs, raw, seed=1).hazard.value.rows[0]
    normal = analyse(
        pairs[:40], DivergeDefinitions(thresholds=Thresholds(min_at_risk=10, n_resamples=500)), seed=1
    )
    main = _same_seed(pairs[:40], truth[:40])
    true_rate = sum(t.first_divergence == 0 for _, t in main) / len(main)
    assert inflated.at_risk == normal.hazard.value.rows[0].at_risk == len(main)
    assert inflated.hazard == 1.0
    assert normal.hazard.value.rows[0].hazard == pytest.approx(true_rate) and true_rate < 0.5


def test_the_declared_cause_is_tested_against_its_base_rate(study) -> None:
    pairs, truth = study
    definitions = DivergeDefinitions(
        causes=(FINGERPRINT,), thresholds=Thresholds(min_at_risk=10, n_resamples=2000)
    )
    out = analyse(pairs, definitions, seed=2, extra_causes=[Cause(name="outcome", observe="outcome_differs")])
    main = _same_seed(pairs, truth)
    # ground truth: the fingerprint changes exactly where a 'fingerprint' variation makes the runs part
    diverged_pairs = [
        t
        for _, t in main
        if t.first_divergence is not None and t.divergence_class != DivergenceClass.CALL_COUNT
    ]
    at_div = sum(t.variation.kind == "fingerprint" for t in diverged_pairs)
    # at call 0 (OpenCode's is its title call, made before the provider's backend changed)
    at_first = sum(
        t.variation.kind == "fingerprint" and t.variation.at == 0 and t.agent != "opencode" for _, t in main
    )
    fingerprint, outcome = out.causes
    assert fingerprint.name == "fingerprint" and not fingerprint.exploratory and fingerprint.refused is None
    v = fingerprint.value
    assert (v.at_divergence, v.divergences, v.at_first_call, v.first_calls) == (
        at_div,
        len(diverged_pairs),
        at_first,
        len(main),
    )
    assert v.p_value == pytest.approx(
        sps.fisher_exact([[at_div, len(diverged_pairs) - at_div], [at_first, len(main) - at_first]]).pvalue
    )
    assert v.rate_at_divergence > v.base_rate and v.p_value < 0.05
    # a cause nobody declared is reported only as exploratory, and without a control it is refused
    assert outcome.name == "outcome" and outcome.exploratory and outcome.refused and outcome.value is None


def test_a_declared_cause_without_control_is_refused(study) -> None:
    pairs, _ = study
    uncontrolled = Cause(name="fingerprint", observe="response_value_differs", key="system_fingerprint")
    out = analyse(
        pairs, DivergeDefinitions(causes=(uncontrolled,), thresholds=Thresholds(n_resamples=200)), seed=3
    )
    (finding,) = out.causes
    assert finding.value is None and "no base-rate control" in finding.refused and not finding.exploratory


def test_what_was_not_declared_is_exploratory(study) -> None:
    pairs, _ = study
    d = DivergeDefinitions(
        declared=frozenset({"outcome_table", "hazard"}), thresholds=Thresholds(n_resamples=200)
    )
    out = analyse(pairs, d, seed=4)
    assert not out.outcome_table.exploratory and not out.hazard.exploratory
    assert out.disagreement.exploratory and out.between_task_share.exploratory and out.placement.exploratory


def test_divergence_statistics_on_the_study(study) -> None:
    pairs, truth = study
    d = DivergeDefinitions(thresholds=Thresholds(n_resamples=4000, between_task_share=0.05))
    out = analyse(pairs, d, seed=5)
    main = _same_seed(pairs, truth)
    diverged = [(p, t) for p, t in main if t.first_divergence is not None]
    # between-task share: the sensitive tasks diverge early, so tasks explain the index beyond the null
    share = out.between_task_share.value
    assert share.n == len(diverged) and share.p_value < 0.05 and share.share > share.null_mean_share
    assert any("between-task share" in w for w in out.warnings)  # 0.05 sits below the null's mean
    # Spearman between the divergence index and disagreement equals scipy on the same pairs
    x = [t.first_divergence for _, t in diverged]
    y = [float(p.a.outcome != p.b.outcome) for p, _ in diverged]
    assert out.divergence_vs_disagreement.value.rho == pytest.approx(sps.spearmanr(x, y).statistic)
    assert out.divergence_vs_disagreement.value.rho < 0  # early parting, more flips (by construction)
    # the different-seed control disagrees at least as often, and the numbers are the pairs'
    control = out.seed_control.value
    assert control.same_pairs == 96 and control.different_pairs == 16
    assert control.same_rate == pytest.approx(np.mean([p.a.outcome != p.b.outcome for p, _ in main]))
    # per task: pairs, disagreements and identical pairs add up
    assert (
        sum(r.pairs for r in out.tasks) == 96
        and sum(r.identical for r in out.tasks) == out.divergence_classes.value["identical"]
    )
    # placement: run A always on the other node than run B; the checks ran for both arms
    assert [c.pairing for c in out.placement.value] == ["A", "B"]


def test_the_published_table_through_the_analysis() -> None:
    # 67/23/21/89 over 50 tasks x 4 replicates, no transcripts: outcome statistics only
    cells = [(1, 1)] * 67 + [(1, 0)] * 23 + [(0, 1)] * 21 + [(0, 0)] * 89
    order = np.random.default_rng(0).permutation(200)
    pairs = [
        PairedRuns(
            f"task{i // 4:02d}",
            i % 4,
            RunSide(f"a{i}", outcome=bool(cells[j][0]), seed=1),
            RunSide(f"b{i}", outcome=bool(cells[j][1]), seed=1),
        )
        for i, j in enumerate(order)
    ]
    out = analyse(pairs, DivergeDefinitions(thresholds=Thresholds(n_resamples=2000)), seed=0)
    table = out.outcome_table.value
    assert round(table.mcnemar_p, 3) == 0.880 and (
        table.both,
        table.first_only,
        table.second_only,
        table.neither,
    ) == (67, 23, 21, 89)
    assert out.disagreement.value.estimate == pytest.approx(
        0.22
    ) and out.net_swing.value.estimate == pytest.approx(0.01)
    assert out.net_swing.value.tasks == 50
    assert (
        out.hazard.value is None
        and "no eligible same-seed pair has compared transcripts" in out.hazard.skipped
    )
    assert out.seed_control.skipped == "no different-seed pairs were run"


def test_pairs_left_out_are_counted_by_reason() -> None:
    ok = RunSide("x", outcome=True, seed=1, config_hash="c")
    pairs = [
        PairedRuns("t1", 0, ok, RunSide("y", outcome=False, seed=1, config_hash="c")),
        PairedRuns("t1", 1, ok, RunSide("y", outcome=True, seed=1, config_hash="c", failure_class="infra")),
        PairedRuns("t2", 0, ok, RunSide("y", outcome=True, seed=1, config_hash="d")),
        PairedRuns("t2", 1, ok, RunSide("y", outcome=True, seed=None, config_hash="c")),
        PairedRuns("t3", 0, ok, RunSide("y", outcome=None, seed=1, config_hash="c")),
        PairedRuns("t3", 1, ok, RunSide("y", outcome=True, seed=1)),
    ]
    out = analyse(pairs, DivergeDefinitions(thresholds=Thresholds(n_resamples=200)), seed=0)
    assert out.check.excluded == {
        "failed (infra)": 1,
        "config hashes differ": 1,
        "seed unknown": 1,
        "outcome missing": 1,
    }
    assert out.check.same_seed == 2 and out.check.config_unchecked == 1


def test_comparisons_must_use_the_declared_normalisation(study) -> None:
    pairs, _ = study
    with pytest.raises(ValueError, match="not the declared"):
        analyse(pairs[:3], DivergeDefinitions(normalisation=NormalisationSpec(opaque=True)), seed=0)


def test_scores_agree_within_a_tolerance() -> None:
    def side(score: float) -> RunSide:
        return RunSide("r", score=score, seed=1)

    pairs = [
        PairedRuns(f"t{i}", 0, side(0.70 + 0.01 * i), side(0.70 + 0.01 * i + d))
        for i, d in enumerate([0.0, 0.004, 0.02, -0.03, 0.001, 0.0])
    ]
    d = DivergeDefinitions.model_validate(
        {
            "agreement": {"kind": "score", "pass_threshold": 0.72, "tolerance": 0.005},
            "thresholds": {"n_resamples": 200},
        }
    )
    out = analyse(pairs, d, seed=0)
    assert out.disagreement.value.estimate == pytest.approx(2 / 6)
    table = out.outcome_table.value
    assert (table.both, table.first_only, table.second_only, table.neither) == (3, 1, 0, 2)
    assert not math.isnan(out.net_swing.value.estimate)


def test_definitions_not_filed_before_the_runs_make_everything_exploratory(study) -> None:
    pairs, _ = study
    uncontrolled = Cause(name="nocontrol", observe="response_value_differs", key="system_fingerprint")
    d = DivergeDefinitions(causes=(FINGERPRINT, uncontrolled), thresholds=Thresholds(n_resamples=200))
    filed = analyse(pairs, d, seed=4)
    late = analyse(pairs, d, seed=4, preregistered=False)
    assert filed.preregistered and not late.preregistered
    findings = ("outcome_table", "net_swing", "disagreement", "seed_control", "divergence_classes", "hazard",
                "between_task_share", "divergence_vs_disagreement", "placement")
    assert not any(getattr(filed, f).exploratory for f in findings)
    assert all(getattr(late, f).exploratory for f in findings)
    # the same numbers, only marked
    assert late.outcome_table.value == filed.outcome_table.value and late.hazard.value == filed.hazard.value
    fingerprint, nocontrol = late.causes
    assert fingerprint.exploratory and fingerprint.value == filed.causes[0].value
    assert nocontrol.refused and nocontrol.value is None  # refused whether filed or not
    assert any("not filed before the first run" in w for w in late.warnings)
