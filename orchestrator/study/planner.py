"""The plan of a study: every (task, pairing, repeat) once, in an order that does not confound pairing or
task with time.

Repeat r goes over the tasks rotated by r, and on each task over the pairings rotated by r plus the
task's position, so no pairing always goes first (early runs may meet a cold cache or a quieter machine),
each task meets every pairing early and late, and consecutive runs spread over the slots. A single-task
study keeps the order it always had (repeat r: the pairings rotated by r).
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.specs.study import Pairing, StudySpec


@dataclass(frozen=True)
class PlannedRun:
    order: int          # 0-based position in the plan
    pairing: Pairing
    repeat: int         # 1-based
    task: str = "flight-delays"

    @property
    def key(self) -> tuple[str, str, int]:
        """What a planned run is: (task, pairing, repeat); each attempt of it is one ledger row."""
        return self.task, self.pairing.name, self.repeat


def plan(spec: StudySpec) -> list[PlannedRun]:
    pairings = list(spec.pairings)
    tasks = spec.task_names
    out: list[PlannedRun] = []
    for r in range(1, spec.repeats + 1):
        tshift = (r - 1) % len(tasks)
        for t in tasks[tshift:] + tasks[:tshift]:
            shift = (r - 1 + tasks.index(t)) % len(pairings)
            for p in pairings[shift:] + pairings[:shift]:
                out.append(PlannedRun(order=len(out), pairing=p, repeat=r, task=t))
    return out


def seed_of(spec: StudySpec, run: PlannedRun) -> int:
    """A distinct, reproducible seed per (task, pairing, repeat), handed to the agent as SBX_SEED; a pairing
    with `seed_as` takes the seeds of the pairing it names (paired arms with the same seeds). The first task
    keeps the seeds a single-task study always had."""
    seeds_from = run.pairing.seed_as or run.pairing.name
    task_index = spec.task_names.index(run.task) if run.task in spec.task_names else 0
    return (spec.seed * 1_000_003 + [p.name for p in spec.pairings].index(seeds_from) * 10_007 + run.repeat
            + task_index * 100_000_007)
