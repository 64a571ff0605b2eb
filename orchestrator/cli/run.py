"""`sbx run`: one run, start to end, in a fresh metered sandbox; prints the run id."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="one run of an agent on a task in a fresh metered sandbox; prints its run id")
    p.add_argument("--task", default="flight-delays", help="task name or folder (default: flight-delays)")
    p.add_argument("--budget", default="smoke", help="budget name or YAML file (default: smoke)")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--agent", default=None, help="a built-in agent: noop, hpo, ... (default: noop)")
    who.add_argument("--agent-command", type=Path, default=None, metavar="PATH",
                     help="your own agent: an executable file, mounted read-only at /agent/ and run as the agent user")
    p.add_argument("--model", default=None, help="model label recorded with the run (for LLM agents)")
    p.add_argument("--seed", type=int, default=0, help="seed handed to the agent as SBX_SEED")
    p.add_argument("--cpuset", default=None, help="CPUs for the sandbox, e.g. 0-3 (default: the first N CPUs)")
    p.add_argument("--data-dir", type=Path, default=None, help="prepared data (default: the task's data set)")
    p.add_argument("--ledger", type=Path, default=None, help="ledger file (default: $SBX_HOME/ledger.sqlite)")
    p.add_argument("--no-score", action="store_true", help="do not score the delivered train.py on the holdout")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.agents import command_agent, resolve_agent
    from orchestrator.images import resolve_image
    from orchestrator.ledger import Ledger
    from orchestrator.run.execute import RunRequest, execute_run
    from orchestrator.specs import load_budget, load_task

    task, budget = load_task(args.task), load_budget(args.budget)
    agent = command_agent(args.agent_command) if args.agent_command else resolve_agent(args.agent or "noop")
    client = engine.client()
    image = resolve_image(client, "sandbox")
    with Ledger(args.ledger) as ledger:
        req = RunRequest(task=task, budget=budget, agent=agent, image=image.id, model=args.model, seed=args.seed,
                         cpuset=args.cpuset, data_dir=args.data_dir)
        run_id = execute_run(client, ledger, req)
        if not args.no_score:
            from orchestrator.run.finish import score_and_audit

            score_and_audit(client, ledger, run_id, task, data_dir=args.data_dir)
        record = ledger.get_run(run_id)
    print(f"run {run_id}: {record.status}" + (f" ({record.failure_class}: {record.failure_reason})" if record.failure_class else ""),
          file=sys.stderr)
    print(run_id)
    return 0
