from pathlib import Path

import pytest

from orchestrator.failures import ConfigError
from orchestrator.specs import load_budget


def test_reference_budget_has_the_reference_numbers() -> None:
    b = load_budget("reference")
    assert (b.cpu_seconds, b.hard_stop_cpu_seconds, b.experiments, b.experiment_timeout_s) == (18000, 46000, 40, 120)
    assert (b.cores, b.memory_mb, b.wall_clock_minutes) == (4, 6144, 230)
    assert b.pids > 0


def test_smoke_budget_fits_two_cores() -> None:
    b = load_budget("smoke")
    assert b.cores <= 2 and b.wall_clock_minutes <= 15


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "b.yaml"
    p.write_text(text)
    return p


BASE = """name: t
cpu_seconds: 100
hard_stop_cpu_seconds: 200
experiments: 3
experiment_timeout_s: 30
cores: 1
memory_mb: 1024
pids: 256
wall_clock_minutes: 5
"""


def test_unknown_key_is_rejected_with_file_line_and_key(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE + "memroy_mb: 12\n")
    with pytest.raises(ConfigError) as exc:
        load_budget(p)
    assert f"{p}:10: memroy_mb: Extra inputs are not permitted" in str(exc.value)


def test_hard_stop_below_budget_is_impossible(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE.replace("hard_stop_cpu_seconds: 200", "hard_stop_cpu_seconds: 50"))
    with pytest.raises(ConfigError, match=r"hard_stop_cpu_seconds \(50\) must be at least cpu_seconds \(100\)"):
        load_budget(p)


@pytest.mark.parametrize(
    ("line", "replacement", "key"),
    [
        ("cores: 1", "cores: 0", "cores"),
        ("memory_mb: 1024", "memory_mb: 12", "memory_mb"),
        ("experiments: 3", "experiments: -1", "experiments"),
        ("cpu_seconds: 100", "cpu_seconds: lots", "cpu_seconds"),
    ],
)
def test_impossible_values_name_their_key(tmp_path: Path, line: str, replacement: str, key: str) -> None:
    p = _write(tmp_path, BASE.replace(line, replacement))
    with pytest.raises(ConfigError, match=rf"{p}:\d+: {key}: "):
        load_budget(p)


def test_missing_key_and_unknown_name(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE.replace("pids: 256\n", ""))
    with pytest.raises(ConfigError, match="pids: Field required"):
        load_budget(p)
    with pytest.raises(ConfigError, match="no budget named 'nope'; known: .*reference.*smoke"):
        load_budget("nope")


def test_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_budget(_write(tmp_path, "- 1\n- 2\n"))
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_budget(_write(tmp_path, "a: [1, 2\n"))
