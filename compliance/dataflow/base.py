"""The interpreter's shared state: evidence (lines, code, the names carrying a taint), names and scopes, the
step budget. The mixins in `statements`, `expressions` and `calls` add the interpretation itself."""

from __future__ import annotations

import ast
import builtins
import time

from compliance import library as lib
from compliance.dataflow.core import CallSite, Role, SinkHit
from compliance.dataflow.scopes import (
    DEFAULT_BUDGET,
    TIME_LIMIT_S,
    UNKNOWN_VALUE,
    BudgetExceeded,
    Frame,
    State,
    dotted,
)
from compliance.strings import SCRIPT_PATH, TaskLayout
from compliance.values import (
    CLEAN,
    FuncRef,
    Kind,
    LibRef,
    Step,
    Taints,
    Value,
    const_value,
    extend_path,
)

_BUILTIN_NAMES = frozenset(dir(builtins))
ELEMENT_ACCESSOR = "<element accessor>"
_ACCESSOR_NAMES = lib.ROW_ACCESSORS | lib.ELEMENT_ACCESSORS | {"values"}


class InterpreterBase:
    """State and helpers every part of the interpreter uses; the parts are mixed into `Interpreter`."""

    def __init__(
        self, tree: ast.Module, source: str, layout: TaskLayout, budget: int = DEFAULT_BUDGET
    ) -> None:
        self.tree = tree
        self.lines = source.splitlines()
        #: whether any `:=` may bind names inside expressions (a text test spares walking every expression)
        self._walrus = ":=" in source
        self.layout = layout
        self.budget = self.initial_budget = budget
        #: CPU seconds one file may take: a guard against pathological files the step budget misses
        self.deadline = time.process_time() + TIME_LIMIT_S
        self.hits: dict[tuple[Role, Kind, str, int, int], SinkHit] = {}
        self.notes: list[str] = []
        #: the function being interpreted because no call reached it ("" otherwise)
        self.unreached = ""
        self.frame = Frame(name="", globals={}, is_module=True)
        self.stack: list[int] = []
        self.reached: set[int] = set()
        self._locals_cache: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        self._names_cache: dict[int, tuple[tuple[str, ast.AST], ...]] = {}
        self._loop_lift: dict[int, tuple[set[str], set[str]]] = {}
        #: the state of the statement being interpreted (names for evidence are looked up in it)
        self._current_state: State = {}

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
            name = dotted(sub)
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
        if self.unreached:
            hit = SinkHit(hit.role, hit.kind, hit.path, hit.target, self.unreached)
        key = (hit.role, hit.kind, hit.target, hit.path[-1].line, hit.path[0].line)
        self.hits.setdefault(key, hit)

    def constant(self, const: object, node: ast.AST, taints_from: Value | None = None) -> Value:
        """A folded constant; a string naming the evaluation file is where eval taint starts."""
        value = const_value(const)
        if isinstance(const, str) and self.layout.is_eval_path(const):
            origin = Step(
                getattr(node, "lineno", 0),
                self.code(node),
                (),
                f'"{const}" is the evaluation file',
                self.frame.name,
            )
            value = Value(base=Taints.of(Kind.EVAL, origin), const=const)
        if taints_from is not None:
            value = value.with_base(taints_from.total)
        return value

    def _tick(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise BudgetExceeded(f"analysis stopped after {self.initial_budget} steps")
        if self.budget % 512 == 0 and time.process_time() > self.deadline:
            raise BudgetExceeded(f"analysis stopped after {TIME_LIMIT_S:.0f} s of CPU time")

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

    # --- implemented by the mixins ------------------------------------------------------------------

    def eval(self, node: ast.expr | None, state: State) -> Value:
        raise NotImplementedError

    def exec_block(self, body: list[ast.stmt], state: State | None) -> State | None:
        raise NotImplementedError

    def assign(self, target: ast.expr, value: Value, state: State) -> None:
        raise NotImplementedError

    def write_place(self, node: ast.expr, value: Value, state: State) -> None:
        raise NotImplementedError

    def load_attr(self, obj: Value, attr: str, node: ast.AST, state: State) -> Value:
        raise NotImplementedError

    def call_value(self, callee: Value, site: CallSite, state: State) -> Value:
        raise NotImplementedError

    def call_function(
        self, func: FuncRef, args: list[Value], kwargs: dict[str, Value], site: CallSite
    ) -> tuple[Value, dict[str, Value]]:
        raise NotImplementedError

    def invoke(self, func: Value, args: list[Value], site: CallSite) -> Value:
        raise NotImplementedError

    def _synthetic_site(self, node: ast.AST, scope: str) -> CallSite:
        raise NotImplementedError

    def _member(self, obj: Value, name: str) -> Value | None:
        raise NotImplementedError

    def _binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        raise NotImplementedError

    def _instantiate(self, cls: Value, site: CallSite, state: State) -> Value:
        raise NotImplementedError

    def _library_result(self, qualname: str, result: Value, site: CallSite) -> Value:
        raise NotImplementedError

    def _through_members(self, receiver: Value, method: str, site: CallSite, state: State) -> CallSite:
        raise NotImplementedError

    def _unpickled_call(self, method: str, site: CallSite, state: State) -> Value | None:
        raise NotImplementedError
