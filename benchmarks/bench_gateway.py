"""Gateway overhead per model call, against calling the stand-in directly; and 64 concurrent streaming runs.

    python benchmarks/bench_gateway.py [--calls 400] [--runs 64] [--calls-per-run 5] [--flood 5000]

Three processes, so neither side's work is timed as the other's: the stand-in (`sbx model serve`, TCP on
loopback), the gateway (a child of this script, one unix socket per run, stand-in as its upstream), and this
client. Each sample is one Chat Completions call with an agent-sized request (~24 KB: tools and a
conversation), streamed or not; direct and gateway calls alternate so machine-load drift hits both alike.
Also timed: the same calls through the in-sandbox forwarder (images/sandbox/forwarder.py run on the host)
in front of the gateway, i.e. the whole path an agent's call takes.

Prints p50 and p99 of time-to-first-byte and total time for each path, the gateway's added milliseconds
and the ratios (targets: p50 added < 2 ms, p99 added < 10 ms). Then 64 runs, each streaming calls on its
own socket at the same time: every call must succeed and the gateway's usage totals must equal the
stand-in's own log exactly, per run. And floods of calls at a run whose limit is spent, 32 at a time: the
gateway's CPU per refused call beside the flooding client's (the host's cost of a flood, as a ratio to what
the agent spends making it; an agent's Python is metered, so a flood costs it budget too), for agent-sized
and for 4 MiB requests; then one whole run flooded with 4 MiB requests through the forwarder, as a sandbox
would: what it costs the host (gateway CPU, transcript bytes) and the forwarder before the run's socket
closes at the gateway's refusal cap, and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "name: bench\nsteps:\n" + "".join(f"  - shell: echo step {i}\n" for i in range(50)) + "  - finish: done\n"


def _body(stream: bool, turn: int) -> dict:
    tools = [{"type": "function", "function": {"name": f"tool{i}", "description": "d" * 400,
                                                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}
             for i in range(10)] + [{"type": "function", "function": {"name": "bash", "parameters": {
                 "type": "object", "properties": {"command": {"type": "string"}}}}}]
    messages = [{"role": "system", "content": "You are a coding agent. " * 200}, {"role": "user", "content": "go " * 300}]
    for i in range(turn):
        messages += [{"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": "bash", "arguments": '{"command":"ls"}'}}]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "file.txt " * 50}]
    body = {"model": "m", "messages": messages, "tools": tools, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


async def _call(session: aiohttp.ClientSession, url: str, payload: bytes) -> tuple[float, float, bytes]:
    t0 = time.perf_counter()
    async with session.post(url, data=payload, headers={"content-type": "application/json",
                                                        "authorization": "Bearer dummy"}) as r:
        first = None
        parts = []
        async for chunk in r.content.iter_any():
            if first is None:
                first = time.perf_counter() - t0
            parts.append(chunk)
        if r.status != 200:
            raise RuntimeError(f"status {r.status}: {b''.join(parts)[:200]!r}")
    return first or 0.0, time.perf_counter() - t0, b"".join(parts)


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if q < 100 else max(values)


class Child:
    """The gateway process: a line protocol on stdin/stdout (open N / close)."""

    def __init__(self, upstream: str, tmp: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--gateway-child", upstream, str(tmp)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, line: str) -> object:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # end of commands: the child stops its gateway and exits
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


async def _gateway_child(upstream: str, tmp: Path) -> None:
    from orchestrator import log
    from orchestrator.gateway import Gateway, ModelLimits
    from orchestrator.specs.endpoints import Endpoint

    log.configure(level="warning")
    ep = Endpoint(name="standin", api="openai-chat", base_url=upstream, run_headers=True)
    gw = Gateway({"standin": ep}, socket_root=tmp / "sock")
    # for the CPU of one refusal: a gateway that never closes a run's socket, so every call of a flood is refused
    uncapped = Gateway({"standin": ep}, socket_root=tmp / "sock-u", max_refusals=10**9)
    await gw.start()
    await uncapped.start()
    owner: dict[str, Gateway] = {}
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    opened: list[str] = []
    while line := (await reader.readline()).decode().strip():
        cmd, _, arg = line.partition(" ")
        if cmd in ("open", "open-spent", "open-spent-uncapped"):  # spent: model_calls spent (all refused)
            socks = {}
            limits = ModelLimits(calls=None if cmd == "open" else 0, in_flight=64)
            target = uncapped if cmd == "open-spent-uncapped" else gw
            for _ in range(int(arg)):
                run = f"run-{len(owner)}-{len(opened)}-{time.monotonic_ns()}"  # a fresh transcript per run
                opened.append(run)
                owner[run] = target
                socks[run] = str(await target.open_run(run, "standin", "m", limits,
                                                       tmp / "transcripts" / f"{run}.jsonl.gz"))
            print(json.dumps(socks), flush=True)
        elif cmd == "cpu":
            print(json.dumps(time.process_time()), flush=True)
        elif cmd == "close":
            totals = {run: (await owner.pop(run).close_run(run)).as_dict() for run in opened}
            for t in totals.values():
                t["transcript_bytes"] = Path(t["transcript"]).stat().st_size
            opened.clear()
            print(json.dumps(totals), flush=True)
    await gw.stop()
    await uncapped.stop()


async def latency(direct: str, socks: dict[str, str], fwd_port: int, calls: int) -> None:
    sock = next(iter(socks.values()))
    async with aiohttp.ClientSession() as d, aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=sock)) as g, \
            aiohttp.ClientSession() as f:
        paths = {"direct": (d, direct), "gateway": (g, "http://sbx"), "forwarder+gateway": (f, f"http://127.0.0.1:{fwd_port}")}
        for stream in (False, True):
            payloads = [json.dumps(_body(stream, t)).encode() for t in range(6)]
            samples: dict[str, dict[str, list[float]]] = {k: {"ttfb": [], "total": []} for k in paths}
            for i in range(calls + 40):
                for name, (session, base) in paths.items():
                    ttfb, total, _ = await _call(session, base + "/v1/chat/completions", payloads[i % len(payloads)])
                    if i >= 40:  # warm-up: connections, caches
                        samples[name]["ttfb"].append(ttfb)
                        samples[name]["total"].append(total)
            size = sum(map(len, payloads)) // len(payloads)
            print(f"\n{'streaming' if stream else 'non-streaming'} chat completions, {calls} calls per path, "
                  f"request ~{size // 1024} KB")
            print(f"  {'path':<20}{'metric':<7}{'p50 ms':>9}{'p99 ms':>9}{'+p50 ms':>9}{'+p99 ms':>9}{'x p50':>7}{'x p99':>7}")
            for name in paths:
                for metric in ("ttfb", "total"):
                    v, base_v = samples[name][metric], samples["direct"][metric]
                    p50, p99, b50, b99 = _pct(v, 50), _pct(v, 99), _pct(base_v, 50), _pct(base_v, 99)
                    print(f"  {name:<20}{metric:<7}{p50 * 1e3:9.2f}{p99 * 1e3:9.2f}{(p50 - b50) * 1e3:9.2f}"
                          f"{(p99 - b99) * 1e3:9.2f}{p50 / b50:7.2f}{p99 / b99:7.2f}")


async def concurrent(socks: dict[str, str], calls_per_run: int) -> dict[str, int]:
    errors = 0
    done = 0

    async def one_run(sock: str) -> None:
        nonlocal errors, done
        async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=sock)) as s:
            for turn in range(calls_per_run):
                try:
                    _, _, body = await _call(s, "http://sbx/v1/chat/completions", json.dumps(_body(True, turn)).encode())
                    if not body.rstrip().endswith(b"data: [DONE]"):
                        errors += 1
                    done += 1
                except Exception:  # counted, reported
                    errors += 1

    start = time.perf_counter()
    await asyncio.gather(*(one_run(s) for s in socks.values()))
    return {"calls": done, "errors": errors, "seconds": time.perf_counter() - start}


async def flood(url: str, calls: int, payload: bytes, width: int = 32, sock: str | None = None) -> dict[str, float]:
    """`calls` requests of `payload`, `width` at a time, at a run whose limit is spent: what an agent that
    floods the gateway makes the host do. Returns this (the flooding) process's CPU, the refusals (any status
    >= 400 from the gateway; a 502 is the forwarder's once the gateway closed the run's socket) and the calls
    that failed outright (the connection was closed before an answer)."""
    refused = failed = gone = 0
    queue = iter(range(calls))

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal refused, failed, gone
        for _ in queue:
            try:
                async with session.post(url + "/v1/chat/completions", data=payload,
                                        headers={"content-type": "application/json"}) as r:
                    await r.read()
                    refused += 400 <= r.status < 500
                    gone += r.status == 502
            except (aiohttp.ClientError, OSError):
                failed += 1

    connector = aiohttp.UnixConnector(path=sock, limit=width) if sock else aiohttp.TCPConnector(limit=width)
    cpu0, start = time.process_time(), time.perf_counter()
    async with aiohttp.ClientSession(connector=connector) as s:
        await asyncio.gather(*(worker(s) for _ in range(width)))
    return {"cpu": time.process_time() - cpu0, "seconds": time.perf_counter() - start, "refused": refused,
            "failed": failed, "gone": gone}


def _big_payload() -> bytes:
    """A 4 MiB request (the gateway's transcript body cap; what the issue's flood sent): one incompressible
    message."""
    text = os.urandom(2 * 1024 * 1024 - 64).hex()
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()


def _flood_report(child: Child, args: argparse.Namespace, fwd_cmd: list[str]) -> None:
    """The floods: per refused call (agent-sized and 4 MiB requests, no refusal cap), then one run through
    the forwarder with the gateway's default refusal cap."""
    import psutil

    small, big = json.dumps(_body(False, 3)).encode(), _big_payload()
    for name, payload, calls in (("agent-sized", small, args.flood), ("4 MiB", big, args.flood_big)):
        spent = next(iter(child.ask("open-spent-uncapped 1").values()))
        cpu0 = child.ask("cpu")
        flooded = asyncio.run(flood("http://sbx", calls, payload, sock=spent))
        gateway_cpu = child.ask("cpu") - cpu0
        (t,) = child.ask("close").values()
        print(f"\nflood of {calls} {name} calls ({len(payload) // 1024} KB, 32 at a time) at a spent limit: "
              f"{flooded['refused']:.0f} refused in {flooded['seconds']:.1f} s; gateway CPU "
              f"{gateway_cpu / calls * 1e3:.2f} ms per refused call, the flooding client's "
              f"{flooded['cpu'] / calls * 1e3:.2f} ms (aiohttp): host/agent CPU ratio "
              f"{gateway_cpu / flooded['cpu']:.2f}; transcript {t['transcript_bytes']} bytes "
              f"({t['transcript_bytes'] / calls:.0f} per call)")
    # one run, as from a sandbox: through the forwarder, the gateway's default refusal cap
    spent = next(iter(child.ask("open-spent 1").values()))
    port = 48000 + os.getpid() % 1000
    fwd = subprocess.Popen([*fwd_cmd, "--socket", spent, "--port", str(port)], stdout=subprocess.PIPE)
    try:
        assert fwd.stdout is not None
        fwd.stdout.readline()
        fwd_proc = psutil.Process(fwd.pid)
        cpu0, fwd0 = child.ask("cpu"), sum(fwd_proc.cpu_times()[:2])
        flooded = asyncio.run(flood(f"http://127.0.0.1:{port}", args.flood_run, big))
        gateway_cpu, fwd_cpu = child.ask("cpu") - cpu0, sum(fwd_proc.cpu_times()[:2]) - fwd0
    finally:
        fwd.terminate()
        fwd.wait(30)
        if fwd.stdout is not None:
            fwd.stdout.close()
    (t,) = child.ask("close").values()
    print(f"\none run flooded through the forwarder: {args.flood_run} calls of 4 MiB, 32 at a time: "
          f"{t['refused']} refused by the gateway, then its socket closed ({t['access_ended']}): "
          f"{flooded['gone']:.0f} answered 502 by the forwarder, {flooded['failed']:.0f} cut, in "
          f"{flooded['seconds']:.1f} s. Host: gateway CPU {gateway_cpu:.2f} s for the whole run, transcript "
          f"{t['transcript_bytes']} bytes. The forwarder (the sandbox's, counted in the container's hard stop): "
          f"{fwd_cpu:.2f} s. The flooding client: {flooded['cpu']:.2f} s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--runs", type=int, default=64)
    ap.add_argument("--calls-per-run", type=int, default=5)
    ap.add_argument("--flood", type=int, default=5000, help="calls of the flood at a spent limit")
    ap.add_argument("--flood-big", type=int, default=300, help="calls of the 4 MiB flood at a spent limit")
    ap.add_argument("--flood-run", type=int, default=2000, help="4 MiB calls of the one run flooded via the forwarder")
    ap.add_argument("--gateway-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.gateway_child:
        if os.environ.get("SBX_BENCH_PROFILE"):  # where the gateway's own time goes
            import cProfile

            prof = cProfile.Profile(time.process_time)  # CPU time, not wall: load does not inflate it
            prof.runcall(asyncio.run, _gateway_child(args.gateway_child[0], Path(args.gateway_child[1])))
            prof.dump_stats(os.environ["SBX_BENCH_PROFILE"])
        else:
            asyncio.run(_gateway_child(args.gateway_child[0], Path(args.gateway_child[1])))
        return 0
    with tempfile.TemporaryDirectory(prefix="sbx-bench-gw-") as tmpdir:
        tmp = Path(tmpdir)
        (tmp / "scenario.yaml").write_text(SCENARIO)
        sbx = Path(sys.executable).parent / "sbx"
        standin = subprocess.Popen([str(sbx), "model", "serve", "--scenario", str(tmp / "scenario.yaml"), "--port", "0",
                                    "--call-log", str(tmp / "standin.jsonl"), "--event-delay-ms", "0"],
                                   stdout=subprocess.PIPE, text=True)
        child = fwd = None
        try:
            assert standin.stdout is not None
            upstream = standin.stdout.readline().split(" on ")[1].split()[0]
            child = Child(upstream, tmp)
            socks = child.ask("open 1")
            fwd_port = 47000 + os.getpid() % 1000
            fwd = subprocess.Popen([sys.executable, "-I", "-S", str(ROOT / "images/sandbox/forwarder.py"), "--socket",
                                    next(iter(socks.values())), "--port", str(fwd_port)], stdout=subprocess.PIPE)
            assert fwd.stdout is not None
            fwd.stdout.readline()
            print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
                  "(other work on the machine makes absolute figures noisy; compare within this run)")
            import psutil

            stand_proc = psutil.Process(standin.pid)
            cpu0, stand0 = child.ask("cpu"), sum(stand_proc.cpu_times()[:2])
            asyncio.run(latency(upstream, socks, fwd_port, args.calls))
            cpu1, stand1 = child.ask("cpu"), sum(stand_proc.cpu_times()[:2])
            via_gateway = 2 * 2 * (args.calls + 40)  # both modes; the gateway and forwarder paths
            print(f"\nCPU per call, independent of load: gateway {(cpu1 - cpu0) / via_gateway * 1e3:.2f} ms "
                  f"(the stand-in itself: {(stand1 - stand0) / (via_gateway * 3 / 2) * 1e3:.2f} ms)")
            child.ask("close")
            _flood_report(child, args, [sys.executable, "-I", "-S", str(ROOT / "images/sandbox/forwarder.py")])
            (tmp / "standin.jsonl").write_text("")  # the concurrency check compares this part of the log only
            socks = child.ask(f"open {args.runs}")
            result = asyncio.run(concurrent(socks, args.calls_per_run))
            totals = child.ask("close")
            time.sleep(0.5)
            log = [json.loads(line) for line in (tmp / "standin.jsonl").read_text().splitlines() if line]
            fields = ("input", "cached_input", "cache_write", "output", "reasoning")
            mismatched = 0
            for run, t in totals.items():
                mine = {k: sum(r["usage"][k] for r in log if r["run_id"] == run and r["usage_reported"]) for k in fields}
                mismatched += mine != t["usage"]
            forwarded = sum(t["forwarded"] for t in totals.values())
            print(f"\n{args.runs} concurrent streaming runs x {args.calls_per_run} calls: {result['calls']} calls in "
                  f"{result['seconds']:.1f} s, {result['errors']} errors; stand-in logged {len(log)} calls, gateway "
                  f"forwarded {forwarded}; runs whose usage differs from the stand-in's log: {mismatched}")
            ok = result["errors"] == 0 and mismatched == 0 and len(log) == forwarded == args.runs * args.calls_per_run
            print("concurrency check:", "PASS" if ok else "FAIL")
            return 0 if ok else 1
        finally:
            for p in (fwd, standin):
                if p is not None:
                    p.terminate()
                    p.wait(30)
            if child is not None:
                child.stop()


if __name__ == "__main__":
    sys.exit(main())
