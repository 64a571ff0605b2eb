from collections import Counter
from pathlib import Path

import pytest

from orchestrator.failures import ConfigError
from orchestrator.specs.study import load_study
from orchestrator.study.local import capacity
from orchestrator.study.planner import plan, seed_of

SPEC = """name: t
task: flight-delays
budget: smoke
repeats: 4
pairings:
  - agent: noop
  - agent: hpo
  - agent: eval_concat
"""


def _spec(tmp_path: Path, text: str = SPEC):
    p = tmp_path / "study.yaml"
    p.write_text(text)
    return load_study(p)


def test_plan_has_every_pairing_repeat_once_and_rotates_who_goes_first(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    runs = plan(spec)
    assert len(runs) == 12
    assert Counter(r.key for r in runs) == Counter({("flight-delays", p.name, r): 1 for p in spec.pairings
                                                    for r in range(1, 5)})
    firsts = [runs[i * 3].pairing.name for i in range(4)]
    assert firsts == ["noop", "hpo", "eval_concat", "noop"]
    # every pairing appears in every position of a round, so position (time) is not confounded with pairing
    positions = Counter((r.order % 3, r.pairing.name) for r in runs[:9])
    assert all(v == 1 for v in positions.values()) and len(positions) == 9
    assert len({seed_of(spec, r) for r in runs}) == 12


MULTI = SPEC.replace("task: flight-delays\n", "tasks: [t-a, t-b, t-c]\n")


def test_a_multi_task_plan_has_every_task_pairing_repeat_once_interleaved(tmp_path: Path) -> None:
    spec = _spec(tmp_path, MULTI)
    assert spec.task_names == ["t-a", "t-b", "t-c"]
    runs = plan(spec)
    assert len(runs) == 3 * 3 * 4
    assert Counter(r.key for r in runs) == Counter({(t, p.name, r): 1 for t in spec.task_names for p in spec.pairings
                                                    for r in range(1, 5)})
    assert [r.order for r in runs] == list(range(36))
    # each repeat visits every task; the task that goes first rotates with the repeat
    assert [runs[i * 9].task for i in range(4)] == ["t-a", "t-b", "t-c", "t-a"]
    # on each task, over the first three repeats, every pairing goes first once (not confounded with time)
    for t in spec.task_names:
        firsts = [next(r for r in runs if r.task == t and r.repeat == rep).pairing.name for rep in (1, 2, 3)]
        assert sorted(firsts) == sorted(p.name for p in spec.pairings)
    # runs of one task are never all in one block: repeat 1 already holds all three tasks
    assert {r.task for r in runs if r.repeat == 1} == set(spec.task_names)
    # one seed per (task, pairing, repeat); the first task keeps the single-task seeds
    assert len({seed_of(spec, r) for r in runs}) == 36
    single = _spec(tmp_path, SPEC)
    first_task = {(r.pairing.name, r.repeat): seed_of(spec, r) for r in runs if r.task == "t-a"}
    assert first_task == {(r.pairing.name, r.repeat): seed_of(single, r) for r in plan(single)}


def test_task_and_tasks_are_exclusive_and_a_single_task_spec_is_stored_as_before(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="either task"):
        _spec(tmp_path, MULTI + "task: flight-delays\n")
    with pytest.raises(ConfigError, match="listed twice: t-a"):
        _spec(tmp_path, SPEC.replace("task: flight-delays\n", "tasks: [t-a, t-b, t-a]\n"))
    assert "tasks" not in _spec(tmp_path).canonical()
    assert _spec(tmp_path, MULTI).canonical()["tasks"] == ["t-a", "t-b", "t-c"]


def test_spec_errors_name_file_line_and_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"study.yaml:4: repeats: Input should be greater than or equal to 1"):
        _spec(tmp_path, SPEC.replace("repeats: 4", "repeats: 0"))
    with pytest.raises(ConfigError, match=r"study.yaml:\d+: pairings.1.agnet: Extra inputs are not permitted"):
        _spec(tmp_path, SPEC.replace("  - agent: hpo", "  - agnet: hpo"))
    with pytest.raises(ConfigError, match="pairings share a name: noop"):
        _spec(tmp_path, SPEC + "  - agent: noop\n")
    with pytest.raises(ConfigError, match="backend.ray.address"):
        _spec(tmp_path, SPEC + "backend: {type: ray, address: 5}\n")
    with pytest.raises(ConfigError, match="datasets must include holdout"):
        _spec(tmp_path, SPEC + "datasets: [later]\n")


def test_a_pairing_names_one_agent(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="exactly one of agent"):
        _spec(tmp_path, SPEC + "  - {agent: noop, agent_command: ./x.sh, label: both}\n")
    spec = _spec(tmp_path, SPEC + "  - {agent: hpo, model: m1}\n")
    assert [p.name for p in spec.pairings][-1] == "hpo/m1"


def test_capacity_is_capped_by_cores_and_memory() -> None:
    from orchestrator.specs import load_budget

    b = load_budget("reference")  # 4 cores, 6144 MB
    assert capacity(b, cpus=list(range(16)), memory_mb=64_000)[0] == 4
    fits, why = capacity(b, cpus=list(range(16)), memory_mb=13_000)
    assert fits == 1 and "memory" in why
    assert capacity(b, cpus=[0, 1], memory_mb=64_000)[0] == 0


def test_a_pairing_can_take_the_seeds_of_another(tmp_path: Path) -> None:
    spec = _spec(tmp_path, SPEC.replace("  - agent: hpo\n", "  - agent: hpo\n  - {agent: hpo, label: hpo-b, seed_as: hpo}\n"))
    seeds: dict[str, dict[int, int]] = {}
    for r in plan(spec):
        seeds.setdefault(r.pairing.name, {})[r.repeat] = seed_of(spec, r)
    assert seeds["hpo-b"] == seeds["hpo"] and seeds["hpo"] != seeds["noop"]
    assert len(set(seeds["hpo"].values())) == 4  # still one seed per repeat
    # a stored spec without the key still matches (studies filed before seed_as existed resume)
    assert "seed_as" not in _spec(tmp_path).canonical()["pairings"][0]
    assert spec.canonical()["pairings"][2]["seed_as"] == "hpo"
    with pytest.raises(ConfigError, match="must name another pairing"):
        _spec(tmp_path, SPEC + "  - {agent: hpo, label: x, seed_as: nobody}\n")
    with pytest.raises(ConfigError, match="must name another pairing"):
        _spec(tmp_path, SPEC + "  - {agent: hpo, label: x, seed_as: x}\n")
    with pytest.raises(ConfigError, match="name noop instead"):
        _spec(tmp_path, SPEC + "  - {agent: hpo, label: x, seed_as: noop}\n  - {agent: hpo, label: y, seed_as: x}\n")
