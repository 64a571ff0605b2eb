"""Run one agent CLI headless in its agent image, with the sandbox's restrictions, through the real model path:
stand-in model on the host <- model gateway (the run's own unix socket, real key injected) <- the sandbox's
forwarder (uid 990, started before the CLI) on 127.0.0.1:4000 <- the CLI with a dummy key. Shared by
tests/agents/test_agent_cli_runs.py and benchmarks/bench_agent_clis.py.

The container is started like orchestrator/sandbox/docker.py starts a sandbox: user agent (uid 1000), no
network, all capabilities dropped, no-new-privileges, read-only root with tmpfs /tmp and /home/agent, a
pids and memory limit, `--init`. The CLI runs through `Launch.shell()` with `docker exec`, stdout and
stderr kept apart and capped; its report files are read back with `collect_reports`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.agents.adapters import Adapter, Launch, ModelTarget, SelfReport
from orchestrator.agents.adapters.reports import collect_reports
from orchestrator.gateway import Gateway, ModelLimits, RunTotals, forwarder, read_transcript
from orchestrator.gateway.thread import GatewayThread
from orchestrator.model.scenario import Scenario
from orchestrator.model.server import StandIn, read_log, serve_in_thread
from orchestrator.specs.endpoints import Endpoint, Price, RateCard, RateCards

PORT = forwarder.DEFAULT_PORT
PATH = "/opt/sbx/venv/bin:/usr/local/bin:/usr/bin:/bin"
OUTPUT_CAP = 16 * 1024 * 1024
LABEL = "sbx.test"
MODEL = "sbx-standin"
#: the "real" key the gateway holds; the CLI gets the dummy key and must never see this one
REAL_KEY = "sk-test-AGENTCLI-REALKEY-5f1e2d3c4b5a6978"
KEY_ENV = "SBX_TEST_AGENT_CLI_KEY"
PRICE = Price(input=3.0, cached_input=0.3, cache_write=3.75, output=15.0)


@dataclass
class CliRun:
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool
    reports: dict[str, bytes]
    report: SelfReport
    calls: list[dict[str, Any]]          # the stand-in's own log: the ground truth
    gateway: RunTotals                   # what the gateway measured
    transcript: list[dict[str, Any]]
    launch: Launch
    extra: dict[str, Any] = field(default_factory=dict)


def prepare_workspace(ws: Path) -> None:
    """Hand the workspace to the agent user (git refuses a repository owned by someone else)."""
    subprocess.run(["chown", "-R", "1000:1000", str(ws)], check=True)


def start_container(client, image: str, ws: Path, model_socket: Path, name: str):
    return client.containers.run(
        image, ["sleep", "infinity"], detach=True, name=name, user="agent", working_dir="/workspace",
        network_mode="none", init=True, cap_drop=["ALL"], security_opt=["no-new-privileges"], pids_limit=512,
        mem_limit="2g", memswap_limit="2g", read_only=True,
        tmpfs={"/tmp": "size=256m,mode=1777", "/home/agent": "size=128m,uid=1000,gid=1000,mode=0700"},
        volumes={str(ws): {"bind": "/workspace", "mode": "rw"}}, mounts=[forwarder.mount(model_socket)],
        environment={"HOME": "/home/agent"}, labels={LABEL: "agent-cli", "sbx.test.owner": str(os.getpid())},
    )


def exec_cli(client, container, argv: list[str], env: dict[str, str], timeout_s: float) -> tuple[int | None, bytes, bytes, float, bool]:
    """Run argv as the agent user; (exit code, stdout, stderr, seconds, timed out). Output is capped."""
    api = client.api
    exec_id = api.exec_create(container.id, argv, user="agent", workdir="/workspace", environment=env)["Id"]
    out, err = bytearray(), bytearray()

    def pump() -> None:
        stream = api.exec_start(exec_id, stream=True, demux=True)
        try:
            for o, e in stream:
                if o:
                    out.extend(o[: max(0, OUTPUT_CAP - len(out))])
                if e:
                    err.extend(e[: max(0, OUTPUT_CAP - len(err))])
        finally:  # as orchestrator.engine.exec_stream: docker-py leaves the hijacked socket open at the end
            stream.close()
            with contextlib.suppress(AttributeError, OSError, ValueError):
                reader = stream._response.raw._fp.fp
                sock = reader.raw._sock
                reader.close()
                sock.close()

    start = time.monotonic()
    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    thread.join(timeout_s)
    seconds = time.monotonic() - start
    timed_out = thread.is_alive()
    if timed_out:
        container.kill()
        thread.join(10)
    code = api.exec_inspect(exec_id).get("ExitCode")
    return code, bytes(out), bytes(err), seconds, timed_out


def run_cli(client, adapter: Adapter, image: str, scenario: Scenario, ws: Path, work: Path, *,
            wire_api: str | None = None, seed: int = 0, timeout_s: float = 300) -> CliRun:
    """One headless run of `adapter`'s CLI in `image` on workspace `ws`, against a fresh stand-in."""
    api = wire_api or adapter.wire_apis[0]
    run_id = f"agentcli-{uuid.uuid4().hex[:10]}"
    log_path = work / f"standin-{adapter.name}.jsonl"
    transcript_path = work / f"transcript-{adapter.name}.jsonl.gz"
    prepare_workspace(ws)
    os.environ[KEY_ENV] = REAL_KEY
    standin = StandIn(scenario, log_path=log_path, seed=seed)
    cards = RateCards([(Path("test.yaml"), RateCard(date=dt.date(2026, 1, 1), models={MODEL: PRICE}))])
    name = f"sbx-test-agentcli-{adapter.name}-{uuid.uuid4().hex[:8]}"
    # the sockets in a short folder of their own: a unix socket's path has 107 bytes at most, and a test's
    # tmp_path under a parallel worker (.../popen-gw0/test_..._in_its_2/) leaves too few of them
    with serve_in_thread(standin) as upstream, tempfile.TemporaryDirectory(prefix="sbx-s-") as sockets:
        endpoint = Endpoint(name="standin", api=api, base_url=upstream, key_env=KEY_ENV, run_headers=True)
        gw = Gateway({"standin": endpoint}, socket_root=Path(sockets), ratecards=cards,
                     socket_owner=forwarder.FORWARDER_UID)
        with GatewayThread(gw) as gateway:
            sock = gateway.open_run(run_id, "standin", MODEL, ModelLimits(), transcript_path, seed=seed)
            container = start_container(client, image, ws, sock, name)
            try:
                forwarder.start(container, sock, port=PORT)
                launch = adapter.launch(ModelTarget(forwarder.base_url(PORT), MODEL, api))
                started = time.time()
                code, out, err, seconds, timed_out = exec_cli(client, container, launch.shell(),
                                                              {**launch.env, "PATH": PATH}, timeout_s)
                reports = collect_reports(container, launch) if not timed_out else {}
            finally:
                container.remove(force=True)
            totals = gateway.close_run(run_id)
    calls = read_log(log_path) if log_path.exists() else []
    return CliRun(code, out, err, seconds, timed_out, reports, adapter.parse_usage(out, reports), calls, totals,
                  read_transcript(transcript_path), launch, extra={"exec_started": started})


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
