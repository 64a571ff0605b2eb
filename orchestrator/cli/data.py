"""`sbx data` commands."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="(not yet implemented)")
    p.set_defaults(handler=lambda args: 1)
