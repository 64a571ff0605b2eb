"""`sbx --help` must stay fast: the parser never loads the gateway, the stand-in or aiohttp."""

from __future__ import annotations

import subprocess
import sys

from orchestrator.cli import build_parser


def test_parser_does_not_import_the_gateway() -> None:
    code = ("import sys; from orchestrator.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'aiohttp' "
            "or m.startswith(('orchestrator.gateway', 'orchestrator.model'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_model_and_endpoints_commands_are_registered() -> None:
    args = build_parser().parse_args(["model", "serve", "--scenario", "s.yaml", "--port", "0"])
    assert args.port == 0 and args.handler.__name__ == "_serve"
    args = build_parser().parse_args(["endpoints", "check", "standin"])
    assert args.name == "standin" and args.handler.__name__ == "_check"
