"""`sbx images build`: make the sandbox and scorer images (offline when no registry answers), and agent
images (`--agents NAME...`: the sandbox image plus one agent CLI, see docs/agents.md); `sbx images lock`:
re-resolve an agent's committed closure (the only command that asks a registry what is newest)."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.images import EXTRA, TARGETS

if TYPE_CHECKING:
    import docker

    from orchestrator.images.agents.build import AgentImage
    from orchestrator.specs.task import TaskSpec, TestsTaskSpec
    from orchestrator.tasks.environment import BuiltEnvImage


def default_agent_cache() -> Path:
    """Where agent packages are downloaded: $XDG_CACHE_HOME/sbx/agents (else ~/.cache/sbx/agents)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sbx" / "agents"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("images", help="build the sandbox and scorer images (and the fleet and agent images)")
    isub = p.add_subparsers(dest="images_command", required=True, metavar="ACTION")
    b = isub.add_parser("build", help="build images tagged by a hash of their inputs (skips unchanged ones)")
    b.add_argument("targets", nargs="*", default=[], metavar="TARGET",
                   help=f"which images (default: {', '.join(TARGETS)}, or only sandbox with --agents; also: "
                        f"{', '.join(EXTRA)}, the Ray node image of docker-compose.yml)")
    b.add_argument("--agents", nargs="+", default=[], metavar="NAME",
                   help="also build sbx-agent-NAME from the sandbox each run would use: the standard one, or "
                        "with --task each named task's own sandbox (and the standard one only if one needs it) "
                        "for these agent CLIs (claude-code, codex, opencode, pi, mini-swe-agent)")
    b.add_argument("--agent-cache", type=Path, default=None, metavar="DIR",
                   help="download cache for agent packages (default: $XDG_CACHE_HOME/sbx/agents)")
    b.add_argument("--task", dest="tasks", nargs="+", default=[], metavar="NAME",
                   help="build the images runs of these tasks use, ahead of a study: an ml task's environment "
                        "images (sandbox + scorer), a tests task's image and its sandbox, else the standard ones")
    b.add_argument("--base", choices=["auto", "public", "debian", "debootstrap"], default="auto",
                   help="auto: a local or pullable python:3.11-slim-bookworm, else a Debian base made here "
                        "(by mmdebstrap, else debootstrap); debian: always that base; debootstrap: its older name")
    b.add_argument("--force", action="store_true", help="rebuild even when the tag for these inputs exists")
    b.add_argument("--versions", action="store_true", help="print the package versions recorded in each image")
    b.add_argument("--json", action="store_true", help="print the images as one JSON document")
    b.set_defaults(handler=_build)
    lk = isub.add_parser("lock", help="re-resolve agents' closures and rewrite their committed locks "
                                      "(images/agents/locks/NAME, agents.lock); prints what changed")
    lk.add_argument("--agents", nargs="+", required=True, metavar="NAME", help="the agents to re-lock")
    lk.add_argument("--before", default=None, metavar="YYYY-MM-DD",
                    help="resolve to the newest versions published before this date (default: today)")
    lk.add_argument("--agent-cache", type=Path, default=None, metavar="DIR",
                    help="download cache for agent packages (default: $XDG_CACHE_HOME/sbx/agents)")
    lk.add_argument("--out", type=Path, default=None, metavar="DIR",
                    help="agents folder to write agents.lock and locks/ into (default: the checkout's images/agents, "
                         "else ./agents, seeded with a copy of the shipped one)")
    lk.set_defaults(handler=_lock)


def _lock(args: argparse.Namespace) -> int:
    from orchestrator import paths
    from orchestrator.agents.adapters import get_adapter
    from orchestrator.images.agents.resolve import lock_agent

    adapters = [get_adapter(name) for name in args.agents]  # every name is checked before anything resolves
    agents_dir = agents_lock_dir(args.out or paths.agents_lock_root())
    for adapter in adapters:
        change = lock_agent(adapter, agents_dir, args.agent_cache or default_agent_cache(), before=args.before)
        print(change.render())
    print(f"wrote {agents_dir / 'agents.lock'}")
    return 0


def agents_lock_dir(out: Path) -> Path:
    """`out` as an agents folder to relock in: the shipped one itself, or (first time) a copy of it, so the
    relock reads the current lines and only the relocked agents' change. Never the installed package's."""
    from orchestrator import paths
    from orchestrator.failures import ConfigError

    if paths.is_package_data(out):
        raise ConfigError(f"{out} is an installed sbx's package data; give --out a folder of your own")
    shipped_agents = paths.images_root() / "agents"
    if out.resolve() != shipped_agents.resolve() and not (out / "agents.lock").is_file():
        shutil.copytree(shipped_agents, out, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return out


def _build(args: argparse.Namespace) -> int:
    from orchestrator import engine, paths
    from orchestrator.cli.common import home
    from orchestrator.images.build import build_images
    from orchestrator.specs.task import load_any_task

    tasks = [load_any_task(name) for name in args.tasks]  # every name is checked before anything is built
    if args.agents:  # unknown names, and agents that cannot install on a task's sandbox, fail before any build
        from orchestrator.agents.adapters import get_adapter
        from orchestrator.images.agents.build import require_closure_fits
        from orchestrator.run.images import sandbox_python_of

        for name in args.agents:
            adapter = get_adapter(name)
            for task in tasks:
                python = sandbox_python_of(task)
                if python is not None:
                    require_closure_fits(adapter, python, f"the sandbox of task {task.name}")
    client = engine.client()
    task_images, standard = _task_images(client, tasks, force=args.force) if tasks else ([], True)
    # agents go on the standard sandbox only when a run would use it: no --task, or a task without its own
    # sandbox; `--task T --agents NAME` for a tests task builds nothing standard (its runs never use it)
    targets = tuple(args.targets)
    if standard:
        targets = targets or (("sandbox",) if args.agents else TARGETS)
        if args.agents and "sandbox" not in targets:
            targets = ("sandbox", *targets)
    built = build_images(client, targets, base_mode=args.base, force=args.force,
                         versions_dir=home(args).images_dir) if targets else []
    agent_images: list[AgentImage] = []
    if args.agents:
        from orchestrator.images.agents import build_agent_images

        # on the standard sandbox, and on each sandbox of the tasks named (a CLI agent runs in its run's sandbox)
        sandboxes = [img.tag for img in built if img.name == "sandbox"]
        sandboxes += [img.tag for _, target, img in task_images if target == "sandbox" and img.tag not in sandboxes]
        for sandbox in sandboxes:
            agent_images += build_agent_images(client, args.agents, sandbox_tag=sandbox,
                                               agents_dir=paths.images_root() / "agents",
                                               cache=args.agent_cache or default_agent_cache(), force=args.force)
    if args.json:
        from dataclasses import asdict

        from orchestrator.cli.common import print_json

        print_json({"images": [asdict(i) for i in built], "agents": [asdict(i) for i in agent_images],
                    "tasks": [{"task": task, "target": target, **asdict(i)} for task, target, i in task_images]})
        return 0
    for task_name, target, env_img in task_images:
        state = "built" if env_img.built else "up to date"
        print(f"{task_name} {target:8s} {env_img.tag}  {env_img.size_bytes / 1e6:.0f} MB  {state} in "
              f"{env_img.seconds:.1f}s")
    for img in built:
        state = "built" if img.built else "up to date"
        print(f"{img.name:8s} {img.tag}  {img.size_bytes / 1e6:.0f} MB  {state} in {img.seconds:.1f}s")
        if args.versions:
            print("".join(f"    {line}\n" for line in img.versions.splitlines()))
    for agent_img in agent_images:
        state = (f"built in {agent_img.build_seconds:.1f}s (fetch {agent_img.fetch_seconds:.1f}s, "
                 f"{agent_img.downloaded_bytes / 1e6:.0f} MB downloaded)") if agent_img.built else "up to date"
        print(f"{agent_img.name:14s} {agent_img.version:9s} {agent_img.tag}  {agent_img.size_bytes / 1e6:.0f} MB  "
              f"{state}")
        if args.versions:
            print("".join(f"    {line}\n" for line in agent_img.versions.splitlines()))
    return 0


TaskImages = list[tuple[str, str, "BuiltEnvImage"]]


def _task_images(client: docker.DockerClient, tasks: list[TaskSpec | TestsTaskSpec],
                 force: bool) -> tuple[TaskImages, bool]:
    """The images runs of these tasks use (run/images.py `task_images`), as (task, target, image), each
    environment once however many tasks share it; and whether one of them needs the standard images."""
    from orchestrator.run.images import task_images
    from orchestrator.specs.task import TaskSpec

    out: TaskImages = []
    shared: set[str] = set()
    standard = False
    for task in tasks:
        if isinstance(task, TaskSpec) and task.python_env is not None:
            if task.python_env.digest() in shared:  # ml tasks of one environment share its images
                continue
            shared.add(task.python_env.digest())
        images = task_images(client, task, force=force)
        standard = standard or "sandbox" not in images
        out += [(task.name, target, img) for target, img in images.items()]
    return out, standard
