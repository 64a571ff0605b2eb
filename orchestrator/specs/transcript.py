"""The transcript format: what the gateway records of every model call of a run, and what analyses read.

A run's transcript is one gzip-compressed JSONL file (`*.jsonl.gz`), one JSON object per model call,
in any order (calls that overlap finish out of order); `index` is the order in which the gateway
received the calls of the run, 0-based and without gaps. The writer (the gateway) and the readers
(`orchestrator.diverge.reader`, imported transcripts) share this module (the gateway's writer,
orchestrator/gateway/transcript.py, takes its names from here): the record models, the
header names that must be redacted, and the size limits. docs/divergence.md describes it field by field.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

FORMAT_VERSION = 1
SUFFIX = ".jsonl.gz"
#: what a credential's value is replaced with, in request and response headers alike
REDACTED = "<redacted>"
#: headers that carry credentials; a transcript holding any other value for them is refused
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "set-cookie"}
)

Api = Literal["anthropic", "openai-chat", "openai-responses"]
APIS: tuple[Api, ...] = ("anthropic", "openai-chat", "openai-responses")
Outcome = Literal["ok", "provider_error", "refused", "client_error", "upstream_timeout"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "provider_error", "refused", "client_error", "upstream_timeout")


#: per-record bounds, checked by the models below
MAX_HEADERS = 256
MAX_HEADER_CHARS = 64 * 1024
MAX_EVENTS = 500_000
MAX_PATH_CHARS = 8 * 1024
MAX_ERROR_CHARS = 64 * 1024
MAX_SPEAKER_CHARS = 256


@dataclass(frozen=True)
class TranscriptLimits:
    """Bounds a reader enforces on the file, so a hostile or broken transcript cannot exhaust the host."""

    max_calls: int = 100_000
    #: one JSONL line (one call), uncompressed
    max_record_bytes: int = 64 * 1024 * 1024
    #: the whole transcript, uncompressed
    max_total_bytes: int = 4 * 1024 * 1024 * 1024


DEFAULT_LIMITS = TranscriptLimits()

_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


def _check_headers(headers: dict[str, str]) -> dict[str, str]:
    if len(headers) > MAX_HEADERS:
        raise ValueError(f"{len(headers)} headers, more than {MAX_HEADERS}")
    for name, value in headers.items():
        if not name or name != name.lower() or len(name) > 256:
            raise ValueError(f"header name {name[:80]!r} must be lower-case, 1-256 characters")
        if len(value) > MAX_HEADER_CHARS:
            raise ValueError(f"header {name!r} is longer than {MAX_HEADER_CHARS} characters")
        if name in CREDENTIAL_HEADERS and value != REDACTED:
            raise ValueError(f"header {name!r} holds a credential: it must be {REDACTED!r}")
    return headers


Headers = Annotated[dict[str, str], AfterValidator(_check_headers)]


class RecordedUsage(BaseModel):
    """Tokens of one call as a transcript records them: a `specs.usage.TokenUsage`, validated on reading (input
    includes cached input; output includes reasoning)."""

    model_config = _STRICT
    input: int = Field(ge=0)
    cached_input: int = Field(ge=0)
    cache_write: int = Field(ge=0)
    output: int = Field(ge=0)
    reasoning: int = Field(ge=0)


class RecordedRequest(BaseModel):
    """The request as the agent sent it: headers (credentials redacted) and the body bytes."""

    model_config = _STRICT
    headers: Headers
    #: the body as UTF-8 text; None when there was no body or it was not UTF-8 (then `body_b64`)
    body: str | None = None
    body_b64: str | None = None
    #: the body was cut at the gateway's cap: its original size in bytes (the recorded body is a prefix)
    truncated: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one_body(self) -> RecordedRequest:
        if self.body is not None and self.body_b64 is not None:
            raise ValueError("give body or body_b64, not both")
        if self.body_b64 is not None:
            try:
                base64.b64decode(self.body_b64, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("body_b64 is not valid base64") from None
        return self

    def body_bytes(self) -> bytes | None:
        if self.body_b64 is not None:
            return base64.b64decode(self.body_b64)
        return None if self.body is None else self.body.encode()


class RecordedResponse(BaseModel):
    """The response as the provider sent it: status, headers and either a body or the SSE events in order."""

    model_config = _STRICT
    status: int | None = Field(ge=100, le=599)
    headers: Headers
    body: str | None
    #: server-sent events in order, each [event name or None, data text]
    events: list[tuple[str | None, str]] | None
    #: the body was cut at the gateway's cap: its original size in bytes
    truncated: int | None = Field(None, ge=0)
    #: events past the gateway's cap, not recorded
    events_dropped: int | None = Field(None, ge=0)

    @field_validator("events")
    @classmethod
    def _bounded_events(
        cls, events: list[tuple[str | None, str]] | None
    ) -> list[tuple[str | None, str]] | None:
        if events is not None and len(events) > MAX_EVENTS:
            raise ValueError(f"{len(events)} events, more than {MAX_EVENTS}")
        return events

    @model_validator(mode="after")
    def _body_or_events(self) -> RecordedResponse:
        if self.body is not None and self.events is not None:
            raise ValueError("a response has a body or events, not both")
        return self


class CallRecord(BaseModel):
    """One model call of a run, as one line of the transcript."""

    model_config = _STRICT
    v: Literal[1]
    index: int = Field(ge=0)
    api: Api
    method: str = Field(pattern=r"^[A-Z]{1,16}$")
    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS, pattern=r"^/")
    started_at: float = Field(ge=0)
    ttfb_s: float | None = Field(ge=0)
    total_s: float | None = Field(ge=0)
    request: RecordedRequest
    response: RecordedResponse
    stream: bool
    usage: RecordedUsage | None
    cost_usd: float | None = Field(ge=0)
    outcome: Outcome
    error: str | None = Field(max_length=MAX_ERROR_CHARS)
    #: which side of the run made the call, where a run has several (a subagent, a title generator)
    speaker: str | None = Field(max_length=MAX_SPEAKER_CHARS)


def encode_record(record: CallRecord) -> bytes:
    """One transcript line for this call: compact JSON and a newline (what the gateway appends)."""
    return record.model_dump_json().encode() + b"\n"
