"""The token counts of one model call, in the one shape every layer uses (defined here, below the gateway and
the stand-in model, so both can)."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class TokenUsage:
    """One call's token counts, normalised across the wire APIs (orchestrator/gateway/usage.py): `input` is
    every input token (cached and cache-write included), `output` includes `reasoning`. The gateway meters
    and limits these, the stand-in model reports them in each reply (orchestrator/model/wire.py derives each
    API's own fields from them), and a transcript stores them, validated on reading, as
    `specs.transcript.RecordedUsage`."""

    input: int = 0
    cached_input: int = 0
    cache_write: int = 0
    output: int = 0
    reasoning: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @property
    def tokens(self) -> int:
        """What a `model_tokens` limit counts: all input plus all output."""
        return self.input + self.output

    def as_dict(self) -> dict[str, int]:
        return {"input": self.input, "cached_input": self.cached_input, "cache_write": self.cache_write,
                "output": self.output, "reasoning": self.reasoning}
