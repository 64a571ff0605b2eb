"""Import a Harbor / Terminal-Bench task folder as an sbx `tests` task, and run its solution for verify.

A Harbor task is `instruction.md`, `task.toml` ([metadata], [verifier], [agent], [environment], [solution]),
`environment/Dockerfile` (the agent's container; its WORKDIR is where the agent works), `tests/test.sh`
(run by the verifier; it writes a reward to /logs/verifier/reward.txt, or reward.json) and optionally
`solution/solve.sh` (the oracle). Harbor runs the verifier in the agent's own container; sbx grades out of
reach instead: the agent's workdir is copied out and graded in a fresh container of the task image, with
`tests/` placed at /tests only there, no network, as uid 1000, and the reward file read by the grader.

What changes on the way, and is said so in the import's notes:
- a FROM image that is neither local nor pullable is replaced by `--base` (no registry answers here);
- the Dockerfile gets an `agent` user (uid 1000) owning the workdir: sbx never runs agents or graders as root;
- test.sh lines that fetch from the network (curl, uv, pip, apt) cannot work in the grader.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from orchestrator.failures import ConfigError, InfraError
from orchestrator.specs.task import (
    DockerfileEnvironment,
    Limits,
    ScriptGrader,
    TestsTaskSpec,
    Timeouts,
    load_tests_task,
)

_FROM = re.compile(r"^(\s*FROM\s+)(?:--platform=\S+\s+)?(\S+)(.*)$", re.IGNORECASE)
_NETWORK = re.compile(r"\b(curl|wget|uv |uvx|pip3? install|apt-get|apk add|npm install)\b")
APPENDED = "# --- added by `sbx tasks import-harbor`: sbx runs agents and graders as uid 1000, not root ---"


@dataclass
class HarborImport:
    bundle: Path
    notes: list[str] = field(default_factory=list)


def _memory_mb(env: dict[str, Any]) -> int | None:
    if "memory_mb" in env:
        return int(env["memory_mb"])
    text = str(env.get("memory", "")).strip().upper()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([GM])I?B?", text)
    if not m:
        return None
    return int(float(m[1]) * (1024 if m[2] == "G" else 1))


def _local_or_pullable(client: Any, ref: str) -> tuple[bool, str]:
    import docker.errors

    try:
        client.images.get(ref)
        return True, "present locally"
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(ref)
        return True, "pulled"
    except docker.errors.DockerException as exc:
        return False, str(getattr(exc, "explanation", None) or exc)[:200]


def rewrite_dockerfile(text: str, base: str | None, can_use: Any) -> tuple[str, list[tuple[str, str]], str]:
    """(new Dockerfile, [(original FROM image, what it became)], workdir). `can_use(ref) -> (bool, why)`."""
    stages: set[str] = set()
    changes: list[tuple[str, str]] = []
    workdir = ""
    out = []
    for line in text.splitlines():
        m = _FROM.match(line)
        if m:
            image = m[2]
            rest = m[3]
            alias = re.search(r"\bAS\s+(\S+)", rest, re.IGNORECASE)
            if image not in stages and image.lower() != "scratch" and "$" not in image:
                ok, why = can_use(image)
                if not ok:
                    if base is None:
                        raise ConfigError(f"the Dockerfile's base {image} cannot be pulled ({why}); pass --base "
                                          "with a local image (e.g. the sbx-base:... Debian image)")
                    changes.append((image, base))
                    line = f"{m[1]}{base}{rest}"
            if alias:
                stages.add(alias[1])
        w = re.match(r"^\s*WORKDIR\s+(\S+)", line, re.IGNORECASE)
        if w:
            workdir = w[1] if w[1].startswith("/") else f"{workdir.rstrip('/')}/{w[1]}"
        out.append(line)
    workdir = workdir or "/app"
    out += ["", APPENDED, "USER root",
            "RUN (id -u agent >/dev/null 2>&1 || useradd --uid 1000 --create-home --shell /bin/bash agent) \\",
            f" && mkdir -p {workdir} && chown -R 1000:1000 {workdir}",
            "USER 1000", f"WORKDIR {workdir}", ""]
    return "\n".join(out), changes, workdir


def import_harbor(folder: Path, out_root: Path, *, name: str | None = None, base: str | None = None,
                  force: bool = False, client: Any = None) -> HarborImport:
    """Write tasks/<name>/ from a Harbor task folder; see the module docstring."""
    folder = folder.resolve()
    for rel in ("instruction.md", "task.toml", "environment/Dockerfile", "tests/test.sh"):
        if not (folder / rel).is_file():
            raise ConfigError(f"{folder}: not a Harbor task: {rel} is missing")
    try:
        config = tomllib.loads((folder / "task.toml").read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{folder / 'task.toml'}: not valid TOML: {exc}") from None
    name = name or re.sub(r"[^a-z0-9.-]+", "-", folder.name.lower()).strip("-")
    dest = out_root / name
    if dest.exists() and not force:
        raise ConfigError(f"{dest} exists; pass --force to replace it")
    notes: list[str] = []
    known = {"version", "schema_version", "metadata", "verifier", "agent", "environment", "solution", "task", "source"}
    unknown = sorted(set(config) - known)
    if unknown:
        notes.append(f"task.toml sections sbx does not use: {unknown}")
    verifier, agent, env = config.get("verifier", {}), config.get("agent", {}), config.get("environment", {})
    if env.get("docker_image") and not (folder / "environment" / "Dockerfile").is_file():
        raise ConfigError("a prebuilt docker_image without a Dockerfile cannot be built here")

    if client is None:
        from orchestrator import engine

        client = engine.client()
    dockerfile = (folder / "environment" / "Dockerfile").read_text()
    new_dockerfile, changes, workdir = rewrite_dockerfile(dockerfile, base, lambda ref: _local_or_pullable(client, ref))
    for old, new in changes:
        notes.append(f"FROM {old} cannot be pulled here (no registry answers): built FROM {new} instead")
    if base and not changes:
        notes.append(f"--base {base} was not needed: every base image is local or pullable")
    if verifier.get("user", "root") == "root":
        notes.append("Harbor runs test.sh as root; sbx runs it as uid 1000 (the workdir is chowned to it)")
    net = sorted({m[1] for m in _NETWORK.finditer((folder / "tests" / "test.sh").read_text())})
    if net:
        notes.append(f"tests/test.sh uses {net}: the grader has no network, so those steps will fail")
    if env.get("allow_internet", True) is False:
        notes.append("allow_internet = false: sbx sandboxes and graders never have a network anyway")

    limits = Limits(cpus=float(env.get("cpus", 1) or 1), memory_mb=max(256, _memory_mb(env) or 2048))
    timeouts = Timeouts(tests_s=float(verifier.get("timeout_sec", 600)), agent_s=float(agent.get("timeout_sec", 3600)),
                        build_s=float(env.get("build_timeout_sec", 1800)))
    meta = config.get("metadata", {})
    spec = TestsTaskSpec(
        name=name, kind="tests", description=str(meta.get("description") or meta.get("category") or ""),
        repo="repo", instruction="instruction.md", hidden_tests="tests",
        solution="solution/solve.sh" if (folder / "solution" / "solve.sh").is_file() else None,
        environment=DockerfileEnvironment(context="environment", dockerfile="Dockerfile",
                                          base_substituted_for=", ".join(o for o, _ in changes) or None,
                                          workdir=workdir),
        install="none", protected=(),
        grader=ScriptGrader(env={str(k): str(v) for k, v in verifier.get("env", {}).items()}),
        limits=limits, timeouts=timeouts)
    if spec.solution is None:
        notes.append("no solution/solve.sh: `sbx tasks verify` cannot check an oracle for this task")

    with tempfile.TemporaryDirectory(prefix="sbx-harbor-", dir=out_root if out_root.exists() else None) as tmp:
        staged = Path(tmp) / name
        shutil.copytree(folder / "environment", staged / "environment", symlinks=False)
        (staged / "environment" / "Dockerfile.harbor").write_text(dockerfile)
        (staged / "environment" / "Dockerfile").write_text(new_dockerfile)
        shutil.copytree(folder / "tests", staged / "tests", symlinks=False)
        if (folder / "solution").is_dir():
            shutil.copytree(folder / "solution", staged / "solution", symlinks=False)
        shutil.copyfile(folder / "instruction.md", staged / "instruction.md")
        (staged / "repo").mkdir()
        (staged / "repo" / "README.md").write_text(
            f"The agent's repository is the image's {workdir} (built from environment/Dockerfile).\n")
        data = spec.model_dump(mode="json", exclude={"root"})
        header = (f"# Imported from the Harbor task {folder.name} by `sbx tasks import-harbor` (docs/tasks.md).\n"
                  + "".join(f"# note: {n}\n" for n in notes))
        (staged / "task.yaml").write_text(header + yaml.safe_dump(data, sort_keys=False, width=120))
        load_tests_task(staged)   # the bundle must load as written
        if dest.exists():
            shutil.rmtree(dest)
        out_root.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staged), str(dest))
    return HarborImport(dest, notes)


# --- running a Harbor task's pieces for `verify` --------------------------------------------------------


def _extract_dir(container: Any, path: str, dest: Path) -> Path:
    """Copy a folder out of a (stopped) container: regular files and folders only, within caps."""
    import io

    from orchestrator.sandbox.safetar import TarCaps, extract_strictly

    stream, _ = container.get_archive(path)
    buf = io.BytesIO(b"".join(stream))
    with tempfile.TemporaryDirectory(prefix="sbx-out-") as tmp:
        extract_strictly(buf, Path(tmp), TarCaps(max_entries=100_000, max_file_bytes=256 << 20,
                                                  max_total_bytes=1 << 30))
        top = Path(tmp) / Path(path).name
        shutil.copytree(top, dest, symlinks=False)
    return dest


def workdir_of(client: Any, task: TestsTaskSpec, image: str, dest: Path) -> Path:
    """The task image's workdir as the agent receives it (what an agent that changes nothing delivers). The
    container comes from `create_box` (hardened like every sbx container) and is never started."""
    import docker.errors

    from orchestrator.sandbox.container import ContainerSpec, create_box

    assert isinstance(task.environment, DockerfileEnvironment)
    box = create_box(client, ContainerSpec(kind="harbor-copy", image=image, command=("true",), user="1000",
                                           entrypoint=[], labels={"sbx.task": task.name}))
    try:
        return _extract_dir(box.container, task.environment.workdir, dest)
    except docker.errors.DockerException as exc:
        raise InfraError(f"copying {task.environment.workdir} out of {image}: {exc}") from None
    finally:
        box.remove()


def run_solution(client: Any, task: TestsTaskSpec, image: str, dest: Path) -> Path:
    """Run solution/solve.sh as the agent would (uid 1000, no network, limits) and copy the workdir out.

    The container comes from `create_box`: its root is read-only, so the workdir is a fresh volume filled
    from the image (the engine copies the image's folder into an empty volume) and the solution folder a
    second one at /solution, filled before the start; both are removed afterwards."""
    import uuid

    import docker.errors

    from orchestrator.sandbox.container import Box, ContainerSpec, Mount, create_box
    from orchestrator.tasks.grader_container import tar_of

    assert isinstance(task.environment, DockerfileEnvironment) and task.solution is not None
    workdir = task.environment.workdir
    lim = task.limits
    name = f"sbx-harbor-oracle-{uuid.uuid4().hex[:10]}"
    spec = ContainerSpec(kind="harbor-oracle", image=image, user="1000", workdir=workdir, cpus=lim.cpus,
                         memory_bytes=lim.memory_mb << 20, pids=lim.pids, environment={"HOME": "/tmp"},
                         name=name, entrypoint=[], labels={"sbx.task": task.name},
                         deadline_s=task.timeouts.agent_s + 300)  # ends by itself even if sbx is killed
    volumes: list[Any] = []
    box: Box | None = None
    try:
        try:
            for suffix in ("work", "solution"):
                volumes.append(client.volumes.create(f"{name}-{suffix}", labels=spec.all_labels()))
        except docker.errors.DockerException as exc:
            raise InfraError(f"volumes for the solution of {task.name}: {exc}") from None
        mounts = [Mount(workdir, volumes[0].name, type="volume", no_copy=False),
                  Mount("/solution", volumes[1].name, type="volume", no_copy=True)]
        box = create_box(client, replace(spec, mounts=mounts))
        box.put_archive("/solution", tar_of(task.path(task.solution).parent))
        box.start()
        try:
            res = box.container.exec_run(["timeout", "-s", "KILL", str(int(task.timeouts.agent_s)), "bash",
                                          "/solution/" + Path(task.solution).name], user="1000", workdir=workdir)
        except docker.errors.DockerException as exc:
            raise InfraError(f"running the solution of {task.name}: {exc}") from None
        if res.exit_code != 0:
            raise ConfigError(f"{task.name}: solve.sh exited {res.exit_code}: {(res.output or b'')[-800:].decode(errors='replace')}")
        box.kill()
        try:
            return _extract_dir(box.container, workdir, dest)
        except docker.errors.DockerException as exc:
            raise InfraError(f"copying the solution's {workdir} of {task.name}: {exc}") from None
    finally:
        if box is not None:
            box.remove()
        for vol in volumes:
            with contextlib.suppress(docker.errors.DockerException):
                vol.remove(force=True)
