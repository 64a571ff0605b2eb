"""The plan of a study: every (pairing, repeat) once, in an order that does not confound pairing with time.

Repeat r runs all pairings, rotated by r, so no pairing always goes first (early runs may meet a cold
cache or a quieter machine), and consecutive runs spread over the slots.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.specs.study import Pairing, StudySpec


@dataclass(frozen=True)
class PlannedRun:
    order: int          # 0-based position in the plan
    pairing: Pairing
    repeat: int         # 1-based

    @property
    def key(self) -> tuple[str, int]:
        return self.pairing.name, self.repeat


def plan(spec: StudySpec) -> list[PlannedRun]:
    pairings = list(spec.pairings)
    out: list[PlannedRun] = []
    for r in range(1, spec.repeats + 1):
        shift = (r - 1) % len(pairings)
        for p in pairings[shift:] + pairings[:shift]:
            out.append(PlannedRun(order=len(out), pairing=p, repeat=r))
    return out


def seed_of(spec: StudySpec, run: PlannedRun) -> int:
    """A distinct, reproducible seed per (pairing, repeat), handed to the agent as SBX_SEED."""
    return spec.seed * 1_000_003 + [p.name for p in spec.pairings].index(run.pairing.name) * 10_007 + run.repeat
