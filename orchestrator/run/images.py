"""Which images a run uses, decided from its task: the one place that knows.

- an `ml` task without an environment: the standard sandbox image (images/requirements.lock), as always;
- an `ml` task that declares `environment: FILE`: that environment's sandbox image
  (`sbx-env-sandbox:<hash>`, orchestrator/tasks/environment.py `ml_env_images`), built here when missing;
- a `tests` task with a python environment: its task sandbox image (`sbx-task-sandbox:<hash>`,
  orchestrator/tasks/environment.py `task_sandbox_image`: the task image the grader runs, plus the agent and
  forwarder users, the CPU-meter gate and the launcher), built here when missing, so the agent can run the
  task's tests with its Python and pins; the grader's own image is run/grade.py's business;
- an imported Harbor task: the standard sandbox image (prepare refuses its runs: run/grade.py).

The scorer follows the run: it uses the image the run's sandbox ran (run/evaluate.py `scorer_image`), so
a run in an environment is scored in it. `sbx score --task NAME` asks `scorer_image_for` for a folder
that was not a run.

A build here happens at `prepare`, before the run's state changes: a failure is a ConfigError naming the
environment and the command that builds it ahead (`sbx images build --task NAME`), so the run stays planned
and is never retried as infra.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from orchestrator.failures import ConfigError, SbxError
from orchestrator.images import resolve_image
from orchestrator.log import get_logger
from orchestrator.specs.task import PythonEnvironment, TaskSpec, TestsTaskSpec

if TYPE_CHECKING:
    import docker

    from orchestrator.tasks.environment import BuiltEnvImage

log = get_logger(__name__)
T = TypeVar("T")

#: one build per environment at a time in this process (slots of a study share it); others wait and reuse it
_BUILD_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass(frozen=True)
class RunImage:
    """The image a run's sandbox runs, and the environment it comes from."""

    image_id: str                  # sha256:... (what the sandbox starts and the ledger records)
    tag: str
    environment: str | None        # the environment's digest; None: the standard images


def task_environment(task: TaskSpec | TestsTaskSpec) -> PythonEnvironment | None:
    """The environment an ml task's runs use (None: the standard images)."""
    return task.python_env if isinstance(task, TaskSpec) else None


def _lock(digest: str) -> threading.Lock:
    with _LOCKS_GUARD:
        return _BUILD_LOCKS.setdefault(digest, threading.Lock())


def _build_for_run(task: str, digest: str, what: str, build: Callable[[], T]) -> T:
    """`build()` under the environment's lock (slots of a study wait and reuse what the first built). A failed
    build is a ConfigError saying what could not be built and how to build it ahead."""
    with _lock(digest):
        try:
            return build()
        except SbxError as exc:
            raise ConfigError(f"task {task}: {what} could not be built: {exc}\n"
                              f"build it ahead with `sbx images build --task {task}`") from exc


def environment_images(client: docker.DockerClient, task: TaskSpec,
                       cache: Path | None = None) -> dict[str, BuiltEnvImage]:
    """The sandbox and scorer images of `task`'s environment, built when missing (a log line with the
    build's seconds). A failed build is a ConfigError saying which environment and how to build it ahead."""
    from orchestrator.tasks.environment import default_cache, ml_env_images

    env = task.python_env
    assert env is not None
    what = f"the images of its environment {task.environment} (Python {env.python}, digest {env.digest()})"
    images = _build_for_run(task.name, env.digest(), what,
                            lambda: ml_env_images(client, env, cache or default_cache()))
    for target, img in images.items():
        if img.built:
            log.info("run.environment_image_built", task=task.name, environment=env.digest(), target=target,
                     tag=img.tag, seconds=img.seconds, size_mb=round(img.size_bytes / 1e6))
    return images


def tests_sandbox_image(client: docker.DockerClient, task: TestsTaskSpec, cache: Path | None = None) -> BuiltEnvImage:
    """The task sandbox of a tests task, built when missing (a log line with the build's seconds). A failed
    build is a ConfigError saying which task and how to build it ahead."""
    from orchestrator.tasks.environment import default_cache, task_sandbox_image

    assert isinstance(task.environment, PythonEnvironment)
    digest = task.environment.digest()  # tasks of one environment share its image: the lock builds it once
    image = _build_for_run(task.name, digest, f"its sandbox image (the task image of environment {digest} with the "
                           "sandbox layer)", lambda: task_sandbox_image(client, task, cache or default_cache()))
    if image.built:
        log.info("run.task_sandbox_built", task=task.name, tag=image.tag, seconds=image.seconds,
                 size_mb=round(image.size_bytes / 1e6))
    return image


def run_image(client: docker.DockerClient, task: TaskSpec | TestsTaskSpec, cache: Path | None = None) -> RunImage:
    """The sandbox image of a run of `task` (module docstring)."""
    if isinstance(task, TestsTaskSpec) and isinstance(task.environment, PythonEnvironment):
        image = tests_sandbox_image(client, task, cache)
        return RunImage(str(client.images.get(image.tag).id), image.tag, task.environment.digest())
    env = task_environment(task)
    if env is not None:
        assert isinstance(task, TaskSpec)
        sandbox = environment_images(client, task, cache)["sandbox"]
        return RunImage(str(client.images.get(sandbox.tag).id), sandbox.tag, env.digest())
    image = resolve_image(client, "sandbox")
    return RunImage(str(image.id), image.tags[0] if image.tags else str(image.id), None)


def scorer_image_for(client: docker.DockerClient, task: TaskSpec, cache: Path | None = None) -> str:
    """The scorer image for a folder scored outside a run: the task's environment's, else the standard one."""
    if task.python_env is not None:
        return str(client.images.get(environment_images(client, task, cache)["scorer"].tag).id)
    return str(resolve_image(client, "scorer").id)
