"""Paired runs from the ledger: two arms (two pairings of a study, or of two studies) matched by (task, repeat).

An arm is `PAIRING` (of the study named first) or `STUDY:PAIRING`. Each (task, repeat) of arm A is paired
with the same (task, repeat) of arm B; the latest attempt of each stands for it. The two arms must have
the same task list and repeats. For every pair the seeds and config hashes the lifecycle recorded
(run/config_hash.py) are checked: equal seeds and configs for the main arms; for a different-seed control arm,
equal configs and different seeds. Pairs whose seeds contradict their role are left out of the analysis
(a same-seed analysis must not silently become a seed control, or the reverse) and counted; pairs whose
configs differ go on to the analysis, which excludes them by reason. The check of every pair is kept, to
be stored with the analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from orchestrator.artifacts import ArtifactStore
from orchestrator.diverge.analysis import PairedRuns, RunSide
from orchestrator.failures import ArtifactNotFound, ConfigError, DataError, InvalidArtifact
from orchestrator.ledger import Ledger, RunRecord, RunState
from orchestrator.run.config_hash import config_differences
from orchestrator.run.record import run_row

#: the manifest key under which a run's gateway transcript is stored (run/model_attachment.py writes it)
TRANSCRIPT_KEY = "model_transcript_sha256"
#: states a run ends in; a pair with a run not yet in one is left out as unfinished
FINAL = (RunState.AUDITED, RunState.FAILED, RunState.CANCELLED)

Role = Literal["main", "control"]
Check = Literal["equal", "different", "unknown"]


@dataclass(frozen=True)
class Arm:
    study: str
    pairing: str

    @classmethod
    def parse(cls, text: str, default_study: str) -> Arm:
        """`PAIRING` (of `default_study`) or `STUDY:PAIRING`."""
        study, sep, pairing = text.rpartition(":")
        if not pairing or (sep and not study):
            raise ConfigError(f"arm {text!r}: give PAIRING or STUDY:PAIRING")
        return cls(study if sep else default_study, pairing)

    def __str__(self) -> str:
        return f"{self.study}:{self.pairing}"


@dataclass(frozen=True)
class PairCheck:
    """One pair's seeds and configs as recorded, against what its role needs."""

    task: str
    repeat: int
    role: Role
    run_a: str
    run_b: str
    seed_a: Any
    seed_b: Any
    seed: Check
    config: Check
    #: where the two recorded configs differ (dotted paths), when they do
    config_differs: tuple[str, ...] = ()
    #: why the pair is left out before the analysis (seeds against its role, a run not finished)
    left_out: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "repeat": self.repeat,
            "role": self.role,
            "run_a": self.run_a,
            "run_b": self.run_b,
            "seed_a": self.seed_a,
            "seed_b": self.seed_b,
            "seed": self.seed,
            "config": self.config,
            "config_differs": list(self.config_differs),
            "left_out": self.left_out,
        }


@dataclass
class ArmPairs:
    """The pairs that go to the analysis, and the check of every pair."""

    a: Arm
    b: Arm
    control: Arm | None
    pairs: list[PairedRuns] = field(default_factory=list)
    checks: list[PairCheck] = field(default_factory=list)
    #: run id -> its record, for every run the pairs name (to find its transcript)
    runs: dict[str, RunRecord] = field(default_factory=dict)

    def check_json(self) -> dict[str, Any]:
        """The pair check as stored with the analysis: counts, then every pair."""
        counts: dict[str, int] = {}
        for c in self.checks:
            key = f"{c.role}: seeds {c.seed}, configs {c.config}" + (
                f", left out ({c.left_out})" if c.left_out else ""
            )
            counts[key] = counts.get(key, 0) + 1
        return {"arms": self.arms_json(), "counts": counts, "pairs": [c.to_json() for c in self.checks]}

    def arms_json(self) -> dict[str, Any]:
        return {"a": str(self.a), "b": str(self.b), "control": str(self.control) if self.control else None}


def _study_id(ledger: Ledger, name: str) -> str:
    found = ledger.get_study_by_name(name) or ledger.get_study(name)
    if found is None:
        raise DataError(f"no study named {name!r} in the ledger {ledger.path}")
    return found.study_id


def arm_runs(ledger: Ledger, arm: Arm) -> dict[tuple[str, int], RunRecord]:
    """The latest attempt of each (task, repeat) of an arm."""
    latest: dict[tuple[str, int], RunRecord] = {}
    for run in ledger.list_runs(study_id=_study_id(ledger, arm.study)):
        if run.pairing != arm.pairing:
            continue
        key = (run.task, run.repeat)
        if key not in latest or run.attempt > latest[key].attempt:
            latest[key] = run
    if not latest:
        raise DataError(f"arm {arm}: no runs of pairing {arm.pairing!r} in study {arm.study!r}")
    return latest


def _same_keys(a: Arm, b: Arm, runs_a: Iterable[tuple[str, int]], runs_b: Iterable[tuple[str, int]]) -> None:
    ka, kb = set(runs_a), set(runs_b)
    if ka == kb:
        return
    only_a, only_b = sorted(ka - kb)[:5], sorted(kb - ka)[:5]
    raise DataError(
        f"arms {a} and {b} do not have the same tasks and repeats: only in {a}: "
        f"{', '.join(f'{t}#{r}' for t, r in only_a) or 'none'}; only in {b}: "
        f"{', '.join(f'{t}#{r}' for t, r in only_b) or 'none'}"
    )


def run_side(ledger: Ledger, run: RunRecord) -> RunSide:
    """What the analysis needs of one run: outcome and score, seed, config hash, where and when it ran."""
    row = run_row(ledger, run.run_id)
    outcome = row.get("outcome")
    return RunSide(
        run_id=run.run_id,
        outcome=None if outcome is None else bool(outcome),
        score=row.get("holdout_score"),
        seed=run.meta.get("seed"),
        config_hash=run.meta.get("config_hash"),
        failure_class=str(run.failure_class) if run.failure_class else None,
        node=run.node,
        slot=None if run.slot is None else str(run.slot),
        started_at=run.started_at,
        order=run.meta.get("order"),
    )


def _check(value_a: Any, value_b: Any) -> Check:
    if value_a is None or value_b is None:
        return "unknown"
    return "equal" if value_a == value_b else "different"


def _pairs_of(ledger: Ledger, out: ArmPairs, a: Arm, b: Arm, role: Role) -> None:
    runs_a, runs_b = arm_runs(ledger, a), arm_runs(ledger, b)
    _same_keys(a, b, runs_a, runs_b)
    for key in sorted(runs_a):
        ra, rb = runs_a[key], runs_b[key]
        seed = _check(ra.meta.get("seed"), rb.meta.get("seed"))
        config = _check(ra.meta.get("config_hash"), rb.meta.get("config_hash"))
        differs: tuple[str, ...] = ()
        if (
            config == "different"
            and isinstance(ra.meta.get("config"), dict)
            and isinstance(rb.meta.get("config"), dict)
        ):
            differs = tuple(config_differences(ra.meta["config"], rb.meta["config"]))
        left_out = None
        if ra.status not in FINAL or rb.status not in FINAL:
            left_out = "not finished"
        elif role == "main" and seed == "different":
            left_out = "seeds differ in a same-seed pair (give the arms the same seeds: seed_as)"
        elif role == "control" and seed == "equal":
            left_out = "seeds equal in a different-seed control pair"
        out.checks.append(
            PairCheck(
                key[0],
                key[1],
                role,
                ra.run_id,
                rb.run_id,
                ra.meta.get("seed"),
                rb.meta.get("seed"),
                seed,
                config,
                differs,
                left_out,
            )
        )
        if left_out is None:
            out.pairs.append(PairedRuns(key[0], key[1], run_side(ledger, ra), run_side(ledger, rb)))
            out.runs[ra.run_id], out.runs[rb.run_id] = ra, rb


def pair_arms(ledger: Ledger, a: Arm, b: Arm, control: Arm | None = None) -> ArmPairs:
    """Pairs of arms A and B by (task, repeat), checked; with `control`, also A against the control arm."""
    if a == b:
        raise ConfigError(f"arm {a} is paired with itself; name two arms")
    out = ArmPairs(a, b, control)
    _pairs_of(ledger, out, a, b, "main")
    if control is not None:
        if control in (a, b):
            raise ConfigError(f"the control arm {control} is one of the main arms")
        _pairs_of(ledger, out, a, control, "control")
    return out


def stored_transcripts(store: ArtifactStore, runs: dict[str, RunRecord]) -> Callable[[str], Path | None]:
    """A locator for the runs' gateway transcripts in the artifact store (named in each run's manifest)."""

    def locate(run_id: str) -> Path | None:
        run = runs.get(run_id)
        if run is None or run.artifact_manifest is None:
            return None
        try:
            sha = store.get_manifest(run.artifact_manifest).get(TRANSCRIPT_KEY)
            return store.get_path(sha) if isinstance(sha, str) else None
        except (ArtifactNotFound, InvalidArtifact, ValueError):
            return None

    return locate


def first_found(*locators: Callable[[str], Path | None]) -> Callable[[str], Path | None]:
    """A locator that asks each in turn."""

    def locate(run_id: str) -> Path | None:
        for find in locators:
            path = find(run_id)
            if path is not None:
                return path
        return None

    return locate
