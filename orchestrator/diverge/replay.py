"""Replay (issue 26): one stored request sent again K times through the gateway, and what came back.

`sbx replay RUN --call N --times K` reads call N of the run's gateway transcript and sends its request body,
the bytes the gateway forwarded (the gateway never rewrites a body), with the stored target and headers
(credentials and `x-sbx-*` dropped: the gateway adds the key and, for `run_headers` endpoints, its own run
headers), K times through a gateway socket of its own, under a spend limit. Each answer is reduced to what a
model said, `Answer` (text, tool calls with their arguments, stop reason; ids and timestamps left out), and
the answers are compared with the original's: distinct answers, the share identical to the original, and for
each answer that differs the first difference (which part, its class and the character position in it).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.failures import ConfigError
from orchestrator.gateway.answers import Answer, answer_of

#: request headers never re-sent: credentials, hop-by-hop, the gateway's own
_DROP = {"authorization", "x-api-key", "api-key", "cookie", "host", "content-length", "connection",
         "transfer-encoding", "keep-alive", "accept-encoding", "upgrade", "te", "trailer", "proxy-authorization"}

#: the classes of difference, in the order an answer is compared
CLASSES = ("text", "tool_call", "tool_arguments", "stop_reason")


def _first_diff(a: str, b: str) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def first_difference(a: Answer, b: Answer) -> dict[str, Any] | None:
    """Where `b` first differs from `a`: the class, the tool call (if any) and the character position."""
    if a.text != b.text:
        return {"class": "text", "tool": None, "position": _first_diff(a.text, b.text)}
    for i, (ta, tb) in enumerate(zip(a.tools, b.tools)):
        if ta[0] != tb[0]:
            return {"class": "tool_call", "tool": i, "position": _first_diff(ta[0], tb[0])}
        if ta[1] != tb[1]:
            return {"class": "tool_arguments", "tool": i, "position": _first_diff(ta[1], tb[1])}
    if len(a.tools) != len(b.tools):
        return {"class": "tool_call", "tool": min(len(a.tools), len(b.tools)), "position": 0}
    if a.stop_reason != b.stop_reason:
        return {"class": "stop_reason", "tool": None, "position": 0}
    return None


@dataclass
class CallReplay:
    """K replays of one stored call, compared with the original."""

    index: int
    times: int
    ok: int
    distinct: int                      # distinct answers among the replays that succeeded
    identical_to_original: int
    differences: dict[str, int]        # class -> replays whose first difference is of that class
    first_positions: list[int]         # per differing replay, in order: the character position
    fingerprints: list[str]
    latency_s: list[float]
    tokens: dict[str, int]
    cost_usd: float

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latency_s)
        out = asdict(self)
        out.pop("latency_s")
        out["share_identical"] = self.identical_to_original / self.ok if self.ok else None
        out["latency_median_s"] = lat[len(lat) // 2] if lat else None
        out["fingerprints"] = sorted(set(self.fingerprints))
        return out


def compare(index: int, original: dict[str, Any], replays: list[dict[str, Any]]) -> CallReplay:
    """Compare the transcript records of a call's replays with the original call's."""
    base = answer_of(original)
    ok = [r for r in replays if r.get("outcome") == "ok"]
    answers = [answer_of(r) for r in ok]
    diffs = [first_difference(base, a) for a in answers]
    tokens: Counter[str] = Counter()
    for r in replays:
        tokens.update(r.get("usage") or {})
    return CallReplay(
        index=index, times=len(replays), ok=len(ok), distinct=len({a.key() for a in answers}),
        identical_to_original=sum(d is None for d in diffs),
        differences=dict(Counter(d["class"] for d in diffs if d is not None)),
        first_positions=[d["position"] for d in diffs if d is not None],
        fingerprints=[a.fingerprint for a in answers if a.fingerprint],
        latency_s=[r["total_s"] for r in replays if r.get("total_s") is not None],
        tokens=dict(tokens), cost_usd=sum(r.get("cost_usd") or 0.0 for r in replays))


def stored_request(record: dict[str, Any]) -> tuple[str, bytes, dict[str, str]]:
    """(target, body bytes, headers) of a transcript record, as the gateway forwarded them."""
    request = record.get("request") or {}
    if request.get("truncated") is not None or ("body" not in request and "body_b64" not in request):
        raise ConfigError(f"call {record.get('index')} has no stored request body (refused, or cut at the "
                          "transcript's 4 MiB bound): nothing to replay")
    if "body_b64" in request:
        import base64
        body = base64.b64decode(request["body_b64"])
    else:
        body = request["body"].encode("utf-8")
    headers = {k: v for k, v in (request.get("headers") or {}).items()
               if k.lower() not in _DROP and not k.lower().startswith("x-sbx-") and v != "<redacted>"}
    return record["path"], body, headers


def check_limit(originals: list[dict[str, Any]], times: int, limit_usd: float) -> float:
    """The replays' expected cost (the originals' cost x times); a ConfigError when it is over the limit."""
    costs = [c for r in originals if (c := r.get("cost_usd")) is not None]
    if len(costs) != len(originals):
        raise ConfigError("a call to replay has no recorded cost (unpriced or failed), so no spend limit can be "
                          "checked against it; price the model in a rate card")
    expected = sum(costs) * times
    if expected > limit_usd:
        raise ConfigError(f"replaying {len(originals)} call(s) {times} times is expected to cost ${expected:.6f} "
                          f"(the originals' cost x {times}), over the spend limit ${limit_usd:.6f}; raise --limit-usd "
                          "or lower --times")
    return expected


async def send(sock: Path, target: str, body: bytes, headers: dict[str, str], times: int,
               concurrency: int = 1) -> None:
    """Send one stored request `times` times on a gateway socket (the transcript records the answers)."""
    import aiohttp

    gate = asyncio.Semaphore(concurrency)

    async def one(session: aiohttp.ClientSession) -> None:
        async with gate, session.post("http://sandbox" + target, data=body,
                                      headers={**headers, "authorization": "Bearer replay"}) as r:
            await r.read()

    async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(sock)),
                                     skip_auto_headers=("User-Agent", "Content-Type")) as session:
        await asyncio.gather(*(one(session) for _ in range(times)))


def replay_id(run_id: str) -> str:
    return f"replay-{run_id[-12:]}-{time.time_ns() % 10**12:012d}"


def replay_calls(gateway: Any, records: list[dict[str, Any]], indices: list[int], times: int, *, endpoint: str,
                 model: str, limit_usd: float, transcript_path: Path, seed: int | None = None,
                 run_id: str = "replay") -> tuple[list[CallReplay], Any]:
    """Replay each stored call of `indices` `times` times through `gateway` (a `GatewayThread`) on a socket of
    its own, under `limit_usd` (checked before the first call and enforced by the gateway); the comparisons,
    in the order of `indices`, and the gateway's totals for the replays."""
    from orchestrator.gateway.limits import ModelLimits
    from orchestrator.gateway.transcript import read_transcript

    if times < 1:
        raise ConfigError(f"--times must be at least 1, got {times}")
    by_index = {r.get("index"): r for r in records}
    missing = [i for i in indices if i not in by_index]
    if missing:
        raise ConfigError(f"no call {missing[0]} in the run's transcript (calls 0-{len(records) - 1})")
    originals = [by_index[i] for i in indices]
    requests = [stored_request(r) for r in originals]
    check_limit(originals, times, limit_usd)
    sock = gateway.open_run(run_id, endpoint, model, ModelLimits(cost_usd=limit_usd), transcript_path, seed=seed)
    spans: list[tuple[int, int]] = []
    try:
        for target, body, headers in requests:
            start = len(spans) and spans[-1][1]
            asyncio.run(send(sock, target, body, headers, times))
            spans.append((start, start + times))
    finally:
        totals = gateway.close_run(run_id)
    replayed = sorted(read_transcript(transcript_path), key=lambda r: r["index"])
    results = [compare(i, original, replayed[a:b]) for i, original, (a, b) in zip(indices, originals, spans)]
    return results, totals
