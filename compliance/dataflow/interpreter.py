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
from dataclasses import dataclass, field

from compliance.dataflow.calls import Calls
from compliance.dataflow.composites import Composites
from compliance.dataflow.core import CallSite, Role, SinkHit
from compliance.dataflow.expressions import Expressions
from compliance.dataflow.scopes import (
    UNKNOWN_VALUE,
    BudgetExceeded,
    Frame,
    Infeasible,
    State,
    function_owners,
)
from compliance.dataflow.statements import Statements
from compliance.values import (
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
    witness_paths,
    witnessed,
)


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


class Interpreter(Statements, Expressions, Calls, Composites):
    """Interprets one parsed file. Use `run()` once."""

    __slots__ = ()

    def run(self) -> Analysis:
        complete = True
        previous = witness_paths(self.witness_mask)
        try:
            module_state: State = {}
            self.frame.globals = module_state
            final = self.exec_block(self.tree.body, module_state)
            final = final if final is not None else module_state
            self._call_entry(final)
            self._call_unreached(final)
        except BudgetExceeded as exc:
            complete = False
            self.notes.append(f"{exc}; the result is incomplete")
        except RecursionError:
            complete = False
            self.notes.append("the file nests too deeply to analyse; the result is incomplete")
        finally:
            witness_paths(previous)
        return Analysis(list(self.hits.values()), complete, self.notes, sorted(self.uncertain))

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
