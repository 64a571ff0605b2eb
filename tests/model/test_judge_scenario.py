"""The stand-in as a judge (issue 26): a variant's `when` reads the request, so the shipped
`judge-calc-add-negative` scenario's verdicts follow from the diff it is shown, whatever the run's seed: the
reference fix and a wrong fix on the bug's line pass (the wrong one a false pass), a comment-only patch
fails. And `when` itself: a regex, checked at load; a variant whose `when` does not match is not there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from orchestrator.model import load_scenario
from orchestrator.model.conversation import read
from orchestrator.model.reply import decide
from orchestrator.model.scenario import Scenario
from orchestrator.paths import shipped_scenarios
from orchestrator.run.judge import tree_diff
from orchestrator.scoring.judge import build_prompt, parse_verdict
from orchestrator.specs.judge import JudgeSpec

TASK = Path(__file__).resolve().parents[2] / "tasks" / "calc-add-negative"
SPEC = JudgeSpec(name="j", endpoint="e", model="m",
                 prompt="Issue:\n{instruction}\n\nPatch:\n{diff}\n\nEnd with VERDICT: PASS or VERDICT: FAIL.")
BUG = "    if b < 0:\n        return a - b   # the bug: negative numbers are subtracted\n"


def _verdict(tmp_path: Path, edit: str, seed: int) -> bool | None:
    tree = tmp_path / "delivered"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(TASK / "repo", tree)
    init = tree / "calc" / "__init__.py"
    src = init.read_text()
    init.write_text({"reference": src.replace(BUG, ""), "wrong": src.replace("return a - b", "return a + abs(b)"),
                     "comment": src + "\n# looked at it, found nothing\n"}[edit])
    prompt = build_prompt(SPEC, (TASK / "instruction.md").read_text(), tree_diff(TASK / "repo", tree, 65536))
    body = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": prompt.text}]}
    reply = decide(read("anthropic", json.loads(json.dumps(body))), load_scenario(
        shipped_scenarios()["judge-calc-add-negative"]), seed)
    assert reply.variant == (0 if parse_verdict(SPEC, reply.text) else -1)   # the log's variant says the verdict
    return parse_verdict(SPEC, reply.text)


def test_the_shipped_judge_scenario_reads_the_diff(tmp_path: Path) -> None:
    for seed in (0, 1, 10008, 10009):
        assert _verdict(tmp_path, "reference", seed) is True
        assert _verdict(tmp_path, "wrong", seed) is True        # a false pass: its errors go one way
        assert _verdict(tmp_path, "comment", seed) is False


def test_when_is_a_regex_and_an_unmatched_variant_is_not_there() -> None:
    with pytest.raises(ValidationError, match="not a regular expression"):
        Scenario.model_validate({"steps": [{"finish": "a", "variants": [{"p": 0.5, "when": "(", "finish": "b"}]}]})
    scenario = Scenario.model_validate({"steps": [
        {"finish": "step", "variants": [{"p": 0.5, "when": "^yes$", "finish": "yes"}, {"p": 0.5, "finish": "any"}]}]})
    seeds = range(200)
    matched = [scenario.pick(s, 0, "x\nyes\n")[1] for s in seeds]
    unmatched = [scenario.pick(s, 0, "no")[1] for s in seeds]
    assert set(matched) == {0, 1}                                  # both slices play when `when` matches
    # without the match the first slice plays the step; the second variant keeps its own slice
    assert [-1 if m == 0 else m for m in matched] == unmatched
