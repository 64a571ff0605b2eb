"""Scopes and control flow for the interpreter: states, frames, loops, and what the AST says about which
names a function binds and which functions a file defines."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from orchestrator.compliance.values import Value, join

State = dict[str, Value]
#: a value nothing is known about, not even that it is not None
UNKNOWN_VALUE = Value(may_none=True)

#: loops over known lists longer than this run to a fixpoint instead of being unrolled
UNROLL_MAX = 16
#: fixpoint iterations before a loop's state is widened
WIDEN_AFTER = 4
MAX_LOOP_ITERATIONS = 8
MAX_CALL_DEPTH = 20
#: statements and calls interpreted per file before the analysis gives up (reported, never "clear")
DEFAULT_BUDGET = 200_000
#: CPU seconds per file before the analysis gives up (reported, never "clear")
TIME_LIMIT_S = 20.0


class BudgetExceeded(Exception):
    """The file needs more interpretation steps than the budget allows."""


class Infeasible(Exception):
    """The path being interpreted raises at run time for certain (the batch's label column is read): no value
    flows on along it. The statement does not complete; a function that completes on no path does not
    return to its caller either."""


@dataclass
class Loop:
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)


class Frame:
    """One function (or module, or class body) being interpreted. A plain slotted class: one is made per
    call of a function of the file."""

    __slots__ = (
        "closure",
        "cls",
        "entry",
        "exits",
        "global_decls",
        "globals",
        "infeasible",
        "is_module",
        "local_names",
        "loops",
        "name",
        "original_params",
        "yields",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        globals: State,
        local_names: frozenset[str] | None = None,
        closure: State | None = None,
        global_decls: frozenset[str] = frozenset(),
        cls: Value | None = None,
        is_module: bool = False,
    ) -> None:
        self.name = name
        #: the module's variables as this frame sees them (for the module frame: its own state)
        self.globals = globals
        #: names local to a function (None at module level and in class bodies: every name is local)
        self.local_names = local_names
        self.closure = closure
        self.global_decls = global_decls
        #: parameters still bound to the caller's object: in-place changes to them are copied back
        self.original_params: set[str] = set()
        self.exits: list[tuple[Value, dict[str, Value]]] = []
        #: the parameters' values at entry, to tell a parameter changed in place from one left alone
        self.entry: dict[str, Value] = {}
        self.yields: list[Value] = []
        self.loops: list[Loop] = []
        self.cls = cls
        self.is_module = is_module
        #: some path of the function ended because it was infeasible
        self.infeasible = False


def merge_states(states: list[State | None]) -> State | None:
    """Join of the states that are reachable (None is an unreachable point)."""
    live = [s for s in states if s is not None]
    if not live:
        return None
    if len(live) == 1:
        return dict(live[0])
    out = dict(live[0])
    for s in live[1:]:
        for k, v in s.items():
            old = out.get(k)
            out[k] = v if old is None else join(old, v)
    return out


def locals_of(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, walrus: bool = True
) -> tuple[frozenset[str], frozenset[str]]:
    """Names a function binds (its locals) and names it declares global or nonlocal."""
    bound: set[str] = set()
    declared: set[str] = set()
    args = node.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        bound.add(a.arg)
    bound.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    if isinstance(node, ast.Lambda):
        return frozenset(bound), frozenset()
    for stmt in statements_in(node.body):
        if isinstance(stmt, ast.Global | ast.Nonlocal):
            declared.update(stmt.names)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in stmt.names)
        targets: list[ast.AST] = []
        if isinstance(stmt, ast.Assign):
            targets = list(stmt.targets)
        elif isinstance(stmt, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
            targets = [stmt.target]
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
        elif isinstance(stmt, ast.Try | ast.TryStar):
            bound.update(h.name for h in stmt.handlers if h.name)
        elif isinstance(stmt, ast.Match):
            targets = [c.pattern for c in stmt.cases]
        for target in targets:
            bound.update(_bound_names(target))
        for child in ast.iter_child_nodes(stmt) if walrus else ():
            if isinstance(child, ast.expr) and has_walrus(child):
                bound.update(n.target.id for n in ast.walk(child) if isinstance(n, ast.NamedExpr))
    return frozenset(bound - declared), frozenset(declared)


def _bound_names(target: ast.AST) -> list[str]:
    """Names an assignment target binds: `x`, `a, *b`, a match pattern's captures. A store into an item or
    attribute (`CACHE[key] = v`, `self.x = v`) binds nothing: `CACHE` stays the global it was."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for elt in target.elts for n in _bound_names(elt)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, ast.pattern):
        return [
            sub.name for sub in ast.walk(target) if isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name
        ]
    return []


def statements_in(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement in a block and its nested blocks, not entering nested functions or classes."""
    out: list[ast.stmt] = []
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        out.append(stmt)
        if not isinstance(stmt, _COMPOUND):
            continue  # most statements hold no others
        for attr in ("body", "orelse", "finalbody"):
            stack.extend(reversed(getattr(stmt, attr, None) or []))
        for handler in getattr(stmt, "handlers", None) or []:
            stack.extend(reversed(handler.body))
        for case in getattr(stmt, "cases", None) or []:
            stack.extend(reversed(case.body))
    return out


#: statements that hold others (function and class bodies are their own scopes: not entered)
_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
)


def has_walrus(expr: ast.expr) -> bool:
    return any(isinstance(n, ast.NamedExpr) for n in ast.walk(expr))


def decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    names = set()
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def function_owners(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]]:
    """Every function of the file with the name of the module-level class it belongs to, if any."""
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]] = []

    def visit(body: list[ast.stmt], owner: str | None, top: bool) -> None:
        for stmt in statements_in(body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((stmt, owner))
                visit(stmt.body, None, False)
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, stmt.name if top and stmt in body else None, False)

    visit(tree.body, None, True)
    return out


def accumulator_names(stmt: ast.For | ast.AsyncFor) -> tuple[set[str], set[str]]:
    """Names a loop body updates from their own value (`total += x`) or stores into by a computed key."""
    accumulators: set[str] = set()
    keyed: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.AugAssign):
            base: ast.expr = node.target
            while isinstance(base, ast.Subscript | ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                accumulators.add(base.id)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                # `counts[value] = ...` groups by a computed key; `out[i:j] = ...` only places rows
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and not isinstance(t.slice, ast.Constant | ast.Slice)
                ):
                    keyed.add(t.value.id)
    return accumulators, keyed


def as_load(target: ast.expr) -> ast.expr:
    clone = ast.parse(ast.unparse(target), mode="eval").body
    ast.copy_location(clone, target)
    for n in ast.walk(clone):
        if hasattr(n, "lineno"):
            ast.copy_location(n, target)
    return clone
