"""`sbx images lock --agents NAME`: re-resolve one agent's closure and rewrite its committed lock.

The only place sbx asks a registry what is newest, and only when a person asks for it: npm agents are
resolved by the locked npm on the locked Node (`npm install --package-lock-only --before=DATE`), pip agents
by `pip download --uploaded-prior-to=DATE`. The result replaces images/agents/locks/NAME/ and the agent's
line in agents.lock (its `before` and digest); what changed, package by package, is returned so that an
upgrade is reviewed as a diff, never picked up silently by a build.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orchestrator.agents.adapters import Adapter, NpmInstall, PipInstall
from orchestrator.failures import ImageError
from orchestrator.images.agents.fetch import (
    _download_wheels,
    _read_requirements,
    _run,
    closure_digest,
    ensure_toolchain,
    locked_files,
    npm_command,
    npm_entries,
    package_json,
    pip_digest,
    requirements_text,
)
from orchestrator.images.agents.lock import TOOLCHAIN, LockLine, lock_line, read_lock
from orchestrator.log import get_logger, timed

log = get_logger(__name__)


@dataclass(frozen=True)
class LockChange:
    """What re-locking one agent changed: package -> (old version or None, new version or None)."""

    name: str
    old_digest: str | None
    new_digest: str
    before: str
    changed: dict[str, tuple[str | None, str | None]]

    def render(self) -> str:
        if self.old_digest == self.new_digest:
            return f"{self.name}: unchanged ({self.new_digest}, resolved before {self.before})"
        rows = [f"{self.name}: {self.old_digest or '-'} -> {self.new_digest} (resolved before {self.before}), "
                f"{len(self.changed)} packages changed"]
        for pkg, (old, new) in sorted(self.changed.items()):
            rows.append(f"  {pkg}: {old or '(new)'} -> {new or '(removed)'}")
        return "\n".join(rows)


def _versions(folder: Path) -> dict[str, str]:
    """package -> version of a committed lock (empty when there is none yet)."""
    out: dict[str, str] = {}
    try:
        packages = json.loads((folder / "package-lock.json").read_text())["packages"]
        out.update({path.removeprefix("node_modules/"): e.get("version", "?") for path, e in packages.items()
                    if path and not e.get("optional")})
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    for wheel in _read_requirements(folder / "requirements.txt") or {}:
        name, version = wheel.split("-")[:2]
        out[f"wheel {name}"] = version
    return out


def _rewrite_line(lock_path: Path, new: LockLine) -> None:
    """Replace the agent's line (lock_agent checked it exists), keeping every other line as written."""
    pattern = re.compile(rf"^{re.escape(new.name)}\s")
    rows = lock_path.read_text().splitlines(keepends=True)
    lock_path.write_text("".join(new.render() + "\n" if pattern.match(row) else row for row in rows))


def lock_agent(adapter: Adapter, agents_dir: Path, cache: Path, before: str | None = None) -> LockChange:
    """Resolve `adapter`'s closure as of `before` (YYYY-MM-DD, default today), write it as the committed lock
    and its digest into agents.lock, and say what changed."""
    before = before or dt.date.today().isoformat()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", before):
        raise ImageError(f"--before must be YYYY-MM-DD, got {before!r}")
    lock_path = agents_dir / "agents.lock"
    lock = read_lock(lock_path)
    line = lock_line(lock, adapter.name, lock_path, adapter.version)
    folder = locked_files(lock_path, adapter.name)
    old = _versions(folder)
    cache.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(dir=cache, prefix="lock-"))
    try:
        with timed(log, "agents.lock", agent=adapter.name, before=before):
            digest = (_resolve_npm(adapter, lock, lock_path, cache, before, staged)
                      if isinstance(adapter.install, NpmInstall)
                      else _resolve_pip(adapter, cache, before, staged))
        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(staged, folder)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    _rewrite_line(lock_path, LockLine(adapter.name, adapter.version, before, digest))
    new = _versions(folder)
    changed = {k: (old.get(k), new.get(k)) for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
    return LockChange(adapter.name, line.digest, digest, before, changed)


def _resolve_npm(adapter: Adapter, lock: dict[str, LockLine], lock_path: Path, cache: Path, before: str,
                 out: Path) -> str:
    install = adapter.install
    assert isinstance(install, NpmInstall)
    lines = {t: lock_line(lock, t, lock_path) for t in TOOLCHAIN}
    npm = npm_command(ensure_toolchain(lines, cache, lock_path), cache)
    (out / "package.json").write_text(package_json(adapter.name, install))
    _run([*npm, "install", "--package-lock-only", "--cache", str(cache / "npm"), "--omit=optional",
          "--ignore-scripts", "--omit-lockfile-registry-resolved=false", "--no-audit", "--no-fund",
          f"--before={before}T00:00:00Z"], f"resolving {adapter.name}", cwd=out)
    packages = json.loads((out / "package-lock.json").read_text())["packages"]
    npm_entries(packages)  # every package has its URL and integrity, or this is an error now
    wheels: dict[str, str] = {}
    if install.tools:
        wheels, work = _download_wheels(tuple(install.tools), before, cache, deps=False,
                                        what=f"resolving {adapter.name}'s tools")
        shutil.rmtree(work, ignore_errors=True)
        (out / "requirements.txt").write_text(requirements_text(wheels))
    return closure_digest(packages, wheels)


def _resolve_pip(adapter: Adapter, cache: Path, before: str, out: Path) -> str:
    install = adapter.install
    assert isinstance(install, PipInstall)  # lock_agent sends npm agents to _resolve_npm
    wheels, work = _download_wheels(install.requirements, before, cache, deps=True,
                                    what=f"resolving {adapter.name}'s wheels")
    shutil.rmtree(work, ignore_errors=True)
    (out / "requirements.txt").write_text(requirements_text(wheels))
    return pip_digest(wheels)
