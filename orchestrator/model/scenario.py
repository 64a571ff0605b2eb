"""A stand-in model's scenario: the steps it plays, one per model call that asks for a next action.

    name: flight-delays
    title: Tune flight-delay model          # answer to a title-generation call (OpenCode)
    steps:
      - shell: ./run_experiment
      - shell: "sed -i 's/max_depth=6/max_depth=4/' train.py && git commit -qam 'shallower trees'"
        variants:                            # seeded variation: with probability p play this instead
          - p: 0.5
            shell: "sed -i 's/max_depth=6/max_depth=8/' train.py && git commit -qam 'deeper trees'"
      - finish: Trained and committed.

A variant may be conditional: `when` is a regular expression searched in the request's text (its system
prompt and messages); a variant whose `when` does not match is not there for that request, and its slice of
the draw plays the step. A judge scenario reads the diff it is shown this way (`judge-calc-add-negative`:
it passes every patch that changes the line with the bug, right or wrong, and fails the others), so its
verdicts are known from the request alone, errors included.

A step is either `shell` (run this command through whichever shell tool the request advertises) or `finish`
(end with this message). Which variant plays is a pure function of (run seed, step index), so a run replays
exactly under the same seed and two seeds diverge on purpose.

Scenarios of a tests (coding) task are made from the task rather than written down: `scenario_for_tests_task`
has the agent apply a given fix (the task's reference patch) with its shell tool and commit it, or, as a
control, only look at the repository; then, optionally, run some of the repository's tests; then finish.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestrator.specs.loading import load_yaml_model


class Action(BaseModel):
    """One thing the model does in a step: run a shell command, or finish with a message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    shell: str | None = Field(None, min_length=1, description="command to run through the shell tool")
    finish: str | None = Field(None, description="final message; the agent's turn ends")
    say: str = Field("", description="text sent beside a shell call (the model's 'thought')")

    @model_validator(mode="after")
    def _one_kind(self) -> Action:
        if (self.shell is None) == (self.finish is None):
            raise ValueError("give exactly one of `shell` or `finish`")
        return self


class Variant(Action):
    p: float = Field(gt=0, le=1, description="probability that this variant plays instead of the step")
    when: str | None = Field(None, min_length=1, description="a regex the request's text must hold for this "
                             "variant to play (searched, multi-line); None: always eligible")

    @field_validator("when")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return v

    def eligible(self, text: str) -> bool:
        return self.when is None or re.search(self.when, text, re.MULTILINE) is not None


class Step(Action):
    variants: tuple[Variant, ...] = ()

    @model_validator(mode="after")
    def _probabilities(self) -> Step:
        total = sum(v.p for v in self.variants)
        if total > 1 + 1e-9:
            raise ValueError(f"variant probabilities add up to {total:g}, more than 1")
        return self


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("scenario", min_length=1)
    title: str = Field("sbx stand-in run", min_length=1, max_length=100)
    steps: tuple[Step, ...] = Field(min_length=1)
    #: said once the scenario is played out and the agent still asks for more
    after_end: str = "Done."

    def pick(self, seed: int, index: int, text: str = "") -> tuple[Action, int, float]:
        """The action of step `index` for run `seed`: (action, variant played or -1 for the step itself, u).

        u is a uniform draw in [0, 1) from sha256(seed, index); variant k plays when u falls in its slice of
        the cumulative probabilities and its `when` matches `text` (the request's). Past the last step the
        answer is `finish: after_end` (variant -1)."""
        if index >= len(self.steps):
            return Action(finish=self.after_end), -1, 0.0
        step = self.steps[index]
        u = uniform(seed, index)
        edge = 0.0
        for k, variant in enumerate(step.variants):
            edge += variant.p
            if u < edge:
                if variant.eligible(text):
                    return Action(shell=variant.shell, finish=variant.finish, say=variant.say), k, u
                break  # u's slice belongs to a variant not there for this request: the step plays
        return Action(shell=step.shell, finish=step.finish, say=step.say), -1, u


def uniform(seed: int, index: int) -> float:
    """A reproducible draw in [0, 1) for (seed, step index)."""
    digest = hashlib.sha256(f"sbx-standin:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def load_scenario(path: Path) -> Scenario:
    return load_yaml_model(path, Scenario)


#: the here-doc delimiter the fix travels in (a patch holding this line cannot be sent this way)
PATCH_END = "SBX_FIX_PATCH_END"
_COMMIT = "git add -A && git -c user.name=agent -c user.email=agent@sbx.invalid commit -qm"


def scenario_for_tests_task(task: str, patch: str | None, tests: tuple[str, ...] = ()) -> Scenario:
    """A tests task's scenario: with `patch` (a unified diff against the task's repo, run from its root), the
    agent pipes it to `git apply` through its shell tool as a quoted here-doc and commits it; with None (a
    control) it only runs `git status`, so the delivery is the unmodified repo. Then, given `tests` (paths in
    the repo), it runs them with the sandbox's `python -m pytest` (no bytecode, no cache: the tree stays as
    delivered); then it finishes."""
    if patch is None:
        name, title, done = f"{task}-look", f"Look at {task}", "Looked; changed nothing."
        first = Step(say="Look at the repository.", shell="git status --short && git log --oneline -1")
    else:
        if PATCH_END in patch.splitlines():
            raise ValueError(f"the patch holds the line {PATCH_END}: it cannot travel in this here-doc")
        body = patch if patch.endswith("\n") else patch + "\n"
        name, title, done = f"{task}-fix", f"Fix {task}", "Applied and committed the fix."
        first = Step(say="Apply the fix and commit it.",
                     shell=f"git apply --verbose <<'{PATCH_END}' && {_COMMIT} 'fix {task}'\n{body}{PATCH_END}")
    check = (Step(say="Run the tests.", shell="PYTHONDONTWRITEBYTECODE=1 python -m pytest -q -p no:cacheprovider "
                  + " ".join(shlex.quote(t) for t in tests)),) if tests else ()
    return Scenario(name=name, title=title, steps=(first, *check, Step(finish=done)))
