"""The agent's workspace: the task's repo as a git repository on its own branch, plus the visible data.

A `tests` task (a coding task graded by hidden tests) gets its repo with the instruction (the issue text)
as `program.md` at the root, committed with it, and no data; its hidden tests are never in the workspace.

Built on the host from trusted files only (the task bundle and the prepared data) and shipped into the
container as a tar stream owned by the agent user, so no host path is ever mounted into the sandbox.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from orchestrator.failures import ConfigError, DataError
from orchestrator.specs import Budget, TaskSpec
from orchestrator.specs.task import TestsTaskSpec

AGENT_UID = 1000
WORKSPACE = "/workspace"
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "sbx", "GIT_AUTHOR_EMAIL": "sbx@localhost",
    "GIT_COMMITTER_NAME": "sbx", "GIT_COMMITTER_EMAIL": "sbx@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
}


def budget_markdown(budget: Budget) -> str:
    return (
        f"# Budget of this run ({budget.name})\n\n"
        f"- Python compute: {budget.cpu_seconds:g} CPU-seconds (all cores summed); Python started past it is refused\n"
        f"- Container hard stop: {budget.hard_stop_cpu_seconds:g} CPU-seconds of everything\n"
        f"- Counted experiments: {budget.experiments}, each at most {budget.experiment_timeout_s:g} s\n"
        f"- Cores: {budget.cores}; memory: {budget.memory_mb} MB; processes: {budget.pids}\n"
        f"- Wall clock: {budget.wall_clock_minutes:g} minutes; workspace disk: {budget.disk_mb} MB\n"
    )


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_GIT_ENV}
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


#: where a tests task's instruction goes in the workspace (the agents' prompt says "Read program.md")
INSTRUCTION_FILE = "program.md"


def build_workspace(task: TaskSpec | TestsTaskSpec, budget: Budget, dest: Path, branch: str, data_dir: Path) -> str:
    """Lay out the workspace in `dest` (a new folder): repo files committed on `branch`, data beside them.

    Returns the starting commit's sha. Data files are gitignored and copied, not committed.
    """
    shutil.copytree(task.repo_dir, dest, symlinks=False)
    if isinstance(task, TestsTaskSpec):
        return _tests_workspace(task, budget, dest, branch)
    (dest / "BUDGET.md").write_text(budget_markdown(budget))
    _git(dest, "init", "-q", "-b", branch)
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", f"Starting code of task {task.name}")
    for role in (task.files.train, task.files.eval):
        src = data_dir / role.path
        if not src.is_file():
            raise DataError(f"{src}: missing; run `sbx data prepare` first")
        target = dest / role.to
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return _git(dest, "rev-parse", "HEAD")


def _tests_workspace(task: TestsTaskSpec, budget: Budget, dest: Path, branch: str) -> str:
    """A tests task's workspace: its repo plus the instruction as program.md and BUDGET.md, committed."""
    target = dest / INSTRUCTION_FILE
    if target.exists():
        raise ConfigError(f"task {task.name}: its repo has a {INSTRUCTION_FILE}, where the instruction goes")
    shutil.copyfile(task.path(task.instruction), target)
    (dest / "BUDGET.md").write_text(budget_markdown(budget))
    _git(dest, "init", "-q", "-b", branch)
    _git(dest, "add", "-A", "-f")
    _git(dest, "commit", "-q", "-m", f"Starting code of task {task.name}")
    return _git(dest, "rev-parse", "HEAD")


def tar_for_agent(folder: Path) -> bytes:
    """A tar of `folder`'s contents with every entry owned by the agent user (uid/gid 1000)."""
    buf = io.BytesIO()

    def own(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = AGENT_UID
        info.uname = info.gname = "agent"
        return info

    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(folder, arcname=".", filter=own)
    return buf.getvalue()


def workspace_tar(task: TaskSpec | TestsTaskSpec, budget: Budget, branch: str, data_dir: Path) -> tuple[bytes, str]:
    """The workspace as a tar owned by the agent, and its starting commit."""
    with tempfile.TemporaryDirectory(prefix="sbx-ws-") as tmp:
        root = Path(tmp) / "ws"
        commit = build_workspace(task, budget, root, branch, data_dir)
        return tar_for_agent(root), commit
