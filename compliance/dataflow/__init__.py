"""The taint engine: an abstract interpreter over one file's AST that reports where tainted values reach
sinks. `analyze(source, filename)` is the entry point; the rules in `compliance.traces` read its hits."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from compliance.dataflow.base import NodeCaches
from compliance.dataflow.core import Role, SinkHit
from compliance.dataflow.interpreter import Analysis, Interpreter
from compliance.dataflow.scopes import DEFAULT_BUDGET
from compliance.strings import TaskLayout
from compliance.values import Kind

__all__ = ["Analysis", "NodeCaches", "Role", "SinkHit", "TaskLayout", "analyze", "analyze_tree"]


def analyze_tree(
    tree: ast.Module,
    source: str,
    layout: TaskLayout | None = None,
    budget: int = DEFAULT_BUDGET,
    *,
    witness: bool = True,
    caches: NodeCaches | None = None,
    witness_kinds: Iterable[Kind] | None = None,
) -> Analysis:
    """Interpret a parsed file and return every sink a tainted value reached. With `witness=False` the
    hits' paths are empty but for their sink (faster; the same hits); `witness_kinds` keeps the paths of
    those kinds only. Passes over the same tree may share `caches`."""
    return Interpreter(tree, source, layout or TaskLayout(), budget, witness, caches, witness_kinds).run()


def analyze(
    source: str, filename: str = "train.py", layout: TaskLayout | None = None, budget: int = DEFAULT_BUDGET
) -> Analysis:
    """Parse and interpret `source`. Raises SyntaxError (ValueError for null bytes) if it does not parse."""
    return analyze_tree(ast.parse(source, filename=filename), source, layout, budget)
