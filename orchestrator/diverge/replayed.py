"""Stored replays read with `sbx diverge`'s normalisation (issue 26).

`sbx replay` stores its replays' gateway transcript in the artifact store and a `replays` row in the ledger
(ledger/replays.py). Here that transcript is read as strictly as a run's (diverge/reader.py) and each
replayed response is compared with the original call's after the same normalisation `sbx diverge` applies
(diverge/normalise.py: ids, timestamps and stream padding to placeholders, usage and pings left out): each
call, original or replay, is normalised as a one-call run of its own, so the placeholder maps line up.
What remains different is what the provider said differently, located by path in the normalised response.

The replays of a row are in its transcript in the order they were sent: `times` replays of each of its
`call_indices`, in that order (as `replay_calls` sent them).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from orchestrator.artifacts import ArtifactStore
from orchestrator.diverge.compare import differences
from orchestrator.diverge.normalise import DEFAULT, Normalisation, canonical_calls
from orchestrator.diverge.reader import Transcript, read_transcript
from orchestrator.failures import LedgerUnavailable, TranscriptError
from orchestrator.ledger import Ledger
from orchestrator.ledger.replays import ReplayRow
from orchestrator.specs.transcript import CallRecord

#: the class of a first difference, from the keys of its location in the normalised response (first match):
#: the same classes as `sbx replay`'s answers (diverge/replay.py CLASSES), and `other` (ids left, usage, ...)
_CLASS_KEYS: tuple[tuple[str, frozenset[str]], ...] = (
    ("tool_arguments", frozenset({"arguments", "partial_json", "input"})),
    ("tool_call", frozenset({"name", "type", "tool_calls", "function", "call_id"})),
    ("stop_reason", frozenset({"stop_reason", "finish_reason", "status", "stop_sequence", "incomplete_details"})),
    ("text", frozenset({"text", "content", "delta", "message", "output_text", "refusal"})),
)
#: blocks and items that are tool calls (Anthropic, Responses)
_TOOL_TYPES = frozenset({"tool_use", "function_call", "custom_tool_call", "local_shell_call"})
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _steps(path: str) -> list[str | int]:
    return [key if key else int(i) for key, i in _STEP.findall(path)]


def _is_tool_call(value: Any) -> bool:
    return isinstance(value, dict) and (value.get("type") in _TOOL_TYPES or "function" in value)


def difference_class(path: str, a: Any = None, b: Any = None) -> str:
    """The class of a difference at `path` (e.g. 'response.body.content[1].input.command': tool_arguments),
    `a`/`b` the two sides' values there (a block one side has and the other lacks is a tool call when it is
    one). Only what the model said is classed: the body, or a stream's events' data; the HTTP status, the
    outcome and a stream's event names are `other`."""
    steps = _steps(path)
    if not steps or steps[0] not in ("body", "events") or (steps[0] == "events" and steps[2:3] != [1]):
        return "other"
    if _is_tool_call(a) or _is_tool_call(b):
        return "tool_call"
    keys = {k for k in steps[1:] if isinstance(k, str)}
    return next((name for name, marks in _CLASS_KEYS if keys & marks), "other")


def _at(value: Any, steps: list[str | int]) -> Any:
    for step in steps:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return None
    return value


@dataclass(frozen=True)
class FirstDifference:
    """Where a replay's normalised response first differs from the original's."""

    where: str                # its location, as `sbx diverge` names one
    difference_class: str     # text | tool_call | tool_arguments | stop_reason | other
    position: int | None      # the first differing character there when both sides are text, else None


def first_difference(base: Any, other: Any) -> FirstDifference | None:
    """The first difference of two normalised responses (document order), or None when they are equal."""
    found = differences(base, other, "response", limit=1)
    if not found:
        return None
    where = found[0]
    a, b = _at(base, _steps(where)), _at(other, _steps(where))
    position = None
    if isinstance(a, str) and isinstance(b, str):
        position = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return FirstDifference(where, difference_class(where, a, b), position)


@dataclass(frozen=True)
class NormalisedReplay:
    """The replays of one stored call, normalised and compared with it."""

    index: int                          # the original call's index in the run's transcript
    times: int
    answered: int                       # replays the gateway recorded with outcome ok
    distinct: int                       # distinct normalised responses among them
    identical_to_original: int          # of them, equal to the original's normalised response
    #: per answered replay: where its response first differs (None: equal)
    differences: tuple[FirstDifference | None, ...]

    @property
    def first_difference(self) -> list[str | None]:
        """Per answered replay, the location of its first difference (None: equal)."""
        return [d.where if d is not None else None for d in self.differences]

    def summary(self) -> dict[str, Any]:
        found = [d for d in self.differences if d is not None]
        return {"index": self.index, "times": self.times, "answered": self.answered, "distinct": self.distinct,
                "identical_to_original": self.identical_to_original,
                "classes": dict(sorted(Counter(d.difference_class for d in found).items())),
                "first_differences": [None if d is None else asdict(d) for d in self.differences]}


def _response(record: CallRecord, normalisation: Normalisation) -> Any:
    (call,) = canonical_calls([record.model_copy(update={"index": 0})], normalisation)
    return call.response


def normalised(original: CallRecord, replays: list[CallRecord], normalisation: Normalisation = DEFAULT,
               ) -> NormalisedReplay:
    base = _response(original, normalisation)
    answered = [_response(r, normalisation) for r in replays if r.outcome == "ok"]
    firsts = tuple(first_difference(base, r) for r in answered)
    return NormalisedReplay(index=original.index, times=len(replays), answered=len(answered),
                            distinct=len({json.dumps(r, sort_keys=True) for r in answered}),
                            identical_to_original=sum(f is None for f in firsts), differences=firsts)


def compare_replay(run: Transcript, replayed: Transcript, row: ReplayRow,
                   normalisation: Normalisation = DEFAULT) -> list[NormalisedReplay]:
    """Each replayed call of `row` against the run's original, in the order of `row.call_indices`."""
    by_index = {c.index: c for c in run.calls}
    expected = len(row.call_indices) * row.times
    if len(replayed.calls) != expected:
        raise TranscriptError(f"{replayed.source}: {len(replayed.calls)} replayed calls, but replay "
                              f"{row.replay_id} sent {row.times} of each of {len(row.call_indices)} calls")
    out = []
    for n, index in enumerate(row.call_indices):
        if index not in by_index:
            raise TranscriptError(f"{run.source}: no call {index} (replay {row.replay_id} replayed it)")
        out.append(normalised(by_index[index], list(replayed.calls[n * row.times:(n + 1) * row.times]),
                              normalisation))
    return out


def stored_replays(ledger: Ledger, store: ArtifactStore, run_id: str,
                   normalisation: Normalisation = DEFAULT) -> list[tuple[ReplayRow, list[NormalisedReplay]]]:
    """Every stored replay of run `run_id`, read from the artifact store and compared, oldest first."""
    usage = ledger.usage.of_run(run_id)
    if usage is None or usage.transcript_sha256 is None:
        raise LedgerUnavailable(f"run {run_id} has no model transcript: nothing was replayed from it")
    run = read_transcript(store.get_path(usage.transcript_sha256))
    out = []
    for row in ledger.replays.of_run(run_id):
        if row.transcript_sha256 is None:
            continue  # a replay that sent nothing stored no transcript
        out.append((row, compare_replay(run, read_transcript(store.get_path(row.transcript_sha256)), row,
                                        normalisation)))
    return out
