"""`sbx tasks lock`: record the sha256 of every pin's file in the file that declares a task's environment.

A task's environment pins versions; with hashes beside them the wheelhouse is fetched in pip's hash-checking
mode and the image installs in it, so an index serving other bytes under a pinned version is refused rather
than built. The hashes are written where the environment is declared: the `environment:` mapping of a `tests`
task's task.yaml, or the environment file an `ml` task names (its leading comments kept).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from orchestrator.failures import ConfigError
from orchestrator.specs.task import (
    PythonEnvironment,
    TaskSpec,
    TestsTaskSpec,
    load_environment,
    load_tests_task,
)
from orchestrator.tasks.environment import lock_environment


@dataclass(frozen=True)
class LockedEnvironment:
    task: str
    file: Path
    env: PythonEnvironment
    changed: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # name -> (hashes before, after)


def declared_environment(task: TaskSpec | TestsTaskSpec) -> tuple[Path, PythonEnvironment] | None:
    """The file that declares the task's Python environment, and the environment; None without one."""
    if isinstance(task, TestsTaskSpec):
        env = task.environment
        return (task.root / "task.yaml", env) if isinstance(env, PythonEnvironment) else None
    if task.environment is None or task.python_env is None:
        return None
    return task.root / task.environment, task.python_env


def _dump(env: PythonEnvironment) -> str:
    return yaml.safe_dump(env.model_dump(mode="json"), sort_keys=False, width=120)


def _rewrite(file: Path, env: PythonEnvironment, inline: bool) -> None:
    text = file.read_text()
    if inline:
        # task.yaml is written by `sbx tasks make` (yaml.safe_dump): the mapping is `environment:` at column 0
        # and its indented lines; only that block is replaced.
        block = re.compile(r"^environment:\n(?:[ \t]+.*\n|\n)*", re.MULTILINE)
        if len(block.findall(text)) != 1:
            raise ConfigError(f"{file}: expected one `environment:` mapping at column 0")
        body = "".join(f"  {line}\n" for line in _dump(env).splitlines())
        text = block.sub(lambda _m: f"environment:\n{body}", text)
    else:
        comments = []
        for line in text.splitlines(keepends=True):
            if line.startswith("#") or not line.strip():
                comments.append(line)
            else:
                break
        text = "".join(comments) + _dump(env)
    file.write_text(text)


def lock_task(task: TaskSpec | TestsTaskSpec, write: bool = True) -> LockedEnvironment | None:
    """Hash every pin of the task's environment (downloading each file once) and, with `write`, record the
    hashes in its declaring file. None for a task without a Python environment."""
    declared = declared_environment(task)
    if declared is None:
        return None
    file, env = declared
    with tempfile.TemporaryDirectory(prefix="sbx-envlock-") as scratch:
        locked = lock_environment(env, Path(scratch))
    changed = {n: (env.hashes.get(n, ()), locked.hashes[n]) for n in locked.packages
               if env.hashes.get(n, ()) != locked.hashes[n]}
    if write and changed:
        before = file.read_text()
        _rewrite(file, locked, inline=isinstance(task, TestsTaskSpec))
        if _reread(task, file) != locked:  # never leave a file that declares something else
            file.write_text(before)
            raise ConfigError(f"{file}: rewriting its environment did not read back as written; left unchanged")
    return LockedEnvironment(task.name, file, locked, changed)


def _reread(task: TaskSpec | TestsTaskSpec, file: Path) -> PythonEnvironment | None:
    if isinstance(task, TestsTaskSpec):
        env = load_tests_task(task.root).environment
        return env if isinstance(env, PythonEnvironment) else None
    return load_environment(file)
