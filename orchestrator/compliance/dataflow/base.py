"""The interpreter's shared state: evidence (lines, code, the names carrying a taint), names and scopes, the
step budget. The mixins in `statements`, `expressions` and `calls` add the interpretation itself."""

from __future__ import annotations

import ast
import builtins
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from orchestrator.compliance import library as lib
from orchestrator.compliance.dataflow.core import CallSite, Role, SinkHit
from orchestrator.compliance.dataflow.scopes import (
    DEFAULT_BUDGET,
    TIME_LIMIT_S,
    UNKNOWN_VALUE,
    BudgetExceeded,
    Frame,
    State,
    dotted,
)
from orchestrator.compliance.strings import SCRIPT_PATH, TaskLayout
from orchestrator.compliance.values import (
    CLEAN,
    FuncRef,
    Kind,
    LibRef,
    Step,
    Taints,
    Value,
    const_value,
    extend_path,
    kind_mask,
    stepper,
    witnessed,
)

_BUILTIN_NAMES = frozenset(dir(builtins))
#: a module variable that was not bound when a call read it
ABSENT = object()
#: the builtins as values (values are immutable: one of each serves every lookup)
_BUILTINS = {name: Value(ref=LibRef(f"builtins.{name}")) for name in _BUILTIN_NAMES}
_SCRIPT = Value(const=SCRIPT_PATH)
ELEMENT_ACCESSOR = "<element accessor>"
_ACCESSOR_NAMES = lib.ROW_ACCESSORS | lib.ELEMENT_ACCESSORS | {"values"}


@dataclass
class NodeCaches:
    """What the interpreter works out once per node of a tree (keyed by the node's id): several passes over
    the same tree share them."""

    locals: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    #: names and attribute chains in an expression, in source order (for evidence)
    names: dict[int, tuple[tuple[str, ast.AST], ...]] = field(default_factory=dict)
    #: a statement's or expression's source text
    code: dict[int, str] = field(default_factory=dict)
    eval_paths: dict[str, bool] = field(default_factory=dict)
    #: a call's callee as written (`np.mean`)
    callees: dict[int, str] = field(default_factory=dict)
    #: the names an assignment target binds, for evidence
    targets: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: `x += 1` read as `x`: the load node made once per statement (its id keys the caches above)
    load_nodes: dict[int, ast.expr] = field(default_factory=dict)
    #: a loop's accumulators and keyed stores
    loop_lift: dict[int, tuple[set[str], set[str]]] = field(default_factory=dict)
    #: the value of each literal that is not the evaluation file's path
    constants: dict[int, Value] = field(default_factory=dict)
    #: the file's functions and the classes they belong to
    owners: dict[int, list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]]] = field(
        default_factory=dict
    )
    #: call nodes made for calls no line makes (kept alive: their ids key the caches)
    synthetic_calls: dict[tuple[int, str], ast.Call] = field(default_factory=dict)


class InterpreterBase:
    """State and helpers every part of the interpreter uses; the parts are mixed into `Interpreter`."""

    #: slotted: the interpreter reads its ~32 attributes on every node, and an instance dict of more than
    #: 30 keys loses CPython 3.11's shared-key layout and with it the fast attribute reads
    __slots__ = (
        "_callees", "_code_cache", "_constants", "_current_state", "_cutoffs", "_eval_paths",
        "_load_nodes", "_locals_cache", "_loop_lift", "_memo", "_names_cache", "_owners", "_reads",
        "_synthetic_calls", "_targets", "_walrus", "budget", "deadline", "frame", "global_writes", "hits",
        "initial_budget", "layout", "lines", "notes", "reached", "stack", "tree", "uncertain", "unreached",
        "witness", "witness_mask",
    )  # fmt: skip

    #: the method interpreting each kind of node (`_e_Name` for `ast.Name`...), filled in by `handlers`
    expression_handlers: ClassVar[dict[type, Callable[..., Any]]] = {}
    statement_handlers: ClassVar[dict[type, Callable[..., Any]]] = {}

    @classmethod
    def handlers(cls) -> None:
        """Look the node handlers up once, by name, instead of on every node."""
        cls.expression_handlers = {
            getattr(ast, name[3:]): getattr(cls, name)
            for name in dir(cls)
            if name.startswith("_e_") and hasattr(ast, name[3:])
        }
        cls.statement_handlers = {
            getattr(ast, name[3:]): getattr(cls, name)
            for name in dir(cls)
            if name.startswith("_s_") and hasattr(ast, name[3:])
        }

    def __init__(
        self,
        tree: ast.Module,
        source: str,
        layout: TaskLayout,
        budget: int = DEFAULT_BUDGET,
        witness: bool = True,
        caches: NodeCaches | None = None,
        witness_kinds: Iterable[Kind] | None = None,
    ) -> None:
        self.tree = tree
        #: whether to record witness paths through assignments, calls and returns (evidence), and for which
        #: kinds of taint (all by default). Without them every path is empty but for a hit's sink: the same
        #: hits, found faster (`compliance.audit` runs this first, and again with the witnesses the flagged
        #: rules need).
        self.witness_mask = 0 if not witness else (-1 if witness_kinds is None else kind_mask(witness_kinds))
        self.witness = self.witness_mask != 0
        self.lines = source.splitlines()
        #: whether any `:=` may bind names inside expressions (a text test spares walking every expression)
        self._walrus = ":=" in source
        self.layout = layout
        self.budget = self.initial_budget = budget
        #: CPU seconds one file may take: a guard against pathological files the step budget misses
        self.deadline = time.process_time() + TIME_LIMIT_S
        self.hits: dict[tuple[Role, Kind, str, int, int], SinkHit] = {}
        #: calls in no table of `compliance.library` that received the scored frame's data: (line, call)
        self.uncertain: dict[tuple[int, str], None] = {}
        self.notes: list[str] = []
        #: the function being interpreted because no call reached it ("" otherwise)
        self.unreached = ""
        self.frame = Frame(name="", globals={}, is_module=True)
        self.stack: list[int] = []
        self.reached: set[int] = set()
        caches = caches if caches is not None else NodeCaches()
        self._locals_cache = caches.locals
        self._names_cache = caches.names
        self._code_cache = caches.code
        self._eval_paths = caches.eval_paths
        self._callees = caches.callees
        self._targets = caches.targets
        self._load_nodes = caches.load_nodes
        self._loop_lift = caches.loop_lift
        self._synthetic_calls = caches.synthetic_calls
        self._owners = caches.owners
        self._constants = caches.constants
        #: the state of the statement being interpreted (names for evidence are looked up in it)
        self._current_state: State = {}
        #: calls of the file's functions already interpreted, per call: (module variables read and the
        #: values they had, result or None when the call does not return, in-place changes)
        self._memo: dict[object, list[tuple[dict[str, object], Value | None, dict[str, Value]]]] = {}
        #: the module variables read by each call being interpreted (innermost last)
        self._reads: list[dict[str, object]] = []
        #: bumped whenever a function changes a module (or enclosing) variable: such calls are not memoised
        self.global_writes = 0
        #: calls cut short by recursion or depth: a call that saw one is not memoised
        self._cutoffs = 0

    def code(self, node: ast.AST) -> str:
        """The source of a statement (its header for a compound one) or expression, shortened."""
        cached = self._code_cache.get(id(node))
        if cached is None:
            cached = self._code_cache[id(node)] = self._source_of(node)
        return cached

    def _source_of(self, node: ast.AST) -> str:
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
        found = self._name_nodes(node)
        if not found:
            return ()
        out: list[str] = []
        for name, sub in found:
            if name in out:
                continue
            value = self._peek(sub, state)
            if value is not None and value.total.has(kind):
                out.append(name)
        if len(out) < 2:
            return tuple(out)
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
        if not self.witness:
            return Step(getattr(at, "lineno", site.line), "", (), note, self.frame.name)
        names: tuple[str, ...] = ()
        if kind is not None and witnessed(kind):
            state = self._current_state
            receiver = site.receiver_node
            names = self.names_in(receiver if receiver is not None else site.node, state, kind)
        return Step(getattr(at, "lineno", site.line), self.code(at), names, note, self.frame.name)

    def hit(self, role: Role, value: Value, node: ast.AST | None, site: CallSite, target: str) -> None:
        for kind, path in value.total.entries:
            kept = witnessed(kind)
            names = self.names_in(node, self._current_state, kind) if node is not None and kept else ()
            sink = Step(site.line, site.code, names, f"{role.value}: {target}", self.frame.name)
            self._record(SinkHit(role, kind, extend_path(path, sink, kind) if kept else (sink,), target))

    def unknown_call(self, what: str, site: CallSite, result: Value) -> Value:
        """A call the tables do not know received batch data: it is taken to work row by row (its result
        derives from all it was given, with no conversion). Noted for the record, and in a witness path the
        step says the reading was assumed."""
        if not result.total.has(Kind.BATCH):
            return result
        self.uncertain[(site.line, what)] = None
        if not self.witness:
            return result
        step = self.step(site, f"{what}: not in the audit's tables, taken to work row by row")
        return result.map_taints(stepper(lambda _: step))

    def _record(self, hit: SinkHit) -> None:
        if self.unreached:
            hit = SinkHit(hit.role, hit.kind, hit.path, hit.target, self.unreached)
        key = (hit.role, hit.kind, hit.target, hit.path[-1].line, hit.path[0].line)
        self.hits.setdefault(key, hit)

    def constant(self, const: object, node: ast.AST, taints_from: Value | None = None) -> Value:
        """A folded constant; a string naming the evaluation file is where eval taint starts."""
        if isinstance(const, str) and self._is_eval_path(const):
            value = self._eval_constant(const, node)
        else:
            value = const_value(const)
        if taints_from is not None:
            value = value.with_base(taints_from.total)
        return value

    def _is_eval_path(self, text: str) -> bool:
        known = self._eval_paths.get(text)
        if known is None:
            known = self._eval_paths[text] = self.layout.is_eval_path(text)
        return known

    def _eval_constant(self, const: str, node: ast.AST) -> Value:
        """The evaluation file's path: where both its kinds of taint start (it holds feature columns and
        the label column)."""
        code = self.code(node) if self.witness else ""
        origin = Step(
            getattr(node, "lineno", 0), code, (), f'"{const}" is the evaluation file', self.frame.name
        )
        taints = Taints(
            (
                (Kind.EVAL, (origin,) if witnessed(Kind.EVAL) else ()),
                (Kind.EVAL_LABEL, (origin,) if witnessed(Kind.EVAL_LABEL) else ()),
            )
        )
        return Value(base=taints, const=const)

    def _tick(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise BudgetExceeded(f"analysis stopped after {self.initial_budget} steps")
        if self.budget % 512 == 0 and time.process_time() > self.deadline:
            raise BudgetExceeded(f"analysis stopped after {TIME_LIMIT_S:.0f} s of CPU time")

    def lookup(self, name: str, state: State) -> Value:
        f = self.frame
        found = state.get(name)
        declared = f.global_decls
        if found is not None and (not declared or name not in declared):
            return found  # a local, or a comprehension's variable
        if f.local_names is not None and name in f.local_names and name not in declared:
            return UNKNOWN_VALUE  # a local read before any binding this path saw
        if f.closure is not None and name in f.closure:
            return f.closure[name]
        if not f.is_module and self._reads:
            # a module variable read inside a call: the call's outcome depends on it
            self._reads[-1][name] = f.globals.get(name, ABSENT)
        if name in f.globals and not f.is_module:
            return f.globals[name]
        if name == "__file__":
            return _SCRIPT
        if name == "__name__":
            return CLEAN  # both "__main__" (python train.py) and an import by the scorer happen
        return _BUILTINS.get(name, UNKNOWN_VALUE)

    def bind(self, name: str, value: Value, state: State) -> None:
        """`name = value`: a new binding (a parameter rebound this way no longer aliases the caller's)."""
        f = self.frame
        if f.local_names is not None and name in f.global_decls:
            self.global_writes += 1
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
            self.global_writes += 1
            f.closure[name] = value
        else:
            self.global_writes += 1
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
