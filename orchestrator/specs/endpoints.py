"""Model endpoints (endpoints.yaml) and dated rate cards (ratecards/*.yaml).

An endpoint names a wire API, a base URL and where its key is read from (an environment variable or a file),
never the key itself. The key is read when needed, held as a SecretStr, and never printed.

    endpoints:
      - name: anthropic
        api: anthropic                   # anthropic | openai-chat | openai-responses
        base_url: https://api.anthropic.com
        key_env: ANTHROPIC_API_KEY
      - name: standin
        api: openai-chat
        base_url: http://127.0.0.1:8765
        run_headers: true                # send x-sbx-run-id / x-sbx-seed upstream (for the stand-in)

`base_url` is what the API's `/v1/...` paths hang off (no `/v1`): the gateway forwards the agent's path as sent.

A rate card is in force from its `date` until the next card's; prices are USD per million tokens:

    date: 2026-11-01
    models:
      claude-sonnet-4-5: {input: 3.0, cached_input: 0.30, cache_write: 3.75, output: 15.0}
"""

from __future__ import annotations

import datetime as dt
import math
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from orchestrator.failures import ConfigError
from orchestrator.specs.loading import load_yaml_model

WireApi = Literal["anthropic", "openai-chat", "openai-responses"]
#: the paths a run may call on its endpoint, per API (anything else is refused, never forwarded with a key)
API_PATHS: dict[str, tuple[str, ...]] = {
    "anthropic": ("/v1/messages", "/v1/messages/count_tokens"),
    "openai-chat": ("/v1/chat/completions",),
    "openai-responses": ("/v1/responses",),
}
_MAX_KEY_FILE = 64 * 1024


def api_allows(api: str, path: str) -> bool:
    """Whether the gateway forwards a call on `path` (its query aside) for the wire API `api`."""
    return path.split("?", 1)[0] in API_PATHS[api]


class Endpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    api: WireApi
    base_url: str = Field(description="scheme://host[:port][/prefix], without /v1")
    key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="environment variable holding the key")
    key_file: Path | None = Field(None, description="file holding the key (first line)")
    auth: Literal["x-api-key", "bearer"] | None = Field(None, description="default: x-api-key for anthropic, else bearer")
    run_headers: bool = Field(False, description="send x-sbx-run-id and x-sbx-seed upstream (stand-in endpoints)")
    connect_timeout_s: float = Field(10, gt=0, le=300)
    idle_timeout_s: float = Field(300, gt=0, le=3600, description="longest silence while reading the upstream")
    models: tuple[str, ...] = Field((), description="models this endpoint serves (checked by `sbx study plan`)")

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        from urllib.parse import urlsplit

        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL with a host")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("must not carry credentials, a query or a fragment (keys go in key_env/key_file)")
        if parts.path.rstrip("/").endswith("/v1"):
            raise ValueError("leave out /v1: the agent's path (/v1/...) is appended as sent")
        return v.rstrip("/")

    @model_validator(mode="after")
    def _one_key_source(self) -> Endpoint:
        if self.key_env and self.key_file:
            raise ValueError("give key_env or key_file, not both")
        return self

    @property
    def auth_header(self) -> str:
        return self.auth or ("x-api-key" if self.api == "anthropic" else "bearer")

    @property
    def needs_key(self) -> bool:
        return bool(self.key_env or self.key_file)

    def read_key(self) -> SecretStr | None:
        """The key, read now; None for an endpoint without one. Errors name the source, never the value."""
        if self.key_env:
            value = os.environ.get(self.key_env, "")
            if not value.strip():
                raise ConfigError(f"endpoint {self.name}: environment variable {self.key_env} is not set or empty")
            return SecretStr(value.strip())
        if self.key_file:
            try:
                with self.key_file.open("rb") as f:
                    raw = f.read(_MAX_KEY_FILE)
            except OSError as exc:
                raise ConfigError(f"endpoint {self.name}: cannot read key_file {self.key_file}: {exc.strerror}") from None
            lines = raw.decode("utf-8", errors="replace").strip().splitlines()
            if not lines or not lines[0].strip():
                raise ConfigError(f"endpoint {self.name}: key_file {self.key_file} is empty")
            return SecretStr(lines[0].strip())
        return None

    def allows(self, path: str) -> bool:
        return api_allows(self.api, path)


class EndpointsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoints: tuple[Endpoint, ...] = Field(min_length=1)

    @field_validator("endpoints")
    @classmethod
    def _unique(cls, v: tuple[Endpoint, ...]) -> tuple[Endpoint, ...]:
        names = [e.name for e in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate endpoint names: {', '.join(dupes)}")
        return v


def load_endpoints(path: Path) -> dict[str, Endpoint]:
    """The endpoints of `path` by name; a key_file may start with ~, and a relative one is relative to the
    file's folder."""
    spec = load_yaml_model(path, EndpointsFile)
    out = {}
    for e in spec.endpoints:
        if e.key_file is not None:
            key_file = e.key_file.expanduser()
            e = e.model_copy(update={"key_file": key_file if key_file.is_absolute() else path.parent / key_file})
        out[e.name] = e
    return out


def endpoint(endpoints: dict[str, Endpoint], name: str) -> Endpoint:
    try:
        return endpoints[name]
    except KeyError:
        raise ConfigError(f"no endpoint named {name!r}; known: {', '.join(sorted(endpoints)) or 'none'}") from None


def check_pairing(endpoints: dict[str, Endpoint], name: str, model: str, ratecards: RateCards | None = None,
                  on: dt.date | None = None) -> list[str]:
    """What `sbx study plan` checks for a pairing's endpoint: it exists, its key is readable, it lists the
    model (when it lists any). Returns warnings (no price for the model on `on`); raises ConfigError."""
    ep = endpoint(endpoints, name)
    ep.read_key()
    if ep.models and model not in ep.models:
        raise ConfigError(f"endpoint {name} does not list model {model!r}; it lists: {', '.join(ep.models)}")
    warnings = []
    if ratecards is not None and ratecards.price(model, on or dt.datetime.now(dt.UTC).date()) is None:
        warnings.append(f"no rate card prices {model!r} on {on or 'today'}: its runs' cost will be unknown")
    return warnings


# --- rate cards -----------------------------------------------------------------------------------------


class Price(BaseModel):
    """USD per million tokens. Cached input and cache writes default to the input price when not given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)
    cache_write: float | None = Field(None, ge=0)
    output: float = Field(ge=0)

    def cost(self, usage: object) -> float:
        """USD for one call's normalised usage (input includes cached and cache-write tokens)."""
        inp, cached, write, out = (int(getattr(usage, k)) for k in ("input", "cached_input", "cache_write", "output"))
        plain = max(0, inp - cached - write)
        cached_price = self.input if self.cached_input is None else self.cached_input
        write_price = self.input if self.cache_write is None else self.cache_write
        total = plain * self.input + cached * cached_price + write * write_price + out * self.output
        return total / 1_000_000


class RateCard(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    date: dt.date = Field(description="in force from this date (UTC) until the next card's")
    currency: Literal["USD"] = "USD"
    source: str = Field("", description="where the prices were read (a URL or a note)")
    models: dict[str, Price] = Field(min_length=1)


class RateCards:
    """All cards of a folder, ordered by date."""

    def __init__(self, cards: list[tuple[Path, RateCard]]) -> None:
        self.cards = sorted(cards, key=lambda pc: pc[1].date)
        dates = [c.date for _, c in self.cards]
        if len(set(dates)) != len(dates):
            raise ConfigError("two rate cards have the same date: " + ", ".join(str(p) for p, _ in self.cards))

    def in_force(self, on: dt.date) -> RateCard | None:
        card = None
        for _, c in self.cards:
            if c.date <= on:
                card = c
        return card

    def price(self, model: str, on: dt.date) -> Price | None:
        card = self.in_force(on)
        return None if card is None else card.models.get(model)


def load_ratecards(folder: Path) -> RateCards:
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no rate-card folder")
    return RateCards([(p, load_yaml_model(p, RateCard)) for p in sorted(folder.glob("*.yaml"))])


def cost_usd(price: Price | None, usage: object | None) -> float | None:
    if price is None or usage is None:
        return None
    c = price.cost(usage)
    return c if math.isfinite(c) else None
