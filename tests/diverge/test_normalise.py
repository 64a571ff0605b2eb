import json

from orchestrator.diverge.compare import compare_runs
from orchestrator.diverge.normalise import AS_RECORDED, Normalisation, RunNormaliser, canonical_calls
from orchestrator.specs.transcript import CallRecord


def call(
    index: int,
    request: dict,
    response: dict | None = None,
    *,
    events: list | None = None,
    headers: dict | None = None,
    api: str = "anthropic",
) -> CallRecord:
    return CallRecord.model_validate_json(
        json.dumps(
            {
                "v": 1,
                "index": index,
                "api": api,
                "method": "POST",
                "path": "/v1/messages",
                "started_at": 1.0,
                "ttfb_s": None,
                "total_s": None,
                "request": {
                    "headers": headers or {"content-type": "application/json"},
                    "body": json.dumps(request),
                },
                "response": {
                    "status": 200,
                    "headers": {},
                    "body": None if response is None else json.dumps(response),
                    "events": None if events is None else [[n, json.dumps(d)] for n, d in events],
                },
                "stream": events is not None,
                "usage": None,
                "cost_usd": None,
                "outcome": "ok",
                "error": None,
                "speaker": None,
            }
        )
    )


def tool_run(
    tool_ids: list[str], msg_ids: list[str], *, text: str = "done", tool_input_id: str = "abc"
) -> list[CallRecord]:
    """Two Anthropic calls: a tool use, then its result echoed back; ids as given."""
    first_response = {
        "id": msg_ids[0],
        "type": "message",
        "content": [
            {
                "type": "tool_use",
                "id": tool_ids[0],
                "name": "Bash",
                "input": {"command": "ls", "id": tool_input_id},
            }
        ],
    }
    second_request = {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": first_response["content"]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_ids[0], "content": "a b"}],
            },
        ]
    }
    return [
        call(0, {"messages": [{"role": "user", "content": "go"}]}, first_response),
        call(
            1,
            second_request,
            {"id": msg_ids[1], "type": "message", "content": [{"type": "text", "text": text}]},
        ),
    ]


def test_ids_become_ordinals_in_order_of_first_appearance_and_echoes_follow() -> None:
    run = canonical_calls(
        tool_run(
            ["toolu_01AAAAAAAAAAAAAAAAAAAAAA"],
            ["msg_01XXXXXXXXXXXXXXXXXXXXXX", "msg_01YYYYYYYYYYYYYYYYYYYYYY"],
        )
    )
    assert run[0].response["body"]["id"] == "<msg#1>"
    assert run[0].response["body"]["content"][0]["id"] == "<toolu#1>"
    echoed = run[1].request["body"]["messages"]
    assert echoed[1]["content"][0]["id"] == "<toolu#1>"
    assert echoed[2]["content"][0]["tool_use_id"] == "<toolu#1>"
    assert run[1].response["body"]["id"] == "<msg#2>"


def test_identical_content_compares_identical_only_when_normalised() -> None:
    a = tool_run(
        ["toolu_01AAAAAAAAAAAAAAAAAAAAAA"], ["msg_01XXXXXXXXXXXXXXXXXXXXXX", "msg_01YYYYYYYYYYYYYYYYYYYYYY"]
    )
    b = tool_run(
        ["toolu_01BBBBBBBBBBBBBBBBBBBBBB"], ["msg_01ZZZZZZZZZZZZZZZZZZZZZZ", "msg_01WWWWWWWWWWWWWWWWWWWWWW"]
    )
    assert compare_runs(a, b).identical
    raw = compare_runs(a, b, AS_RECORDED)
    assert raw.first_divergence == 0 and raw.where == ("response.body.id", "response.body.content[0].id")


def test_nothing_else_is_normalised() -> None:
    ids = (
        ["toolu_01AAAAAAAAAAAAAAAAAAAAAA"],
        ["msg_01XXXXXXXXXXXXXXXXXXXXXX", "msg_01YYYYYYYYYYYYYYYYYYYYYY"],
    )
    other = (
        ["toolu_01BBBBBBBBBBBBBBBBBBBBBB"],
        ["msg_01ZZZZZZZZZZZZZZZZZZZZZZ", "msg_01WWWWWWWWWWWWWWWWWWWWWW"],
    )
    # a different final text is a real difference
    c = compare_runs(tool_run(*ids), tool_run(*other, text="done!"))
    assert (c.first_divergence, c.where) == (1, ("response.body.content[0].text",))
    # a key named "id" inside the model's tool arguments is content, not an id
    c = compare_runs(
        tool_run(*ids, tool_input_id="user-0000000042"), tool_run(*other, tool_input_id="user-0000000043")
    )
    assert (c.first_divergence, c.where) == (0, ("response.body.content[0].input.id",))


def test_the_placeholder_map_follows_first_appearance_not_the_value() -> None:
    # run B uses the same two tool ids in the opposite roles: still identical after normalisation
    def run(first: str, second: str) -> list[CallRecord]:
        return [
            call(
                0,
                {"m": 1},
                {
                    "content": [
                        {"type": "tool_use", "id": first, "input": {}},
                        {"type": "tool_use", "id": second, "input": {}},
                    ]
                },
            ),
            call(1, {"results": [{"tool_use_id": first}, {"tool_use_id": second}]}, {"content": []}),
        ]

    assert compare_runs(
        run("toolu_01ONEONEONEONE", "toolu_01TWOTWOTWOTWO"),
        run("toolu_01TWOTWOTWOTWO", "toolu_01ONEONEONEONE"),
    ).identical
    # but echoing them back swapped is a real difference
    swapped = run("toolu_01ONEONEONEONE", "toolu_01TWOTWOTWOTWO")
    swapped[1] = call(
        1,
        {"results": [{"tool_use_id": "toolu_01TWOTWOTWOTWO"}, {"tool_use_id": "toolu_01ONEONEONEONE"}]},
        {"content": []},
    )
    c = compare_runs(run("toolu_01ONEONEONEONE", "toolu_01TWOTWOTWOTWO"), swapped)
    assert c.first_divergence == 1 and c.divergence_class.value == "request"


def test_timestamps_session_values_request_ids_and_padding() -> None:
    n = RunNormaliser()
    headers = {
        "x-claude-code-session-id": "6f1c2a8e-1d7b-4b7e-9a51-0c4e2f7d9b10",
        "x-client-request-id": "r-1",
        "content-length": "99",
        "host": "127.0.0.1",
        "user-agent": "claude-cli/2.1.332",
    }
    body = {
        "metadata": {
            "user_id": json.dumps(
                {"device_id": "ab" * 32, "session_id": "6f1c2a8e-1d7b-4b7e-9a51-0c4e2f7d9b10"}
            )
        },
        "prompt_cache_key": "thread-0000-1111",
        "client_metadata": {"x-codex-installation-id": "inst-1"},
        "messages": [{"role": "user", "content": "see 6f1c2a8e-1d7b-4b7e-9a51-0c4e2f7d9b10"}],
    }
    response = {
        "id": "chatcmpl-abcdefghijklmnopqrstuvwxyz123",
        "created": 1764500000,
        "system_fingerprint": "fp_1",
        "obfuscation": "Zq3",
        "choices": [{"message": {"content": "hi"}}],
        "usage": {"prompt_tokens": 10},
    }
    record = call(0, body, response, headers=headers, api="openai-chat")
    request, answer = n.request(record), n.response(record)
    assert request["headers"] == {  # transport headers dropped, session and request ids as placeholders
        "user-agent": "claude-cli/2.1.332",
        "x-claude-code-session-id": "<x-claude-code-session-id#1>",
        "x-client-request-id": "<x-client-request-id#1>",
    }
    assert request["body"]["metadata"]["user_id"] == "<metadata.user_id#1>"
    assert request["body"]["prompt_cache_key"] == "<prompt_cache_key#1>"
    assert request["body"]["client_metadata"] == {
        "x-codex-installation-id": "<client_metadata.x-codex-installation-id#1>"
    }
    assert (
        request["body"]["messages"][0]["content"] == "see <x-claude-code-session-id#1>"
    )  # an echo inside text
    assert answer["body"]["id"] == "<chatcmpl#1>" and answer["body"]["created"] == "<created>"
    assert answer["body"]["obfuscation"] == "<obfuscation>" and answer["body"]["usage"] == "<usage>"
    assert answer["body"]["system_fingerprint"] == "fp_1"  # a provider fingerprint is a real difference
    # short values are replaced where they sit at an id position, never inside other text
    n2 = RunNormaliser()
    short = n2.response(call(0, {}, {"id": "7", "content": "7 apples"}))
    assert short["body"] == {"id": "<id#1>", "content": "7 apples"}


def test_opaque_blobs_only_when_declared() -> None:
    def run(signature: str) -> list[CallRecord]:
        return [
            call(0, {"m": 1}, {"content": [{"type": "thinking", "thinking": "hmm", "signature": signature}]})
        ]

    a, b = run("EqQBCgIYAhIM" + "a" * 40), run("EqQBCgIYAhIM" + "b" * 40)
    c = compare_runs(a, b)
    assert c.first_divergence == 0 and c.opaque_only and c.where == ("response.body.content[0].signature",)
    assert compare_runs(a, b, Normalisation(opaque=True)).identical


def test_remembered_conversation_items_follow_later_learning(monkeypatch) -> None:
    # an id first seen inside long free text, learned later at an id position: the re-sent message must
    # be normalised again, exactly as if nothing had been remembered
    later = "toolu_01LATERLATERLATER00"
    note = {"role": "user", "content": "see " + later + " " + "padding " * 60}
    calls = [
        call(0, {"messages": [note]}, {"content": [{"type": "tool_use", "id": later, "input": {}}]}),
        call(1, {"messages": [note, {"role": "user", "content": "next"}]}, {"content": []}),
    ]
    remembered = canonical_calls(calls)
    assert later in remembered[0].request["body"]["messages"][0]["content"]  # not an id yet at call 0
    assert "<toolu#1>" in remembered[1].request["body"]["messages"][0]["content"]
    monkeypatch.setattr("orchestrator.diverge.normalise.CONVERSATION_KEYS", frozenset())
    monkeypatch.setattr("orchestrator.diverge.normalise._MEMO_CHARS", 10**9)
    assert canonical_calls(calls) == remembered


def test_remembering_changes_nothing_on_the_agents_traffic(monkeypatch) -> None:
    from tests.diverge.standin import AGENTS, Step, run_transcript

    steps = tuple(Step(f"cat f{i}.py", "y = 1\n" * 80) for i in range(6)) + (Step(None, text="ok"),)
    runs = {agent: run_transcript(agent, 9, steps, reasoning=True, thinking=True) for agent in AGENTS}
    remembered = {agent: canonical_calls(run) for agent, run in runs.items()}
    monkeypatch.setattr("orchestrator.diverge.normalise.CONVERSATION_KEYS", frozenset())
    monkeypatch.setattr("orchestrator.diverge.normalise._MEMO_CHARS", 10**9)
    for agent, run in runs.items():
        assert canonical_calls(run) == remembered[agent], agent
