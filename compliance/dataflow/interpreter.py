"""An abstract interpreter of one Python file: it runs the module's code over `Value`s instead of data.

How it follows data:

* statements in order, flow-sensitively: `df = read(eval)` then `df = read(train)` leaves `df` clean;
  both arms of an `if` it cannot decide are run and joined; loops over a known list (file names, split
  names) are unrolled, other loops run to a fixpoint;
* stores into attributes and items (`df["te"] = ...`, `self.enc = ...`, `frames[split] = ...`) update the
  stored-into value, keeping constant keys apart;
* calls into functions and classes of the same file are interpreted with the actual argument values
  (context-sensitive), so a shared `prepare(df)` is analysed once with the training frame and once with
  the batch; changes a function makes to its arguments in place are copied back to the caller;
* calls into libraries follow `semantics`.

After the module body it calls the scorer's entry (`predict_proba`) with a batch-tainted frame, then every
function that was never reached with unknown arguments, so code the interpreter could not see being called
is still checked.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from dataclasses import dataclass, field

from compliance import library as lib
from compliance.dataflow import semantics
from compliance.dataflow.core import CallSite, Role, SinkHit
from compliance.strings import SCRIPT_PATH, TaskLayout, fold_attribute, fold_format, path_join
from compliance.values import (
    CLEAN,
    NONE,
    UNKNOWN,
    ClassRef,
    FuncRef,
    InstanceRef,
    Kind,
    LibRef,
    Step,
    Taints,
    Value,
    const_value,
    extend_path,
    join,
    join_all,
    lift_rows,
    row_of,
    widen,
)

State = dict[str, Value]
#: a value nothing is known about, not even that it is not None
UNKNOWN_VALUE = Value(may_none=True)

#: loops over known lists longer than this run to a fixpoint instead of being unrolled
UNROLL_MAX = 64
#: fixpoint iterations before a loop's state is widened
WIDEN_AFTER = 4
MAX_LOOP_ITERATIONS = 8
MAX_CALL_DEPTH = 20
#: statements and calls interpreted per file before the analysis gives up (reported, never "clear")
DEFAULT_BUDGET = 200_000
_BUILTIN_NAMES = frozenset(dir(builtins))
_ELEMENT_ACCESSOR = "<element accessor>"
_ACCESSOR_NAMES = lib.ROW_ACCESSORS | lib.ELEMENT_ACCESSORS | {"values"}


class BudgetExceeded(Exception):
    """The file needs more interpretation steps than the budget allows."""


@dataclass
class _Loop:
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)


@dataclass
class _Frame:
    name: str
    #: the module's variables as this frame sees them (for the module frame: its own state)
    globals: State
    #: names local to a function (None at module level and in class bodies: every name is local)
    local_names: frozenset[str] | None = None
    closure: State | None = None
    global_decls: frozenset[str] = frozenset()
    #: parameters still bound to the caller's object: in-place changes to them are copied back
    original_params: set[str] = field(default_factory=set)
    exits: list[tuple[Value, dict[str, Value]]] = field(default_factory=list)
    #: the parameters' values at entry, to tell a parameter changed in place from one left alone
    entry: dict[str, Value] = field(default_factory=dict)
    yields: list[Value] = field(default_factory=list)
    loops: list[_Loop] = field(default_factory=list)
    cls: Value | None = None
    is_module: bool = False


@dataclass
class Analysis:
    """What the interpreter found in one file."""

    hits: list[SinkHit]
    #: false when the budget ran out: the hits are then a lower bound
    complete: bool = True
    notes: list[str] = field(default_factory=list)


def _merge(states: list[State | None]) -> State | None:
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


def _locals_of(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
               walrus: bool = True) -> tuple[frozenset[str], frozenset[str]]:
    """Names a function binds (its locals) and names it declares global or nonlocal."""
    bound: set[str] = set()
    declared: set[str] = set()
    args = node.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        bound.add(a.arg)
    for a in (args.vararg, args.kwarg):
        if a is not None:
            bound.add(a.arg)
    if isinstance(node, ast.Lambda):
        return frozenset(bound), frozenset()
    for stmt in _statements(node.body):
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
            for sub in ast.walk(target):
                if isinstance(sub, ast.Name):
                    bound.add(sub.id)
                elif isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name:
                    bound.add(sub.name)
        for child in ast.iter_child_nodes(stmt) if walrus else ():
            if isinstance(child, ast.expr) and _has_walrus(child):
                bound.update(n.target.id for n in ast.walk(child) if isinstance(n, ast.NamedExpr))
    return frozenset(bound - declared), frozenset(declared)


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement in a block and its nested blocks, not entering nested functions or classes."""
    out: list[ast.stmt] = []
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        out.append(stmt)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for attr in ("body", "orelse", "finalbody"):
            stack.extend(reversed(getattr(stmt, attr, None) or []))
        for handler in getattr(stmt, "handlers", None) or []:
            stack.extend(reversed(handler.body))
        for case in getattr(stmt, "cases", None) or []:
            stack.extend(reversed(case.body))
    return out


def _has_walrus(expr: ast.expr) -> bool:
    return any(isinstance(n, ast.NamedExpr) for n in ast.walk(expr))


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    names = set()
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def _truth(v: Value) -> bool | None:
    """Whether a value is truthy, when that is known."""
    if v.const is not UNKNOWN:
        try:
            return bool(v.const)
        except Exception:  # noqa: BLE001 - any odd constant: undecided
            return None
    if isinstance(v.ref, FuncRef | ClassRef | InstanceRef):
        return None if v.may_none else True
    if v.items is not None and not v.may_none:
        return bool(v.items)
    return None


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


class Interpreter:
    """Interprets one parsed file. Use `run()` once."""

    def __init__(self, tree: ast.Module, source: str, layout: TaskLayout, budget: int = DEFAULT_BUDGET) -> None:
        self.tree = tree
        self.lines = source.splitlines()
        #: whether any `:=` may bind names inside expressions (a text test spares walking every expression)
        self._walrus = ":=" in source
        self.layout = layout
        self.budget = budget
        self.hits: dict[tuple[Role, Kind, str, int, int], SinkHit] = {}
        self.notes: list[str] = []
        self.frame = _Frame(name="", globals={}, is_module=True)
        self.stack: list[int] = []
        self.reached: set[int] = set()
        self._locals_cache: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        self._names_cache: dict[int, tuple[tuple[str, ast.AST], ...]] = {}
        self._loop_lift: dict[int, tuple[set[str], set[str]]] = {}
        #: the state of the statement being interpreted (names for evidence are looked up in it)
        self._current_state: State = {}

    # --- entry --------------------------------------------------------------------------------------

    def run(self) -> Analysis:
        complete = True
        try:
            module_state: State = {}
            self.frame.globals = module_state
            final = self.exec_block(self.tree.body, module_state)
            final = final if final is not None else module_state
            self._call_entry(final)
            self._call_unreached(final)
        except BudgetExceeded:
            complete = False
            self.notes.append(f"analysis stopped after {self.budget} steps; the result is incomplete")
        except RecursionError:
            complete = False
            self.notes.append("the file nests too deeply to analyse; the result is incomplete")
        return Analysis(list(self.hits.values()), complete, self.notes)

    def _call_entry(self, module: State) -> None:
        entry = module.get(self.layout.entry)
        func = entry.ref if entry is not None else None
        if not isinstance(func, FuncRef):
            self.notes.append(f"no function {self.layout.entry}() at module level; nothing to trace from it")
            return
        node = func.node
        params = [*node.args.posonlyargs, *node.args.args]
        if func.bound is not None or (params and params[0].arg in {"self", "cls"} and func.flavor != "function"):
            params = params[1:]
        if not params:
            self.notes.append(f"{self.layout.entry}() takes no frame; nothing to trace from it")
            return
        param = params[0].arg
        scope = func.qualname
        origin = Step(node.lineno, self.code(node), (param,), f"the frame the scorer passes to {scope}()", scope)
        batch = Value(base=Taints.of(Kind.BATCH, origin))
        site = self._synthetic_site(node, scope)
        self._current_state = module
        result, _ = self.call_function(func, [batch], {}, site)
        sink = Step(node.lineno, self.code(node), (), f"returned by {scope}() to the scorer", scope)
        for kind, path in result.total.entries:
            self._record(SinkHit(Role.OUTPUT, kind, extend_path(path, sink), f"{scope} (returned value)"))

    def _call_unreached(self, module: State) -> None:
        """Interpret every function no call reached, with unknown arguments: a call the interpreter could
        not see (a callback, `getattr`, a framework) must not hide what the function does."""
        owners = _function_owners(self.tree)
        changed = True
        while changed:
            changed = False
            for node, owner in owners:
                if id(node) in self.reached:
                    continue
                changed = True
                func, self_value = self._unreached_function(node, owner, module)
                positional = [*node.args.posonlyargs, *node.args.args]
                args = [UNKNOWN_VALUE] * len(positional)
                if self_value is not None and args:
                    args[0] = self_value
                site = self._synthetic_site(node, func.qualname)
                saved = self.frame
                self.frame = _Frame(name="", globals=module, is_module=True)
                self._current_state = module
                try:
                    self.call_function(func, args, {}, site)
                finally:
                    self.frame = saved

    def _unreached_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str | None,
                            module: State) -> tuple[FuncRef, Value | None]:
        """The function as the module binds it (defaults, qualified name), and `self` for a method."""
        if owner is not None and owner in module and isinstance(module[owner].ref, ClassRef):
            cls = module[owner]
            member = cls.field(node.name)
            if member is not None and isinstance(member.ref, FuncRef) and member.ref.node is node:
                self_value = None if member.ref.flavor == "staticmethod" else Value(
                    fields=(), ref=InstanceRef(cls), may_none=False)
                return member.ref, self_value
        bound = module.get(node.name)
        if bound is not None and isinstance(bound.ref, FuncRef) and bound.ref.node is node:
            return bound.ref, None
        qualname = f"{owner}.{node.name}" if owner else node.name
        defaults = tuple(UNKNOWN_VALUE for _ in node.args.defaults)
        return FuncRef(node, qualname, closure=None, defaults=defaults), None

    def _synthetic_site(self, node: ast.AST, scope: str) -> CallSite:
        call = ast.Call(func=ast.Name(id=scope, ctx=ast.Load()), args=[], keywords=[])
        ast.copy_location(call, node)
        return CallSite(call, scope, self.code(node), [], [], {}, {}, callee=scope, extra={"synthetic": True})

    # --- evidence -----------------------------------------------------------------------------------

    def code(self, node: ast.AST) -> str:
        first = getattr(node, "lineno", 0)
        last = getattr(node, "end_lineno", first) or first
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(node, ast.stmt):
            # a compound statement: its header, not its body
            first_inner = body[0].lineno
            decorators = getattr(node, "decorator_list", None) or []
            if decorators:
                first = node.lineno
            last = max(first, first_inner - 1)
        text = " ".join(line.strip() for line in self.lines[first - 1 : min(last, first + 5)])
        return text if len(text) <= 240 else text[:239] + "…"

    def names_in(self, node: ast.AST | None, state: State, kind: Kind) -> tuple[str, ...]:
        """Variables (and attribute chains) in `node` whose values carry `kind`, in source order."""
        if node is None:
            return ()
        out: list[str] = []
        for name, sub in self._name_nodes(node):
            if name in out:
                continue
            value = self._peek(sub, state)
            if value is not None and value.total.has(kind):
                out.append(name)
        # keep only the most specific chain: "self.enc" rather than "self" as well
        return tuple(n for n in out if not any(o != n and o.startswith(n + ".") for o in out))

    def _name_nodes(self, node: ast.AST) -> tuple[tuple[str, ast.AST], ...]:
        """Names and attribute chains in `node`, in source order, computed once per node."""
        cached = self._names_cache.get(id(node))
        if cached is not None:
            return cached
        # `df.drop` in `df.drop(...)` is a method, not a variable: its receiver `df` is the name to show
        methods: set[int] = set()
        found: list[tuple[str, ast.AST]] = []
        for sub in ast.walk(node):  # breadth first: a call is seen before its function
            if isinstance(sub, ast.Call):
                methods.add(id(sub.func))
                continue
            if id(sub) in methods or not isinstance(sub, ast.Attribute | ast.Name):
                continue
            if isinstance(sub, ast.Attribute) and sub.attr in _ACCESSOR_NAMES:
                continue  # `df.iloc` is a view of `df`: show `df`
            name = _dotted(sub)
            if name is not None:
                found.append((name, sub))
        found.sort(key=lambda pair: (getattr(pair[1], "lineno", 0), getattr(pair[1], "col_offset", 0)))
        result = self._names_cache[id(node)] = tuple(found)
        return result

    def _peek(self, node: ast.AST, state: State) -> Value | None:
        """The value of a name or attribute chain, without interpreting calls."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id, state)
        if isinstance(node, ast.Attribute):
            inner = self._peek(node.value, state)
            if inner is None:
                return None
            found = inner.field(node.attr)
            return found if found is not None else Value(base=inner.total)
        return None

    def step(self, site: CallSite, note: str, node: ast.AST | None = None, kind: Kind | None = None) -> Step:
        at = node if node is not None else site.node
        names: tuple[str, ...] = ()
        if kind is not None:
            state = self._current_state
            receiver = site.receiver_node
            names = self.names_in(receiver if receiver is not None else site.node, state, kind)
        return Step(getattr(at, "lineno", site.line), self.code(at), names, note, self.frame.name)

    def hit(self, role: Role, value: Value, node: ast.AST | None, site: CallSite, target: str) -> None:
        for kind, path in value.total.entries:
            names = self.names_in(node, self._current_state, kind) if node is not None else ()
            sink = Step(site.line, site.code, names, f"{role.value}: {target}", self.frame.name)
            self._record(SinkHit(role, kind, extend_path(path, sink), target))

    def _record(self, hit: SinkHit) -> None:
        key = (hit.role, hit.kind, hit.target, hit.path[-1].line, hit.path[0].line)
        self.hits.setdefault(key, hit)

    def constant(self, const: object, node: ast.AST, taints_from: Value | None = None) -> Value:
        """A folded constant; a string naming the evaluation file is where eval taint starts."""
        value = const_value(const)
        if isinstance(const, str) and self.layout.is_eval_path(const):
            origin = Step(getattr(node, "lineno", 0), self.code(node), (),
                          f'"{const}" is the evaluation file', self.frame.name)
            value = Value(base=Taints.of(Kind.EVAL, origin), const=const)
        if taints_from is not None:
            value = value.with_base(taints_from.total)
        return value

    def _tick(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise BudgetExceeded

    # --- names --------------------------------------------------------------------------------------

    def lookup(self, name: str, state: State) -> Value:
        f = self.frame
        if name in state and name not in f.global_decls:
            return state[name]  # a local, or a comprehension's variable
        if f.local_names is not None and name in f.local_names and name not in f.global_decls:
            return UNKNOWN_VALUE  # a local read before any binding this path saw
        if f.closure is not None and name in f.closure:
            return f.closure[name]
        if name in f.globals and not f.is_module:
            return f.globals[name]
        if name == "__file__":
            return Value(const=SCRIPT_PATH)
        if name == "__name__":
            return CLEAN  # both "__main__" (python train.py) and an import by the scorer happen
        if name in _BUILTIN_NAMES:
            return Value(ref=LibRef(f"builtins.{name}"))
        return UNKNOWN_VALUE

    def bind(self, name: str, value: Value, state: State) -> None:
        """`name = value`: a new binding (a parameter rebound this way no longer aliases the caller's)."""
        f = self.frame
        if f.local_names is not None and name in f.global_decls:
            f.globals[name] = value
            return
        state[name] = value
        f.original_params.discard(name)

    def write_back(self, name: str, value: Value, state: State) -> None:
        """The object bound to `name` was changed in place: update it wherever `name` is bound."""
        f = self.frame
        if f.local_names is None or (name in f.local_names and name not in f.global_decls):
            state[name] = value
        elif f.closure is not None and name in f.closure:
            f.closure[name] = value
        else:
            f.globals[name] = value

    # --- statements ---------------------------------------------------------------------------------

    def exec_block(self, body: list[ast.stmt], state: State | None) -> State | None:
        for stmt in body:
            if state is None:
                return None
            state = self.exec_stmt(stmt, state)
        return state

    def exec_stmt(self, stmt: ast.stmt, state: State) -> State | None:
        self._tick()
        self._current_state = state
        handler = getattr(self, f"_s_{type(stmt).__name__}", None)
        if handler is None:
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.expr):
                    self.eval(child, state)
            return state
        result: State | None = handler(stmt, state)
        return result

    def _s_Expr(self, stmt: ast.Expr, state: State) -> State | None:
        self.eval(stmt.value, state)
        return state

    def _s_Pass(self, stmt: ast.Pass, state: State) -> State | None:
        return state

    def _s_Assign(self, stmt: ast.Assign, state: State) -> State | None:
        value = self.eval(stmt.value, state)
        for target in stmt.targets:
            self.assign(target, self._stepped(value, stmt, stmt.value, target, state), state)
        return state

    def _s_AnnAssign(self, stmt: ast.AnnAssign, state: State) -> State | None:
        if stmt.value is not None:
            value = self.eval(stmt.value, state)
            self.assign(stmt.target, self._stepped(value, stmt, stmt.value, stmt.target, state), state)
        return state

    def _s_AugAssign(self, stmt: ast.AugAssign, state: State) -> State | None:
        load = _as_load(stmt.target)
        current = self.eval(load, state)
        value = self._binop(stmt.op, current, self.eval(stmt.value, state), stmt)
        self.assign(stmt.target, self._stepped(value, stmt, stmt.value, stmt.target, state), state)
        return state

    def _stepped(self, value: Value, stmt: ast.stmt, rhs: ast.AST, target: ast.AST, state: State) -> Value:
        """The value with this assignment added to each of its paths."""
        if not value.total:
            return value
        targets = tuple(n for n in (_dotted(t) for t in ast.walk(target)) if n) if not isinstance(
            target, ast.Name | ast.Attribute) else (_dotted(target) or "",)
        targets = tuple(t for t in targets if t)
        code = self.code(stmt)

        def step_for(kind: Kind) -> Step:
            names = self.names_in(rhs, state, kind) + targets[:1]
            return Step(stmt.lineno, code, names, "", self.frame.name)

        return value.map_taints(lambda t: t.with_steps(step_for))

    def _s_Return(self, stmt: ast.Return, state: State) -> State | None:
        value = self.eval(stmt.value, state) if stmt.value is not None else NONE
        if value.total and stmt.value is not None:
            code = self.code(stmt)
            names_for = {k: self.names_in(stmt.value, state, k) for k in value.total.kinds}
            value = value.map_taints(lambda t: t.with_steps(
                lambda k: Step(stmt.lineno, code, names_for.get(k, ()), "returned", self.frame.name)))
        self.frame.exits.append((value, {p: state[p] for p in self.frame.original_params if p in state}))
        return None

    def _s_Raise(self, stmt: ast.Raise, state: State) -> State | None:
        if stmt.exc is not None:
            self.eval(stmt.exc, state)
        return None

    def _s_Break(self, stmt: ast.Break, state: State) -> State | None:
        if self.frame.loops:
            self.frame.loops[-1].breaks.append(state)
        return None

    def _s_Continue(self, stmt: ast.Continue, state: State) -> State | None:
        if self.frame.loops:
            self.frame.loops[-1].continues.append(state)
        return None

    def _s_Global(self, stmt: ast.Global, state: State) -> State | None:
        return state

    _s_Nonlocal = _s_Global

    def _s_Delete(self, stmt: ast.Delete, state: State) -> State | None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                state.pop(target.id, None)
        return state

    def _s_Import(self, stmt: ast.Import, state: State) -> State | None:
        for alias in stmt.names:
            if alias.asname:
                self.bind(alias.asname, Value(ref=LibRef(alias.name)), state)
            else:
                top = alias.name.split(".")[0]
                self.bind(top, Value(ref=LibRef(top)), state)
        return state

    def _s_ImportFrom(self, stmt: ast.ImportFrom, state: State) -> State | None:
        module = "." * stmt.level + (stmt.module or "")
        for alias in stmt.names:
            if alias.name == "*":
                continue
            self.bind(alias.asname or alias.name, Value(ref=LibRef(f"{module}.{alias.name}")), state)
        return state

    def _s_FunctionDef(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef, state: State) -> State | None:
        decorators = _decorator_names(stmt)
        for d in stmt.decorator_list:
            self.eval(d, state)
        flavor = next((f for f in ("staticmethod", "classmethod", "property") if f in decorators), "function")
        if "setter" in decorators or "deleter" in decorators:
            flavor = "function"
        defaults = tuple(self.eval(d, state) for d in stmt.args.defaults)
        kw_defaults = tuple(
            (a.arg, self.eval(d, state)) for a, d in zip(stmt.args.kwonlyargs, stmt.args.kw_defaults, strict=True)
            if d is not None
        )
        scope = self.frame.name
        qualname = f"{scope}.{stmt.name}" if scope else stmt.name
        closure = state if (self.frame.local_names is not None) else None
        func = FuncRef(stmt, qualname, closure, None, flavor, defaults, kw_defaults)
        if "setter" in decorators or "deleter" in decorators:
            return state  # keep the property's getter under the name
        self.bind(stmt.name, Value(ref=func), state)
        return state

    _s_AsyncFunctionDef = _s_FunctionDef

    def _s_ClassDef(self, stmt: ast.ClassDef, state: State) -> State | None:
        bases = tuple(self.eval(b, state) for b in stmt.bases)
        for kw in stmt.keywords:
            self.eval(kw.value, state)
        namespace: State = {}
        saved = self.frame
        qualname = f"{saved.name}.{stmt.name}" if saved.name else stmt.name
        self.frame = _Frame(qualname, saved.globals if not saved.is_module else state,
                            closure=state if saved.local_names is not None else None)
        try:
            self.exec_block(stmt.body, namespace)
        finally:
            self.frame = saved
            self._current_state = state
        cls = Value(fields=tuple(namespace.items()), ref=ClassRef(stmt, bases))
        self.bind(stmt.name, cls, state)
        return state

    def _s_If(self, stmt: ast.If, state: State) -> State | None:
        test = _truth(self.eval(stmt.test, state))
        if test is True:
            return self.exec_block(stmt.body, state)
        if test is False:
            return self.exec_block(stmt.orelse, state)
        then = self.exec_block(stmt.body, dict(state))
        other = self.exec_block(stmt.orelse, dict(state))
        return _merge([then, other])

    def _s_With(self, stmt: ast.With | ast.AsyncWith, state: State) -> State | None:
        for item in stmt.items:
            value = self.eval(item.context_expr, state)
            if item.optional_vars is not None:
                self.assign(item.optional_vars,
                            self._stepped(value, stmt, item.context_expr, item.optional_vars, state), state)
        return self.exec_block(stmt.body, state)

    _s_AsyncWith = _s_With

    def _s_Try(self, stmt: ast.Try, state: State) -> State | None:
        before = dict(state)
        body = self.exec_block(stmt.body, dict(state))
        after_body = self.exec_block(stmt.orelse, dict(body)) if body is not None else None
        outcomes = [after_body]
        # a handler may start anywhere in the body: from the state before it or after it
        for handler in stmt.handlers:
            start = _merge([before, body]) or dict(before)
            if handler.type is not None:
                self.eval(handler.type, start)
            if handler.name:
                start[handler.name] = CLEAN
            outcomes.append(self.exec_block(handler.body, start))
        merged = _merge(outcomes)
        if stmt.finalbody:
            if merged is None:
                self.exec_block(stmt.finalbody, _merge([before, body]) or before)
                return None
            return self.exec_block(stmt.finalbody, merged)
        return merged

    _s_TryStar = _s_Try

    def _s_Assert(self, stmt: ast.Assert, state: State) -> State | None:
        self.eval(stmt.test, state)
        return state

    def _s_Match(self, stmt: ast.Match, state: State) -> State | None:
        subject = self.eval(stmt.subject, state)
        outcomes: list[State | None] = [dict(state)]
        for case in stmt.cases:
            branch = dict(state)
            for sub in ast.walk(case.pattern):
                if isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name:
                    branch[sub.name] = Value(base=subject.total)
            if case.guard is not None:
                self.eval(case.guard, branch)
            outcomes.append(self.exec_block(case.body, branch))
        return _merge(outcomes)

    def _s_While(self, stmt: ast.While, state: State) -> State | None:
        test = _truth(self.eval(stmt.test, state))
        if test is False:
            return self.exec_block(stmt.orelse, state)
        return self._fixpoint(stmt, state, None, None)

    def _s_For(self, stmt: ast.For | ast.AsyncFor, state: State) -> State | None:
        iterable = self.eval(stmt.iter, state)
        over_batch = iterable.total.has(Kind.BATCH)
        before = set(state)
        if iterable.items is not None and len(iterable.items) <= UNROLL_MAX:
            result = self._unrolled(stmt, state, iterable)
        else:
            result = self._fixpoint(stmt, state, stmt.target, iterable.element())
        if over_batch and result is not None:
            self._lift_row_accumulators(stmt, before, result)
        return result

    _s_AsyncFor = _s_For

    def _bind_target(self, stmt: ast.For | ast.AsyncFor | ast.While, target: ast.expr | None, value: Value,
                     state: State) -> None:
        if target is None:
            return
        iter_node = stmt.iter if isinstance(stmt, ast.For | ast.AsyncFor) else stmt.test
        self.assign(target, self._stepped(value, stmt, iter_node, target, state), state)

    def _unrolled(self, stmt: ast.For | ast.AsyncFor, state: State, iterable: Value) -> State | None:
        loop = _Loop()
        self.frame.loops.append(loop)
        current: State | None = state
        try:
            for item in iterable.items or ():
                if current is None:
                    break
                running = dict(current)
                self._bind_target(stmt, stmt.target, item, running)
                out = self.exec_block(stmt.body, running)
                current = _merge([out, *loop.continues])
                loop.continues.clear()
        finally:
            self.frame.loops.pop()
        if current is not None and stmt.orelse:
            current = self.exec_block(stmt.orelse, current)
        return _merge([current, *loop.breaks])

    def _fixpoint(self, stmt: ast.For | ast.AsyncFor | ast.While, state: State, target: ast.expr | None,
                  element: Value | None) -> State | None:
        loop = _Loop()
        self.frame.loops.append(loop)
        entry: State = dict(state)
        try:
            for iteration in range(MAX_LOOP_ITERATIONS):
                running = dict(entry)
                if element is not None:
                    self._bind_target(stmt, target, element, running)
                elif isinstance(stmt, ast.While):
                    self.eval(stmt.test, running)
                out = self.exec_block(stmt.body, running)
                merged = _merge([entry, out, *loop.continues]) or entry
                loop.continues.clear()
                if merged == entry:
                    break
                if iteration >= WIDEN_AFTER:
                    merged = {k: widen(v) for k, v in merged.items()}
                entry = merged
        finally:
            self.frame.loops.pop()
        after = self.exec_block(stmt.orelse, dict(entry)) if stmt.orelse else entry
        return _merge([after, *loop.breaks])

    def _lift_row_accumulators(self, stmt: ast.For | ast.AsyncFor, before: set[str], state: State) -> None:
        """After a loop over the batch's rows, a variable that existed before it and now holds row values
        has collected them across rows: a list of them is a column (BATCH); a running total or a dict keyed
        by row values (`counts[v] = counts.get(v, 0) + 1`) is a cross-row statistic."""
        accumulators, keyed = self._loop_lift.setdefault(id(stmt), _accumulator_names(stmt))
        for name in before:
            value = state.get(name)
            if value is None or not value.total.has(Kind.BATCH_ROW):
                continue
            if name in accumulators or name in keyed:
                origin = Step(stmt.lineno, self.code(stmt), (name,),
                              "accumulated across the rows of the batch", self.frame.name)
                state[name] = value.map_taints(lambda t, o=origin: t.convert(Kind.BATCH_ROW, Kind.BATCH_STAT, o))
            else:
                state[name] = value.map_taints(lift_rows)

    # --- assignment ---------------------------------------------------------------------------------

    def assign(self, target: ast.expr, value: Value, state: State) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, state)
        elif isinstance(target, ast.Tuple | ast.List):
            self._unpack(target.elts, value, state)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, state)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, state)
            if target.attr in lib.ROW_ACCESSORS:
                self.write_place(target.value, obj.with_base(value.total), state)
            elif isinstance(obj.ref, LibRef) and not obj.ref.instance:
                return  # a module attribute (pd.options...): not data
            else:
                self.write_place(target.value, obj.with_field(target.attr, value), state)
        elif isinstance(target, ast.Subscript):
            self._store_item(target, value, state)

    def _unpack(self, targets: list[ast.expr], value: Value, state: State) -> None:
        starred = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        if value.items is not None and not starred and len(value.items) == len(targets):
            for t, v in zip(targets, value.items, strict=True):
                self.assign(t, v, state)
            return
        if value.items is not None and len(starred) == 1 and len(value.items) >= len(targets) - 1:
            s = starred[0]
            tail = len(targets) - s - 1
            head_items = value.items[:s]
            tail_items = value.items[len(value.items) - tail :] if tail else ()
            middle = value.items[s : len(value.items) - tail]
            for t, v in zip(targets[:s], head_items, strict=True):
                self.assign(t, v, state)
            self.assign(targets[s], Value(items=middle), state)
            for t, v in zip(targets[s + 1 :], tail_items, strict=True):
                self.assign(t, v, state)
            return
        # unknown shape: every target may hold any part (the parts of a call's result are not rows)
        part = value.elem if value.elem is not None else Value(base=value.total)
        for t in targets:
            self.assign(t, part, state)

    def _store_item(self, target: ast.Subscript, value: Value, state: State) -> None:
        key_node = target.slice
        key = self.eval(key_node, state)
        container_node = target.value
        if isinstance(container_node, ast.Attribute) and container_node.attr in lib.ROW_ACCESSORS:
            # df.loc[rows, "col"] = v: a store into the frame behind the accessor
            frame_node = container_node.value
            frame = self.eval(frame_node, state)
            column = None
            if isinstance(key_node, ast.Tuple) and len(key_node.elts) == 2 and key.items is not None:
                rows, col = key.items
                if isinstance(col.const, str):
                    column = col.const
                    key = rows
            extra = _drop_size(key, isinstance(key_node, ast.Slice))
            if column is not None:
                old = frame.field(column) or Value(base=frame.base)
                self.write_place(frame_node, frame.with_field(column, join(old, value).with_base(extra)), state)
            else:
                self.write_place(frame_node, frame.with_base(value.total.join(extra)), state)
            return
        container = self.eval(container_node, state)
        self.write_place(container_node, _set_item(container, key, value, isinstance(key_node, ast.Slice)), state)

    def write_place(self, node: ast.expr, value: Value, state: State) -> None:
        """Write an object changed in place back to the variable, attribute or item that holds it."""
        if isinstance(node, ast.Name):
            self.write_back(node.id, value, state)
        elif isinstance(node, ast.Attribute):
            obj = self.eval(node.value, state)
            if isinstance(obj.ref, LibRef) and not obj.ref.instance:
                return
            if node.attr in lib.ROW_ACCESSORS or node.attr in lib.ELEMENT_ACCESSORS or node.attr == "values":
                self.write_place(node.value, obj.with_base(value.total), state)
            else:
                self.write_place(node.value, obj.with_field(node.attr, value), state)
        elif isinstance(node, ast.Subscript):
            container = self.eval(node.value, state)
            key = self.eval(node.slice, state)
            self.write_place(node.value, _set_item(container, key, value, isinstance(node.slice, ast.Slice)), state)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
            self.write_back("self", value, state)

    # --- expressions --------------------------------------------------------------------------------

    def eval(self, node: ast.expr | None, state: State) -> Value:
        if node is None:
            return NONE
        handler = getattr(self, f"_e_{type(node).__name__}", None)
        if handler is None:
            out = Taints()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    out = out.join(self.eval(child, state).total)
            return Value(base=out)
        result: Value = handler(node, state)
        return result

    def _e_Constant(self, node: ast.Constant, state: State) -> Value:
        return self.constant(node.value, node)

    def _e_JoinedStr(self, node: ast.JoinedStr, state: State) -> Value:
        parts: list[str] = []
        taints = Taints()
        known = True
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            if isinstance(value, ast.FormattedValue):
                inner = self.eval(value.value, state)
                taints = taints.join(inner.total)
                spec = self.eval(value.format_spec, state).const if value.format_spec is not None else ""
                text = fold_format(inner.const, value.conversion, spec) if isinstance(spec, str) else UNKNOWN
                if isinstance(text, str):
                    parts.append(text)
                    continue
            known = False
        if known:
            return self.constant("".join(parts), node, Value(base=taints))
        return Value(base=taints)

    def _e_FormattedValue(self, node: ast.FormattedValue, state: State) -> Value:
        return self.eval(node.value, state)

    def _e_Name(self, node: ast.Name, state: State) -> Value:
        return self.lookup(node.id, state)

    def _e_Starred(self, node: ast.Starred, state: State) -> Value:
        return self.eval(node.value, state)

    def _e_Await(self, node: ast.Await, state: State) -> Value:
        return self.eval(node.value, state)

    def _e_Yield(self, node: ast.Yield, state: State) -> Value:
        self.frame.yields.append(self.eval(node.value, state) if node.value is not None else NONE)
        return CLEAN

    def _e_YieldFrom(self, node: ast.YieldFrom, state: State) -> Value:
        self.frame.yields.append(self.eval(node.value, state).element())
        return CLEAN

    def _e_NamedExpr(self, node: ast.NamedExpr, state: State) -> Value:
        value = self.eval(node.value, state)
        self.bind(node.target.id, value, state)
        return value

    def _e_Attribute(self, node: ast.Attribute, state: State) -> Value:
        obj = self.eval(node.value, state)
        return self.load_attr(obj, node.attr, node, state)

    def load_attr(self, obj: Value, attr: str, node: ast.AST, state: State) -> Value:
        ref = obj.ref
        if isinstance(ref, LibRef) and not ref.instance:
            return Value(ref=LibRef(f"{ref.qualname}.{attr}"))
        if isinstance(ref, InstanceRef | ClassRef):
            found = self._member(obj, attr)
            if found is None:
                return Value(base=obj.base)
            if isinstance(found.ref, FuncRef) and found.ref.flavor == "property":
                site = self._synthetic_site(node, self.frame.name)
                result, _ = self.call_function(found.ref, [], {}, site)
                return result
            return found
        field_value = obj.field(attr)
        if field_value is not None:
            return field_value
        if isinstance(obj.const, str):
            folded = fold_attribute(obj.const, attr)
            if folded is not UNKNOWN:
                return self.constant(folded, node, Value(base=obj.total))
        if attr in lib.SCHEMA_ATTRIBUTES:
            return CLEAN
        if attr in lib.CODE_ATTRIBUTES and obj.total.has(Kind.BATCH_LEVELS):
            step = Step(getattr(node, "lineno", 0), self.code(node),
                        self.names_in(node, state, Kind.BATCH_LEVELS),
                        f".{attr}: integer codes of category levels taken from the batch, across the rows "
                        "of the batch", self.frame.name)
            return Value(base=obj.total.convert(Kind.BATCH_LEVELS, Kind.BATCH_STAT, step))
        if attr in lib.SIZE_ATTRIBUTES and obj.total.has(Kind.BATCH):
            step = Step(getattr(node, "lineno", 0), self.code(node), self.names_in(node, state, Kind.BATCH),
                        f".{attr}: the number of rows in the batch", self.frame.name)
            return Value(base=obj.total.convert(Kind.BATCH, Kind.BATCH_SIZE, step))
        if attr in lib.ELEMENT_ACCESSORS:
            return Value(base=obj.total, ref=LibRef(_ELEMENT_ACCESSOR, instance=True))
        if isinstance(ref, LibRef):
            return Value(base=obj.total, ref=LibRef(f"{ref.qualname}.{attr}", instance=True))
        return Value(base=obj.total)

    def _member(self, obj: Value, name: str) -> Value | None:
        """An attribute of an instance or class of the file, methods bound to it."""
        own = obj.field(name)
        if own is not None:
            return own
        ref = obj.ref
        cls = ref.cls if isinstance(ref, InstanceRef) else obj
        found = _class_attr(cls, name)
        if found is None or not isinstance(found.ref, FuncRef):
            return found
        func = found.ref
        if func.flavor == "staticmethod":
            return found
        bound_to = cls if func.flavor == "classmethod" else obj
        if isinstance(ref, ClassRef) and func.flavor in {"function", "property"}:
            return found  # a plain function looked up on the class: called with self explicitly
        return Value(ref=FuncRef(func.node, func.qualname, func.closure, bound_to, func.flavor, func.defaults,
                                 func.kw_defaults))

    def _e_Subscript(self, node: ast.Subscript, state: State) -> Value:
        container = self.eval(node.value, state)
        key = self.eval(node.slice, state)
        is_slice = isinstance(node.slice, ast.Slice)
        accessor = node.value.attr if isinstance(node.value, ast.Attribute) else None
        if key.const is not UNKNOWN and not is_slice:
            found = container.field(key.const) if container.fields is not None else None
            if found is not None:
                return found
            if container.items is not None and isinstance(key.const, int) and not isinstance(key.const, bool):
                if -len(container.items) <= key.const < len(container.items):
                    return container.items[key.const]
            if container.fields is not None and container.ref is None:
                return Value(base=container.base.join(key.total))
            if isinstance(container.const, str):
                return Value(base=container.total.join(key.total))
        if is_slice and container.items is not None:
            sl = node.slice
            bounds = [self.eval(b, state).const if b is not None else None for b in (sl.lower, sl.upper, sl.step)]
            if all(b is None or isinstance(b, int) for b in bounds):
                return Value(base=container.base, items=container.items[slice(*bounds)])
        taints = container.total.join(_drop_size(key, is_slice))
        row_pick = accessor in {"iloc", "iat", "at"} and not is_slice and not isinstance(node.slice, ast.Tuple)
        if row_pick or (isinstance(key.const, int) and not isinstance(key.const, bool)):
            taints = row_of(taints)  # one row (or one element) of batch data
        return Value(base=taints)

    def _e_Slice(self, node: ast.Slice, state: State) -> Value:
        out = Taints()
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                out = out.join(self.eval(part, state).total)
        return Value(base=out)

    def _e_Tuple(self, node: ast.Tuple | ast.List, state: State) -> Value:
        items: list[Value] = []
        spread: list[Value] = []
        for elt in node.elts:
            value = self.eval(elt, state)
            if isinstance(elt, ast.Starred):
                if value.items is not None:
                    items.extend(value.items)
                else:
                    spread.append(value)
            else:
                items.append(value)
        if spread:
            return Value(elem=join_all([*items, *(s.element() for s in spread)]))
        return Value(items=tuple(items))

    _e_List = _e_Tuple

    def _e_Set(self, node: ast.Set, state: State) -> Value:
        return Value(elem=join_all(self.eval(e, state) for e in node.elts))

    def _e_Dict(self, node: ast.Dict, state: State) -> Value:
        fields: list[tuple[object, Value]] = []
        base = Taints()
        for k, v in zip(node.keys, node.values, strict=True):
            value = self.eval(v, state)
            if k is None:  # **other
                if value.fields is not None:
                    fields.extend(value.fields)
                base = base.join(value.base if value.fields is not None else value.total)
                continue
            key = self.eval(k, state)
            if key.const is not UNKNOWN and isinstance(key.const, str | int | float | bool | tuple):
                fields = [(fk, fv) for fk, fv in fields if fk != key.const]
                fields.append((key.const, value))
            else:
                base = base.join(value.total).join(key.total)
        return Value(base=base, fields=tuple(fields))

    def _e_BinOp(self, node: ast.BinOp, state: State) -> Value:
        return self._binop(node.op, self.eval(node.left, state), self.eval(node.right, state), node)

    def _binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        taints = left.total.join(right.total)
        a, b = left.const, right.const
        if a is not UNKNOWN and b is not UNKNOWN:
            folded = _fold_binop(op, a, b)
            if folded is not UNKNOWN:
                return self.constant(folded, node, Value(base=taints))
        if isinstance(op, ast.Add) and left.items is not None and right.items is not None:
            return Value(items=left.items + right.items)
        return Value(base=taints)

    def _e_UnaryOp(self, node: ast.UnaryOp, state: State) -> Value:
        operand = self.eval(node.operand, state)
        if isinstance(node.op, ast.Not):
            truth = _truth(operand)
            return Value(base=operand.total, const=(not truth) if truth is not None else UNKNOWN)
        if operand.const is not UNKNOWN and isinstance(operand.const, int | float) and isinstance(node.op, ast.USub):
            return Value(base=operand.total, const=-operand.const)
        return Value(base=operand.total)

    def _e_BoolOp(self, node: ast.BoolOp, state: State) -> Value:
        values: list[Value] = []
        for operand in node.values:
            value = self.eval(operand, state)
            truth = _truth(value)
            # `a or b` stops at the first truthy operand, `a and b` at the first falsy one
            if truth is not None and truth == isinstance(node.op, ast.Or):
                if not values:
                    return value
                values.append(value)
                break
            if truth is None or operand is node.values[-1]:
                values.append(value)
        return join_all(values)

    def _e_Compare(self, node: ast.Compare, state: State) -> Value:
        left = self.eval(node.left, state)
        taints = left.total
        result: object = True
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comparator, state)
            taints = taints.join(right.total)
            outcome = _fold_compare(op, left, right)
            if outcome is UNKNOWN or result is UNKNOWN:
                result = UNKNOWN
            else:
                result = result and outcome
            left = right
        return Value(base=taints, const=result)

    def _e_IfExp(self, node: ast.IfExp, state: State) -> Value:
        truth = _truth(self.eval(node.test, state))
        if truth is True:
            return self.eval(node.body, state)
        if truth is False:
            return self.eval(node.orelse, state)
        return join(self.eval(node.body, state), self.eval(node.orelse, state))

    def _e_Lambda(self, node: ast.Lambda, state: State) -> Value:
        defaults = tuple(self.eval(d, state) for d in node.args.defaults)
        scope = self.frame.name
        qualname = f"{scope}.<lambda>" if scope else "<lambda>"
        return Value(ref=FuncRef(node, qualname, state, None, "function", defaults))

    # --- comprehensions -----------------------------------------------------------------------------

    def _e_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp, state: State) -> Value:
        over_batch: list[bool] = []
        results = self._comprehend(node.generators, 0, dict(state), lambda s: self.eval(node.elt, s), over_batch)
        return _collect(results, bool(over_batch))

    _e_SetComp = _e_ListComp
    _e_GeneratorExp = _e_ListComp

    def _e_DictComp(self, node: ast.DictComp, state: State) -> Value:
        def entry(s: State) -> Value:
            return Value(items=(self.eval(node.key, s), self.eval(node.value, s)))

        over_batch: list[bool] = []
        results = self._comprehend(node.generators, 0, dict(state), entry, over_batch)
        if results is not None and all(r.items and r.items[0].const is not UNKNOWN for r in results):
            return Value(fields=tuple((r.items[0].const, r.items[1]) for r in results if r.items))
        return Value(base=_collect(results, bool(over_batch)).total)

    def _comprehend(self, generators: list[ast.comprehension], i: int, state: State,
                    produce: Callable[[State], Value], over_batch: list[bool]) -> list[Value] | None:
        """Values the comprehension produces: one per combination when every iterable is a known list,
        else a single `Value(elem=...)`. Appends to `over_batch` when it iterates over batch rows."""
        if i == len(generators):
            return [produce(state)]
        gen = generators[i]
        iterable = self.eval(gen.iter, state)
        if iterable.total.has(Kind.BATCH):
            over_batch.append(True)
        if iterable.items is not None and len(iterable.items) <= UNROLL_MAX:
            out: list[Value] = []
            for item in iterable.items:
                inner = dict(state)
                self.assign(gen.target, item, inner)
                if any(_truth(self.eval(cond, inner)) is False for cond in gen.ifs):
                    continue
                produced = self._comprehend(generators, i + 1, inner, produce, over_batch)
                if produced is None:
                    return None
                out.extend(produced)
            if len(out) > UNROLL_MAX * 4:
                return [Value(elem=join_all(out))]
            return out
        inner = dict(state)
        self.assign(gen.target, iterable.element(), inner)
        for cond in gen.ifs:
            self.eval(cond, inner)
        produced = self._comprehend(generators, i + 1, inner, produce, over_batch)
        return None if produced is None else [Value(elem=join_all(v.element() if v.items is None and v.elem
                                                                  is not None else v for v in produced))]

    # --- calls --------------------------------------------------------------------------------------

    def _e_Call(self, node: ast.Call, state: State) -> Value:
        self._tick()
        receiver: Value | None = None
        receiver_node: ast.expr | None = None
        callee: Value | None = None
        method = ""
        func = node.func
        if isinstance(func, ast.Attribute):
            receiver_node = func.value
            receiver = self.eval(func.value, state)
            method = func.attr
        elif isinstance(func, ast.Name) and func.id == "super" and self.lookup("super", state).ref == LibRef(
            "builtins.super"
        ):
            return self._super(state)
        else:
            callee = self.eval(func, state)
        site = self._site(node, state, receiver, receiver_node)
        self._current_state = state
        if receiver is not None:
            return self._call_method(receiver, method, site, state)
        assert callee is not None
        return self.call_value(callee, site, state)

    def _site(self, node: ast.Call, state: State, receiver: Value | None, receiver_node: ast.expr | None) -> CallSite:
        args: list[Value] = []
        arg_nodes: list[ast.expr] = []
        star: Value | None = None
        for a in node.args:
            value = self.eval(a, state)
            if isinstance(a, ast.Starred):
                if value.items is not None and star is None:
                    args.extend(value.items)
                    arg_nodes.extend([a.value] * len(value.items))
                else:
                    star = value if star is None else join(star, value)
                continue
            args.append(value)
            arg_nodes.append(a)
        kwargs: dict[str, Value] = {}
        kwarg_nodes: dict[str, ast.expr] = {}
        dstar: Value | None = None
        for kw in node.keywords:
            value = self.eval(kw.value, state)
            if kw.arg is None:
                if value.fields is not None:
                    for k, v in value.fields:
                        if isinstance(k, str):
                            kwargs[k] = v
                            kwarg_nodes[k] = kw.value
                    if value.base:
                        dstar = Value(base=value.base)
                else:
                    dstar = value
                continue
            kwargs[kw.arg] = value
            kwarg_nodes[kw.arg] = kw.value
        callee = _dotted(node.func) or "call"
        return CallSite(node, self.frame.name, self.code(node), args, arg_nodes, kwargs, kwarg_nodes, star, dstar,
                        receiver, receiver_node, callee)

    def _super(self, state: State) -> Value:
        """`super()` inside a method: self, seen as an instance of the first base class of the file."""
        self_value = self.lookup("self", state) if self.frame.local_names and "self" in self.frame.local_names \
            else CLEAN
        cls = self.frame.cls
        if cls is not None and isinstance(cls.ref, ClassRef):
            for base in cls.ref.bases:
                if isinstance(base.ref, ClassRef):
                    return Value(base=self_value.base, fields=self_value.fields, ref=InstanceRef(base))
        return Value(base=self_value.total, ref=LibRef("builtins.super()", instance=True))

    def _call_method(self, receiver: Value, method: str, site: CallSite, state: State) -> Value:
        ref = receiver.ref
        if isinstance(ref, InstanceRef | ClassRef):
            member = self._member(receiver, method)
            if member is not None and isinstance(member.ref, FuncRef | ClassRef):
                return self.call_value(member, site, state)
        elif isinstance(ref, LibRef) and not ref.instance:
            return self.call_value(Value(ref=LibRef(f"{ref.qualname}.{method}")), site, state)
        else:
            member = receiver.field(method)
            if member is not None and isinstance(member.ref, FuncRef | ClassRef):
                return self.call_value(member, site, state)
        effect = semantics.call_method(self, receiver, method, site)
        if effect.receiver is not None and site.receiver_node is not None:
            self.write_place(site.receiver_node, effect.receiver, state)
        return effect.result

    def call_value(self, callee: Value, site: CallSite, state: State) -> Value:
        ref = callee.ref
        if isinstance(ref, FuncRef):
            result, finals = self.call_function(ref, site.args, site.kwargs, site)
            self._copy_back(ref, site, finals, state)
            return result
        if isinstance(ref, ClassRef):
            return self._instantiate(callee, site, state)
        if isinstance(ref, LibRef):
            if ref.qualname == "builtins.getattr" and len(site.args) >= 2 and isinstance(site.args[1].const, str):
                return self.load_attr(site.args[0], site.args[1].const, site.node, state)
            if ref.qualname in {"builtins.setattr"} and len(site.args) == 3 and isinstance(site.args[1].const, str):
                if site.arg_nodes:
                    obj = site.args[0].with_field(site.args[1].const, site.args[2])
                    self.write_place(site.arg_nodes[0], obj, state)
                return NONE
            if ref.qualname == "functools.partial" and site.args:
                return site.args[0]
            if not ref.instance:
                return semantics.call_function(self, ref.qualname, site)
        # an object of unknown kind called: whatever it returns may derive from it and its arguments
        out = callee.total
        for v in [*site.args, *site.kwargs.values()]:
            out = out.join(v.total)
        return Value(base=out)

    def invoke(self, func: Value, args: list[Value], site: CallSite) -> Value:
        """Call a function value with abstract arguments (for `apply`, `map`, `pipe`)."""
        ref = func.ref
        if isinstance(ref, FuncRef):
            result, _ = self.call_function(ref, args, {}, site)
            return result
        if isinstance(ref, ClassRef):
            inner = CallSite(site.node, site.scope, site.code, args, [], {}, {}, callee=site.callee)
            return self._instantiate(func, inner, self._current_state)
        out = func.total
        for a in args:
            out = out.join(a.total)
        return Value(base=out)

    def call_function(self, func: FuncRef, args: list[Value], kwargs: dict[str, Value],
                      site: CallSite) -> tuple[Value, dict[str, Value]]:
        """Interpret a function of the file with these arguments: (returned value, final values of the
        parameters it changed in place)."""
        node = func.node
        self.reached.add(id(node))
        if id(node) in self.stack or len(self.stack) >= MAX_CALL_DEPTH:
            # recursion (or very deep calls): whatever it returns may derive from its arguments
            out = Taints()
            for v in [*args, *kwargs.values()]:
                out = out.join(v.total)
            return Value(base=out), {}
        self._tick()
        cached = self._locals_cache.get(id(node))
        if cached is None:
            cached = self._locals_cache[id(node)] = _locals_of(node, self._walrus)
        local_names, declared = cached
        frame = _Frame(
            name=func.qualname,
            globals=self.frame.globals if not self.frame.is_module else self._current_state,
            local_names=local_names,
            closure=func.closure,
            global_decls=declared,
            cls=self._defining_class(func),
        )
        state = self._bind_params(func, args, kwargs, site, frame)
        saved, saved_state = self.frame, self._current_state
        self.frame = frame
        self.stack.append(id(node))
        try:
            if isinstance(node, ast.Lambda):
                value = self.eval(node.body, state)
                frame.exits.append((value, {p: state[p] for p in frame.original_params if p in state}))
            else:
                end = self.exec_block(node.body, state)
                if end is not None:
                    frame.exits.append((NONE, {p: end[p] for p in frame.original_params if p in end}))
        finally:
            self.stack.pop()
            self.frame = saved
            self._current_state = saved_state
        if frame.yields:
            result = Value(elem=join_all(frame.yields))
        else:
            result = join_all(v for v, _ in frame.exits) if frame.exits else NONE
        finals: dict[str, Value] = {}
        for _, params in frame.exits:
            for p, v in params.items():
                if v is frame.entry.get(p):
                    continue  # left alone on this path
                finals[p] = join(finals[p], v) if p in finals else v
        return result, finals

    def _defining_class(self, func: FuncRef) -> Value | None:
        bound = func.bound
        if bound is None:
            return None
        if isinstance(bound.ref, InstanceRef):
            return bound.ref.cls
        if isinstance(bound.ref, ClassRef):
            return bound
        return None

    def _bind_params(self, func: FuncRef, args: list[Value], kwargs: dict[str, Value], site: CallSite,
                     frame: _Frame) -> State:
        node = func.node
        a = node.args
        positional = [*a.posonlyargs, *a.args]
        values = list(args)
        if func.bound is not None and func.flavor in {"function", "classmethod", "property"}:
            values.insert(0, func.bound)
        state: State = {}
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(func.defaults):]], func.defaults,
                            strict=False))
        star = site.star if site.args is args else None
        for i, p in enumerate(positional):
            if i < len(values):
                value = values[i]
            elif p.arg in kwargs:
                value = kwargs[p.arg]
            elif star is not None:
                value = Value(base=star.total)
            else:
                value = defaults.get(p.arg, CLEAN)
            state[p.arg] = self._into_param(value, func, p.arg, site, i - (len(values) - len(args)))
        if a.vararg is not None:
            extra = values[len(positional):]
            state[a.vararg.arg] = Value(items=tuple(extra)) if star is None else Value(
                elem=join_all([*extra, star.element()]))
        kw_defaults = dict(func.kw_defaults)
        for p in a.kwonlyargs:
            value = kwargs.get(p.arg, kw_defaults.get(p.arg, CLEAN))
            state[p.arg] = self._into_param(value, func, p.arg, site, -1)
        if a.kwarg is not None:
            known = {p.arg for p in [*positional, *a.kwonlyargs]}
            state[a.kwarg.arg] = Value(fields=tuple((k, v) for k, v in kwargs.items() if k not in known))
        frame.original_params = {p.arg for p in positional + a.kwonlyargs}
        frame.entry = dict(state)
        return state

    def _into_param(self, value: Value, func: FuncRef, param: str, site: CallSite, arg_index: int) -> Value:
        """The argument with a step saying which parameter of which function it became."""
        if not value.total or site.extra.get("synthetic"):
            return value
        node = site.arg_nodes[arg_index] if 0 <= arg_index < len(site.arg_nodes) else None
        state = self._current_state

        def step_for(kind: Kind) -> Step:
            names = self.names_in(node, state, kind) if node is not None else ()
            return Step(site.line, site.code, names + (f"{func.qualname}:{param}",), f"passed to {func.qualname}()",
                        self.frame.name)

        return value.map_taints(lambda t: t.with_steps(step_for))

    def _copy_back(self, func: FuncRef, site: CallSite, finals: dict[str, Value], state: State) -> None:
        """A function changed an argument in place (`df["x"] = ...` on its parameter): the caller's object
        is the same object, so write the change to the caller's variable, attribute or item."""
        if not finals:
            return
        node = func.node
        positional = [p.arg for p in [*node.args.posonlyargs, *node.args.args]]
        offset = 0
        if func.bound is not None and func.flavor in {"function", "classmethod", "property"}:
            offset = 1
            self_name = positional[0] if positional else None
            if self_name in finals and site.receiver_node is not None and func.flavor != "classmethod":
                self.write_place(site.receiver_node, finals[self_name], state)
        for i, arg_node in enumerate(site.arg_nodes):
            if i + offset >= len(positional):
                break
            name = positional[i + offset]
            if name in finals:
                self.write_place(arg_node, self._changed_by(finals[name], func, site, arg_node), state)
        for key, arg_node in site.kwarg_nodes.items():
            if key in finals:
                self.write_place(arg_node, self._changed_by(finals[key], func, site, arg_node), state)

    def _changed_by(self, value: Value, func: FuncRef, site: CallSite, arg_node: ast.expr) -> Value:
        name = _dotted(arg_node) or ""
        step = Step(site.line, site.code, (name,) if name else (), f"changed in place by {func.qualname}()",
                    self.frame.name)
        return value.map_taints(lambda t: t.with_step(step))

    def _instantiate(self, cls: Value, site: CallSite, state: State) -> Value:
        assert isinstance(cls.ref, ClassRef)
        instance = Value(fields=(), ref=InstanceRef(cls))
        init = _class_attr(cls, "__init__")
        if init is not None and isinstance(init.ref, FuncRef):
            bound = FuncRef(init.ref.node, init.ref.qualname, init.ref.closure, instance, "function",
                            init.ref.defaults, init.ref.kw_defaults)
            _, finals = self.call_function(bound, site.args, site.kwargs, site)
            self_name = ([*init.ref.node.args.posonlyargs, *init.ref.node.args.args] or [None])[0]
            if self_name is not None and self_name.arg in finals:
                instance = finals[self_name.arg]
            self._copy_back(bound, CallSite(site.node, site.scope, site.code, site.args, site.arg_nodes,
                                            site.kwargs, site.kwarg_nodes), finals, state)
            return instance
        if "dataclass" in _decorator_names(cls.ref.node):
            return self._dataclass_instance(cls, instance, site)
        # a class without its own __init__ (a library base class) may keep any argument
        taints = Taints()
        for v in [*site.args, *site.kwargs.values()]:
            taints = taints.join(v.total)
        return instance.with_base(taints)

    def _dataclass_instance(self, cls: Value, instance: Value, site: CallSite) -> Value:
        assert isinstance(cls.ref, ClassRef)
        names = [s.target.id for s in cls.ref.node.body
                 if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        for i, name in enumerate(names):
            if i < len(site.args):
                instance = instance.with_field(name, site.args[i])
            elif name in site.kwargs:
                instance = instance.with_field(name, site.kwargs[name])
        return instance


def _collect(results: list[Value] | None, over_batch: bool) -> Value:
    """The collection a comprehension builds. One value per batch row makes a batch column."""
    if results is None:
        return CLEAN
    if len(results) == 1 and results[0].elem is not None and results[0].items is None:
        elem = results[0].elem
        return Value(elem=elem, base=lift_rows(elem.total) if over_batch else Taints())
    return Value(items=tuple(results))


def _function_owners(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]]:
    """Every function of the file with the name of the module-level class it belongs to, if any."""
    out: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]] = []

    def visit(body: list[ast.stmt], owner: str | None, top: bool) -> None:
        for stmt in _statements(body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((stmt, owner))
                visit(stmt.body, None, False)
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, stmt.name if top and stmt in body else None, False)

    visit(tree.body, None, True)
    return out


def _class_attr(cls: Value, name: str) -> Value | None:
    """A class attribute, looked up through the file's base classes (depth first, as single inheritance)."""
    found = cls.field(name)
    if found is not None:
        return found
    if isinstance(cls.ref, ClassRef):
        for base in cls.ref.bases:
            if isinstance(base.ref, ClassRef):
                inherited = _class_attr(base, name)
                if inherited is not None:
                    return inherited
    return None


def _set_item(container: Value, key: Value, value: Value, is_slice: bool) -> Value:
    """`container[key] = value`: constant keys of dicts and frames stay apart; other stores mix in."""
    if key.const is not UNKNOWN and not is_slice and isinstance(key.const, str | int | float | bool | tuple):
        if container.items is not None and isinstance(key.const, int) and not isinstance(key.const, bool):
            if -len(container.items) <= key.const < len(container.items):
                items = list(container.items)
                items[key.const] = value
                return Value(base=container.base, items=tuple(items))
        if container.items is None and container.elem is None and not isinstance(container.ref, FuncRef):
            return container.with_field(key.const, value).with_base(key.total)
    return container.with_base(value.total.join(_drop_size(key, is_slice)))


def _drop_size(key: Value, is_slice: bool) -> Taints:
    """A position, slice bound or index array taken from the batch size (`df.iloc[i:i + n]`,
    `out[idx] = ...` with `idx` from `np.arange(len(df))`) selects rows; it is not a value of them."""
    return key.total.only(lambda k: k is not Kind.BATCH_SIZE)


def _as_load(target: ast.expr) -> ast.expr:
    clone = ast.parse(ast.unparse(target), mode="eval").body
    ast.copy_location(clone, target)
    for n in ast.walk(clone):
        if hasattr(n, "lineno"):
            ast.copy_location(n, target)
    return clone


def _accumulator_names(stmt: ast.For | ast.AsyncFor) -> tuple[set[str], set[str]]:
    """Names a loop body updates from their own value (`total += x`) or stores into by a computed key."""
    accumulators: set[str] = set()
    keyed: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.AugAssign):
            base = node.target
            while isinstance(base, ast.Subscript | ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                accumulators.add(base.id)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                # `counts[value] = ...` groups by a computed key; `out[i:j] = ...` only places rows
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and not isinstance(
                    t.slice, ast.Constant | ast.Slice
                ):
                    keyed.add(t.value.id)
    return accumulators, keyed


def _fold_binop(op: ast.operator, a: object, b: object) -> object:
    try:
        if isinstance(op, ast.Div) and isinstance(a, str) and isinstance(b, str):
            return path_join([a, b])  # pathlib: Path("data") / "eval.csv"
        if isinstance(op, ast.Add) and type(a) is type(b) and isinstance(a, str | int | float | tuple):
            return a + b  # type: ignore[operator]
        if isinstance(op, ast.Mod) and isinstance(a, str):
            return a % b
        if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
            ops = {ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b if b else UNKNOWN,
                   ast.FloorDiv: lambda: a // b if b else UNKNOWN, ast.Add: lambda: a + b}  # type: ignore[operator]
            fn = ops.get(type(op))
            return fn() if fn is not None else UNKNOWN
    except (TypeError, ValueError, OverflowError):
        return UNKNOWN
    return UNKNOWN


def _fold_compare(op: ast.cmpop, left: Value, right: Value) -> object:
    if isinstance(op, ast.Is | ast.IsNot) and (left.is_none or right.is_none):
        other = right if left.is_none else left
        if other.is_none:
            outcome: object = True
        elif other.may_none:
            return UNKNOWN  # it may be None on some path

        else:
            outcome = False
        return outcome if isinstance(op, ast.Is) else not outcome
    a, b = left.const, right.const
    if isinstance(op, ast.In | ast.NotIn) and right.items is not None and a is not UNKNOWN:
        consts = [i.const for i in right.items]
        if all(c is not UNKNOWN for c in consts):
            return (a in consts) == isinstance(op, ast.In)
        return UNKNOWN
    if isinstance(op, ast.In | ast.NotIn) and right.fields is not None and right.ref is None and a is not UNKNOWN \
            and not right.base:
        return any(k == a for k, _ in right.fields) == isinstance(op, ast.In)
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    try:
        if isinstance(op, ast.Eq):
            return a == b
        if isinstance(op, ast.NotEq):
            return a != b
        if isinstance(op, ast.In):
            return a in b  # type: ignore[operator]
        if isinstance(op, ast.NotIn):
            return a not in b  # type: ignore[operator]
        if isinstance(op, ast.Lt):
            return a < b  # type: ignore[operator]
        if isinstance(op, ast.LtE):
            return a <= b  # type: ignore[operator]
        if isinstance(op, ast.Gt):
            return a > b  # type: ignore[operator]
        if isinstance(op, ast.GtE):
            return a >= b  # type: ignore[operator]
        if isinstance(op, ast.Is):
            return a is b
        if isinstance(op, ast.IsNot):
            return a is not b
    except TypeError:
        return UNKNOWN
    return UNKNOWN

