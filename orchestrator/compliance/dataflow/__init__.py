"""The taint engine: an abstract interpreter over one file's AST that reports where tainted values reach
sinks. `analyze(source, filename)` is the entry point; the rules in `compliance.traces` read its hits."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from orchestrator.compliance.dataflow.base import NodeCaches
from orchestrator.compliance.dataflow.core import Role, SinkHit
from orchestrator.compliance.dataflow.interpreter import SCORER_KINDS, Analysis, Interpreter
from orchestrator.compliance.dataflow.scopes import DEFAULT_BUDGET
from orchestrator.compliance.strings import TaskLayout
from orchestrator.compliance.values import Kind

__all__ = [
    "Analysis",
    "NodeCaches",
    "Role",
    "SinkHit",
    "TaskLayout",
    "analyze",
    "analyze_tree",
    "witnessed_after_body",
]


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
    hits' paths are empty but for their sink (faster; the same hits), and the analysis keeps where the
    module body ended when `witnessed_after_body` can start there; `witness_kinds` keeps the paths of those
    kinds only. Passes over the same tree may share `caches`."""
    interpreter = Interpreter(tree, source, layout or TaskLayout(), budget, witness, caches, witness_kinds)
    return interpreter.run(keep_after_body=not witness)


def witnessed_after_body(
    tree: ast.Module,
    source: str,
    quick: Analysis,
    witness_kinds: Iterable[Kind],
    layout: TaskLayout | None = None,
    budget: int = DEFAULT_BUDGET,
    *,
    caches: NodeCaches | None = None,
) -> Analysis | None:
    """The pass with witnesses of `witness_kinds`, started where the quick pass `quick` (of the same tree,
    layout and budget) left the module body; None when that would not be exact: a kind the body may start
    (the evaluation file's) is asked for, or the quick pass did not keep its state after the body."""
    kinds = frozenset(witness_kinds)
    if quick.after_body is None or not kinds or not kinds <= SCORER_KINDS:
        return None
    interpreter = Interpreter(tree, source, layout or TaskLayout(), budget, True, caches, kinds)
    return interpreter.resume(quick.after_body)


def analyze(
    source: str, filename: str = "train.py", layout: TaskLayout | None = None, budget: int = DEFAULT_BUDGET
) -> Analysis:
    """Parse and interpret `source`. Raises SyntaxError (ValueError for null bytes) if it does not parse."""
    return analyze_tree(ast.parse(source, filename=filename), source, layout, budget)
