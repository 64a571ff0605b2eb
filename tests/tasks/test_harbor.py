"""Harbor import: the Dockerfile rewrite, the notes, and the example task verified in real containers."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.failures import ConfigError
from orchestrator.specs import load_tests_task
from orchestrator.tasks.harbor import _memory_mb, import_harbor, rewrite_dockerfile

EXAMPLE = Path(__file__).parent / "harbor_example"


def test_rewrite_substitutes_unpullable_bases_only() -> None:
    text = ("FROM python:3.12-slim AS build\nRUN make\nFROM build AS test\n"
            "FROM --platform=linux/amd64 ubuntu:24.04\nWORKDIR /srv\nWORKDIR app\nCOPY . .\n")
    pulled = {"python:3.12-slim": False, "ubuntu:24.04": True}
    new, changes, workdir = rewrite_dockerfile(text, "sbx-base:x", lambda ref: (pulled[ref], "no registry"))
    assert changes == [("python:3.12-slim", "sbx-base:x")]
    assert new.splitlines()[0] == "FROM sbx-base:x AS build"
    assert "FROM build AS test" in new and "FROM --platform=linux/amd64 ubuntu:24.04" in new
    assert workdir == "/srv/app"
    assert new.rstrip().endswith("WORKDIR /srv/app") and "useradd --uid 1000" in new
    with pytest.raises(ConfigError, match="python:3.12-slim cannot be pulled .*pass --base"):
        rewrite_dockerfile(text, None, lambda ref: (pulled[ref], "no registry"))


@pytest.mark.parametrize(("env", "mb"), [({"memory_mb": 4096}, 4096), ({"memory": "2G"}, 2048),
                                         ({"memory": "512M"}, 512), ({"memory": "lots"}, None), ({}, None)])
def test_memory_settings(env: dict, mb: int | None) -> None:
    assert _memory_mb(env) == mb


def test_not_a_harbor_task(tmp_path: Path) -> None:
    (tmp_path / "instruction.md").write_text("x")
    with pytest.raises(ConfigError, match="task.toml is missing"):
        import_harbor(tmp_path, tmp_path / "out")


@pytest.mark.docker
def test_import_without_a_pullable_base_needs_base(docker_client, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="python:3.12-slim-bookworm cannot be pulled"):
        import_harbor(EXAMPLE, tmp_path, client=docker_client)
    assert not (tmp_path / "harbor_example").exists()


@pytest.mark.docker
def test_imported_example_verifies_end_to_end(docker_client, tmp_path: Path) -> None:
    from orchestrator.images.base import ensure_suite_base
    from orchestrator.tasks.environment import default_cache
    from orchestrator.tasks.verify import verify_task

    from .conftest import leftovers

    base = ensure_suite_base(docker_client, "bookworm")
    result = import_harbor(EXAMPLE, tmp_path, name="harbor-log-summary", base=base, client=docker_client)
    assert any("FROM python:3.12-slim-bookworm cannot be pulled" in n and base in n for n in result.notes)
    task = load_tests_task(result.bundle)
    assert task.environment.workdir == "/app" and task.environment.base_substituted_for == "python:3.12-slim-bookworm"
    assert task.timeouts.tests_s == 120 and task.limits.memory_mb == 1024
    assert (result.bundle / "environment" / "Dockerfile.harbor").read_text().startswith("FROM python:3.12")
    check = verify_task(docker_client, task, default_cache(), repeats=2)
    assert check.ok, check.problems
    assert check.oracle.passed and [v.reward for v in check.oracle.result.verdicts] == [1.0, 1.0]
    assert not check.noop.passed and check.noop.result.reason == "tests_failed"
    assert leftovers(docker_client) == []
