"""Read a CLI's report files (its `Launch.reports` globs under the state folder) out of a running sandbox.

The state folder is the agent's to write: it may hold symlinks, special files, huge files or thousands of
entries. So the files are read by a `docker exec` as the agent user (nothing it could not read itself),
packed with tar without following links, the stream is cut at `cap_bytes`, and only complete regular
files with plain relative names are kept.
"""

from __future__ import annotations

import io
import tarfile
from typing import Any

from orchestrator.agents.adapters.protocol import Launch

MAX_FILES = 64
#: the globs are expanded by bash in the state folder; only regular files (not links) are listed
_SCRIPT = r"""
cd -- "$1" 2>/dev/null || exit 0
shift
shopt -s nullglob
n=0
for g in "$@"; do
  for f in $g; do
    if [ -f "$f" ] && [ ! -L "$f" ] && [ "$n" -lt "$MAX" ]; then printf '%s\0' "$f"; n=$((n+1)); fi
  done
done | tar --null --no-recursion -T - -cf -
"""


#: seconds the in-container collection of a CLI's report files may take
COLLECT_TIMEOUT_S = 30


def collect_reports(container: Any, launch: Launch, *, cap_bytes: int = 64 * 1024 * 1024,
                    user: str = "agent") -> dict[str, bytes]:
    """name (relative to the state folder) -> bytes, for the report files that exist; never raises on
    what the agent left there (engine errors do raise)."""
    if not launch.reports:
        return {}
    from orchestrator.engine import exec_stream

    # bounded in time in the container too: the files are the agent's (a sparse terabyte reads for hours)
    argv = ["timeout", "-s", "KILL", str(COLLECT_TIMEOUT_S), "bash", "-c", _SCRIPT, "sbx-collect", launch.state,
            *launch.reports]
    exec_id = container.client.api.exec_create(container.id, argv, user=user, stdout=True, stderr=False,
                                               environment={"MAX": str(MAX_FILES)})["Id"]
    buf = bytearray()
    stream = exec_stream(container.client, exec_id)
    try:
        for chunk in stream:
            buf += chunk[: max(0, cap_bytes - len(buf))]
            if len(buf) >= cap_bytes:
                break
    finally:
        stream.close()  # closes the exec's connection even when the cap cut the stream
    return _members(bytes(buf), cap_bytes)


def _members(data: bytes, cap_bytes: int) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
    except tarfile.TarError:
        return out
    try:
        for member in tar:
            name = member.name
            if (not member.isreg() or member.size > cap_bytes or name.startswith("/") or ".." in name.split("/")
                    or len(out) >= MAX_FILES):
                continue
            f = tar.extractfile(member)
            body = f.read() if f is not None else b""
            if len(body) == member.size:
                out[name.removeprefix("./")] = body
    except (tarfile.TarError, OSError, EOFError):
        pass  # a cut stream: keep the complete members read so far
    return out
