"""Which images a run uses, decided from its task: the one place that knows.

- an `ml` task without an environment: the standard sandbox image (images/requirements.lock), as always;
- an `ml` task that declares `environment: FILE`: that environment's sandbox image
  (`sbx-env-sandbox:<hash>`, orchestrator/tasks/environment.py `ml_env_images`), built here when missing;
- a `tests` task with a python environment: its task sandbox image (`sbx-task-sandbox:<hash>`,
  orchestrator/tasks/environment.py `task_sandbox_image`: the task image the grader runs, plus the agent and
  forwarder users, the CPU-meter gate and the launcher), built here when missing, so the agent can run the
  task's tests with its Python and pins; the grader's own image is run/evaluate_tests.py's business;
- an imported Harbor task: the standard sandbox image (prepare refuses its runs: run/evaluate_tests.py).

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


def sandbox_python_of(task: TaskSpec | TestsTaskSpec) -> str | None:
    """The Python (major.minor) of the sandbox `task`'s runs use when it has its own (an environment's);
    None: the standard sandbox (CPython 3.11). Known from the spec, before any image exists."""
    env = task.environment if isinstance(task, TestsTaskSpec) else task.python_env
    return env.python if isinstance(env, PythonEnvironment) else None


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


def _environment(task: TaskSpec | TestsTaskSpec) -> tuple[str, str] | None:
    """The digest of the environment whose sandbox `task`'s runs use, and what a run builds of it; None: the
    standard sandbox (an ml task without an environment, a Harbor task)."""
    if isinstance(task, TestsTaskSpec):
        if not isinstance(task.environment, PythonEnvironment):
            return None
        digest = task.environment.digest()  # tasks of one environment share its image: the lock builds it once
        return digest, f"its sandbox image (the task image of environment {digest} with the sandbox layer)"
    env = task.python_env
    if env is None:
        return None
    return env.digest(), f"the images of its environment {task.environment} (Python {env.python}, digest {env.digest()})"


def task_images(client: docker.DockerClient, task: TaskSpec | TestsTaskSpec, cache: Path | None = None, *,
                force: bool = False) -> dict[str, BuiltEnvImage]:
    """The images of `task`'s own environment by target, built when missing (module docstring): a tests task
    with a python environment, `task` (the grader's) and `sandbox` (the agent's, on it); a Harbor task, `task`;
    an ml task with an environment, `sandbox` and `scorer`; none for an ml task without one. Without a
    `sandbox` among them, runs use the standard images. `force` rebuilds each image's own layer."""
    from orchestrator.tasks.environment import default_cache, ml_env_images, task_image, task_sandbox_image

    cache = cache or default_cache()
    if isinstance(task, TestsTaskSpec):
        from orchestrator.tasks.materialise import materialise

        task = materialise(task, cache)  # its image installs the repo: made from the pinned sdist when missing
        images = {"task": task_image(client, task, cache, force=force)}
        if isinstance(task.environment, PythonEnvironment):
            images["sandbox"] = task_sandbox_image(client, task, cache, force=force)
        return images
    return ml_env_images(client, task.python_env, cache, force=force) if task.python_env is not None else {}


def _images_for_run(client: docker.DockerClient, task: TaskSpec | TestsTaskSpec,
                    cache: Path | None) -> tuple[str, dict[str, BuiltEnvImage]]:
    """`task_images` under its environment's lock, with the environment's digest; a failed build is a
    ConfigError (module docstring). Only for a task with an environment."""
    environment = _environment(task)
    assert environment is not None
    digest, what = environment
    images = _build_for_run(task.name, digest, what, lambda: task_images(client, task, cache))
    for target, img in images.items():
        if img.built:
            log.info("run.environment_image_built", task=task.name, environment=digest, target=target,
                     tag=img.tag, seconds=img.seconds, size_mb=round(img.size_bytes / 1e6))
    return digest, images


def run_image(client: docker.DockerClient, task: TaskSpec | TestsTaskSpec, cache: Path | None = None) -> RunImage:
    """The sandbox image of a run of `task` (module docstring)."""
    if _environment(task) is None:
        image = resolve_image(client, "sandbox")
        return RunImage(str(image.id), image.tags[0] if image.tags else str(image.id), None)
    digest, images = _images_for_run(client, task, cache)
    return RunImage(str(client.images.get(images["sandbox"].tag).id), images["sandbox"].tag, digest)


def scorer_image_for(client: docker.DockerClient, task: TaskSpec, cache: Path | None = None) -> str:
    """The scorer image for a folder scored outside a run: the task's environment's, else the standard one."""
    if task.python_env is not None:
        return str(client.images.get(_images_for_run(client, task, cache)[1]["scorer"].tag).id)
    return str(resolve_image(client, "scorer").id)
