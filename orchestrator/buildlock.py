"""One image build at a time on this host.

Every builder (the sandbox and scorer images, the agent images, the task and environment images, the
debootstrap bases) shares work folders and caches (the wheelhouse, the sdist and npm caches, the rootfs of a
suite), and two processes building the same image at once do the work twice and can leave a cache half
written: two studies started together, or the test suite's parallel workers. A builder takes this lock
only when it has something to build (its image is missing), so runs on built images never wait on it.

The lock is an flock(2) on one file in the temporary folder: the kernel releases it when its holder dies,
so a killed build never leaves the host locked. It is re-entrant within a thread (a builder that calls
another builder), and threads of one process take turns.
"""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from orchestrator.log import get_logger

log = get_logger(__name__)

_in_process = threading.RLock()
_depth = 0


def lock_path() -> Path:
    return Path(tempfile.gettempdir()) / "sbx-image-build.lock"


@contextlib.contextmanager
def one_build_at_a_time(what: str) -> Iterator[None]:
    """Hold the host's image-build lock while building `what` (a tag or a name, for the log)."""
    global _depth
    with _in_process:
        if _depth:
            _depth += 1
            try:
                yield
            finally:
                _depth -= 1
            return
        with open(lock_path(), "a") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                start = time.monotonic()
                log.info("images.build_waiting", what=what, message="another process is building an image here")
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                log.info("images.build_waited", what=what, seconds=round(time.monotonic() - start, 1))
            _depth = 1
            try:
                yield
            finally:
                _depth = 0
