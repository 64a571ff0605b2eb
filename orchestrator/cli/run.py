"""`sbx run`: one run, start to end, in a fresh metered sandbox; prints its run id (or, with --json, its record).

A CLI agent (claude-code, codex, opencode, pi, mini-swe-agent) needs --model and --endpoint: its calls go
through a model gateway this command starts, which holds the endpoint's key (read from the endpoint's
key_env or key_file in --endpoints) and meters every call; the cost comes from --ratecards.

Exit status: 0 when the run delivered (and, when scored, passed every compliance rule; a tests task: when
it was graded, pass or fail, since a fail is the run's outcome); 1 when the agent failed, the artifact was
unscorable or the audit flagged it; 2 for a usage or config error (the run is
recorded as cancelled); 3 when our side failed (the attempt is recorded as failed/infra).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from orchestrator.cli.common import (
    CHECK_FAILED,
    INFRA,
    OK,
    add_json,
    add_ledger,
    add_model_files,
    home,
    open_ledger,
    print_json,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="one run of an agent on a task in a fresh metered sandbox; prints its run id",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="flight-delays",
                   help="task name or folder: an ml task (scored) or a tests task (graded pass/fail by its hidden "
                   "tests) (default: flight-delays)")
    p.add_argument("--budget", default="smoke", help="budget name or YAML file (default: smoke)")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--agent", default=None,
                     help="a built-in agent (noop, hpo, ...) or a CLI agent (claude-code, codex, opencode, pi, "
                     "mini-swe-agent; needs --model and --endpoint) (default: noop)")
    who.add_argument("--agent-command", type=Path, default=None, metavar="PATH",
                     help="your own agent: an executable file, mounted read-only at /agent/ and run as the agent user")
    p.add_argument("--model", default=None, help="the model the agent's calls ask for (recorded with the run)")
    p.add_argument("--endpoint", default=None, metavar="NAME",
                   help="model endpoint (in --endpoints) the agent's calls go to through the gateway")
    add_model_files(p)
    p.add_argument("--seed", type=int, default=0, help="seed handed to the agent as SBX_SEED")
    p.add_argument("--cpuset", default=None, help="CPUs for the sandbox, e.g. 0-3 (default: the first N CPUs)")
    p.add_argument("--data-dir", type=Path, default=None, help="prepared data (default: the task's data set)")
    add_ledger(p)
    p.add_argument("--no-score", action="store_true", help="do not score the delivered train.py on the holdout")
    add_json(p, "the run's record")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.agents import command_agent, resolve_agent
    from orchestrator.failures import ConfigError, DataError
    from orchestrator.ledger import RunState
    from orchestrator.log import terminal_safe
    from orchestrator.run import RunLifecycle, RunRequest
    from orchestrator.run.gateway_host import GatewayHost
    from orchestrator.run.record import full_record
    from orchestrator.specs import load_budget
    from orchestrator.specs.task import load_any_task, task_data_dir

    where = home(args)
    task, budget = load_any_task(args.task), load_budget(args.budget)
    agent = command_agent(args.agent_command) if args.agent_command else resolve_agent(args.agent or "noop")
    req = RunRequest(task=task, budget=budget, agent=agent, data_dir=args.data_dir or task_data_dir(task, where),
                     model=args.model, endpoint=args.endpoint, seed=args.seed, cpuset=args.cpuset,
                     datasets=() if args.no_score or task.kind == "tests" else ("holdout",), judge=task.judge)
    client = engine.client()
    gateway = GatewayHost.from_files(args.endpoints, args.ratecards) if args.endpoint or task.judge else None
    with open_ledger(args, create=True) as ledger, gateway or contextlib.nullcontext():
        lifecycle = RunLifecycle(where, ledger, client, gateway=gateway)
        run_id = lifecycle.plan(req)
        try:
            record = lifecycle.run(req, run_id)
        except (ConfigError, DataError) as exc:
            ledger.advance(run_id, RunState.CANCELLED, reason=f"not started: {exc}"[:2000])
            raise
        view = full_record(ledger, run_id)
    if args.json:
        print_json(view)
    else:
        line = f"run {run_id}: {record.status}"
        if record.failure_class:
            line += f" ({record.failure_class}: {record.failure_reason})"
        if view["outcome"] is not None:
            line += f", {'pass' if view['outcome'] else 'fail'} ({view['outcome_reason']})"
        if view["judge_outcome"] is not None:  # a model's verdict, beside the tests' when the task has them
            line += f", judge {'pass' if view['judge_outcome'] else 'fail'}"
        if view["holdout_score"] is not None:
            line += f", holdout {view['holdout_score']:.4f}"
        if view["model_calls"] is not None:
            cost = "cost unknown" if view["cost_usd"] is None else f"${view['cost_usd']:.4f}"
            line += f", {view['model_calls']} model calls, {cost}"
        if view["compliant"] is not None:
            line += ", compliant" if view["compliant"] else ", flagged: " + ", ".join(
                a["rule"] for a in view["audits"] if a["final_verdict"] != "clear")
        print(terminal_safe(line), file=sys.stderr)  # a failure reason may quote the agent
        print(run_id)
    if record.status == RunState.FAILED:
        return INFRA if record.failure_class == "infra" else CHECK_FAILED
    return CHECK_FAILED if view["compliant"] is False else OK
