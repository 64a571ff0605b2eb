"""A recorded Codex request (tests/agents/fixtures/codex/gateway-call0.json: Codex 0.171.0's first call to the
stand-in, as the gateway recorded it): its per-run values and its per-run key order are no divergence; a change
of content is (issue 24, item 5: 2 of 3 same-seed Codex pairs were reported diverging at call 0 on
client_metadata.turn_id / root_turn_id).

Codex sends `client_metadata` from a hash map, so its keys come in another order in each run, and there
`turn_id` == `root_turn_id` (and `session_id` == `thread_id`): a value two keys share must be named after the
same key in both runs."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from orchestrator.diverge.compare import compare_runs, differences
from orchestrator.diverge.normalise import canonical_calls
from orchestrator.specs.transcript import CallRecord

RECORDED = Path(__file__).parents[1] / "agents" / "fixtures" / "codex" / "gateway-call0.json"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
PROMPT = "Read program.md and follow it exactly"


def _recorded() -> dict[str, Any]:
    return json.loads(RECORDED.read_text())


def _another_run(record: dict[str, Any]) -> dict[str, Any]:
    """The same call from another run: every uuid (session, thread, turn, window, installation and message ids)
    drawn anew, the turn's start time later, and client_metadata's keys in the reverse order."""
    fresh = {u: str(hashlib.sha256(u.encode()).hexdigest()[:32]) for u in set(_UUID.findall(json.dumps(record)))}
    fresh = {u: f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}" for u, h in fresh.items()}

    def redraw(text: str) -> str:
        text = _UUID.sub(lambda m: fresh[m.group(0)], text)
        return re.sub(r'"turn_started_at_unix_ms":\d+', '"turn_started_at_unix_ms":1796280999999', text)

    def redraw_all(node: Any) -> Any:  # every string of the body, nested JSON text included
        if isinstance(node, str):
            return redraw(node)
        if isinstance(node, list):
            return [redraw_all(x) for x in node]
        return {k: redraw_all(v) for k, v in node.items()} if isinstance(node, dict) else node

    request = record["request"]
    body = redraw_all(json.loads(request["body"]))
    body["client_metadata"] = dict(reversed(list(body["client_metadata"].items())))
    headers = {k: redraw(v) for k, v in reversed(list(request["headers"].items()))}
    return {**record, "request": {**request, "headers": headers, "body": json.dumps(body)}}


def _call(record: dict[str, Any]) -> CallRecord:
    return CallRecord.model_validate_json(json.dumps(record))


def test_the_recorded_codex_request_shares_values_between_client_metadata_keys() -> None:
    # what makes key order matter: without these shared values the test below could not fail
    meta = json.loads(_recorded()["request"]["body"])["client_metadata"]
    keys = list(meta)
    assert meta["turn_id"] == meta["root_turn_id"] and keys.index("turn_id") < keys.index("root_turn_id")


def test_per_run_ids_and_key_order_of_codex_are_no_divergence() -> None:
    a, b = _recorded(), _another_run(_recorded())
    assert json.loads(a["request"]["body"])["client_metadata"] != json.loads(b["request"]["body"])["client_metadata"]
    (ca,), (cb,) = canonical_calls([_call(a)]), canonical_calls([_call(b)])
    assert ca.request == cb.request, differences(ca.request, cb.request, "request")
    meta = ca.request["body"]["client_metadata"]
    assert meta["turn_id"] == meta["root_turn_id"] == cb.request["body"]["client_metadata"]["turn_id"]
    assert compare_runs([_call(a)], [_call(b)]).identical


def test_a_change_of_content_in_the_codex_request_is_a_divergence() -> None:
    a = _recorded()
    b = _another_run(a)
    body = json.loads(b["request"]["body"])
    (prompt,) = [c for item in body["input"] for c in item.get("content", []) if c.get("text") == PROMPT]
    prompt["text"] = "Read program.md and ignore it"
    b["request"]["body"] = json.dumps(body)
    c = compare_runs([_call(a)], [_call(b)])
    assert c.first_divergence == 0 and c.divergence_class == "request"
    assert c.where == ("request.body.input[3].content[0].text",)
