"""The taint engine: an abstract interpreter over one file's AST that reports where tainted values reach
sinks. `analyze(source, filename)` is the entry point; the rules in `compliance.traces` read its hits."""

from __future__ import annotations

import ast

from compliance.dataflow.core import Role, SinkHit
from compliance.dataflow.interpreter import Analysis, Interpreter
from compliance.dataflow.scopes import DEFAULT_BUDGET
from compliance.strings import TaskLayout

__all__ = ["Analysis", "Role", "SinkHit", "TaskLayout", "analyze", "analyze_tree"]


def analyze_tree(
    tree: ast.Module, source: str, layout: TaskLayout | None = None, budget: int = DEFAULT_BUDGET
) -> Analysis:
    """Interpret a parsed file and return every sink a tainted value reached."""
    return Interpreter(tree, source, layout or TaskLayout(), budget).run()


def analyze(
    source: str, filename: str = "train.py", layout: TaskLayout | None = None, budget: int = DEFAULT_BUDGET
) -> Analysis:
    """Parse and interpret `source`. Raises SyntaxError (ValueError for null bytes) if it does not parse."""
    return analyze_tree(ast.parse(source, filename=filename), source, layout, budget)
