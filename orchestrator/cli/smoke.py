"""`sbx smoke`: run a task's starting code once inside the sandbox image and print its eval AUC."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.cli.common import CHECK_FAILED, OK, add_json, home, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("smoke", help="run the task's starting code once in the sandbox image (no network, uid 1000)")
    p.add_argument("--task", default="flight-delays", help="task name or folder (default: flight-delays)")
    p.add_argument("--budget", default="smoke", help="budget name or YAML file for the limits (default: smoke)")
    p.add_argument("--data-dir", type=Path, default=None, help="prepared data (default: the task's data set)")
    add_json(p, "the result")
    p.set_defaults(handler=_smoke)


def _smoke(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.images import resolve_image
    from orchestrator.sandbox.smoke import run_starting_code
    from orchestrator.specs import load_budget, load_task

    task, budget = load_task(args.task), load_budget(args.budget)
    client = engine.client()
    image = resolve_image(client, "sandbox")
    result = run_starting_code(client, image.tags[0], task, budget, data_dir=args.data_dir or task.data_dir(home(args)))
    ok = result.train_exit_code == 0 and result.validate_exit_code == 0 and result.eval_auc is not None
    if args.json:
        from dataclasses import asdict

        print_json({**asdict(result), "ok": ok})
        return OK if ok else CHECK_FAILED
    print(f"image      {result.image} ({image.id[:19]})")
    print(f"user       uid {result.whoami}, network interfaces: {', '.join(result.interfaces)}")
    print(f"train.py   exit {result.train_exit_code}, {result.seconds:.1f}s in the container")
    print(f"Eval AUC   {result.eval_auc if result.eval_auc is not None else 'not printed'}")
    print(f"validate   {result.validate_output.strip().splitlines()[-1] if result.validate_output.strip() else '(no output)'}")
    if result.train_exit_code != 0:
        print(result.train_output[-3000:])
    return OK if ok else CHECK_FAILED
