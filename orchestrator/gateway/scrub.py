"""Keep a secret out of bytes on their way to the agent, also when it is split across chunks."""

from __future__ import annotations

REPLACEMENT = b"<redacted>"


class Scrubber:
    def __init__(self, secret: str | None) -> None:
        self._secret = secret.encode() if secret else b""
        self._held = b""

    def text(self, value: str) -> str:
        return value.replace(self._secret.decode(), REPLACEMENT.decode()) if self._secret else value

    def whole(self, data: bytes) -> bytes:
        return data.replace(self._secret, REPLACEMENT) if self._secret else data

    def feed(self, chunk: bytes) -> bytes:
        """The part of the stream that can go now. A tail that could be the start of the secret is held back
        (only then: otherwise nothing is delayed)."""
        if not self._secret:
            return chunk
        data = (self._held + chunk).replace(self._secret, REPLACEMENT)
        keep = 0
        for k in range(min(len(self._secret) - 1, len(data)), 0, -1):
            if data.endswith(self._secret[:k]):
                keep = k
                break
        self._held = data[len(data) - keep:] if keep else b""
        return data[: len(data) - keep]

    def flush(self) -> bytes:
        held, self._held = self._held, b""
        return held
