"""Each CLI's usage parser against the CLI's real output, and against hostile, garbled and cut output.

The fixtures under fixtures/NAME/ are real: each CLI ran headless in its agent image (tests/agents/
cli_sandbox.py) against the stand-in model, whose own call log (standin.jsonl) is the ground truth the
parsed self-report must equal exactly.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.agents.adapters import SelfReport, adapter_names, get_adapter
from orchestrator.agents.adapters import usage as u
from orchestrator.model.server import read_log

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _fixture(name: str) -> tuple[bytes, dict[str, bytes], list[dict]]:
    folder = FIXTURES / name
    reports = {p.relative_to(folder / "reports").as_posix(): p.read_bytes()
               for p in (folder / "reports").rglob("*") if p.is_file()} if (folder / "reports").is_dir() else {}
    stdout = (folder / "stdout.jsonl").read_bytes() if (folder / "stdout.jsonl").exists() else b""
    return stdout, reports, read_log(folder / "standin.jsonl")


def _truth(calls: list[dict], *, skip_titles: bool = False) -> dict[str, int]:
    kept = [c for c in calls if c["usage_reported"] and not (skip_titles and c["kind"] == "title")]
    t = {k: sum(c["usage"][k] for c in kept) for k in ("input", "cached_input", "cache_write", "output", "reasoning")}
    t["calls"] = len(kept)
    return t


def _as_truth(r: SelfReport) -> dict[str, int | None]:
    return {"input": r.input_tokens, "cached_input": r.cached_input_tokens, "cache_write": r.cache_write_tokens,
            "output": r.output_tokens, "reasoning": r.reasoning_tokens, "calls": r.calls}


FIXTURE_NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def test_every_adapter_has_a_real_fixture() -> None:
    assert FIXTURE_NAMES == adapter_names()


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_self_report_equals_the_stand_in_log(name: str) -> None:
    stdout, reports, calls = _fixture(name)
    report = get_adapter(name).parse_usage(stdout, reports)
    assert report.complete and report.skipped == 0, report
    # OpenCode's stream leaves out its title-generation call: the gap sbx reports beside the gateway's count
    truth = _truth(calls, skip_titles=name == "opencode")
    assert _as_truth(report) == truth
    assert truth["input"] > 0 and truth["output"] > 0 and truth["calls"] >= 2


def test_the_opencode_gap_is_exactly_its_title_call() -> None:
    stdout, reports, calls = _fixture("opencode")
    report = get_adapter("opencode").parse_usage(stdout, reports)
    titles = [c for c in calls if c["kind"] == "title"]
    assert len(titles) == 1
    assert _truth(calls)["input"] - report.input_tokens == titles[0]["usage"]["input"]
    assert _truth(calls)["calls"] - report.calls == 1


def test_claude_code_cost_is_its_own_list_price_estimate() -> None:
    stdout, reports, _ = _fixture("claude-code")
    report = get_adapter("claude-code").parse_usage(stdout, reports)
    result = [json.loads(line) for line in stdout.splitlines() if b'"type":"result"' in line][-1]
    assert report.cost_usd == result["total_cost_usd"] and report.cost_usd > 0
    # assistant lines repeat message_start usage (output_tokens 1); only the result line has the totals
    assert report.output_tokens > 2


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_garbage_between_the_lines_changes_nothing(name: str) -> None:
    """stderr interleaved into stdout, an agent printing JSON-looking junk: skipped, counted, no effect."""
    stdout, reports, _ = _fixture(name)
    clean = get_adapter(name).parse_usage(stdout, reports)
    junk = [b"", b"not json", b"{broken", b"[1,2,3]", b'"a string"', b"{\"type\": 5}", b"\xff\xfe\x00garbage",
            b'{"type":"step_finish","part":{"tokens":"many"}}', b"{" * 5000, b"x" * 100_000]
    rng = random.Random(7)
    lines = stdout.split(b"\n")
    noisy = []
    for line in lines:
        noisy.append(line)
        noisy.append(rng.choice(junk))
    report = get_adapter(name).parse_usage(b"\n".join(noisy), reports)
    assert _as_truth(report) == _as_truth(clean)
    assert report.complete == clean.complete
    if name != "mini-swe-agent":  # its numbers come from traj.json, not stdout
        assert report.skipped > clean.skipped


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_a_cut_stream_never_raises_and_is_never_more_than_the_whole(name: str) -> None:
    stdout, reports, _ = _fixture(name)
    adapter = get_adapter(name)
    whole = adapter.parse_usage(stdout, reports)
    for cut in range(0, len(stdout), max(1, len(stdout) // 60)):
        part = adapter.parse_usage(stdout[:cut], {k: v[:cut] for k, v in reports.items()})
        assert 0 <= part.input_tokens <= whole.input_tokens
        assert 0 <= part.output_tokens <= whole.output_tokens
    assert not adapter.parse_usage(b"", {}).complete


@pytest.mark.parametrize("name", adapter_names())
@pytest.mark.parametrize("bad", [True, -5, 1.5, "12", float("nan"), 10**15, None, [], {}])
def test_counts_of_the_wrong_type_are_skipped_not_trusted(name: str, bad) -> None:
    stdout, reports, _ = _fixture(name)
    text = stdout.decode()
    files = {k: v.decode() for k, v in reports.items()}
    poisoned = {"claude-code": ("\"output_tokens\":114", f"\"output_tokens\":{json.dumps(bad)}"),
                "codex": ("\"output_tokens\":69", f"\"output_tokens\":{json.dumps(bad)}"),
                "opencode": ("\"output\":55", f"\"output\":{json.dumps(bad)}"),
                "pi": ("\"output\":55", f"\"output\":{json.dumps(bad)}"),
                "mini-swe-agent": ("\"completion_tokens\": ", "\"completion_tokens\": " + json.dumps(bad) + ", \"x\": ")}
    old, new = poisoned[name]
    if name == "mini-swe-agent":
        files = {k: v.replace(old, new, 1) for k, v in files.items()}
    else:
        assert old in text, (name, old)
        text = text.replace(old, new)
    report = get_adapter(name).parse_usage(text.encode(), {k: v.encode() for k, v in files.items()})
    for value in _as_truth(report).values():
        assert value is None or (isinstance(value, int) and 0 <= value < u.MAX_COUNT)
    if bad is not None and bad != [] and bad != {}:
        assert report.skipped >= 1


_json = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
                         ["type", "usage", "part", "tokens", "message", "role", "info", "payload", "messages", "extra",
                          "response", "input", "output", "cache", "read", "write", "result", "step_finish",
                          "message_end", "assistant", "turn.completed", "input_tokens", "output_tokens",
                          "model_stats", "api_calls", "total_cost_usd", "cost", "total"]), inner, max_size=5),
                     max_leaves=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(_json, max_size=12), raw=st.binary(max_size=300))
def test_no_parser_raises_on_arbitrary_input(events, raw: bytes) -> None:
    stdout = b"\n".join(json.dumps(e, allow_nan=True).encode() for e in events) + b"\n" + raw
    files = {"traj.json": json.dumps(events[0] if events else {}).encode(),
             "sessions/2026/01/01/rollout-x.jsonl": stdout}
    for name in adapter_names():
        report = get_adapter(name).parse_usage(stdout, files)
        assert isinstance(report, SelfReport)
        for value in _as_truth(report).values():
            assert value is None or (isinstance(value, int) and 0 <= value)
        assert report.cost_usd is None or report.cost_usd >= 0


def test_input_is_bounded(monkeypatch) -> None:
    """A report past the byte or line cap is cut from the front (the final report is at the end)."""
    monkeypatch.setattr(u, "MAX_BYTES", 1 << 20)
    monkeypatch.setattr(u, "MAX_LINES", 5000)
    stdout, reports, calls = _fixture("claude-code")
    for filler in (b"x" * (2 << 20) + b"\n", b'{"type":"system"}\n' * 20_000):
        report = get_adapter("claude-code").parse_usage(filler + stdout, reports)
        assert report.complete and _as_truth(report) == _truth(calls)
        assert report.skipped >= 1
    assert u.loads(b"[" * 100_000 + b"]" * 100_000) is None
