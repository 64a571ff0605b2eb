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
    assert Counter(r.key for r in runs) == Counter({(p.name, r): 1 for p in spec.pairings for r in range(1, 5)})
    firsts = [runs[i * 3].pairing.name for i in range(4)]
    assert firsts == ["noop", "hpo", "eval_concat", "noop"]
    # every pairing appears in every position of a round, so position (time) is not confounded with pairing
    positions = Counter((r.order % 3, r.pairing.name) for r in runs[:9])
    assert all(v == 1 for v in positions.values()) and len(positions) == 9
    assert len({seed_of(spec, r) for r in runs}) == 12


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
