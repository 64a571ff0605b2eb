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

Taints of the scored batch start at the scorer's call, after the module body. A pass that keeps witness
paths for those kinds only (`frame_statistics`' evidence) therefore interprets the module body exactly as a
pass without witnesses does: `Interpreter.resume` starts such a pass from the point a quick pass reached after
the body (`AfterBody`), when the quick pass's own calls after the body changed nothing the body left behind.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from orchestrator.compliance.dataflow.calls import Calls
from orchestrator.compliance.dataflow.composites import Composites
from orchestrator.compliance.dataflow.core import CallSite, Role, SinkHit
from orchestrator.compliance.dataflow.expressions import Expressions
from orchestrator.compliance.dataflow.scopes import (
    UNKNOWN_VALUE,
    BudgetExceeded,
    Frame,
    Infeasible,
    State,
    function_owners,
)
from orchestrator.compliance.dataflow.statements import Statements
from orchestrator.compliance.values import (
    COLUMNS,
    OTHER,
    ROWS,
    ClassRef,
    FuncRef,
    InstanceRef,
    Kind,
    Step,
    Taints,
    Value,
    extend_path,
    kind_mask,
    witness_paths,
    witnessed,
)

#: kinds of taint that only the scorer's call starts (none exists while the module body runs)
SCORER_KINDS = frozenset({Kind.BATCH, Kind.BATCH_ROW, Kind.BATCH_STAT, Kind.BATCH_SIZE, Kind.BATCH_LEVELS})


@dataclass(frozen=True, slots=True)
class AfterBody:
    """What a pass without witnesses had found when the module body ended: enough to run the rest again,
    with witnesses of `SCORER_KINDS`, without interpreting the body again. The dicts are copies where the
    rest of the pass changed them (hits, memo...) and the body's own states where it did not (see
    `Interpreter.run`)."""

    module_frame_state: State
    final: State
    hits: dict[tuple[Role, Kind, str, int, int], SinkHit]
    notes: list[str]
    uncertain: dict[tuple[int, str], None]
    reached: set[int]
    memo: dict[object, list[tuple[dict[str, object], Value | None, dict[str, Value]]]]
    budget: int
    global_writes: int
    cutoffs: int


@dataclass
class Analysis:
    """What the interpreter found in one file."""

    hits: list[SinkHit]
    #: false when the budget ran out: the hits are then a lower bound
    complete: bool = True
    notes: list[str] = field(default_factory=list)
    #: calls in no table of `compliance.library` that received the scored frame's data, taken to work row
    #: by row: (line, call)
    uncertain: list[tuple[int, str]] = field(default_factory=list)
    #: where a pass with witnesses of `SCORER_KINDS` only may start instead of the module's first line
    #: (set by `run(keep_after_body=True)` when that is exact)
    after_body: AfterBody | None = field(default=None, repr=False, compare=False)


class Interpreter(Statements, Expressions, Calls, Composites):
    """Interprets one parsed file. Use `run()` or `resume()` once."""

    __slots__ = ()

    def run(self, keep_after_body: bool = False) -> Analysis:
        """Interpret the module body, then the scorer's call and the functions nothing reached. With
        `keep_after_body` (a pass without witnesses), the analysis keeps where the body ended when the
        rest changed no variable the body bound (no write to a module or enclosing variable: those are
        the only places the rest can write into what the body left), so `resume` can start from there."""
        after_body: AfterBody | None = None
        previous = witness_paths(self.witness_mask)
        try:
            module_state: State = {}
            self.frame.globals = module_state
            final = self.exec_block(self.tree.body, module_state)
            final = final if final is not None else module_state
            if keep_after_body and not self.witness:
                after_body = self._after_body(final)
            complete = self._guarded(self._after_module, final)
        except (BudgetExceeded, RecursionError) as exc:
            complete = self._incomplete(exc)
        finally:
            witness_paths(previous)
        if after_body is not None and (not complete or self.global_writes != after_body.global_writes):
            after_body = None
        return Analysis(list(self.hits.values()), complete, self.notes, sorted(self.uncertain), after_body)

    def resume(self, start: AfterBody) -> Analysis:
        """The rest of a pass, from where a pass without witnesses left the module body (see `run`). Exact
        for witnesses of `SCORER_KINDS` only: the body makes no such taint, so it runs the same way with and
        without them. Hits of other kinds found in the body keep the quick pass's sink steps."""
        assert self.witness_mask != 0 and not self.witness_mask & ~kind_mask(SCORER_KINDS)
        self.frame.globals = start.module_frame_state
        self.hits = dict(start.hits)
        self.notes = list(start.notes)
        self.uncertain = dict(start.uncertain)
        self.reached = set(start.reached)
        self._memo = {key: list(entries) for key, entries in start.memo.items()}
        self.budget = start.budget
        self.global_writes = start.global_writes
        self._cutoffs = start.cutoffs
        previous = witness_paths(self.witness_mask)
        try:
            complete = self._guarded(self._after_module, start.final)
        finally:
            witness_paths(previous)
        return Analysis(list(self.hits.values()), complete, self.notes, sorted(self.uncertain))

    def _after_body(self, final: State) -> AfterBody:
        return AfterBody(
            self.frame.globals,
            final,
            dict(self.hits),
            list(self.notes),
            dict(self.uncertain),
            set(self.reached),
            {key: list(entries) for key, entries in self._memo.items()},
            self.budget,
            self.global_writes,
            self._cutoffs,
        )

    def _after_module(self, final: State) -> None:
        self._call_entry(final)
        self._call_unreached(final)

    def _guarded(self, part: Callable[[State], None], final: State) -> bool:
        """Run `part`; false (with a note) when the budget ran out or the file nests too deeply."""
        try:
            part(final)
        except (BudgetExceeded, RecursionError) as exc:
            return self._incomplete(exc)
        return True

    def _incomplete(self, exc: BaseException) -> bool:
        if isinstance(exc, BudgetExceeded):
            self.notes.append(f"{exc}; the result is incomplete")
        else:
            self.notes.append("the file nests too deeply to analyse; the result is incomplete")
        return False

    def _call_entry(self, module: State) -> None:
        entry = module.get(self.layout.entry)
        if entry is not None and isinstance(entry.ref, InstanceRef):
            entry = self._member(entry, "__call__")  # an object of the file used as the function
        func = entry.ref if entry is not None else None
        if not isinstance(func, FuncRef):
            self.notes.append(f"no function {self.layout.entry}() at module level; nothing to trace from it")
            return
        node = func.node
        params = [*node.args.posonlyargs, *node.args.args]
        if func.bound is not None or (
            params and params[0].arg in {"self", "cls"} and func.flavor != "function"
        ):
            params = params[1:]
        if not params:
            self.notes.append(f"{self.layout.entry}() takes no frame; nothing to trace from it")
            return
        param = params[0].arg
        scope = func.qualname
        origin = Step(
            node.lineno, self.code(node), (param,), f"the frame the scorer passes to {scope}()", scope
        )
        # the scorer passes the holdout's feature columns: their names are known, the label is not among them
        columns = Value(items=tuple(Value(const=c) for c in self.layout.batch_columns))
        batch = Value(base=Taints.of(Kind.BATCH, origin), fields=((COLUMNS, columns),), axes=(ROWS, OTHER))
        site = self._synthetic_site(node, scope)
        sink = Step(node.lineno, self.code(node), (), f"returned by {scope}() to the scorer", scope)
        # the scorer calls it once per batch: the second call sees what the first left in module variables
        for _ in range(2):
            self._current_state = module
            try:
                result, _ = self.call_function(func, [batch], {}, site)
            except Infeasible:
                self.notes.append(f"{scope}() fails on every path for a frame without the label column")
                return
            for kind, path in result.total.entries:
                path = extend_path(path, sink, kind) if witnessed(kind) else (sink,)
                hit = SinkHit(Role.OUTPUT, kind, path, f"{scope} (returned value)")
                self._record(hit)

    def _call_unreached(self, module: State) -> None:
        """Interpret every function no call reached, with unknown arguments: a call the interpreter could
        not see (a callback, `getattr`, a framework) must not hide what the function does."""
        owners = self._owners.get(id(self.tree))
        if owners is None:
            owners = self._owners[id(self.tree)] = function_owners(self.tree)
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
                self.frame = Frame(name="", globals=module, is_module=True)
                self._current_state = module
                try:
                    self.unreached = func.qualname
                    self.call_function(func, args, {}, site)
                except Infeasible:
                    pass
                finally:
                    self.frame = saved
                    self.unreached = ""

    def _unreached_function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str | None, module: State
    ) -> tuple[FuncRef, Value | None]:
        """The function as the module binds it (defaults, qualified name), and `self` for a method."""
        if owner is not None and owner in module and isinstance(module[owner].ref, ClassRef):
            cls = module[owner]
            member = cls.field(node.name)
            if member is not None and isinstance(member.ref, FuncRef) and member.ref.node is node:
                self_value = (
                    None
                    if member.ref.flavor == "staticmethod"
                    else Value(fields=(), ref=InstanceRef(cls), may_none=False)
                )
                return member.ref, self_value
        bound = module.get(node.name)
        if bound is not None and isinstance(bound.ref, FuncRef) and bound.ref.node is node:
            return bound.ref, None
        qualname = f"{owner}.{node.name}" if owner else node.name
        defaults = tuple(UNKNOWN_VALUE for _ in node.args.defaults)
        return FuncRef(node, qualname, closure=None, defaults=defaults), None

    def _synthetic_site(self, node: ast.AST, scope: str) -> CallSite:
        """A call site for a call no line of the file makes (the scorer's, a property read): its node is
        made once per (node, scope) and kept, since node ids key the caches."""
        key = (id(node), scope)
        call = self._synthetic_calls.get(key)
        if call is None:
            call = ast.Call(func=ast.Name(id=scope, ctx=ast.Load()), args=[], keywords=[])
            ast.copy_location(call, node)
            self._synthetic_calls[key] = call
            self._code_cache[id(call)] = self.code(node)
        return CallSite(call, scope, self.code(node), [], [], {}, {}, callee=scope, extra={"synthetic": True})


Interpreter.handlers()
