"""A run's configuration and its hash: what decides how a run goes, apart from its seed, where and when.

Two runs with the same `config_hash` got the same task (spec and starting repo), budget, agent (its file's
bytes and argv), model, agent options, sandbox image, data (the prepared set's manifest) and scoring
options. The seed is recorded beside it and checked on its own (a different-seed control keeps the config
and changes the seed); the study, pairing label, repeat, cpuset, slot and node are not configuration
(placement is analysed as a possible cause of spread instead). The lifecycle's `prepare` step writes
`seed`, `config_hash` and `config` into the run's meta, so a paired analysis can check them later
(orchestrator/study/pairs.py).

Every field of RunRequest is either hashed or named in `NOT_HASHED` (a test keeps it so): a new field has
to be classified when it is added.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from orchestrator.run.request import RunRequest
from orchestrator.sandbox.copyout import CopyLimits
from orchestrator.specs.task import TaskSpec, TestsTaskSpec

#: RunRequest fields that go into the hash (data_dir by its content, score_options less its cpuset, copy_limits
#: only when they are not the defaults, so the hashes of runs made before they existed stay the same)
HASHED = frozenset(
    {"task", "budget", "agent", "model", "endpoint", "agent_options", "data_dir", "datasets", "score_options",
     "copy_limits"}
)
#: RunRequest fields that are not configuration: identity, placement, the seed (recorded on its own), and the
#: judge (it grades the run after the sandbox is gone; recorded in the run's meta and its verdict row)
NOT_HASHED = frozenset({"study_id", "pairing", "repeat", "seed", "cpuset", "slot", "node", "meta", "judge"})

_CHUNK = 1 << 20
#: a task repo larger than this is hashed by file names and sizes only beyond it (bounded work per run)
_MAX_TREE_BYTES = 512 * 1024 * 1024


def file_sha256(path: Path) -> str | None:
    """The sha256 of a regular file's bytes; None when it is missing or not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        digest = hashlib.sha256()
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def tree_sha256(root: Path) -> str | None:
    """One hash of a folder's regular files: their relative paths and contents, in sorted order.

    Symlinks are hashed as their target text (never followed); past `_MAX_TREE_BYTES` of content only
    names and sizes count. None when the folder does not exist."""
    if not root.is_dir():
        return None
    digest = hashlib.sha256()
    read = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entry = f"L {rel} {os.readlink(path)}"
            elif stat.S_ISREG(info.st_mode):
                read += info.st_size
                content = file_sha256(path) if read <= _MAX_TREE_BYTES else f"size:{info.st_size}"
                entry = f"F {rel} {content}"
            else:
                continue
            digest.update(entry.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


def data_digest(data_dir: Path) -> str | None:
    """The prepared data set's identity: its manifest (which holds every file's sha256), else its files."""
    manifest = data_dir / "manifest.json"
    return file_sha256(manifest) if manifest.is_file() else tree_sha256(data_dir)


def task_spec(task: TaskSpec | TestsTaskSpec) -> dict[str, Any]:
    """The task's spec as a run's config records it (`config.task.spec`)."""
    # the judge grades a run after it ended and is never in the sandbox: not configuration (runs/judge.py)
    spec = task.model_dump(mode="json", exclude={"judge"})
    if isinstance(task, TaskSpec) and spec.get("environment") is None:
        spec.pop("environment", None)
    return spec


def task_config(req: RunRequest) -> dict[str, Any]:
    """The task's part of the config. An ml task's environment (its pins, not only the file's name) is in
    it only when the task declares one, so the hashes of runs on the standard images stay what they were."""
    out: dict[str, Any] = {"spec": task_spec(req.task), "repo_sha256": tree_sha256(req.task.repo_dir)}
    if isinstance(req.task, TaskSpec):
        env = req.task.python_env
        if env is not None:
            out["environment"] = {"digest": env.digest(), "python": env.python, "suite": env.suite,
                                  "packages": dict(env.packages), "sdist_only": sorted(env.sdist_only)}
            if env.hashes:
                out["environment"]["hashes"] = {n: list(h) for n, h in env.hashes.items()}
    return out


def run_config(req: RunRequest, image: str) -> dict[str, Any]:
    """What decides how a run goes, as a JSON object (the seed, placement and identity left out)."""
    return {
        "task": task_config(req),
        "budget": req.budget.model_dump(mode="json"),
        "agent": {
            "name": req.agent.name,
            "kind": req.agent.kind,
            "command": list(req.agent.command),
            "container_path": req.agent.container_path,
            "file_sha256": file_sha256(req.agent.host_path) if req.agent.host_path else None,
        },
        "model": req.model,
        "endpoint": req.endpoint,
        "agent_options": dict(req.agent_options),
        "image": image,
        "data_sha256": data_digest(req.data_dir),
        "datasets": list(req.datasets),
        "score_options": req.score_options.model_dump(mode="json", exclude={"cpuset"}),
        # a copy-out that runs out of its limits is the agent's failure: other limits are another configuration
        **({"copy_limits": dataclasses.asdict(req.copy_limits)} if req.copy_limits != CopyLimits() else {}),
    }


def config_hash(config: dict[str, Any]) -> str:
    """sha256 of the config's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def config_meta(req: RunRequest, image: str) -> dict[str, Any]:
    """The meta fields `prepare` records: the seed, the config hash and the config it was made from."""
    config = run_config(req, image)
    return {"seed": req.seed, "config_hash": config_hash(config), "config": config}


def config_differences(a: dict[str, Any], b: dict[str, Any], limit: int = 5) -> list[str]:
    """Where two recorded configs differ, as dotted paths (for the pair check's message)."""
    out: list[str] = []

    def visit(x: Any, y: Any, at: str) -> None:
        if len(out) >= limit or x == y:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y)):
                visit(x.get(key), y.get(key), f"{at}.{key}" if at else str(key))
        else:
            out.append(at or "(config)")

    visit(a, b, "")
    return out
