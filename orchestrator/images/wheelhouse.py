"""Download the pinned wheels on the host, so image builds need no package index."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from orchestrator.buildlock import one_build_at_a_time
from orchestrator.failures import ImageError
from orchestrator.images.content import file_sha256, link_file
from orchestrator.log import get_logger, timed

log = get_logger(__name__)

# CPython 3.11 on Debian bookworm (glibc 2.36): every manylinux tag up to 2_28 runs there.
_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux2010_x86_64")


_PIN = re.compile(r"([A-Za-z0-9_.-]+)==([A-Za-z0-9_.+-]+)((?:\s+--hash=sha256:[0-9a-f]{64})*)")


def _pins(lock: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, sha256s) from `name==version [--hash=sha256:HEX ...]` lines of a lock file."""
    pins: dict[str, tuple[str, list[str]]] = {}
    for line in lock.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = _PIN.fullmatch(line)
        if not m:
            raise ImageError(f"{lock}: expected name==version [--hash=sha256:...], got {line!r}")
        pins[_norm(m[1])] = (m[2], re.findall(r"sha256:([0-9a-f]{64})", m[3]))
    return pins


def pinned(lock: Path) -> dict[str, str]:
    """name -> version from the lock's lines."""
    return {name: version for name, (version, _) in _pins(lock).items()}


def pinned_hashes(lock: Path) -> dict[str, list[str]]:
    """name -> the sha256s the lock allows for its wheel (empty: the line names a version only)."""
    return {name: hashes for name, (_, hashes) in _pins(lock).items()}


def sdist_only(lock: Path) -> set[str]:
    """Pins whose lock line is tagged `# sdist`: no wheel on the index; built here into a pure-Python wheel."""
    return {_norm(line.split("==")[0].strip()) for line in lock.read_text().splitlines()
            if "==" in line.split("#", 1)[0] and "#" in line and "sdist" in line.split("#", 1)[1]}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _present(dest: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for wheel in dest.glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        found[_norm(name)] = version
    return found


def target_args(python: str) -> list[str]:
    """pip options that select wheels for CPython `python` (X.Y) on Debian bookworm/trixie, binaries only."""
    abi = "cp" + python.replace(".", "")
    cmd = ["--only-binary=:all:", "--python-version", python, "--implementation", "cp",
           "--abi", abi, "--abi", "abi3", "--abi", "none"]
    for platform in _PLATFORMS:
        cmd += ["--platform", platform]
    return cmd


def link_wheels(wheels: Iterable[Path], folder: Path) -> None:
    """Put `wheels` into `folder` (a build context's wheelhouse/): hard links where the filesystem allows
    (a context in the cache beside the wheels costs no copy), else copies."""
    folder.mkdir(parents=True, exist_ok=True)
    for wheel in wheels:
        link_file(wheel, folder / wheel.name)


def ensure_wheelhouse(lock: Path, dest: Path, python: str = "3.11") -> list[Path]:
    """Make `dest` hold exactly one wheel per pin of `lock` (nothing more is fetched when it already does),
    for CPython `python` (X.Y) on Debian."""
    locked = _pins(lock)
    pins = {name: version for name, (version, _) in locked.items()}
    dest.mkdir(parents=True, exist_ok=True)
    if _complete(pins, dest):
        return sorted(dest.glob("*.whl"))
    with one_build_at_a_time(str(dest)):
        if _complete(pins, dest):  # filled by another process while this one waited
            return sorted(dest.glob("*.whl"))
        return _fill(pins, {name: hashes for name, (_, hashes) in locked.items()}, lock, dest, python)


def _complete(pins: dict[str, str], dest: Path) -> bool:
    present = _present(dest)
    return all(present.get(n) == v for n, v in pins.items())


def _fill(pins: dict[str, str], hashes: dict[str, list[str]], lock: Path, dest: Path, python: str) -> list[Path]:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *target_args(python), "--dest", str(dest),
           "--platform", "any"]
    built = sdist_only(lock)
    wanted = {n: v for n, v in pins.items() if n not in built}
    hashed = [n for n in pins if hashes[n]]
    if hashed and len(hashed) != len(pins):
        raise ImageError(f"{lock}: some pins carry hashes and some do not ({sorted(set(pins) - set(hashed))}); "
                         "a lock is either hashed throughout or versions only")
    with timed(log, "image.wheelhouse", wheels=len(pins)), tempfile.TemporaryDirectory(prefix="sbx-wh-") as tmp:
        if hashed:
            # every wheel by its sha256: the index offering other bytes under a pinned name fails the download
            req = Path(tmp) / "requirements.txt"
            req.write_text("".join(f"{n}=={v} " + " ".join(f"--hash=sha256:{h}" for h in hashes[n]) + "\n"
                                   for n, v in wanted.items()))
            cmd += ["--require-hashes", "-r", str(req)]
        else:  # a lock of versions only (a task environment without hashes): what the index serves for them
            log.warning("image.wheelhouse_unhashed", lock=str(lock),
                        hint="`sbx tasks lock` records the sha256 of each pin's file")
            cmd += [f"{n}=={v}" for n, v in wanted.items()]
        if wanted:
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise ImageError(f"pip download for the wheelhouse failed:\n{(proc.stdout + proc.stderr)[-2000:]}")
        for name in sorted(built):
            _build_pure_wheel(name, pins[name], hashes[name], dest, Path(tmp))
    present = _present(dest)
    stale = [w for w in dest.glob("*.whl") if pins.get(_norm(w.name.split('-')[0])) != w.name.split('-')[1]]
    for wheel in stale:  # older pins would make `pip install --no-index` ambiguous
        wheel.unlink()
    missing = [n for n, v in pins.items() if present.get(n) != v]
    if missing:
        raise ImageError(f"wheelhouse {dest} lacks {missing}")
    return sorted(dest.glob("*.whl"))


def _build_pure_wheel(name: str, version: str, hashes: list[str], dest: Path, scratch: Path) -> None:
    """`pip wheel` one sdist-only pin (its sdist checked against `hashes` when the lock has them); the result
    must be pure Python (py3-none-any), so it fits any image."""
    source = f"{name}=={version}"
    if hashes:
        sdists = scratch / f"sdist-{name}"
        req = scratch / f"sdist-{name}.txt"
        req.write_text(f"{source} " + " ".join(f"--hash=sha256:{h}" for h in hashes) + "\n")
        got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                              "--require-hashes", "-r", str(req), "--dest", str(sdists)], capture_output=True, text=True)
        if got.returncode != 0:
            raise ImageError(f"pip download of {source}'s sdist failed:\n{(got.stdout + got.stderr)[-2000:]}")
        source = str(next(sdists.iterdir()))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(dest), source]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ImageError(f"pip wheel {name}=={version} failed:\n{(proc.stdout + proc.stderr)[-2000:]}")
    wheels = [w for w in dest.glob("*.whl") if _norm(w.name.split("-")[0]) == name and w.name.split("-")[1] == version]
    if not wheels or not all(w.name.endswith("-py3-none-any.whl") for w in wheels):
        raise ImageError(f"{name}=={version} did not build into one pure-Python wheel: {[w.name for w in wheels]}")


def install_lock(lock: Path, dest: Path) -> str:
    """The hash-checked requirements an image installs from the wheelhouse `dest` of `lock`."""
    built = sdist_only(lock)
    return hashed_install_lock(((name, version, hashes, name in built) for name, (version, hashes) in _pins(lock).items()),
                               dest, pinned_by=str(lock))


def hashed_install_lock(pins: Iterable[tuple[str, str, Sequence[str], bool]], wheels: Path, pinned_by: str) -> str:
    """The requirements an image installs from `wheels`, in pip's hash-checking mode: each (name, version,
    allowed sha256s, built here) pin with the sha256 of its wheel there. A downloaded wheel must still be a
    file the lock allows (a changed wheelhouse or cache is refused here, before the build); a sdist-only pin
    carries the hash of the wheel built here from its checked sdist."""
    files: dict[tuple[str, str], Path] = {}
    for path in wheels.glob("*.whl"):
        name, version = path.name.split("-")[:2]
        files[(_norm(name), version)] = path
    lines = []
    for name, version, hashes, built_here in pins:
        wheel = files.get((_norm(name), version))
        if wheel is None:
            raise ImageError(f"wheelhouse {wheels} has no wheel for {name}=={version}")
        digest = file_sha256(wheel)
        if hashes and not built_here and digest not in hashes:
            raise ImageError(f"{wheel.name} in {wheels} is sha256:{digest}, but {pinned_by} pins "
                             f"{', '.join('sha256:' + h for h in hashes)}; remove the folder to fetch it again")
        lines.append(f"{name}=={version} --hash=sha256:{digest}\n")
    return "".join(lines)
