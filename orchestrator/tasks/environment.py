"""Environment images: one per declared environment (Python + exact pins), shared by every task that
declares the same one, built offline from a host wheelhouse on a Debian suite's base made here (images/base.py).

- `resolve_pins`: the full closure of some requirements for a target Python, by `pip download` on the host
  (the index is reachable from the host only), frozen into exact pins.
- `env_image`: `sbx-env:<hash>`, images/environment/Dockerfile, for `tests` tasks.
- `task_image`: `sbx-task:<hash>`, the environment image plus the task's original repo installed editable
  (images/task/Dockerfile), or a Harbor task's own Dockerfile with its base substituted.
- `task_sandbox_image`: `sbx-task-sandbox:<hash>`, the task image plus the standard sandbox's layer (the
  agent and forwarder users, the CPU-meter gate for its interpreters, the launcher; images/task-sandbox/
  Dockerfile): where a `tests` task's agent runs, so it can run the task's tests as the grader would.
- `ml_env_images`: the sandbox and scorer stages of images/Dockerfile built against an environment's pins
  (the flight-delays reference environment), tagged `sbx-env-sandbox:<hash>` / `sbx-env-scorer:<hash>`.

Every tag is a hash of the inputs that decide the image (the base image's ID, the Dockerfile, the pins,
the copied files): an unchanged input set is never rebuilt.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator import paths
from orchestrator.failures import ImageError
from orchestrator.images.content import ContentHash, file_sha256, parts_digest, tree_digest, tree_files
from orchestrator.images.recipe import Recipe, existing, folder
from orchestrator.images.recipe import ensure as ensure_image
from orchestrator.log import get_logger, timed
from orchestrator.specs.task import DockerfileEnvironment, PythonEnvironment, TestsTaskSpec, normalize_name

if TYPE_CHECKING:
    import docker

log = get_logger(__name__)

ENV_DOCKERFILE = paths.images_root() / "environment" / "Dockerfile"
TASK_DOCKERFILE = paths.images_root() / "task" / "Dockerfile"
TASK_SANDBOX_DOCKERFILE = paths.images_root() / "task-sandbox" / "Dockerfile"
SANDBOX_FILES = paths.images_root() / "sandbox"
LABEL = "sbx.kind"
#: the longest an environment's own image may take to build (a task's images take its `timeouts.build_s`)
_BUILD_S = 1800.0


@dataclass(frozen=True)
class BuiltEnvImage:
    tag: str
    built: bool          # False when the tag already existed
    seconds: float       # time to build (or to find) it
    size_bytes: int


def default_cache() -> Path:
    """Where wheelhouses, downloaded sdists and materialised task trees are kept (`paths.cache_root`)."""
    return paths.cache_root()


def _wheel_name_version(filename: str) -> tuple[str, str]:
    name, version = filename.split("-")[:2]
    return normalize_name(name), version


# --- pins --------------------------------------------------------------------------------------------------


def resolve_pins(requirements: Iterable[str], python: str, scratch: Path) -> dict[str, str]:
    """Exact pins of the whole closure of `requirements` for CPython `python`, wheels only (pip download)."""
    from orchestrator.images.wheelhouse import target_args

    reqs = list(requirements)
    scratch.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", *target_args(python), "--dest", str(scratch), *reqs]
    with timed(log, "env.resolve", requirements=len(reqs), python=python):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise ImageError(f"resolving {reqs} for Python {python} failed:\n{(proc.stdout + proc.stderr)[-2500:]}")
    got = re.findall(r"(?:Saved|File was already downloaded) (\S+\.whl)", proc.stdout)
    pins: dict[str, str] = {}
    for path in got:
        name, version = _wheel_name_version(Path(path).name)
        pins[name] = version
    if not pins:
        raise ImageError(f"pip download resolved nothing for {reqs}:\n{proc.stdout[-1500:]}")
    return dict(sorted(pins.items()))


def _sdist_name_version(filename: str) -> tuple[str, str] | None:
    m = re.fullmatch(r"(.+)-([^-]+)\.(?:tar\.gz|zip|tar\.bz2)", filename)
    return (normalize_name(m[1]), m[2]) if m else None


def lock_environment(env: PythonEnvironment, scratch: Path) -> PythonEnvironment:
    """`env` with the sha256 of every pin's file: the wheel pip picks for the environment's Python on Debian,
    or the sdist of a sdist-only pin. Files already in `scratch` (a resolve's downloads) are hashed as they
    are; the rest are downloaded there first, without dependencies."""
    from orchestrator.images.wheelhouse import target_args

    scratch.mkdir(parents=True, exist_ok=True)
    built = env.built_here

    def held() -> dict[str, Path]:
        found: dict[str, Path] = {}
        for path in scratch.iterdir():
            key = _wheel_name_version(path.name) if path.name.endswith(".whl") else _sdist_name_version(path.name)
            if key and env.packages.get(key[0]) == key[1] and (key[0] in built) != path.name.endswith(".whl"):
                found[key[0]] = path
        return found

    missing = [n for n in env.packages if n not in held()]
    for names, options in (([n for n in missing if n not in built], target_args(env.python)),
                           ([n for n in missing if n in built], ["--no-binary", ":all:"])):
        if not names:
            continue
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *options, "--dest", str(scratch),
               *(f"{n}=={env.packages[n]}" for n in names)]
        with timed(log, "env.lock", files=len(names), python=env.python):
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            raise ImageError(f"downloading {names} for Python {env.python} failed:\n"
                             f"{(proc.stdout + proc.stderr)[-2500:]}")
    files = held()
    unresolved = sorted(set(env.packages) - set(files))
    if unresolved:
        raise ImageError(f"no file was found for {unresolved} (Python {env.python})")
    return PythonEnvironment.model_validate(
        {**env.model_dump(), "hashes": {n: [file_sha256(files[n])] for n in sorted(env.packages)}})


def install_lock(env: PythonEnvironment, wheels: Path) -> str:
    """The requirements an image installs from `wheels`: with hashes, in pip's hash-checking mode
    (images/wheelhouse.py `hashed_install_lock`); an environment of versions only installs by version."""
    from orchestrator.images.wheelhouse import hashed_install_lock

    if not env.hashes:
        return env.lock_text()
    built = env.built_here
    return hashed_install_lock(((n, v, env.hashes[n], n in built) for n, v in env.packages.items()), wheels,
                               pinned_by="the environment")


def ensure_env_wheelhouse(env: PythonEnvironment, cache: Path) -> Path:
    """cache/wheelhouse/<env digest>/ holding exactly the environment's wheels (downloaded when missing)."""
    from orchestrator.images.wheelhouse import ensure_wheelhouse

    dest = cache / "wheelhouse" / env.digest()
    dest.mkdir(parents=True, exist_ok=True)
    lock = dest / "requirements.lock"
    lock.write_text(env.lock_text())
    ensure_wheelhouse(lock, dest, python=env.python)
    return dest


# --- images ------------------------------------------------------------------------------------------------


def _ensure(client: docker.DockerClient, recipe: Recipe, force: bool, start: float) -> BuiltEnvImage:
    """The image of `recipe` (orchestrator/images/recipe.py: `ensure`), with the seconds since `start` and its
    size. Every builder of this module goes through here."""
    got = ensure_image(client, recipe, force=force)
    return BuiltEnvImage(recipe.tag, got.built, round(time.monotonic() - start, 2), int(got.image.attrs.get("Size", 0)))


def _scratch(prefix: str, fill: Callable[[Path], None]) -> Callable[[], AbstractContextManager[Path]]:
    """A context assembled by `fill` in a temporary folder, removed after the build."""

    @contextlib.contextmanager
    def context() -> Iterator[Path]:
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            fill(Path(tmp))
            yield Path(tmp)

    return context


def env_base(client: docker.DockerClient, env: PythonEnvironment) -> str:
    """The Debian base of the environment's Debian suite (made once, one to two minutes, when missing)."""
    from orchestrator.images.base import ensure_suite_base

    return ensure_suite_base(client, env.suite)


def env_image_tag(client: docker.DockerClient, env: PythonEnvironment) -> str:
    from orchestrator.images.base import debian_base_tag, find_suite_base

    found = find_suite_base(client, env.suite)
    base = existing(client, found) if found else None
    base_id = base.id if base is not None else f"missing:{debian_base_tag(env.suite)}"
    return f"sbx-env:{env_digest(base_id, env)}"


def env_digest(base_id: str, env: PythonEnvironment, dockerfile: Path = ENV_DOCKERFILE) -> str:
    return parts_digest(base_id.encode(), dockerfile.read_bytes(), env.lock_text().encode(), env.python.encode())


def env_image(client: docker.DockerClient, env: PythonEnvironment, cache: Path, force: bool = False) -> BuiltEnvImage:
    """The environment's image, built when its tag is missing."""
    start = time.monotonic()
    base = env_base(client, env)
    tag = env_image_tag(client, env)

    def fill(ctx: Path) -> None:
        from orchestrator.images.wheelhouse import link_wheels

        wheels = ensure_env_wheelhouse(env, cache)
        shutil.copyfile(ENV_DOCKERFILE, ctx / "Dockerfile")
        (ctx / "requirements.lock").write_text(install_lock(env, wheels))
        link_wheels(wheels.glob("*.whl"), ctx / "wheelhouse")

    return _ensure(client, Recipe(tag=tag, context=_scratch("sbx-envctx-", fill), base=base, timeout_s=_BUILD_S,
                                  buildargs={"BASE_IMAGE": base},
                                  labels={LABEL: "environment", "sbx.environment": env.digest(), "sbx.base": base}),
                   force, start)


def task_image_tag(client: docker.DockerClient, task: TestsTaskSpec) -> str:
    if isinstance(task.environment, DockerfileEnvironment):
        return f"sbx-task:{harbor_digest(task.path(task.environment.context), task.environment.dockerfile)}"
    env_tag = env_image_tag(client, task.environment)
    env = existing(client, env_tag)
    env_id = env.id if env is not None else f"missing:{env_tag}"
    return f"sbx-task:{task_digest(env_id, task.install, task.repo_dir)}"


def harbor_digest(context: Path, dockerfile: str) -> str:
    """A Harbor task's own Dockerfile: its whole context and the Dockerfile's name."""
    return parts_digest(b"dockerfile", tree_digest(context), dockerfile.encode())


def task_digest(env_id: str, install: str, repo: Path, dockerfile: Path = TASK_DOCKERFILE) -> str:
    return parts_digest(env_id.encode(), dockerfile.read_bytes(), install.encode(), tree_digest(repo))


def task_sandbox_digest(task_image_id: str, dockerfile: Path = TASK_SANDBOX_DOCKERFILE,
                        sandbox_files: Path = SANDBOX_FILES) -> str:
    return parts_digest(task_image_id.encode(), dockerfile.read_bytes(), tree_digest(sandbox_files))


def ml_env_digest(base_id: str, env: PythonEnvironment, root: Path | None = None) -> str:
    """The sandbox and scorer stages of images/Dockerfile on an environment's pins: the base, the pins, the
    Dockerfile, .dockerignore and both stage folders."""
    from orchestrator.images.build import TARGETS

    root = root or paths.images_root()
    h = ContentHash().part(base_id.encode()).part(env.lock_text().encode())
    for p in tree_files(root / "Dockerfile") + tree_files(root / ".dockerignore") + [
            f for sub in TARGETS for f in tree_files(root / sub)]:
        h.part(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    return h.tag_digest()


def task_image(client: docker.DockerClient, task: TestsTaskSpec, cache: Path, force: bool = False) -> BuiltEnvImage:
    """The task's image (environment + editable install of the original repo), built when missing."""
    start = time.monotonic()
    environment = task.environment
    if isinstance(environment, DockerfileEnvironment):
        tag = task_image_tag(client, task)
        # A Harbor Dockerfile may install from Debian's mirror or PyPI while building (both answer here).
        return _ensure(client, Recipe(tag=tag, context=folder(task.path(environment.context)),
                                      dockerfile=environment.dockerfile, network_mode=None,
                                      timeout_s=task.timeouts.build_s, labels={LABEL: "task", "sbx.task": task.name}),
                       force, start)
    env = env_image(client, environment, cache)
    tag = task_image_tag(client, task)

    def fill(ctx: Path) -> None:
        shutil.copyfile(TASK_DOCKERFILE, ctx / "Dockerfile")
        shutil.copytree(task.repo_dir, ctx / "repo", symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

    return _ensure(client, Recipe(tag=tag, context=_scratch("sbx-taskctx-", fill), base=env.tag,
                                  timeout_s=task.timeouts.build_s, buildargs={"ENV_IMAGE": env.tag, "INSTALL": task.install},
                                  labels={LABEL: "task", "sbx.task": task.name, "sbx.environment": environment.digest()}),
                   force, start)


def task_sandbox_image(client: docker.DockerClient, task: TestsTaskSpec, cache: Path,
                       force: bool = False) -> BuiltEnvImage:
    """The sandbox a run of `task` gives its agent: the task image (built when missing) with the standard
    sandbox's layer on top (images/task-sandbox/Dockerfile). Only for tasks with a python environment.
    `force` rebuilds this layer only (`task_image(force=True)` first rebuilds the task image too)."""
    assert isinstance(task.environment, PythonEnvironment), "Harbor tasks have no task sandbox"
    start = time.monotonic()
    base = task_image(client, task, cache)
    base_id = client.images.get(base.tag).id
    tag = f"sbx-task-sandbox:{task_sandbox_digest(base_id)}"

    def fill(ctx: Path) -> None:
        shutil.copyfile(TASK_SANDBOX_DOCKERFILE, ctx / "Dockerfile")
        shutil.copytree(SANDBOX_FILES, ctx / "sandbox", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

    return _ensure(client, Recipe(tag=tag, context=_scratch("sbx-tasksbxctx-", fill), base=base.tag,
                                  timeout_s=task.timeouts.build_s, buildargs={"TASK_IMAGE": base.tag},
                                  labels={LABEL: "task-sandbox", "sbx.task": task.name, "sbx.task_image": base_id}),
                   force, start)


def ml_env_images(client: docker.DockerClient, env: PythonEnvironment, cache: Path,
                  force: bool = False) -> dict[str, BuiltEnvImage]:
    """The sandbox and scorer images of the ML task, built from images/Dockerfile with the environment's
    pins in place of images/requirements.lock (the context is a copy; nothing in images/ changes)."""
    from orchestrator.images.build import TARGETS

    root = paths.images_root()
    base = env_base(client, env)
    digest = ml_env_digest(client.images.get(base).id, env, root)
    wheelhouse: list[Path] = []  # fetched by the first build that needs it, reused by the next

    def fill(ctx: Path) -> None:
        if not wheelhouse:
            wheelhouse.append(ensure_env_wheelhouse(env, cache))
        wheels = wheelhouse[0]
        for name in ("Dockerfile", ".dockerignore"):
            shutil.copyfile(root / name, ctx / name)
        for sub in TARGETS:
            shutil.copytree(root / sub, ctx / sub, ignore=shutil.ignore_patterns("__pycache__"))
        (ctx / "requirements.lock").write_text(install_lock(env, wheels))
        shutil.copytree(wheels, ctx / "wheelhouse", ignore=shutil.ignore_patterns("*.lock"))

    results: dict[str, BuiltEnvImage] = {}
    for target in TARGETS:
        tag = f"sbx-env-{target}:{digest}"
        recipe = Recipe(tag=tag, context=_scratch("sbx-mlctx-", fill), target=target, base=base, timeout_s=_BUILD_S,
                        buildargs={"BASE_IMAGE": base},
                        labels={LABEL: target, "sbx.environment": env.digest(), "sbx.base": base})
        results[target] = _ensure(client, recipe, force, time.monotonic())
    return results


def image_versions(client: docker.DockerClient, tag: str, file: str = "/opt/sbx/versions.txt") -> str:
    """What an image recorded about its Python and packages."""
    out = client.containers.run(tag, ["cat", file], entrypoint=[], remove=True, network_mode="none", user="agent")
    return out.decode()
