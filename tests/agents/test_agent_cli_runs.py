"""Proof that each agent CLI runs in its image under the sandbox's restrictions: headless, through the real
model path (the sandbox's forwarder, the run's gateway socket, the stand-in model on the host), it runs a
shell command in the workspace, commits and finishes; its own usage report, the gateway's measurement and
the stand-in's log agree exactly, and the real key never reaches the sandbox."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_sandbox import REAL_KEY, run_cli

from orchestrator.agents.adapters import adapter_names, get_adapter
from orchestrator.model.scenario import Scenario, Step

pytestmark = pytest.mark.docker

PROOF = Scenario(name="proof", title="Proof run", steps=(
    Step(say="Write and commit the proof.",
         shell="printf 'sbx-proof\\n' > proof.txt && git add proof.txt "
               "&& git -c user.name=agent -c user.email=agent@sbx.invalid commit -qm proof && id -u"),
    Step(finish="Wrote and committed proof.txt."),
))


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "safe.directory=*", "-C", str(ws), *args], capture_output=True, text=True,
                          check=True).stdout


def _check_run(name: str, run, ws: Path, api: str) -> None:
    tail = (run.stdout[-1500:] + b"\n--- stderr ---\n" + run.stderr[-2500:]).decode(errors="replace")
    assert not run.timed_out and run.exit_code == 0, tail
    # the shell step ran in the workspace as the agent user, and its commit is HEAD
    assert (ws / "proof.txt").read_text() == "sbx-proof\n"
    assert _git(ws, "log", "-1", "--format=%s").strip() == "proof"
    assert _git(ws, "status", "--porcelain", "--", "proof.txt") == ""
    # the stand-in was asked for exactly: the shell step, then the finish (OpenCode adds its title call)
    played = [(c["action"], c["step"]) for c in run.calls if c["kind"] != "title"]
    assert played == [("shell", 0), ("finish", 1)], played
    assert {c["api"] for c in run.calls} == {api}
    assert all(c["model"] == "sbx-standin" for c in run.calls)
    # the CLI's own report equals the stand-in's ground truth (OpenCode's leaves out its title call)
    kept = [c for c in run.calls if c["usage_reported"] and c["kind"] != "title"]
    truth = {k: sum(c["usage"][k] for c in kept) for k in ("input", "cached_input", "cache_write", "output", "reasoning")}
    r = run.report
    assert r.complete, (r, tail)
    assert (r.input_tokens, r.cached_input_tokens, r.cache_write_tokens, r.output_tokens, r.reasoning_tokens) == \
        (truth["input"], truth["cached_input"], truth["cache_write"], truth["output"], truth["reasoning"]), r
    assert r.calls == len(kept)
    # the gateway measured every call the stand-in answered, title calls included, and priced them
    every = [c for c in run.calls if c["usage_reported"]]
    g = run.gateway
    assert (g.calls, g.ok, g.refused, g.provider_errors, g.usage_missing) == (len(run.calls), len(run.calls), 0, 0, 0)
    assert g.usage.as_dict() == {k: sum(c["usage"][k] for c in every) for k in truth}
    assert g.cost_usd > 0 and len(run.transcript) == len(run.calls)
    # the real key stayed on the host: not in the CLI's output, its reports, its environment or config
    seen = run.stdout + run.stderr + b"".join(run.reports.values())
    assert REAL_KEY.encode() not in seen
    assert REAL_KEY not in repr(dict(run.launch.env)) + repr(dict(run.launch.files))
    assert not [p.meaning for p in get_adapter(name).diagnose(run.stderr.decode(errors="replace"))
                if p.kind in ("endpoint", "auth", "crash")]


@pytest.mark.parametrize("name", adapter_names())
def test_cli_runs_headless_in_its_image_and_reports_usage(name: str, agent_image, docker_client, workspace,
                                                           tmp_path: Path) -> None:
    adapter = get_adapter(name)
    run = run_cli(docker_client, adapter, agent_image(name).tag, PROOF, workspace, tmp_path)
    _check_run(name, run, workspace, adapter.wire_apis[0])
    print(f"\n{name}: {run.seconds:.1f} s wall, {len(run.calls)} model calls")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "api"), [("opencode", "anthropic"), ("opencode", "openai-responses"),
                                           ("pi", "anthropic"), ("pi", "openai-responses")])
def test_multi_api_clis_speak_each_wire_api(name: str, api: str, agent_image, docker_client, workspace,
                                            tmp_path: Path) -> None:
    run = run_cli(docker_client, get_adapter(name), agent_image(name).tag, PROOF, workspace, tmp_path, wire_api=api)
    _check_run(name, run, workspace, api)
