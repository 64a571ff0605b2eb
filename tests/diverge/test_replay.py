"""sbx replay (issue 26) against the stand-in's logged ground truth: a seeded-variation call replayed K times
through the real gateway; its distinct answers, identical share and first-difference positions equal the
stand-in's log. And what it refuses: a call with no stored body, a spend limit too small."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import aiohttp
import pytest

from orchestrator.diverge.replay import Answer, first_difference, replay_calls, stored_request
from orchestrator.failures import ConfigError
from orchestrator.gateway.limits import ModelLimits
from orchestrator.gateway.server import Gateway
from orchestrator.gateway.thread import GatewayThread
from orchestrator.gateway.transcript import read_transcript
from orchestrator.model import Scenario, StandIn, read_log, serve_in_thread
from orchestrator.specs.endpoints import RateCard, RateCards
from tests.gateway.conftest import KEY, PRICE, RUN_DATE, endpoints_for
from tests.model.conftest import SCENARIO

K = 50
#: a conversation at step 1 of SCENARIO (one tool call made): the step with a p=0.5 variant
BODY = json.dumps({
    "model": "m", "max_tokens": 256,
    "tools": [{"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                                                 "required": ["command"]}}],
    "messages": [{"role": "user", "content": "tune it"},
                 {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                    "input": {"command": "./run_experiment"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "0.31"}]}],
}).encode()


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    standin = StandIn(Scenario.model_validate(SCENARIO), log_path=tmp_path / "standin.jsonl", seed=11, vary=True)
    cards = RateCards([(Path("c.yaml"), RateCard(date=RUN_DATE, models={"m": PRICE}))])
    with serve_in_thread(standin) as url:
        with GatewayThread(Gateway(endpoints_for(url), socket_root=tmp_path / "sock", ratecards=cards)) as gw:
            yield gw, standin, tmp_path


def _original(gw: GatewayThread, tmp: Path) -> list[dict]:
    """One agent call through the gateway: the stored call 0 of run `orig`."""
    sock = gw.open_run("orig", "anthropic", "m", ModelLimits(), tmp / "orig.jsonl.gz", run_date=RUN_DATE)

    async def call() -> None:
        async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(sock))) as s:
            async with s.post("http://sandbox/v1/messages", data=BODY,
                              headers={"x-api-key": "dummy", "anthropic-version": "2023-06-01",
                                       "content-type": "application/json"}) as r:
                assert r.status == 200, await r.text()

    import asyncio
    asyncio.run(call())
    gw.close_run("orig")
    return read_transcript(tmp / "orig.jsonl.gz")


def test_replay_matches_standin_log(setup) -> None:
    gw, standin, tmp = setup
    records = _original(gw, tmp)
    target, body, headers = stored_request(records[0])
    assert body == BODY and target == "/v1/messages" and "x-api-key" not in headers
    results, totals = replay_calls(gw, records, [0], K, endpoint="anthropic", model="m", limit_usd=1.0,
                                   transcript_path=tmp / "replay.jsonl.gz", run_id="replay-1")
    (r,) = results
    log = read_log(tmp / "standin.jsonl")
    assert len(log) == 1 + K and all(line["request_sha256"] == log[0]["request_sha256"] for line in log)
    truth = [json.dumps(line["arguments"], sort_keys=True, separators=(",", ":")) for line in log]
    variants = [line["variant"] for line in log]
    assert r.ok == K and r.distinct == len(set(truth[1:])) == len(set(variants[1:])) == 2
    assert r.identical_to_original == sum(v == variants[0] for v in variants[1:])
    differing = [t for t, v in zip(truth[1:], variants[1:]) if v != variants[0]]
    expected_pos = [len(os.path.commonprefix([truth[0], t])) for t in differing]
    assert r.first_positions == expected_pos and r.differences == {"tool_arguments": len(differing)}
    print(f"\nreplay K={K}: distinct {r.distinct}, identical {r.identical_to_original}/{K}, variants "
          f"{sum(v == -1 for v in variants[1:])} step / {sum(v == 0 for v in variants[1:])} variant, "
          f"first diff at {sorted(set(expected_pos))}, cost ${totals.cost_usd:.6f}")
    # the cost is the gateway's, and equals the stand-in's logged usage priced at the card (output differs by variant)
    def priced(u: dict) -> float:
        return ((u["input"] - u["cached_input"]) * PRICE.input + u["cached_input"] * PRICE.cached_input
                + u["output"] * PRICE.output) / 1e6
    assert totals.cost_usd == pytest.approx(sum(priced(line["usage"]) for line in log[1:]))
    assert r.cost_usd == pytest.approx(totals.cost_usd) and totals.refused == 0
    assert r.tokens["input"] == K * records[0]["usage"]["input"]
    assert r.tokens["output"] == sum(line["usage"]["output"] for line in log[1:])


def test_replay_refuses(setup) -> None:
    gw, standin, tmp = setup
    records = _original(gw, tmp)
    with pytest.raises(ConfigError, match="over the spend limit"):
        replay_calls(gw, records, [0], K, endpoint="anthropic", model="m", limit_usd=records[0]["cost_usd"] * 10,
                     transcript_path=tmp / "r.jsonl.gz")
    cut = dict(records[0], request={"headers": {}, "truncated": 123})
    with pytest.raises(ConfigError, match="no stored request body"):
        replay_calls(gw, [cut], [0], 1, endpoint="anthropic", model="m", limit_usd=1.0,
                     transcript_path=tmp / "r.jsonl.gz")
    with pytest.raises(ConfigError, match="no call 7"):
        replay_calls(gw, records, [7], 1, endpoint="anthropic", model="m", limit_usd=1.0,
                     transcript_path=tmp / "r.jsonl.gz")
    assert len(read_log(tmp / "standin.jsonl")) == 1  # nothing was sent


def test_first_difference_classes() -> None:
    a = Answer("hello", (("Bash", '{"command":"ls"}'),), "tool_use")
    assert first_difference(a, a) is None
    assert first_difference(a, Answer("help", a.tools, "tool_use")) == {"class": "text", "tool": None, "position": 3}
    assert first_difference(a, Answer("hello", (("bash", "{}"),), "tool_use"))["class"] == "tool_call"
    assert first_difference(a, Answer("hello", (("Bash", '{"command":"la"}'),), "tool_use")) == \
        {"class": "tool_arguments", "tool": 0, "position": 13}
    assert first_difference(a, Answer("hello", a.tools, "end_turn"))["class"] == "stop_reason"


def _stored_run(gw: GatewayThread, tmp: Path) -> tuple[str, list[str], object, list[dict]]:
    """A run in a home's ledger whose stored transcript holds the original call, and the `sbx replay` argv
    (home, run, endpoints file and rate cards) that reaches the stand-in: (run id, argv, its usage, records)."""
    from orchestrator.artifacts import ArtifactStore
    from orchestrator.home import Home
    from orchestrator.ledger import Ledger, ModelUsage
    from tests.ledger.ledger_helpers import plan

    records = _original(gw, tmp)
    url = gw.gateway.endpoints["anthropic"].base_url
    home = Home.from_env(str(tmp / "home"))
    store = ArtifactStore(home.artifacts_dir)
    usage = ModelUsage(endpoint="anthropic", api="anthropic", model="m", calls=1, ok=1,
                       cost_usd=records[0]["cost_usd"], transcript_sha256=store.put_file(tmp / "orig.jsonl.gz"),
                       closed=True)
    with Ledger(home.ledger_path, create=True) as ledger:
        run_id = plan(ledger)
        ledger.usage.save(run_id, usage)
    (tmp / "endpoints.yaml").write_text(
        f"endpoints:\n  - name: anthropic\n    api: anthropic\n    base_url: {url}\n    key_env: SBX_TEST_KEY\n"
        "    run_headers: true\n    models: [m]\n")
    (tmp / "cards").mkdir()
    (tmp / "cards" / "2026-11-30.yaml").write_text(
        "date: 2026-11-30\nmodels:\n  m: {input: 3.0, cached_input: 0.3, cache_write: 3.75, output: 15.0}\n")
    argv = ["--home", str(tmp / "home"), "replay", run_id, "--endpoints", str(tmp / "endpoints.yaml"),
            "--ratecards", str(tmp / "cards"), "--json"]
    return run_id, argv, usage, records


def test_cli_replay_stores_its_own_row(setup, capsys: pytest.CaptureFixture[str]) -> None:
    """`sbx replay` end to end: the run's transcript from the artifact store, the replays' transcript stored,
    one `replays` row in the ledger, the run's own model usage untouched."""
    from orchestrator.artifacts import ArtifactStore
    from orchestrator.cli import main
    from orchestrator.home import Home
    from orchestrator.ledger import Ledger

    gw, standin, tmp = setup
    run_id, base, usage, records = _stored_run(gw, tmp)
    home = Home.from_env(str(tmp / "home"))
    store = ArtifactStore(home.artifacts_dir)
    argv = [*base, "--call", "0", "--times", "10", "--limit-usd", "0.01"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    (call,) = out["calls"]
    assert call["ok"] == 10 and call["distinct"] in (1, 2) and out["transcript"]
    with Ledger(home.ledger_path) as ledger:
        (row,) = ledger.replays.of_run(run_id)
        assert row.call_indices == (0,) and row.times == 10 and row.calls == 10
        assert row.cost_usd == pytest.approx(out["cost_usd"]) and row.summary["calls"][0]["distinct"] == call["distinct"]
        assert ledger.usage.of_run(run_id) == usage
    assert len(read_transcript(store.get_path(out["transcript"]))) == 10
    # a limit under the expected cost is refused before any call
    small = [("0.000001" if a == "0.01" else a) for a in argv]
    assert main(small) == 2
    with Ledger(home.ledger_path) as ledger:
        assert len(ledger.replays.of_run(run_id)) == 1


def test_stored_replays_read_with_diverge_normalisation(setup) -> None:
    """The replay row and transcript as `sbx replay` stores them, read back through diverge's reader and
    normalisation: the same distinct answers and identical share as the replay's own comparison, each
    difference located inside the tool call's arguments (ids and timestamps normalised away)."""
    from orchestrator.artifacts import ArtifactStore
    from orchestrator.diverge.normalise import AS_RECORDED
    from orchestrator.diverge.replayed import stored_replays
    from orchestrator.ledger import Ledger, ModelUsage
    from orchestrator.ledger.replays import ReplayRow
    from tests.ledger.ledger_helpers import plan

    gw, standin, tmp = setup
    records = _original(gw, tmp)
    k = 12
    results, totals = replay_calls(gw, records, [0], k, endpoint="anthropic", model="m", limit_usd=1.0,
                                   transcript_path=tmp / "replay.jsonl.gz", run_id="replay-2")
    ledger, store = Ledger(tmp / "ledger.sqlite", create=True), ArtifactStore(tmp / "artifacts")
    run_id = plan(ledger)
    ledger.usage.save(run_id, ModelUsage(endpoint="anthropic", api="anthropic", model="m",
                                               transcript_sha256=store.put_file(tmp / "orig.jsonl.gz")))
    ledger.replays.save(ReplayRow("replay-2", run_id, 0.0, "anthropic", "m", (0,), k, 1.0, totals.calls,
                                 totals.cost_usd, store.put_file(tmp / "replay.jsonl.gz"), results[0].summary()))
    ((row, (n,)),) = stored_replays(ledger, store, run_id)
    (r,) = results
    assert row.replay_id == "replay-2" and (n.index, n.times, n.answered) == (0, k, k)
    assert (n.distinct, n.identical_to_original) == (r.distinct, r.identical_to_original)
    assert 0 < n.identical_to_original < k                 # the stand-in's seeded variation, both answers met
    differing = [f for f in n.first_difference if f is not None]
    assert len(differing) == k - r.identical_to_original
    assert differing and all(f.startswith("response.body.content[") and ".input" in f for f in differing), differing
    ((_, (raw,)),) = stored_replays(ledger, store, run_id, AS_RECORDED)   # ids compared as recorded
    assert raw.identical_to_original < n.identical_to_original            # the ids differ call by call
    print(f"first differences: {sorted(set(differing))}")
    print(f"\nnormalised: identical {n.identical_to_original}/{k}, as recorded {raw.identical_to_original}/{k}")
    ledger.close()


def test_cli_compares_replays_with_diverge_normalisation(setup, capsys: pytest.CaptureFixture[str]) -> None:
    """`sbx replay RUN --call 0 --times K --compare` and then `sbx replay RUN --compare` (nothing sent): the
    distinct normalised responses, the share equal to the original and each differing replay's first
    difference (location, class, character position) equal the stand-in's log of the seeded variation."""
    from orchestrator.cli import main

    gw, standin, tmp = setup
    run_id, base, _usage, _records = _stored_run(gw, tmp)
    k = 16
    assert main([*base, "--call", "0", "--times", str(k), "--limit-usd", "0.05", "--compare"]) == 0
    out = json.loads(capsys.readouterr().out)
    ((replay,),) = [r["calls"] for r in out["replays"]]
    assert out["replayed"]["calls"][0]["ok"] == k and out["normalisation"] == "sbx diverge's"
    log = read_log(tmp / "standin.jsonl")
    commands = [line["arguments"]["command"] for line in log]
    variants = [line["variant"] for line in log]
    assert len(log) == 1 + k and len(set(variants[1:])) == 2               # both answers met among the replays
    assert replay["distinct"] == len(set(commands[1:])) and replay["answered"] == k
    assert replay["identical_to_original"] == sum(v == variants[0] for v in variants[1:])
    expected = [None if c == commands[0] else len(os.path.commonprefix([commands[0], c])) for c in commands[1:]]
    firsts = replay["first_differences"]
    assert [None if f is None else f["position"] for f in firsts] == expected
    differing = [f for f in firsts if f is not None]
    assert {f["difference_class"] for f in differing} == {"tool_arguments"}
    (where,) = {f["where"] for f in differing}                            # the tool call's command, each time
    assert re.fullmatch(r"response\.body\.content\[\d\]\.input\.command", where), where
    assert replay["classes"] == {"tool_arguments": len(differing)}
    # read again from the ledger and the artifact store, nothing sent; and as recorded, the ids differ
    assert main([*base, "--compare"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["replays"][0]["calls"][0] == replay and len(read_log(tmp / "standin.jsonl")) == 1 + k
    assert main([*base, "--compare", "--as-recorded"]) == 0
    raw = json.loads(capsys.readouterr().out)["replays"][0]["calls"][0]
    assert 0 < replay["identical_to_original"] < k                     # the seeded variation: both answers met
    assert raw["identical_to_original"] < replay["identical_to_original"]   # as recorded, the ids differ
    # the table a user reads
    assert main([a for a in base if a != "--json"] + ["--compare"]) == 0
    text = capsys.readouterr().out
    assert f"{k:>8} {replay['distinct']:>8} {replay['identical_to_original']:>9}  tool_arguments" in text
    assert f"first differ at {where} (tool_arguments) at character {differing[0]['position']}" in text
    with capsys.disabled():
        print("\n" + text)
    # refused: no --call and no --compare; --call without --times; a run with no stored replay
    assert main([*base]) == 2 and main([*base, "--call", "0"]) == 2
    from orchestrator.home import Home
    from orchestrator.ledger import Ledger
    from tests.ledger.ledger_helpers import plan

    with Ledger(Home.from_env(str(tmp / "home")).ledger_path) as ledger:
        other = plan(ledger)
    assert main([a if a != run_id else other for a in base] + ["--compare"]) == 2
    assert "no stored replay" in capsys.readouterr().err


def test_difference_classes_of_normalised_locations() -> None:
    from orchestrator.diverge.replayed import difference_class, first_difference

    assert difference_class("response.body.content[0].text") == "text"
    assert difference_class("response.body.content[1].input.command") == "tool_arguments"
    assert difference_class("response.body.content[1].name") == "tool_call"
    assert difference_class("response.body.stop_reason") == "stop_reason"
    assert difference_class("response.body.choices[0].message.tool_calls[0].function.arguments") == "tool_arguments"
    assert difference_class("response.body.choices[0].finish_reason") == "stop_reason"
    assert difference_class("response.events[4][1].delta.partial_json") == "tool_arguments"
    assert difference_class("response.events[4][1].delta.text") == "text"
    assert difference_class("response.events[4][0]") == "other"          # the event's name
    assert difference_class("response.status") == "other"                # the HTTP status, not a stop reason
    d = first_difference({"body": {"content": [{"type": "text", "text": "hello"}]}},
                         {"body": {"content": [{"type": "text", "text": "help"}]}})
    assert d is not None and (d.where, d.difference_class, d.position) == ("response.body.content[0].text", "text", 3)
    assert first_difference({"body": {"a": 1}}, {"body": {"a": 1}}) is None
    text = {"type": "text", "text": "done"}
    tool = {"type": "tool_use", "id": "<toolu#0>", "name": "Bash", "input": {"command": "ls"}}
    d = first_difference({"body": {"content": [text]}}, {"body": {"content": [text, tool]}})
    assert d is not None and (d.where, d.difference_class, d.position) == ("response.body.content[1]", "tool_call", None)
    d = first_difference({"body": {"content": [text]}}, {"body": {"content": [tool]}})   # text where a call was
    assert d is not None and (d.where, d.difference_class) == ("response.body.content[0].type", "tool_call")
    d = first_difference({"body": {"stop_reason": "end_turn"}}, {"body": {"stop_reason": "tool_use"}})
    assert d is not None and (d.difference_class, d.position) == ("stop_reason", 0)
