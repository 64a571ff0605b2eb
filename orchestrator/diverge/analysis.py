"""The divergence analysis of paired runs: outcomes, call-by-call divergence and declared causes.

Input: one `PairedRuns` per (task, repeat) with both runs' outcomes and, where the transcripts were
compared, the `PairComparison` and the declared causes as observed (`pair_evidence`). Output: a typed
`DivergenceAnalysis` a report renders. Only what the definitions declared is confirmatory; the rest is
marked exploratory, and a cause without a base-rate control is refused rather than reported.
"""

from __future__ import annotations

import math
import statistics
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from orchestrator.diverge.causes import CauseSeen, observe_causes
from orchestrator.diverge.compare import DivergenceClass, PairComparison, compare_runs
from orchestrator.diverge.normalise import Normalisation
from orchestrator.specs.diverge import Analysis, Cause, DivergeDefinitions, NormalisationSpec
from orchestrator.specs.transcript import CallRecord

T = TypeVar("T")


@dataclass(frozen=True)
class RunSide:
    """One run of a pair, as far as the analysis needs it."""

    run_id: str
    outcome: bool | None = None
    score: float | None = None
    seed: int | str | None = None
    config_hash: str | None = None
    failure_class: str | None = None
    node: str | None = None
    slot: str | None = None
    started_at: float | None = None
    order: int | None = None


@dataclass(frozen=True)
class PairedRuns:
    """Runs A and B of one (task, repeat), and what comparing their transcripts found."""

    task: str
    repeat: int
    a: RunSide
    b: RunSide
    comparison: PairComparison | None = None
    causes: Mapping[str, CauseSeen] = field(default_factory=dict)
    #: either transcript was cut short (the comparison covers the calls before the cut)
    truncated: bool = False


def normalisation_of(spec: NormalisationSpec) -> Normalisation:
    return Normalisation(
        ids=spec.ids, opaque=spec.opaque, ignore_usage=spec.ignore_usage, ignore_pings=spec.ignore_pings
    )


def pair_evidence(
    a: Sequence[CallRecord],
    b: Sequence[CallRecord],
    definitions: DivergeDefinitions,
    extra_causes: Sequence[Cause] = (),
) -> tuple[PairComparison, dict[str, CauseSeen]]:
    """Compare two runs' transcripts as the definitions say, and observe every cause (declared or extra)."""
    comparison = compare_runs(a, b, normalisation_of(definitions.normalisation))
    return comparison, observe_causes(a, b, comparison, (*definitions.causes, *extra_causes))


@dataclass(frozen=True)
class Finding(Generic[T]):
    """One statistic of the report: its value, or why it was not computed; exploratory unless declared."""

    name: str
    exploratory: bool
    value: T | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class CauseFinding:
    """A cause's rate at the first divergence against its base rate, or why it is not reported."""

    name: str
    exploratory: bool
    value: Any = None  # orchestrator.stats.CauseAgainstBaseRate
    #: set when the analysis refuses to report the cause (no base-rate control)
    refused: str | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class PairCheck:
    """Which pairs entered, which were left out and why, and how their seeds and configs compared."""

    pairs: int
    same_seed: int
    different_seed: int
    excluded: dict[str, int]
    #: pairs whose config hashes were not recorded on both sides (not checkable)
    config_unchecked: int
    #: pairs whose transcripts were not compared (missing or truncated)
    without_comparison: int


@dataclass(frozen=True)
class TaskRow:
    """One task's pairs: how many disagree, how many stayed identical, where the others diverged."""

    task: str
    pairs: int
    disagreements: int
    compared: int
    identical: int
    median_first_divergence: float | None
    classes: dict[str, int]


@dataclass(frozen=True)
class DivergenceAnalysis:
    """Everything the report section shows, in the order it shows it."""

    definitions: DivergeDefinitions
    check: PairCheck
    outcome_table: Finding
    net_swing: Finding
    disagreement: Finding
    seed_control: Finding
    divergence_classes: Finding
    speakers: dict[str, int]
    hazard: Finding
    between_task_share: Finding
    divergence_vs_disagreement: Finding
    causes: tuple[CauseFinding, ...]
    placement: Finding
    tasks: tuple[TaskRow, ...]
    warnings: tuple[str, ...]
    #: the definitions were filed before the first run started (else every finding is exploratory)
    preregistered: bool = True


def _child_seed(seed: int, name: str) -> Any:
    import numpy as np

    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _exclusion(pair: PairedRuns, definitions: DivergeDefinitions) -> str | None:
    e = definitions.eligibility
    for side in (pair.a, pair.b):
        if side.failure_class is not None and side.failure_class in e.exclude_failure_classes:
            return f"failed ({side.failure_class})"
    if pair.a.config_hash and pair.b.config_hash and pair.a.config_hash != pair.b.config_hash:
        return "config hashes differ"
    if e.require_seeds and (pair.a.seed is None or pair.b.seed is None):
        return "seed unknown"
    if e.require_outcomes and (_passed(pair.a, definitions) is None or _passed(pair.b, definitions) is None):
        return "outcome missing"
    if e.require_transcripts and (pair.comparison is None or (pair.truncated and not e.allow_truncated)):
        return "transcript missing or truncated"
    return None


def _passed(side: RunSide, definitions: DivergeDefinitions) -> bool | None:
    agreement = definitions.agreement
    if agreement.kind == "pass_fail":
        return side.outcome
    if side.score is None or math.isnan(side.score):
        return None
    return side.score >= (agreement.pass_threshold or 0.0)


def _disagree(pair: PairedRuns, definitions: DivergeDefinitions) -> float:
    agreement = definitions.agreement
    if agreement.kind == "score":
        if pair.a.score is None or pair.b.score is None:
            return math.nan
        return float(abs(pair.a.score - pair.b.score) > agreement.tolerance)
    a, b = pair.a.outcome, pair.b.outcome
    return math.nan if a is None or b is None else float(a != b)


def _finding(name: Analysis, declared: frozenset[str], compute: Callable[[], Any]) -> Finding:
    try:
        return Finding(name, exploratory=name not in declared, value=compute())
    except ValueError as exc:
        return Finding(name, exploratory=name not in declared, skipped=str(exc))


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def analyse(
    pairs: Sequence[PairedRuns],
    definitions: DivergeDefinitions,
    *,
    seed: int,
    extra_causes: Sequence[Cause] = (),
    preregistered: bool = True,
) -> DivergenceAnalysis:
    """What do these paired runs show: how often outcomes flip, where and how runs first diverge, and why?

    Same-seed pairs make the main analysis; pairs whose seeds differ are the different-seed control.
    Every statistic is from orchestrator.stats; random ones draw from a generator derived from `seed`
    and the statistic's name, so one seed gives one report. With `preregistered=False` (the definitions
    were not filed before the runs started, or not at all) every finding and cause is exploratory; a
    declared cause without a control is refused either way.
    """
    from orchestrator import stats

    declared: frozenset[str] = frozenset(definitions.declared) if preregistered else frozenset()
    t = definitions.thresholds
    expected = normalisation_of(definitions.normalisation)
    for pair in pairs:
        if pair.comparison is not None and pair.comparison.normalisation != expected:
            raise ValueError(
                f"pair ({pair.task}, {pair.repeat}) was compared with {pair.comparison.normalisation}, "
                f"not the declared {expected}; compare again with the declared normalisation"
            )

    # --- which pairs count -----------------------------------------------------------------------------
    excluded: Counter[str] = Counter()
    main: list[PairedRuns] = []
    control: list[PairedRuns] = []
    for pair in pairs:
        reason = _exclusion(pair, definitions)
        if reason is not None:
            excluded[reason] += 1
        elif pair.a.seed is not None and pair.b.seed is not None and pair.a.seed != pair.b.seed:
            control.append(pair)
        else:
            main.append(pair)

    def usable(pair: PairedRuns) -> PairComparison | None:
        if pair.comparison is None or (pair.truncated and not definitions.eligibility.allow_truncated):
            return None
        return pair.comparison

    compared = [(p, c) for p in main if (c := usable(p)) is not None]
    check = PairCheck(
        pairs=len(main) + len(control),
        same_seed=len(main),
        different_seed=len(control),
        excluded=dict(excluded),
        config_unchecked=sum(1 for p in (*main, *control) if not (p.a.config_hash and p.b.config_hash)),
        without_comparison=len(main) - len(compared),
    )

    # --- outcomes ------------------------------------------------------------------------------------------
    tasks = [p.task for p in main]
    first = [_nan(_passed(p.a, definitions)) for p in main]
    second = [_nan(_passed(p.b, definitions)) for p in main]
    disagree = [_disagree(p, definitions) for p in main]
    n = t.n_resamples

    def table() -> Any:
        out = stats.outcome_table(first, second)
        if out.pairs == 0:
            raise ValueError("no eligible pair has both outcomes")
        return out

    outcome_table = _finding("outcome_table", declared, table)
    net_swing = _finding(
        "net_swing",
        declared,
        lambda: stats.net_swing(
            tasks, first, second, n_resamples=n, seed=_child_seed(seed, "net_swing"), confidence=t.confidence
        ),
    )
    disagreement = _finding(
        "disagreement",
        declared,
        lambda: stats.clustered_mean(
            tasks, disagree, n_resamples=n, seed=_child_seed(seed, "disagreement"), confidence=t.confidence
        ),
    )

    def seed_check() -> Any:
        if not control:
            raise ValueError("no different-seed pairs were run")
        both = main + control
        return stats.seed_control(
            [p.task for p in both],
            [_disagree(p, definitions) for p in both],
            [False] * len(main) + [True] * len(control),
            n_resamples=n,
            seed=_child_seed(seed, "seed_control"),
            confidence=t.confidence,
        )

    seed_control = _finding("seed_control", declared, seed_check)

    # --- call by call ------------------------------------------------------------------------------------
    def no_transcripts() -> None:
        if not compared:
            raise ValueError("no eligible same-seed pair has compared transcripts")

    def classes() -> dict[str, int]:
        no_transcripts()
        counts = Counter(c.divergence_class.value for _, c in compared if c.divergence_class is not None)
        return {k.value: counts.get(k.value, 0) for k in DivergenceClass} | {
            "identical": sum(c.identical for _, c in compared)
        }

    divergence_classes = _finding("divergence_classes", declared, classes)
    speakers = Counter(c.speaker_a or "-" for _, c in compared if not c.identical)

    def hazard() -> Any:
        no_transcripts()
        return stats.divergence_hazard(
            [_nan(c.first_divergence) for _, c in compared],
            [c.compared for _, c in compared],
            min_at_risk=t.min_at_risk,
            confidence=t.confidence,
        )

    hazard_finding = _finding("hazard", declared, hazard)
    # (pair, first divergence) of the pairs that are not identical, i.e. whose first divergence is a call index
    diverged = [(p, c.first_divergence) for p, c in compared if c.first_divergence is not None]

    def share() -> Any:
        no_transcripts()
        return stats.group_share(
            [p.task for p, _ in diverged],
            [float(first) for _, first in diverged],
            n_resamples=n,
            seed=_child_seed(seed, "between_task_share"),
            threshold=t.between_task_share,
        )

    between_task_share = _finding("between_task_share", declared, share)

    def rank() -> Any:
        no_transcripts()
        return stats.rank_correlation(
            [float(first) for _, first in diverged],
            [_disagree(p, definitions) for p, _ in diverged],
            n_resamples=n,
            seed=_child_seed(seed, "divergence_vs_disagreement"),
        )

    divergence_vs_disagreement = _finding("divergence_vs_disagreement", declared, rank)

    # --- causes ------------------------------------------------------------------------------------------
    cause_findings = []
    declared_names = {c.name for c in definitions.causes}
    for cause in (*definitions.causes, *(c for c in extra_causes if c.name not in declared_names)):
        exploratory = cause.name not in declared_names or not preregistered
        if cause.control is None:
            cause_findings.append(
                CauseFinding(
                    cause.name,
                    exploratory,
                    refused="no base-rate control was declared: its rate at the divergence alone cannot show it causes anything",
                )
            )
            continue
        seen = [p.causes.get(cause.name) for p, _ in compared]
        at_div = [_nan(s.at_divergence) if s else math.nan for s in seen]
        at_ctl = [_nan(s.at_control) if s else math.nan for s in seen]
        if all(math.isnan(x) for x in at_ctl):
            why = "observed at its control call in no compared pair (observe causes with pair_evidence first)"
            cause_findings.append(CauseFinding(cause.name, exploratory, skipped=why))
            continue
        try:
            value = stats.cause_against_base_rate(at_div, at_ctl)
        except ValueError as exc:
            cause_findings.append(CauseFinding(cause.name, exploratory, skipped=str(exc)))
        else:
            cause_findings.append(CauseFinding(cause.name, exploratory, value=value))

    # --- where and when --------------------------------------------------------------------------------
    def placement() -> Any:
        runs = [(arm, side) for p in (*main, *control) for arm, side in (("A", p.a), ("B", p.b))]
        if not any(s.node or s.slot or s.started_at is not None or s.order is not None for _, s in runs):
            raise ValueError("no run recorded its node, slot, start time or order")
        return stats.placement_checks(
            [arm for arm, _ in runs],
            [_nan(_score(s, definitions)) for _, s in runs],
            nodes=[s.node for _, s in runs],
            slots=[s.slot for _, s in runs],
            run_order=[_nan(s.order) for _, s in runs],
            started_at=[_nan(s.started_at) for _, s in runs],
            tasks=[p.task for p in (*main, *control) for _ in (0, 1)],
            n_resamples=n,
            seed=_child_seed(seed, "placement"),
        )

    placement_finding = _finding("placement", declared, placement)

    # --- per task, and what the reader must know -----------------------------------------------------
    rows = []
    for task in sorted({p.task for p in main}):
        in_task = [p for p in main if p.task == task]
        comps = [c for p, c in compared if p.task == task]
        firsts = [c.first_divergence for c in comps if c.first_divergence is not None]
        rows.append(
            TaskRow(
                task=task,
                pairs=len(in_task),
                disagreements=int(sum(d == 1.0 for d in (_disagree(p, definitions) for p in in_task))),
                compared=len(comps),
                identical=sum(c.identical for c in comps),
                median_first_divergence=float(statistics.median(firsts)) if firsts else None,
                classes=dict(
                    Counter(c.divergence_class.value for c in comps if c.divergence_class is not None)
                ),
            )
        )
    warnings = []
    if not preregistered:
        warnings.append("the definitions were not filed before the first run started: every finding is exploratory")
    if between_task_share.value is not None and between_task_share.value.warning:
        warnings.append(f"between-task share: {between_task_share.value.warning}")
    opaque = sum(c.opaque_only for _, c in compared)
    if opaque:
        warnings.append(
            f"{opaque} pair(s) first differ only in opaque blobs (thinking signatures, encrypted reasoning), which "
            "may differ per call even for identical content; normalisation.opaque declares them comparable"
        )
    return DivergenceAnalysis(
        definitions=definitions,
        check=check,
        outcome_table=outcome_table,
        net_swing=net_swing,
        disagreement=disagreement,
        seed_control=seed_control,
        divergence_classes=divergence_classes,
        speakers=dict(speakers),
        hazard=hazard_finding,
        between_task_share=between_task_share,
        divergence_vs_disagreement=divergence_vs_disagreement,
        causes=tuple(cause_findings),
        placement=placement_finding,
        tasks=tuple(rows),
        warnings=tuple(warnings),
        preregistered=preregistered,
    )


def _score(side: RunSide, definitions: DivergeDefinitions) -> float | None:
    if definitions.agreement.kind == "score":
        return side.score
    return None if side.outcome is None else float(side.outcome)
