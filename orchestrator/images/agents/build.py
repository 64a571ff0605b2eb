"""Build `sbx-agent-NAME:<hash>`: the sandbox image plus one agent CLI, installed with no network.

The tag hashes the sandbox image's ID, images/agents/Dockerfile and install.py, and the manifest (the
adapter's install spec and the lock lines it uses), so it is known before anything is downloaded and an
image that exists is neither fetched nor rebuilt. Otherwise the host fetches the closure into the cache
(fetch.py), stages a build context of hard links to it, and builds with `network_mode=none`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.agents.adapters import Adapter, NpmInstall, PipInstall, get_adapter
from orchestrator.buildlock import one_build_at_a_time
from orchestrator.failures import ConfigError, ImageError, ImageNotBuilt
from orchestrator.images.agents.fetch import (
    PIP_CLOSURE_PYTHON,
    Closure,
    ensure_npm_closure,
    ensure_pip_closure,
    ensure_toolchain,
)
from orchestrator.images.agents.lock import NODE_PACKAGE, TOOLCHAIN, LockLine, lock_line, read_lock
from orchestrator.images.content import ContentHash, link_file
from orchestrator.images.recipe import Recipe, ensure
from orchestrator.log import get_logger

log = get_logger(__name__)

LOCK_NAME = "agents.lock"
_CONTEXT_FILES = ("Dockerfile", "install.py")


@dataclass(frozen=True)
class AgentImage:
    name: str
    version: str
    tag: str
    image_id: str
    size_bytes: int
    built: bool
    #: seconds spent fetching (0 when the cache had everything) and building
    fetch_seconds: float
    build_seconds: float
    downloaded_bytes: int
    #: bytes of packages the build context carried (0 when the image existed)
    package_bytes: int
    versions: str


def agent_tag(name: str, digest: str) -> str:
    return f"sbx-agent-{name}:{digest}"


def manifest(adapter: Adapter, lines: dict[str, LockLine]) -> dict[str, Any]:
    """What install.py needs, and (with the files it runs) everything the image depends on."""
    line = lines[adapter.name]
    m: dict[str, Any] = {
        "name": adapter.name, "version": adapter.version, "kind": adapter.install.kind, "digest": line.digest,
        "before": line.before, "version_probe": [list(adapter.version_probe[0]), adapter.version_probe[1]],
    }
    if isinstance(adapter.install, NpmInstall):
        m["dependencies"] = dict(sorted(adapter.install.dependencies.items()))
        m["bins"] = dict(adapter.install.bins)
        m["node_at_runtime"] = adapter.install.node_at_runtime
        m["tools"] = dict(sorted(adapter.install.tools.items()))
        m["toolchain"] = {"node": f"{NODE_PACKAGE}-{lines['node'].version}.tgz",
                          "npm": f"npm-{lines['npm'].version}.tgz"}
        m["toolchain_digests"] = {t: lines[t].digest for t in TOOLCHAIN}
    else:
        m["requirements"] = list(adapter.install.requirements)
        m["bins"] = {b: b for b in adapter.install.bins}
    return m


def input_hash(m: dict[str, Any], sandbox_id: str, agents_dir: Path) -> str:
    h = ContentHash(f"target=agent-{m['name']}\nsandbox={sandbox_id}\n")
    for name in _CONTEXT_FILES:
        h.file(name, (agents_dir / name).read_bytes())
    return h.raw(json.dumps(m, sort_keys=True).encode()).tag_digest()


def _lines_for(adapter: Adapter, agents_dir: Path) -> dict[str, LockLine]:
    path = agents_dir / LOCK_NAME
    lock = read_lock(path)
    lines = {adapter.name: lock_line(lock, adapter.name, path, adapter.version)}
    if isinstance(adapter.install, NpmInstall):
        for tool in TOOLCHAIN:
            lines[tool] = lock_line(lock, tool, path)
    return lines


def _fetch(adapter: Adapter, lines: dict[str, LockLine], agents_dir: Path, cache: Path) -> tuple[Closure, dict[str, Path]]:
    lock_path = agents_dir / LOCK_NAME
    line = lines[adapter.name]
    # the download cache (toolchain, npm's content store, wheels) is shared by every agent's build
    with one_build_at_a_time(str(cache.resolve())):
        if isinstance(adapter.install, NpmInstall):
            toolchain = ensure_toolchain(lines, cache, lock_path)
            return ensure_npm_closure(adapter, line, cache, lock_path), toolchain
        return ensure_pip_closure(adapter, line, cache, lock_path), {}


def require_closure_fits(adapter: Adapter, python: str, sandbox: str) -> None:
    """A pip agent's wheels are CPython PIP_CLOSURE_PYTHON builds, so on a sandbox with another Python (an
    environment of Python 3.13) they cannot install: a ConfigError saying so before anything is fetched or
    built, rather than pip's "No matching distribution" deep in the image build. npm agents fit any sandbox."""
    if not isinstance(adapter.install, PipInstall) or ".".join(python.split(".")[:2]) == PIP_CLOSURE_PYTHON:
        return
    raise ConfigError(f"{adapter.name} cannot be built on {sandbox}: its Python is {python}, but {adapter.name}'s "
                      f"wheel closure (images/agents/agents.lock) is for CPython {PIP_CLOSURE_PYTHON} only; run it on "
                      f"a task whose sandbox has Python {PIP_CLOSURE_PYTHON}, or use an npm agent (pi, claude-code, "
                      "codex, opencode), which fits any sandbox")


def _recorded_versions(client, tag: str) -> str:
    """/opt/sbx/versions.txt of an image: what it recorded of its Python and packages (first line `Python X.Y.Z`)."""
    return client.containers.run(tag, ["/opt/sbx/versions.txt"], entrypoint=["cat"], remove=True,
                                 network_mode="none", user="agent").decode()


def sandbox_python(client, sandbox_tag: str) -> str:
    """The Python version (X.Y.Z) of a sandbox image, from its versions.txt."""
    first = _recorded_versions(client, sandbox_tag).partition("\n")[0].split()
    if len(first) != 2 or first[0] != "Python":
        raise ImageError(f"{sandbox_tag}: /opt/sbx/versions.txt does not start with `Python X.Y.Z`: {' '.join(first)!r}")
    return first[1]


def resolve_agent_image(client, name: str, sandbox_id: str, agents_dir: Path):
    """The built image of agent `name` for the current inputs, or ImageNotBuilt (a config error: the run
    stays planned) saying how to build it."""
    import docker.errors

    adapter = get_adapter(name)
    lines = _lines_for(adapter, agents_dir)
    if lines[name].digest is None:
        raise ImageNotBuilt(f"{name} has no digest in {agents_dir / LOCK_NAME}: run `sbx images lock --agents {name}`")
    tag = agent_tag(name, input_hash(manifest(adapter, lines), sandbox_id, agents_dir))
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        raise ImageNotBuilt(f"image {tag} is not built for the current inputs: "
                            f"run `sbx images build --agents {name}` (with `--task TASK` when the run's task has "
                            "its own sandbox: an environment, or a tests task)") from None


def build_agent_images(client, names: list[str] | tuple[str, ...], *, sandbox_tag: str, agents_dir: Path,
                       cache: Path, force: bool = False) -> list[AgentImage]:
    """Fetch (when needed) and build the image of each agent in `names` from the sandbox image `sandbox_tag`.
    A pip agent on a sandbox of another Python than its closure's is a ConfigError before anything is fetched."""
    sandbox_id = client.images.get(sandbox_tag).id
    adapters = [get_adapter(name) for name in names]
    if any(isinstance(a.install, PipInstall) for a in adapters):  # every agent fits before any is built
        python = sandbox_python(client, sandbox_tag)
        for adapter in adapters:
            require_closure_fits(adapter, python, sandbox_tag)
    results = []
    for adapter in adapters:
        name = adapter.name
        lines = _lines_for(adapter, agents_dir)
        if lines[name].digest is None:
            raise ImageError(f"{agents_dir / LOCK_NAME}: {name} has no digest: run `sbx images lock --agents {name}`")
        m = manifest(adapter, lines)
        tag = agent_tag(name, input_hash(m, sandbox_id, agents_dir))
        staged = _Staged()
        got = ensure(client, _recipe(client, adapter, m, lines, tag, sandbox_tag, agents_dir, cache, staged),
                     force=force)
        image, built, closure = got.image, got.built, staged.closure
        fetch_s = staged.fetch_seconds
        build_s = got.seconds - fetch_s if built else 0.0
        versions = _recorded_versions(client, tag)
        results.append(AgentImage(
            name=name, version=adapter.version, tag=tag, image_id=image.id, size_bytes=image.attrs["Size"],
            built=built, fetch_seconds=fetch_s, build_seconds=build_s,
            downloaded_bytes=closure.downloaded_bytes if closure else 0,
            package_bytes=closure.size_bytes if closure else 0, versions=versions,
        ))
    return results


def install_stage_image(client, adapter: Adapter, sandbox_tag: str) -> str:
    """The image install.py runs in. A pip agent's venv is made by its sandbox's own Python, so there. An npm
    agent's tree is the same bytes on any sandbox (install.py checks the installed tree against the lock's
    digest, and Node comes from the locked tarball), so it installs in the standard sandbox when that one is
    built: the engine's layer cache then serves that one install to every sandbox the agent goes on (a tests
    task's, an environment's), where npm ran again for each. The tag does not depend on this choice: what is
    installed is fixed by the lock either way."""
    import docker.errors

    from orchestrator.images.build import resolve_image

    if not isinstance(adapter.install, NpmInstall):
        return sandbox_tag
    try:
        standard = resolve_image(client, "sandbox")
    except (ImageNotBuilt, docker.errors.ImageNotFound):
        return sandbox_tag
    return next((t for t in standard.tags if t.startswith("sbx-sandbox:")), sandbox_tag)


@dataclass
class _Staged:
    """What assembling an agent's context fetched, for its AgentImage (nothing when the image existed)."""
    closure: Closure | None = None
    fetch_seconds: float = 0.0


def _recipe(client, adapter: Adapter, m: dict[str, Any], lines: dict[str, LockLine], tag: str, sandbox_tag: str,
            agents_dir: Path, cache: Path, staged: _Staged) -> Recipe:
    """The agent's image: install.py runs with no network on the closure the context carries, fetched into
    the cache (when missing) and hard-linked into a staging folder only when the image is to be built."""

    @contextlib.contextmanager
    def context() -> Iterator[Path]:
        start = time.monotonic()
        closure, toolchain = _fetch(adapter, lines, agents_dir, cache)
        staged.closure, staged.fetch_seconds = closure, time.monotonic() - start
        stage = cache / "stage" / f"{adapter.name}-{os.getpid()}"
        shutil.rmtree(stage, ignore_errors=True)
        try:
            for name in _CONTEXT_FILES:
                link_file(agents_dir / name, stage / name)
            (stage / "manifest.json").write_text(json.dumps(m, indent=2, sort_keys=True) + "\n")
            for rel, src in closure.files.items():
                link_file(src, stage / rel)
            for tool, src in toolchain.items():
                link_file(src, stage / "toolchain" / m["toolchain"][tool])
            yield stage
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    labels = {"sbx.target": f"agent-{adapter.name}", "sbx.agent": adapter.name, "sbx.agent.version": adapter.version,
              "sbx.agent.digest": m["digest"], "sbx.base": sandbox_tag}
    return Recipe(tag=tag, context=context, base=sandbox_tag, labels=labels,
                  buildargs={"SANDBOX_IMAGE": sandbox_tag, "AGENT": adapter.name},
                  late_buildargs=lambda: {"INSTALL_IMAGE": install_stage_image(client, adapter, sandbox_tag)})
