"""One build of each image at a time on this host.

Every builder (the sandbox and scorer images, the agent images, the task and environment images, the
Debian bases, the wheelhouses and the agents' download cache) takes the lock of what it builds, keyed
by the image's tag or the cache folder's path: two studies started together, or the test suite's parallel
workers, then build an image once instead of twice, and never leave a cache half written. Builds of
different things go ahead side by side: a host-wide lock made a worker that needed one small task image
wait behind another's ten-minute fleet build. A builder takes its lock only when it has something to build
(its image is missing), so runs on built images never wait on it.

Each lock is an flock(2) on its own file under the temporary folder: the kernel releases it when its holder
dies, so a killed build never leaves the host locked. A key is re-entrant within a thread (a builder that
calls itself through another), threads of one process take turns on a key, and nested keys are always
taken outer (an image) before inner (its base, its wheelhouse, a download cache), never the other way round,
so two processes cannot wait on each other.

With `SBX_BUILD_RECORD=FILE` every lock taken appends one JSON line to FILE (what, seconds waited, seconds
held): where a host's build time went (`.ci/run` prints the sum with scripts/build-record).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from orchestrator.log import get_logger

log = get_logger(__name__)

_guard = threading.Lock()
_thread_locks: dict[str, threading.RLock] = {}
_depth: dict[str, int] = {}  # key -> how deep the thread holding its RLock is in it
_held = threading.local()  # .keys: the keys this thread holds, outermost first


def lock_dir() -> Path:
    return Path(tempfile.gettempdir()) / "sbx-image-build"


def lock_path(what: str) -> Path:
    """The lock file of `what`: a digest of the key, so any tag or path names a short, safe file."""
    return lock_dir() / f"{hashlib.sha256(what.encode()).hexdigest()[:24]}.lock"


def _thread_lock(what: str) -> threading.RLock:
    with _guard:
        return _thread_locks.setdefault(what, threading.RLock())


@contextlib.contextmanager
def one_build_at_a_time(what: str) -> Iterator[None]:
    """Hold this host's build lock of `what` (an image tag or a cache folder) while building it."""
    with _thread_lock(what):
        if _depth.get(what):
            _depth[what] += 1
            try:
                yield
            finally:
                _depth[what] -= 1
            return
        path = lock_path(what)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as handle:
            start = time.monotonic()
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.info("images.build_waiting", what=what, message="another process is building this here")
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                log.info("images.build_waited", what=what, seconds=round(time.monotonic() - start, 1))
            held = time.monotonic()
            _depth[what] = 1
            outer = getattr(_held, "keys", [])
            _held.keys = [*outer, what]
            try:
                yield
            finally:
                _depth[what] = 0
                _held.keys = outer
                _record(what, waited=held - start, held=time.monotonic() - held, within=outer[0] if outer else None)


def _record(what: str, waited: float, held: float, within: str | None) -> None:
    target = os.environ.get("SBX_BUILD_RECORD")
    if not target:
        return
    line = json.dumps({"what": what, "waited_s": round(waited, 2), "held_s": round(held, 2), "within": within,
                       "pid": os.getpid()})
    with open(target, "a") as f:  # one short write per line: lines from parallel processes do not interleave
        f.write(line + "\n")
