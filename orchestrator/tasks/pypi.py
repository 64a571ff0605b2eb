"""Source distributions from PyPI, fetched on the host and unpacked safely.

The project JSON API (`/pypi/<name>/json`) answers here; its per-version form returns 404 and its file URLs
are relative (`../../packages/...`), so they are joined to the API address. Every download is checked
against the sha256 the index publishes and kept in a cache folder. Unpacking goes through tarfile's
`data` filter (or a checked zip walk): no absolute paths, no `..`, no links out, no devices.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from orchestrator.failures import ConfigError, InfraError
from orchestrator.images.content import file_sha256
from orchestrator.log import get_logger, timed

log = get_logger(__name__)

INDEX = "https://pypi.org/pypi"
_TIMEOUT = 60


@dataclass(frozen=True)
class Release:
    name: str
    version: str
    filename: str
    url: str
    sha256: str
    uploaded: datetime


def _project(name: str, index: str = INDEX) -> tuple[str, dict]:
    url = f"{index}/{name}/json"
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT) as resp:
            return url, json.load(resp)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise ConfigError(f"PyPI has no project {name!r}") from None
        raise InfraError(f"PyPI answered {exc.code} for {url}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise InfraError(f"PyPI is unreachable ({url}): {exc}") from None


def sdist_release(name: str, version: str, index: str = INDEX) -> Release:
    """The sdist of `name==version`, as the index lists it."""
    url, data = _project(name, index)
    files = data.get("releases", {}).get(version)
    if files is None:
        known = ", ".join(list(data.get("releases", {}))[-8:])
        raise ConfigError(f"{name} has no version {version} on PyPI (latest: {known})")
    sdists = [f for f in files if f.get("packagetype") == "sdist"]
    if not sdists:
        raise ConfigError(f"{name} {version} has no sdist on PyPI (only wheels): its tests are not published")
    f = sdists[0]
    return Release(data["info"]["name"], version, f["filename"], urllib.parse.urljoin(url, f["url"]),
                   f["digests"]["sha256"], datetime.fromisoformat(f["upload_time_iso_8601"].replace("Z", "+00:00")))


def latest_before(name: str, when: datetime, index: str = INDEX) -> str:
    """The newest final release of `name` uploaded before `when` (to pin test tools of a release's time)."""
    from packaging.version import InvalidVersion, Version

    _, data = _project(name, index)
    best: tuple[Version, str] | None = None
    for version, files in data.get("releases", {}).items():
        try:
            parsed = Version(version)
        except InvalidVersion:
            continue
        if parsed.is_prerelease or parsed.is_devrelease or not files or all(f.get("yanked") for f in files):
            continue
        first = min(datetime.fromisoformat(f["upload_time_iso_8601"].replace("Z", "+00:00")) for f in files)
        if first < when and (best is None or parsed > best[0]):
            best = (parsed, version)
    if best is None:
        raise ConfigError(f"{name} has no release before {when:%Y-%m-%d}")
    return best[1]


def fetch(release: Release, cache: Path) -> Path:
    """The sdist file in cache/sdists/, downloaded once and checked against its sha256."""
    dest = cache / "sdists" / release.filename
    if dest.is_file() and file_sha256(dest) == release.sha256:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    # one .part per process: two processes fetching the same sdist at once (a study's nodes, parallel tests)
    # must not write into one file; the last checked replace wins, with the same bytes
    part = dest.with_name(f"{dest.name}.{os.getpid()}.part")
    with timed(log, "pypi.download", file=release.filename):
        try:
            with urllib.request.urlopen(release.url, timeout=_TIMEOUT) as resp, open(part, "wb") as out:
                shutil.copyfileobj(resp, out)
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise InfraError(f"downloading {release.url} failed: {exc}") from None
    if file_sha256(part) != release.sha256:
        part.unlink(missing_ok=True)
        raise InfraError(f"{release.filename}: sha256 differs from the index's")
    part.replace(dest)
    return dest


def fetch_pinned(project: str, version: str, filename: str, sha256: str, cache: Path) -> Path:
    """The sdist a lock pins, by its sha256: from cache/sdists/ when a file there has those bytes, else
    downloaded (the index is asked for this exact version's file list only). The index offering other bytes
    under that name is refused, naming both digests."""
    dest = cache / "sdists" / filename
    if dest.is_file() and file_sha256(dest) == sha256:
        return dest
    release = sdist_release(project, version)
    if release.filename != filename or release.sha256 != sha256:
        from orchestrator.failures import DataError

        raise DataError(f"{project} {version}: the index serves {release.filename} sha256:{release.sha256}, "
                        f"the task pins {filename} sha256:{sha256}; refusing it")
    return fetch(release, cache)




def unpack(archive: Path, dest: Path) -> Path:
    """Unpack an sdist into dest (absent or empty) and return its single top folder's contents' root.

    The sdist's top folder (`name-version/`) is stripped: `dest` holds the project files directly."""
    tmp = dest.parent / f".{dest.name}.unpack"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    if archive.name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar")):
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
    elif archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                parts = info.filename.split("/")
                if info.filename.startswith("/") or ".." in parts:
                    raise ConfigError(f"{archive.name}: unsafe member {info.filename!r}")
            zf.extractall(tmp)
    else:
        raise ConfigError(f"{archive.name}: not an sdist archive")
    tops = list(tmp.iterdir())
    if len(tops) != 1 or not tops[0].is_dir():
        raise ConfigError(f"{archive.name}: expected one top folder, found {[t.name for t in tops][:5]}")
    if dest.exists():
        if any(dest.iterdir()):
            raise FileExistsError(f"{dest}: not empty")
        dest.rmdir()
    tops[0].rename(dest)
    tmp.rmdir()
    return dest
