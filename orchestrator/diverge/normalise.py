"""One run's calls in a form two runs can be compared in: random identifiers become ordinal placeholders.

Providers and agents put values in every call that are random per run: message and tool-call ids,
timestamps, session ids. Compared byte for byte, two runs that said exactly the same things differ at
the first response. Each such value is mapped to a placeholder numbered in order of first appearance
within its run (`toolu_01D7...` -> `<toolu#3>`), and the same map is applied to every later string,
because ids are echoed back (`tool_result.tool_use_id`, `tool_call_id`, `function_call_output.call_id`).
Nothing else is changed: every other differing value is a real difference. The tables below are the
whole list, by where the value sits (docs/divergence.md has the reasons and sources).

Key order is no difference: an object's values are learned in sorted key order (and compared as mappings,
so the order they come out in, the one recorded, is no difference either). It matters where two keys hold
one value: Codex sends `client_metadata` in another key order per run (a hash map), with `turn_id` ==
`root_turn_id`, so that value must be named after the same key in both runs.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from orchestrator.specs.transcript import CallRecord

#: JSON keys whose string value is an id of a message, tool call, response or output item
ID_KEYS = frozenset({"id", "call_id", "item_id", "tool_use_id", "tool_call_id", "previous_response_id"})
#: known id prefixes, longest first; the placeholder is named after the prefix (else after the key)
ID_PREFIXES = ("srvtoolu_", "chatcmpl-", "toolu_", "resp_", "call_", "msg_", "fc_", "rs_")
#: JSON keys whose numeric value is a unix timestamp of the call (Chat `created`, Responses `created_at`)
TIMESTAMP_KEYS = frozenset({"created", "created_at", "completed_at"})
#: random padding OpenAI adds to streamed deltas against length side channels (`include_obfuscation`)
PADDING_KEYS = frozenset({"obfuscation"})
#: top-level request-body keys holding an agent-side session value (Codex, pi: the thread id)
SESSION_BODY_KEYS = frozenset({"prompt_cache_key"})
#: request-body objects whose string values are agent-side session values: Claude Code's
#: metadata.user_id (JSON text embedding device and session ids), Codex's client_metadata
SESSION_BODY_OBJECTS = {"metadata": frozenset({"user_id"}), "client_metadata": None}
#: request headers holding agent-side session ids or per-call request ids
SESSION_HEADERS = frozenset(
    {
        "session-id",
        "session_id",
        "thread-id",
        "x-session-id",
        "x-session-affinity",
        "x-claude-code-session-id",
        "x-claude-code-agent-id",
        "x-codex-window-id",
        "x-codex-turn-metadata",
        "x-codex-installation-id",
        "x-codex-parent-thread-id",
        "x-client-request-id",
        "x-request-id",
        "request-id",
        "idempotency-key",
    }
)
#: request headers that frame the HTTP transport, not the call; left out of the comparison
TRANSPORT_HEADERS = frozenset(
    {"host", "content-length", "connection", "transfer-encoding", "keep-alive", "te"}
)
#: opaque per-call blobs (thinking signatures, encrypted reasoning); placeholders only with `opaque=True`
OPAQUE_KEYS = frozenset({"signature", "encrypted_content"})
#: keys whose subtree is data the model or the agent wrote (tool arguments, schemas): ids are not learned there
DATA_KEYS = frozenset({"tools", "input_schema", "parameters", "schema"})
#: request-body keys holding the conversation, re-sent with every call (Messages/Chat `messages`, Responses `input`)
CONVERSATION_KEYS = frozenset({"messages", "input"})
#: keep-alive events that carry nothing (Anthropic sends `ping` at arbitrary points of a stream)
KEEPALIVE_EVENTS = frozenset({"ping"})

#: candidate echoes inside longer strings: maximal runs of id characters, at least 8 long
_TOKEN = re.compile(r"[A-Za-z0-9_\-]{8,}")
#: strings at least this long have their echo replacement remembered (they are re-sent with every call)
_MEMO_CHARS = 256


@dataclass(frozen=True)
class Normalisation:
    """What is made comparable before two runs' calls are compared (declared with the analysis)."""

    #: ids, timestamps, agent session values and request-id headers -> ordinal placeholders; stream padding masked
    ids: bool = True
    #: thinking signatures and encrypted reasoning -> placeholders (off: a differing blob is a difference)
    opaque: bool = False
    #: usage objects masked: token accounting (a cache hit in one run) is not what the model said
    ignore_usage: bool = True
    #: keep-alive `ping` events dropped
    ignore_pings: bool = True


#: the default: ids and padding normalised, opaque blobs compared, usage and pings left out
DEFAULT = Normalisation()
#: compare everything as recorded (what the reference study first did, byte for byte)
AS_RECORDED = Normalisation(ids=False, opaque=False, ignore_usage=False, ignore_pings=False)


@dataclass(frozen=True)
class CanonicalCall:
    """One call as compared: request and response as JSON-like values with placeholders in place."""

    index: int
    speaker: str | None
    request: dict[str, Any]
    response: dict[str, Any]


class RunNormaliser:
    """The placeholder map of one run, filled in order of first appearance as its calls are read in order."""

    def __init__(self, normalisation: Normalisation = DEFAULT) -> None:
        self.normalisation = normalisation
        self.placeholders: dict[str, str] = {}
        self._counts: Counter[str] = Counter()
        self._learned: list[str] = []  # the values in order of learning (the map's versions)
        # long strings come back in every later request (the conversation is re-sent): text -> (result, version)
        self._echoes: dict[str, tuple[str, int]] = {}
        # so are whole conversation items (messages, Responses input items): JSON text -> (result, version)
        self._items: dict[str, tuple[Any, int]] = {}

    # --- values -------------------------------------------------------------------------------------

    def learn(self, value: str, kind: str) -> str:
        """The placeholder of a value at an id position, allocating the next ordinal of its kind if new."""
        known = self.placeholders.get(value)
        if known is not None:
            return known
        self._counts[kind] += 1
        placeholder = f"<{kind}#{self._counts[kind]}>"
        self.placeholders[value] = placeholder
        self._learned.append(value)
        return placeholder

    def echo(self, text: str) -> str:
        """A string with every already-learned value in it (whole, or as a token of 8+ id characters) replaced."""
        if not self.placeholders:
            return text
        if len(text) < _MEMO_CHARS:
            if len(text) >= 8:  # short values are only replaced where they sit at an id position
                whole = self.placeholders.get(text)
                if whole is not None:
                    return whole
            return _TOKEN.sub(self._token, text)
        version = len(self._learned)
        cached = self._echoes.get(text)
        if cached is not None:
            result, seen = cached
            # still right unless a value learned since then occurs in the text
            if not any(value in text for value in self._learned[seen:]):
                self._echoes[text] = (result, version)
                return result
        result = self.placeholders.get(text) or _TOKEN.sub(self._token, text)
        self._echoes[text] = (result, version)
        return result

    def _token(self, match: re.Match[str]) -> str:
        return self.placeholders.get(match.group(0), match.group(0))

    @staticmethod
    def id_kind(value: str, key: str) -> str:
        for prefix in ID_PREFIXES:
            if value.startswith(prefix):
                return prefix.rstrip("_-")
        return key

    # --- JSON -----------------------------------------------------------------------------------------

    def walk(self, node: Any, *, data: bool = False) -> Any:
        """A copy of a JSON value with ids learned and echoes replaced; in `data` subtrees only echoes."""
        n = self.normalisation
        if isinstance(node, str):
            return self.echo(node) if n.ids else node
        if isinstance(node, list):
            return [self.walk(item, data=data) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        is_tool_use = isinstance(node.get("type"), str) and node["type"].endswith("tool_use")
        for key, value in sorted(node.items()):  # the module docstring: key order is no difference
            if n.ignore_usage and key == "usage" and isinstance(value, dict):
                out[key] = "<usage>"
            elif n.opaque and key in OPAQUE_KEYS and isinstance(value, str) and value:
                out[key] = self.learn(value, key)
            elif (
                n.opaque
                and key == "data"
                and node.get("type") == "redacted_thinking"
                and isinstance(value, str)
            ):
                out[key] = self.learn(value, "redacted_thinking")
            elif not n.ids or data:
                out[key] = self.walk(value, data=data or key in DATA_KEYS)
            elif key in ID_KEYS and isinstance(value, str) and value:
                out[key] = self.learn(value, self.id_kind(value, key))
            elif _masked(key, value):
                out[key] = f"<{key}>"
            else:
                out[key] = self.walk(value, data=key in DATA_KEYS or (is_tool_use and key == "input"))
        return {key: out[key] for key in node}  # learned in sorted order, shown in the order recorded

    def _session_values(self, body: dict[str, Any]) -> dict[str, Any]:
        """Agent-side session values at the top of a request body, each replaced whole."""
        out = dict(body)
        for key in sorted(SESSION_BODY_KEYS & body.keys()):
            if isinstance(body[key], str) and body[key]:
                out[key] = self.learn(body[key], key)
        for key, inner in sorted(SESSION_BODY_OBJECTS.items()):
            obj = body.get(key)
            if not isinstance(obj, dict):
                continue
            # sorted: a value two keys share (Codex's turn_id and root_turn_id) is named after the same key
            # whatever order the run sent them in
            replaced = dict(obj)
            for name, value in sorted(obj.items()):
                if (inner is None or name in inner) and isinstance(value, str) and value:
                    replaced[name] = self.learn(value, f"{key}.{name}")
            out[key] = replaced
        return out

    def _body(self, text: str | None, *, request: bool) -> Any:
        if text is None:
            return None
        try:
            parsed = json.loads(text)
        except ValueError:
            return {"text": self.echo(text) if self.normalisation.ids else text}
        if not (request and self.normalisation.ids and isinstance(parsed, dict)):
            return self.walk(parsed)
        parsed = self._session_values(parsed)
        out = {}
        for key, value in sorted(parsed.items()):
            if key in CONVERSATION_KEYS and isinstance(value, list):
                out[key] = [self._conversation_item(item) for item in value]
            else:
                out[key] = self.walk({key: value})[key]
        return {key: out[key] for key in parsed}

    def _conversation_item(self, item: Any) -> Any:
        """One message of the re-sent conversation, normalised once and remembered while nothing new occurs in it."""
        if not isinstance(item, dict):
            return self.walk(item)
        text = json.dumps(item, separators=(",", ":"))
        version = len(self._learned)
        cached = self._items.get(text)
        if cached is not None and not any(value in text for value in self._learned[cached[1] :]):
            self._items[text] = (cached[0], version)
            return cached[0]
        result = self.walk(item)
        self._items[text] = (result, len(self._learned))
        return result

    # --- calls ------------------------------------------------------------------------------------------

    def request(self, record: CallRecord) -> dict[str, Any]:
        n = self.normalisation
        headers: dict[str, str] = {}
        for name in sorted(record.request.headers):
            if name in TRANSPORT_HEADERS:
                continue
            value = record.request.headers[name]
            if n.ids and name in SESSION_HEADERS and value:
                headers[name] = self.learn(value, name)
            else:
                headers[name] = self.echo(value) if n.ids else value
        if record.request.body_b64 is not None:
            body: Any = {"base64": record.request.body_b64}
        else:
            body = self._body(record.request.body, request=True)
        path = self.echo(record.path) if n.ids else record.path
        out = {"method": record.method, "path": path, "headers": headers, "body": body}
        if record.request.truncated is not None:  # a prefix compares equal only if the sizes agree too
            out["truncated"] = record.request.truncated
        return out

    def response(self, record: CallRecord) -> dict[str, Any]:
        response = record.response
        out: dict[str, Any] = {"status": response.status, "outcome": record.outcome}
        for cap in ("truncated", "events_dropped"):
            if getattr(response, cap) is not None:
                out[cap] = getattr(response, cap)
        if response.events is None:
            out["body"] = self._body(response.body, request=False)
            return out
        events = []
        for name, data in response.events:
            if self.normalisation.ignore_pings and (name in KEEPALIVE_EVENTS or _is_ping(data)):
                continue
            events.append([name, self._body(data, request=False)])
        out["events"] = events
        return out


def _masked(key: str, value: Any) -> bool:
    """A timestamp of the call, or stream padding: replaced by a constant (their equality means nothing)."""
    if key in TIMESTAMP_KEYS:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return key in PADDING_KEYS and isinstance(value, str)


def _is_ping(data: str) -> bool:
    return data.startswith('{"type":') and data.replace(" ", "") == '{"type":"ping"}'


def canonical_calls(
    calls: tuple[CallRecord, ...] | list[CallRecord], normalisation: Normalisation = DEFAULT
) -> list[CanonicalCall]:
    """A run's calls in index order, each request then response normalised with the run's one placeholder map."""
    run = RunNormaliser(normalisation)
    out = []
    for record in sorted(calls, key=lambda r: r.index):
        request = run.request(record)
        out.append(CanonicalCall(record.index, record.speaker, request, run.response(record)))
    return out
