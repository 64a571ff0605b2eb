"""Which judge grades a study's runs (issue 26): the study's `judge:` when it names one, else each task's own."""

from __future__ import annotations

from orchestrator.specs.judge import JudgeSpec
from orchestrator.specs.study import StudySpec
from orchestrator.specs.task import load_any_task


def study_judges(spec: StudySpec) -> dict[str, JudgeSpec]:
    """Task name -> the judge of its runs in this study; tasks with no judge are left out."""
    if spec.judge is not None:  # the study's judge replaces its tasks' own: one judge for every run compared
        return dict.fromkeys(spec.task_names, spec.judge)
    out: dict[str, JudgeSpec] = {}
    for name in spec.task_names:
        judge = load_any_task(name).judge
        if judge is not None:
            out[name] = judge
    return out
