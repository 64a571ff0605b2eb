"""The CPU meter in a real sandbox: accuracy against the work done, the gate's start-up cost, the overshoot
past the budget at the kill, and which processes dodge the gate (and what they still cannot dodge).

One run starts a sandbox container (DockerSandbox, the built sandbox image) with the real host Meter, like
a run does (orchestrator/run/sandbox_phase.py), and runs every workload with `docker exec` as the agent user, so
each Python process passes the gate and lands in `py`. It prints five tables and one summary line per target:

1. metered/work: the delta of `py`'s kernel CPU counter against the CPU the workload says it did, summed
   over all its processes (time.process_time / os.times in each process; pool workers report theirs
   back; the forkserver and resource-tracker helpers, which run no task, are read from /proc/<pid>/stat
   before they exit). Target: within 2%. No process can time its own interpreter shutdown, so each
   workload runs under bash, whose `times` (the kernel's account of the waited-for process) gives the
   main process's CPU after its last reading: the `exit` column. The container's total is shown too, and
   for the pools what getrusage(RUSAGE_CHILDREN) saw: a rusage meter misses forkserver workers entirely.
2. gate start-up: median wall time of `python -c pass`, timed inside the container by a bash loop
   ($EPOCHREALTIME, so no docker exec in the number), with the gate and the meter answering, against the
   same image with no /run/sbx mounted (the gate returns at once), the same image with both hooks removed,
   and the scorer image (built without the gate); back to back, and 0.3 s apart (as an agent starts
   Python), with the host side of each gate call (its answer, and the cgroup move within it).
3. overshoot: a busy loop against a 3 CPU-s budget at poll interval 0.2 s, three times (and three more
   with two busy processes on two cores): the meter's reading at the kill and the final `py` reading
   (container paused) minus the budget.
5. dodges (last: its hard stop kills the container): each way of starting compute run as a tool call of an agent program started the way a run
   starts one (through the launcher, which has the host place it in the `agent` cgroup), on a fresh meter:
   where its CPU landed (`py`, or `agent` as the program's tools) and how much of it the budget counted
   (py + tools; the agent program's own CPU is recorded apart); a tool-call loop against a small budget
   (killed at it); the tampering that fails; the hard stop against a loop outside both cgroups.
4. costs: the placement of the agent program (the launcher's start against a bare `python3 -I -S`, timed
   in the container) and the host's reading of every counter at each poll (ms per poll, and its share of
   the poll interval).

    .venv/bin/python benchmarks/bench_meter.py [--cpuset 0,1] [--starts 50] [--skip-dodges]

Takes about two minutes on a quiet 2-core machine (four with the load of other work). Containers and cgroups are removed however it ends.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator import engine  # noqa: E402
from orchestrator.images import resolve_image  # noqa: E402
from orchestrator.sandbox.cgroups import CgroupLayout, CgroupNode  # noqa: E402
from orchestrator.sandbox.container import Box  # noqa: E402
from orchestrator.sandbox.docker import DockerSandbox, SandboxSpec  # noqa: E402
from orchestrator.sandbox.meter import GATE_SOCKET, LAUNCHER, Meter, agent_argv, process_cpu  # noqa: E402
from orchestrator.sandbox.workspace import tar_for_agent  # noqa: E402
from orchestrator.specs import Budget  # noqa: E402

GENEROUS = dict(name="bench", cpu_seconds=5000, hard_stop_cpu_seconds=10000, experiments=1, experiment_timeout_s=60,
                wall_clock_minutes=30, memory_mb=2048, pids=512)

# --- workloads (files in /workspace/bench inside the container) ---------------------------------------

BUSY = """\
import json, resource, time
t = time.process_time()
while time.process_time() - t < 3.0:
    pass
seen = sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))
print(json.dumps({"work": time.process_time(), "rusage_at_end": seen}))
"""

XGB = """\
import json, os, resource
import numpy as np
import xgboost as xgb
rng = np.random.default_rng(0)
X = rng.standard_normal((40_000, 20), dtype=np.float32)
y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * rng.standard_normal(40_000) > 0).astype(np.float32)
d = xgb.DMatrix(X, label=y, nthread=2)
xgb.train({"nthread": 2, "max_depth": 7, "tree_method": "hist", "objective": "binary:logistic", "eta": 0.1},
          d, num_boost_round=int(os.environ.get("ROUNDS", "30")))
t = os.times()
seen = sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))
print(json.dumps({"work": t.user + t.system, "rusage_at_end": seen}))
"""

POOL = """\
import json, multiprocessing as mp, os, resource, sys, time

def work(seconds):
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass
    return os.getpid(), time.process_time()   # this worker's whole CPU so far (process_time starts at 0 in a fork)

def live_cpu(pid):
    # utime + stime of a live process (fields 14 and 15 of /proc/<pid>/stat)
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

if __name__ == "__main__":
    method = sys.argv[1]
    pool = mp.get_context(method).Pool(2)
    results = pool.map(work, [0.75] * 4, chunksize=1)
    pool.close()
    pool.join()
    workers = {}
    for pid, cpu in results:
        workers[pid] = max(workers.get(pid, 0.0), cpu)
    helpers = {}
    if method == "forkserver":
        from multiprocessing import forkserver
        helpers["forkserver"] = live_cpu(forkserver._forkserver._forkserver_pid)
    from multiprocessing import resource_tracker
    if resource_tracker._resource_tracker._pid:
        helpers["resource_tracker"] = live_cpu(resource_tracker._resource_tracker._pid)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    parent = time.process_time()
    print(json.dumps({"work": parent + sum(workers.values()) + sum(helpers.values()), "parent": parent,
                      "workers": sum(workers.values()), "n_workers": len(workers), "helpers": helpers,
                      "rusage_children": ru.ru_utime + ru.ru_stime,
                      "rusage_at_end": me.ru_utime + me.ru_stime + ru.ru_utime + ru.ru_stime}))
"""

# Runs a workload and reports, with the shell's `times`, the CPU of the whole python process as the kernel
# gave it to its waiting parent: everything the process did, its interpreter shutdown included (which the
# process cannot measure itself), plus the children it reaped. bash is not Python: not gated, not in `py`.
UNDER_BASH = 'python "$@"; rc=$?; times; exit $rc'

# N runs of a command, each timed by bash itself: no fork of `date`, no docker exec in the number.
TIMER = ('n=$1; pause=$2; shift 2; for ((i=0; i<n; i++)); do sleep $pause; s=$EPOCHREALTIME; "$@" || exit 3; '
         'e=$EPOCHREALTIME; echo "$s $e"; done')

BUSY_1S = ("import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass\n"
           "cg = [l for l in open('/proc/self/cgroup') if ':cpuacct' in l][0].strip()\n"
           "print('WHERE', cg.rsplit('/', 1)[1])\n")
# the agent program of section 4: a shell that runs one tool call as its child (not `exec`: bash -c would
# replace itself with a lone command) and waits for it, as a Node or Rust agent CLI runs its tool calls
AGENT_SHELL = '"$@"; rc=$?; exit $rc'
MARK_PTH = "import sys; sys._sbx_gate_ran = True\n"


def _bash_seconds(text: str) -> float:
    """`1m2.345s` (bash's `times`) in seconds."""
    m, _, sec = text.rstrip("s").partition("m")
    return int(m) * 60 + float(sec)


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def wait_empty(node: CgroupNode, timeout_s: float = 10) -> None:
    end = time.monotonic() + timeout_s
    while node.pids() and time.monotonic() < end:
        time.sleep(0.05)


class Bench:
    def __init__(self, cpuset: str) -> None:
        self.client = engine.client()
        self.cpuset = cpuset
        self.cores = len(cpuset.split(","))
        self.sandbox_image = resolve_image(self.client, "sandbox")
        self.scorer_image = resolve_image(self.client, "scorer")
        self.budget = Budget(**GENEROUS, cores=self.cores)
        self.sock_dir = Path(tempfile.mkdtemp(prefix="sbx-bench-", dir="/tmp"))
        os.chmod(self.sock_dir, 0o755)
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.tag = uuid.uuid4().hex[:8]
        self.sandbox: DockerSandbox | None = None
        self.meter: Meter | None = None
        self.node: CgroupNode | None = None
        self.plain: list[Any] = []  # the comparison containers of the start-up test
        self.host_ms: dict[str, list[float]] = {}

    # --- setup and teardown ---------------------------------------------------------------------------

    def start(self) -> None:
        ws = Path(tempfile.mkdtemp(prefix="sbx-bench-ws-"))
        try:
            (ws / "bench").mkdir()
            for name, text in (("busy.py", BUSY), ("xgb.py", XGB), ("pool.py", POOL), ("busy1.py", BUSY_1S)):
                (ws / "bench" / name).write_text(text)
            self.sandbox = DockerSandbox(self.client, SandboxSpec(
                run_id=f"bench-{self.tag}", image=self.sandbox_image.id, budget=self.budget, cpuset=self.cpuset,
                sock_dir=self.sock_dir, extra_labels={"sbx.bench": "meter"}))
            self.sandbox.create(tar_for_agent(ws))
        finally:
            shutil.rmtree(ws, ignore_errors=True)
        self.sandbox.start()
        assert self.sandbox.box is not None
        self.node = self.sandbox.box.cgroup()
        self.new_meter(self.budget)

    def new_meter(self, budget: Budget, interval_s: float = 0.2, timed: bool = False) -> Meter:
        """A fresh meter (and a fresh, zeroed `py`) on the same container; `timed` records the host side of
        each gate call (ms) in self.host_ms: the whole answer, and the cgroup move within it."""
        if self.meter is not None:
            self.meter.stop()
            self.meter.remove_cgroups()
        assert self.node is not None and self.sandbox is not None
        m = Meter(self.node, budget, self.sock_dir, lambda k, d: self.events.append((k, d)),
                  kill_container=self.box.kill, interval_s=interval_s)
        if timed:
            self.host_ms = {"answer": [], "cgroup move": []}
            on_gate, add = m._on_gate, m.py.add

            def timed_gate(conn: socket.socket, line: bytes) -> bytes:
                t = time.perf_counter()
                try:
                    return on_gate(conn, line)
                finally:
                    self.host_ms["answer"].append((time.perf_counter() - t) * 1000)

            def timed_add(pid: int) -> None:
                t = time.perf_counter()
                try:
                    add(pid)
                finally:
                    self.host_ms["cgroup move"].append((time.perf_counter() - t) * 1000)

            m._on_gate = timed_gate  # type: ignore[method-assign]
            m.py.add = timed_add  # type: ignore[method-assign]
        m.start()
        self.meter = m
        return m

    def close(self) -> None:
        for c in self.plain:
            try:
                c.remove(force=True)
            except Exception as exc:  # noqa: BLE001 - cleanup must go on
                print(f"cleanup: {exc}", file=sys.stderr)
        if self.meter is not None:
            self.meter.stop()
            if self.sandbox is not None and self.sandbox.box is not None:
                self.sandbox.box.kill()
            self.meter.remove_cgroups()
        if self.sandbox is not None:
            self.sandbox.remove()
        shutil.rmtree(self.sock_dir, ignore_errors=True)

    # --- helpers -------------------------------------------------------------------------------------

    @property
    def box(self) -> Box:
        assert self.sandbox is not None and self.sandbox.box is not None
        return self.sandbox.box

    def exec(self, cmd: list[str], env: dict[str, str] | None = None, container: Any = None) -> tuple[int, str]:
        c = container if container is not None else self.box.container
        r = c.exec_run(cmd, user="agent", workdir="/workspace" if container is None else "/tmp", environment=env)
        return r.exit_code, (r.output or b"").decode(errors="replace")

    def readings(self) -> tuple[float, float]:
        assert self.meter is not None and self.node is not None
        return self.meter.py.usage_seconds(), self.node.usage_seconds()

    def metered(self, cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
        """(py delta, container delta, exit code, output) of one exec, after every process it left has ended."""
        assert self.meter is not None
        py0, c0 = self.readings()
        code, out = self.exec(cmd, env)
        wait_empty(self.meter.py)
        py1, c1 = self.readings()
        return py1 - py0, c1 - c0, code, out

    # --- 1. accuracy ---------------------------------------------------------------------------------

    def accuracy(self) -> list[dict[str, Any]]:
        rows = []
        cases: list[tuple[str, list[str], dict[str, str] | None]] = [
            ("busy process", ["bench/busy.py"], None),
            ("xgboost nthread=2", ["bench/xgb.py"], None),
            # the sandbox leaves OpenMP's default (spin while waiting); the scorer sets PASSIVE
            ("xgboost OMP passive", ["bench/xgb.py"], {"OMP_WAIT_POLICY": "PASSIVE"}),
            ("pool fork", ["bench/pool.py", "fork"], None),
            ("pool spawn", ["bench/pool.py", "spawn"], None),
            ("pool forkserver", ["bench/pool.py", "forkserver"], None)]
        for name, args, env in cases:
            py, total, code, out = self.metered(["bash", "-c", UNDER_BASH, "bench", *args], env)
            if code != 0:
                raise RuntimeError(f"{name} failed ({code}): {out[-2000:]}")
            lines = out.strip().splitlines()
            rep = json.loads(next(line for line in reversed(lines) if line.startswith("{")))
            waited = sum(_bash_seconds(x) for x in lines[-1].split())  # `times`: the children's user and sys
            # what the main process spent after its own last reading: the interpreter's shutdown
            rep["exit"] = max(0.0, waited - rep["rusage_at_end"])
            rows.append({"name": name, "py": py, "container": total, **rep})
        return rows

    # --- 2. gate start-up ------------------------------------------------------------------------------

    def _plain_container(self, image: Any, name: str, writable: bool = False) -> Any:
        c = self.client.containers.run(
            image.id, ["sleep", "infinity"], detach=True, name=f"sbx-bench-{name}-{self.tag}", user="agent",
            network_mode="none", init=True, cap_drop=["ALL"], security_opt=["no-new-privileges"], read_only=not writable,
            tmpfs={"/tmp": "size=64m,mode=1777"}, cpuset_cpus=self.cpuset, nano_cpus=self.cores * 1_000_000_000,
            labels={"sbx.kind": "bench", "sbx.bench": "meter"})
        self.plain.append(c)
        return c

    def startup(self, n: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
        """Start-up times (ms) per configuration, and the host side of each gate call (ms) per phase."""
        assert self.sandbox is not None
        self.new_meter(self.budget, timed=True)
        idle = self._plain_container(self.sandbox_image, "idle")      # same image, no /run/sbx: the gate returns at once
        bare = self._plain_container(self.sandbox_image, "bare", writable=True)  # same image, both hooks removed
        # root owns the hook files, so it may change them even with every capability dropped
        code, out = bare.exec_run(["sh", "-c", "rm -f /opt/sbx/venv/lib/python3.11/site-packages/00-sbx-gate.pth "
                                   "/usr/lib/python3.11/dist-packages/00-sbx-gate.pth && f=$(realpath "
                                   "/usr/lib/python3.11/sitecustomize.py) && chmod u+w $f && : > $f"], user="root")
        if code != 0:
            raise RuntimeError(f"removing the hooks failed: {out.decode()[-500:]}")
        scorer = self._plain_container(self.scorer_image, "scorer")   # another image, built without the gate
        configs = {"gate + meter": None, "gate, no /run/sbx": idle, "hooks removed": bare, "scorer image": scorer}
        times: dict[str, list[float]] = {}
        host: dict[str, list[float]] = {}

        def loop(name: str, container: Any, count: int, pause: str) -> None:
            code, out = self.exec(["bash", "-c", TIMER, "timer", str(count), pause, "python", "-c", "pass"],
                                  container=container)
            if code != 0:
                raise RuntimeError(f"start-up loop failed in {name}: {out[-500:]}")
            for line in out.split("\n"):
                if line.strip():
                    s, e = line.split()
                    times.setdefault(name, []).append((float(e) - float(s)) * 1000)

        for c in configs.values():  # warm the page cache once
            self.exec(["bash", "-c", TIMER, "timer", "3", "0", "python", "-c", "pass"], container=c)
        self.host_ms = {k: [] for k in self.host_ms}
        rounds = 10  # interleaved, so load elsewhere on the machine falls on every configuration alike
        for _ in range(rounds):
            for name, c in configs.items():
                loop(name, c, max(1, n // rounds), "0")
        host.update({f"{k}, back to back": v for k, v in self.host_ms.items()})
        # Python started now and then, as an agent does: each start 0.3 s after the last
        self.host_ms = {k: [] for k in self.host_ms}
        for _ in range(2):
            loop("gate + meter, 0.3 s apart", None, 5, "0.3")
            loop("hooks removed, 0.3 s apart", bare, 5, "0.3")
        host.update({f"{k}, 0.3 s apart": v for k, v in self.host_ms.items()})
        return times, host

    # --- 3. overshoot -----------------------------------------------------------------------------------

    def overshoot(self, budget_s: float, procs: int, reps: int) -> list[tuple[float, float, int]]:
        assert self.sandbox is not None
        out = []
        code = "import os\n" + ("os.fork()\n" if procs == 2 else "") + "while True: pass\n"
        for _ in range(reps):
            b = self.budget.model_copy(update={"cpu_seconds": budget_s})
            m = self.new_meter(b, interval_s=0.2)
            time.sleep(random.uniform(0, 0.2))  # cross the budget at a random phase of the poll
            exit_code, _ = self.exec(["timeout", "60", "python", "-c", code])  # timeout: in case the meter fails
            self.box.pause()
            try:
                final = m.py.usage_seconds()
            finally:
                self.box.unpause()
            out.append((m.state.overshoot_at_kill if m.state.overshoot_at_kill is not None else float("nan"),
                        final - budget_s, exit_code))
        self.new_meter(self.budget)
        return out

    # --- 4. dodges ------------------------------------------------------------------------------------

    def as_agent(self, cmd: list[str], env: dict[str, str] | None, wrap: bool = True, budget: Budget | None = None,
                 ) -> tuple[Meter, dict[str, float], int, str]:
        """Run `cmd` as a tool call of an agent program (`wrap`; else as the agent program itself), started as a
        run starts one: through the launcher with a one-time token, placed by the host in `agent`. A fresh meter
        (fresh `py` and `agent`); returns it, the CPU-s deltas (py, tools, agent, metered, container), the exit
        code and the output, after every process it left has ended."""
        assert self.node is not None
        m = self.new_meter(budget or self.budget)
        api = self.client.api
        exec_id: list[str] = []
        token = m.expect_agent(lambda: int(api.exec_inspect(exec_id[0]).get("Pid") or 0) if exec_id else 0)
        argv = agent_argv(["bash", "-c", AGENT_SHELL, "agent", *cmd] if wrap else cmd)
        c0 = self.node.usage_seconds()
        exec_id.append(api.exec_create(self.box.id, argv, user="agent", workdir="/workspace",
                                       environment={**(env or {}), "SBX_GATE_TOKEN": token})["Id"])
        out = (api.exec_start(exec_id[0]) or b"").decode(errors="replace")
        code = int(api.exec_inspect(exec_id[0]).get("ExitCode") or 0)
        wait_empty(m.py)
        wait_empty(m.agent)
        time.sleep(0.3)  # one more poll: the agent program's last CPU reading
        metered, total = m.final_reading()
        s = m.state
        return m, {"py": s.py_seconds, "tools": s.tools_seconds, "agent": s.agent_seconds, "metered": metered,
                   "container": total - c0}, code, out

    @staticmethod
    def _verdict(how: str, m: Meter, d: dict[str, float], code: int, out: str,
                 ) -> tuple[str, str, float, float, float, float, str]:
        """Where the loop's CPU went: `metered` when its cgroup is `py` or `agent` (a tool) and the budget counted
        at least 0.85 of what the container spent meanwhile (the rest: docker exec, the launcher); `apart` when it is the agent program's own (recorded, not in the budget);
        else DODGES."""
        seen = [line.split()[1] for line in out.splitlines() if line.startswith("WHERE ") and len(line.split()) > 1]
        cgroup = seen[-1] if seen else "?"
        total = d["container"] or float("nan")
        if cgroup in ("py", "agent") and d["metered"] / total >= 0.85:
            verdict = "metered"
        elif cgroup == "agent" and d["agent"] / total >= 0.5:  # its last poll's worth may go to tools (counted)
            verdict = "apart"
        else:
            verdict = "DODGES"
        detail = f"in {cgroup}" + ("" if code == 0 else f"; exit {code}: {out[-150:]!r}")
        return how, verdict, d["py"], d["tools"], d["agent"], d["container"], detail

    # --- 5. costs --------------------------------------------------------------------------------------

    def placement(self, n: int) -> dict[str, list[float]]:
        """Start-up (ms, timed by bash in the container, 0.3 s apart) of the launcher running `true` (it asks the
        gate, so the host places it: a cgroup move, as for the agent program) against a bare python3 -I -S."""
        self.new_meter(self.budget)
        times: dict[str, list[float]] = {}
        configs = {"launcher (placed) + true": [*LAUNCHER, "true"], "python3 -I -S -c pass": [*LAUNCHER[:3], "-c", "pass"],
                   "true": ["true"]}
        for _ in range(2):
            for name, argv in configs.items():
                code, out = self.exec(["bash", "-c", TIMER, "timer", str(max(1, n // 2)), "0.3", *argv])
                if code != 0:
                    raise RuntimeError(f"placement loop failed ({name}): {out[-500:]}")
                times.setdefault(name, []).extend((float(e) - float(s)) * 1000 for s, e in
                                                  (line.split() for line in out.split("\n") if line.strip()))
        return times

    def poll_cost(self, n: int = 500) -> float:
        """Host ms of one poll's reading of every counter (py, agent, the container, the agent program's /proc)."""
        assert self.meter is not None
        m = self.meter
        if not m.agent_pid:  # stand in for an agent program: the container's init, so /proc is read as in a run
            pid = int(self.box.attrs()["State"]["Pid"])
            cpu = process_cpu(pid)
            assert cpu is not None
            m.agent_pid, m._agent_start = pid, cpu[1]
        t = time.perf_counter()
        for _ in range(n):
            m._read()
        return (time.perf_counter() - t) * 1000 / n

    def dodges(self) -> list[tuple[str, str, float, float, float, float, str]]:
        """(how, verdict, py, tools, agent program, container, detail) for each way of starting compute."""
        assert self.meter is not None and self.sandbox is not None and self.node is not None
        site = "lib/python3.11/site-packages"
        mark = f"echo '{MARK_PTH.strip()}' >"
        prepare = {
            # a copy of the stdlib without the sitecustomize hook, for PYTHONHOME
            "home": "mkdir -p /tmp/home/lib && cp -r /usr/lib/python3.11 /tmp/home/lib/",
            # Debian's /usr/bin/python3 reads /usr/lib/python3.11/dist-packages, inside the stdlib folder: the
            # copy carries the gate's .pth along until the agent deletes it (and the sitecustomize link)
            "unhook": "rm -f /tmp/home/lib/python3.11/sitecustomize.py /tmp/home/lib/python3.11/dist-packages/00-sbx-gate.pth",
            # venvs of the agent's own: one plain, one with a .pth that runs before the stdlib's sitecustomize
            "venv": f"python -m venv --without-pip /tmp/plainvenv && python -m venv --without-pip /tmp/myvenv "
                    f"&& {mark} /tmp/myvenv/{site}/000-mine.pth",
            # a sitecustomize on PYTHONPATH
            "pp": "mkdir -p /tmp/pp && echo 'import sys; sys._sbx_gate_ran = True' > /tmp/pp/sitecustomize.py",
            # the user site of the system interpreter (venvs ignore it); last, as it changes /usr/bin/python3
            "user": f"mkdir -p /home/agent/.local/{site} && {mark} /home/agent/.local/{site}/000-mine.pth",
        }
        busy = "/workspace/bench/busy1.py"
        where = 'c=$(grep :cpuacct /proc/$$/cgroup); echo WHERE ${c##*/}'
        # fixed work of about 1 CPU-s each (not `timeout 1`: a wall-clock second is less CPU on a busy host)
        bash_loop = f"bash -c 'for ((i=0; i<300000; i++)); do :; done'; {where}"

        def run_child(argv: str) -> str:
            return f"import subprocess, sys\nsys.exit(subprocess.run({argv}).returncode)"
        cases: list[tuple[str, str, list[str], dict[str, str] | None]] = [
            ("python (venv; control)", "", ["python", busy], None),
            ("/usr/bin/python3 (control)", "", ["/usr/bin/python3", busy], None),
            ("python -I", "", ["python", "-I", busy], None),
            ("python -E", "", ["python", "-E", busy], None),
            ("PYTHONPATH=dir with sitecustomize.py", "pp", ["python", busy], {"PYTHONPATH": "/tmp/pp"}),
            ("python -S", "", ["python", "-S", busy], None),
            ("/usr/bin/python3 -S", "", ["/usr/bin/python3", "-S", busy], None),
            ("PYTHONHOME=stdlib copy as is, /usr/bin/python3", "home", ["/usr/bin/python3", busy], {"PYTHONHOME": "/tmp/home"}),
            ("PYTHONHOME=copy, hooks deleted, /usr/bin/python3", "unhook", ["/usr/bin/python3", busy], {"PYTHONHOME": "/tmp/home"}),
            ("PYTHONHOME=copy, hooks deleted, venv python", "", ["python", busy], {"PYTHONHOME": "/tmp/home"}),
            ("agent venv, no .pth of its own", "venv", ["/tmp/plainvenv/bin/python", busy], None),
            ("agent venv + .pth setting _sbx_gate_ran", "", ["/tmp/myvenv/bin/python", busy], None),
            ("agent venv + PYTHONPATH sitecustomize.py", "", ["/tmp/plainvenv/bin/python", busy], {"PYTHONPATH": "/tmp/pp"}),
            ("~/.local .pth, /usr/bin/python3", "user", ["/usr/bin/python3", busy], None),
            ("~/.local .pth, venv python", "", ["python", busy], None),
            ("bash busy loop", "", ["bash", "-c", bash_loop], None),
            ("awk loop", "", ["bash", "-c", f"awk 'BEGIN {{ for (i = 0; i < 3e7; i++) {{}} }}'; {where}"], None),
            ("perl loop", "", ["bash", "-c", f"perl -e 'for ($i = 0; $i < 2e7; $i++) {{}}'; {where}"], None),
            ("compiled binary (head -c 500M /dev/zero | sha256sum)", "",
             ["bash", "-c", f"head -c 500M /dev/zero | sha256sum >/dev/null; {where}"], None),
            ("setsid + double fork, bash loop", "",
             ["bash", "-c", "setsid bash -c '( bash -c \"$LOOP\" ) &'; sleep 0.2"], {"LOOP": bash_loop}),
            # whatever a metered process starts is metered: children inherit the cgroup, exec keeps it
            ("python -S started by a metered python", "", ["python", "-c", run_child("['python', '-S', %r]" % busy)], None),
            ("bash loop started by a metered python", "", ["python", "-c", run_child("['bash', '-c', %r]" % bash_loop)], None),
        ]
        rows = []
        for how, prep, cmd, env in cases:
            if prep:
                code, out = self.exec(["bash", "-c", prepare[prep]])
                if code != 0:
                    raise RuntimeError(f"dodge setup {prep} failed: {out[-1000:]}")
            rows.append(self._verdict(how, *self.as_agent(cmd, env)))
        # the agent program itself: its own CPU is recorded apart (a Python program passes the gate: metered whole)
        own = ["bash", "-c", f"for ((i=0; i<400000; i++)); do :; done; {where}"]
        rows.append(self._verdict("the agent program's own loop (bash)", *self.as_agent(own, None, wrap=False)))
        rows.append(self._verdict("the agent program's own loop (python)", *self.as_agent(["python", busy], None, wrap=False)))
        # a tool-call loop against a 2 CPU-s budget: killed at the budget (exit 137 from the agent shell's child)
        m, d, code, out = self.as_agent(["bash", "-c", "while :; do :; done"], None,
                                        budget=self.budget.model_copy(update={"cpu_seconds": 2.0}))
        rows.append(("bash loop (tool call) against a 2 CPU-s budget", "killed" if code == 137 and m.state.exhausted
                     else "NOT KILLED", d["py"], d["tools"], d["agent"], d["container"],
                     f"exit {code}; overshoot at kill {m.state.overshoot_at_kill or 0:.3f} CPU-s"))
        self.new_meter(self.budget)

        # Tampering from inside: leave `py` through the cgroup filesystem, replace the socket, call it from outside.
        py_path = "/sys/fs/cgroup/cpuacct/cgroup.procs"
        code, out = self.exec(["python", "-c",
                               f"import os\ntry:\n    open({py_path!r}, 'w').write(str(os.getpid()))\n    print('moved')\n"
                               "except OSError as e:\n    print('refused:', e.strerror)"])
        rows.append(("a metered process writes itself to the container's cgroup.procs", "cannot", 0, 0, 0, 0, out.strip()))
        code, out = self.exec(["bash", "-c", f"rm -f /run/sbx/{GATE_SOCKET} 2>&1 || true; touch /run/sbx/x 2>&1 || true"])
        rows.append(("remove or add a file in /run/sbx", "cannot", 0, 0, 0, 0, " | ".join(out.strip().splitlines())[:120]))
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(self.sock_dir / GATE_SOCKET))
        s.sendall(b"GATE -\n")
        reply = s.recv(4096).decode().strip()
        s.close()
        rows.append(("a process outside the container calls the gate", "cannot", 0, 0, 0, 0, reply))

        # The hard stop: a dodging loop runs until the container's total passes it, then the container dies.
        total_now = self.node.usage_seconds()
        stop_at = total_now + 2.0
        m = self.new_meter(self.budget.model_copy(update={"cpu_seconds": 1000, "hard_stop_cpu_seconds": stop_at}))
        t0 = time.monotonic()
        code, _ = self.exec(["timeout", "60", "python", "-S", "-c", "while True: pass"])
        wall = time.monotonic() - t0
        deadline = time.monotonic() + 10
        while self.box.is_running() and time.monotonic() < deadline:
            time.sleep(0.1)
        rows.append(("direct exec (no agent), python -S loop vs hard stop at total+2", "hard stop" if m.state.hard_stopped
                     else "NOT STOPPED", 0, 0, 0, m.state.container_seconds - total_now,
                     f"exit {code} after {wall:.1f}s; container running: {self.box.is_running()}; "
                     f"overshoot {m.state.hard_stop_overshoot or 0:.3f} CPU-s"))
        return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpuset", default=None, help="CPUs of the sandbox (default: the first two this process may use)")
    ap.add_argument("--starts", type=int, default=50, help="python starts timed per configuration")
    ap.add_argument("--skip-dodges", action="store_true")
    args = ap.parse_args()
    cpuset = args.cpuset or ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:2])
    t_start = time.monotonic()
    bench = Bench(cpuset)
    summary: list[str] = []
    try:
        bench.start()
        print(f"sandbox {bench.sandbox_image.tags[0] if bench.sandbox_image.tags else bench.sandbox_image.id[:19]}, "
              f"cpuset {cpuset}, cgroup v{CgroupLayout.detect().version}, poll interval 0.2 s")

        print("\n1. metered CPU-s (py) against the work the workload measured itself (CPU-s)")
        print("   work: process_time/os.times summed over its processes; exit: the main process's CPU after its")
        print("   last reading (interpreter shutdown), from its parent's wait; rusage_ch: RUSAGE_CHILDREN at the end")
        print(f"{'workload':<19}{'work':>7}{'exit':>7}{'py':>7}{'py/work':>9}{'py/(w+e)':>10}{'cont/(w+e)':>11}{'rusage_ch':>10}")
        for r in bench.accuracy():
            full = r["work"] + r["exit"]
            rusage = f"{r['rusage_children']:.3f}" if "rusage_children" in r else "-"
            print(f"{r['name']:<19}{r['work']:>7.3f}{r['exit']:>7.3f}{r['py']:>7.3f}{ratio(r['py'], r['work']):>9.4f}"
                  f"{ratio(r['py'], full):>10.4f}{ratio(r['container'], full):>11.4f}{rusage:>10}")
            if "workers" in r:
                print(f"{'':<19}  = parent {r['parent']:.3f} + {r['n_workers']} workers {r['workers']:.3f}"
                      + "".join(f" + {k} {v:.3f}" for k, v in r["helpers"].items()))
            within = abs(ratio(r["py"], r["work"]) - 1) <= 0.02
            summary.append(f"metered/work {r['name']:<18} {ratio(r['py'], r['work']):.4f} "
                           f"(target within 2%: {'ok' if within else 'MISSED'}); with the exit counted {ratio(r['py'], full):.4f}")
            if r["name"] == "pool forkserver":
                summary.append(f"rusage(RUSAGE_CHILDREN)/work forkserver {ratio(r['rusage_children'], r['work']):.4f} "
                               f"(saw {r['rusage_children']:.3f} of {r['work']:.3f} CPU-s)")

        print("\n2. wall time of `python -c pass` inside the container, timed by bash in the container (ms)")
        times, host = bench.startup(args.starts)
        print(f"{'configuration':<34}{'n':>4}{'median':>8}{'p10':>8}{'p90':>8}{'min':>8}")
        for name, ts in times.items():
            q = statistics.quantiles(ts, n=10)
            print(f"{name:<34}{len(ts):>4}{statistics.median(ts):>8.1f}{q[0]:>8.1f}{q[-1]:>8.1f}{min(ts):>8.1f}")
        print("host side of the gate calls above (ms)")
        for what, ms in host.items():
            q = statistics.quantiles(ms, n=10)
            print(f"  {what:<32}{len(ms):>4}{statistics.median(ms):>8.2f}{q[0]:>8.2f}{q[-1]:>8.2f}{min(ms):>8.2f}"
                  f"   over 5 ms: {sum(x > 5 for x in ms)}")
        med = {k: statistics.median(v) for k, v in times.items()}
        base = med["hooks removed"]
        summary.append(f"gate start-up  gate+meter / hooks removed {ratio(med['gate + meter'], base):.3f} back to back "
                       f"({med['gate + meter'] - base:+.1f} ms), "
                       f"{ratio(med['gate + meter, 0.3 s apart'], med['hooks removed, 0.3 s apart']):.3f} 0.3 s apart "
                       f"({med['gate + meter, 0.3 s apart'] - med['hooks removed, 0.3 s apart']:+.1f} ms); "
                       f"vs the scorer image {ratio(med['gate + meter'], med['scorer image']):.3f}")

        print("\n3. overshoot past a 3 CPU-s budget, poll interval 0.2 s (CPU-s)")
        print(f"{'busy processes':<16}{'at kill':>10}{'final-budget':>14}{'exit':>6}")
        for procs, reps in ((1, 3), (2, 3)):
            res = bench.overshoot(3.0, procs, reps)
            for at_kill, final, code in res:
                print(f"{procs:<16}{at_kill:>10.3f}{final:>14.3f}{code:>6}")
            finals = [f for _, f, _ in res]
            kills = [a for a, _, _ in res]
            summary.append(f"overshoot {procs} proc  at kill {min(kills):.3f}..{max(kills):.3f}, final {min(finals):.3f}.."
                           f"{max(finals):.3f} CPU-s (bound: interval x busy cores = {0.2 * procs:.1f} + kill latency)")

        print("\n4. costs: placing the agent program, and the host's reading of the counters")
        times = bench.placement(args.starts // 5 or 2)
        print(f"{'start-up, 0.3 s apart (ms)':<34}{'n':>4}{'median':>8}{'p10':>8}{'p90':>8}{'min':>8}")
        for name, ts in times.items():
            q = statistics.quantiles(ts, n=10)
            print(f"{name:<34}{len(ts):>4}{statistics.median(ts):>8.1f}{q[0]:>8.1f}{q[-1]:>8.1f}{min(ts):>8.1f}")
        med = {k: statistics.median(v) for k, v in times.items()}
        poll_ms = bench.poll_cost()
        print(f"host reading of every counter: {poll_ms:.3f} ms per poll (interval 200 ms)")
        summary.append(f"placement  launcher / bare python3 -I -S {ratio(med['launcher (placed) + true'], med['python3 -I -S -c pass']):.3f} "
                       f"({med['launcher (placed) + true'] - med['python3 -I -S -c pass']:+.1f} ms, once per run)")
        summary.append(f"poll cost  {poll_ms:.3f} ms per 200 ms poll = {poll_ms / 200:.4f} of a host core")
        if not args.skip_dodges:
            print("\n5. dodges: each a 1 CPU-s busy loop, a tool call of an agent program started through the launcher")
            print("   (CPU-s; the budget counts py + tools; `agent` is the agent program's own CPU, recorded apart)")
            print(f"{'how':<58}{'verdict':>10}{'py':>6}{'tools':>6}{'agent':>6}{'total':>6}  detail")
            loops = []
            for how, verdict, py, tools, agent, total, detail in bench.dodges():
                print(f"{how:<58}{verdict:>10}{py:>6.2f}{tools:>6.2f}{agent:>6.2f}{total:>6.2f}  {detail}")
                if verdict in ("metered", "DODGES"):
                    loops.append((how, verdict, (py + tools) / total if total else float("nan")))
                elif verdict == "apart":
                    summary.append(f"recorded apart  {how}: agent program {agent:.2f} of {total:.2f} CPU-s "
                                   f"(not in the budget; the hard stop bounds it)")
            dodging = [how for how, verdict, _ in loops if verdict != "metered"]
            shares = [r for _, v, r in loops if v == "metered"]
            summary.append(f"dodges  {len(loops) - len(dodging)} of {len(loops)} tool-call rows metered"
                           + (f"; DODGING: {', '.join(dodging)}" if dodging else "")
                           + (f"; metered/container {min(shares):.3f}..{max(shares):.3f}" if shares else ""))

    finally:
        bench.close()
    print("\nsummary")
    for line in summary:
        print("  " + line)
    print(f"  (bench wall time {time.monotonic() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
