"""Statements: assignments and stores, control flow (branches joined, loops unrolled or run to a fixpoint),
imports, definitions of functions and classes."""

from __future__ import annotations

import ast
from collections.abc import Callable

from orchestrator.compliance import library as lib
from orchestrator.compliance.axes import iterates_rows
from orchestrator.compliance.dataflow.base import InterpreterBase
from orchestrator.compliance.dataflow.folding import (
    drop_size,
    set_item,
    truth,
)
from orchestrator.compliance.dataflow.scopes import (
    MAX_LOOP_ITERATIONS,
    UNROLL_MAX,
    WIDEN_AFTER,
    Frame,
    Infeasible,
    Loop,
    State,
    accumulator_names,
    as_load,
    decorator_names,
    dotted,
    merge_states,
)
from orchestrator.compliance.values import (
    CLEAN,
    NONE,
    ClassRef,
    FuncRef,
    Kind,
    LibRef,
    Step,
    Taints,
    Value,
    join,
    lift_rows,
    stepper,
    widen,
)


class Statements(InterpreterBase):
    __slots__ = ()  # the state is in InterpreterBase's slots

    def exec_block(self, body: list[ast.stmt], state: State | None) -> State | None:
        for stmt in body:
            if state is None:
                return None
            state = self.exec_stmt(stmt, state)
        return state

    def exec_stmt(self, stmt: ast.stmt, state: State) -> State | None:
        self._tick()
        self._current_state = state
        handler = self.statement_handlers.get(type(stmt))
        try:
            if handler is None:
                for child in ast.iter_child_nodes(stmt):
                    if isinstance(child, ast.expr):
                        self.eval(child, state)
                return state
            result: State | None = handler(self, stmt, state)
        except Infeasible:
            self.frame.infeasible = True
            return None
        return result

    def _s_Expr(self, stmt: ast.Expr, state: State) -> State | None:
        self.eval(stmt.value, state)
        return state

    def _s_Pass(self, stmt: ast.Pass, state: State) -> State | None:
        return state

    def _s_Assign(self, stmt: ast.Assign, state: State) -> State | None:
        value = self.eval(stmt.value, state)
        witness = self.witness
        for target in stmt.targets:
            self.assign(
                target, self._stepped(value, stmt, stmt.value, target, state) if witness else value, state
            )
        return state

    def _s_AnnAssign(self, stmt: ast.AnnAssign, state: State) -> State | None:
        if stmt.value is not None:
            value = self.eval(stmt.value, state)
            self.assign(stmt.target, self._stepped(value, stmt, stmt.value, stmt.target, state), state)
        return state

    def _s_AugAssign(self, stmt: ast.AugAssign, state: State) -> State | None:
        load = self._load_nodes.get(id(stmt))
        if load is None:
            load = self._load_nodes[id(stmt)] = as_load(stmt.target)
        current = self.eval(load, state)
        value = self._binop(stmt.op, current, self.eval(stmt.value, state), stmt)
        self.assign(stmt.target, self._stepped(value, stmt, stmt.value, stmt.target, state), state)
        return state

    def _stepped(self, value: Value, stmt: ast.stmt, rhs: ast.AST, target: ast.AST, state: State) -> Value:
        """The value with this assignment added to each of its paths."""
        if not value.total.mask & self.witness_mask:
            return value
        targets = self._targets.get(id(target))
        if targets is None:
            found = (
                tuple(n for n in (dotted(t) for t in ast.walk(target)) if n)
                if not isinstance(target, ast.Name | ast.Attribute)
                else (dotted(target) or "",)
            )
            targets = self._targets[id(target)] = tuple(t for t in found if t)
        code = self.code(stmt)

        def step_for(kind: Kind) -> Step:
            names = self.names_in(rhs, state, kind)
            names += tuple(t for t in targets[:1] if t not in names)
            return Step(stmt.lineno, code, names, "", self.frame.name)

        return value.map_taints(stepper(step_for))

    def _s_Return(self, stmt: ast.Return, state: State) -> State | None:
        value = self.eval(stmt.value, state) if stmt.value is not None else NONE
        if value.total.mask & self.witness_mask and stmt.value is not None:
            code = self.code(stmt)
            node, scope = stmt.value, self.frame.name
            value = value.map_taints(
                stepper(lambda k: Step(stmt.lineno, code, self.names_in(node, state, k), "returned", scope))
            )
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
        decorators = decorator_names(stmt)
        for d in stmt.decorator_list:
            self.eval(d, state)
        flavor = next((f for f in ("staticmethod", "classmethod", "property") if f in decorators), "function")
        if "setter" in decorators or "deleter" in decorators:
            flavor = "function"
        defaults = tuple(self.eval(d, state) for d in stmt.args.defaults)
        kw_defaults = tuple(
            (a.arg, self.eval(d, state))
            for a, d in zip(stmt.args.kwonlyargs, stmt.args.kw_defaults, strict=True)
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

    def _s_ClassDef(self, stmt: ast.ClassDef, state: State) -> State | None:
        bases = tuple(self.eval(b, state) for b in stmt.bases)
        for kw in stmt.keywords:
            self.eval(kw.value, state)
        namespace: State = {}
        saved = self.frame
        qualname = f"{saved.name}.{stmt.name}" if saved.name else stmt.name
        self.frame = Frame(
            qualname,
            saved.globals if not saved.is_module else state,
            closure=state if saved.local_names is not None else None,
        )
        try:
            self.exec_block(stmt.body, namespace)
        finally:
            self.frame = saved
            self._current_state = state
        cls = Value(fields=tuple(namespace.items()), ref=ClassRef(stmt, bases))
        self.bind(stmt.name, cls, state)
        return state

    def _s_If(self, stmt: ast.If, state: State) -> State | None:
        test = truth(self.eval(stmt.test, state))
        if test is True:
            return self.exec_block(stmt.body, state)
        if test is False:
            return self.exec_block(stmt.orelse, state)
        then = self.exec_block(stmt.body, dict(state))
        other = self.exec_block(stmt.orelse, dict(state))
        return merge_states([then, other])

    def _s_With(self, stmt: ast.With | ast.AsyncWith, state: State) -> State | None:
        for item in stmt.items:
            value = self.eval(item.context_expr, state)
            if item.optional_vars is not None:
                self.assign(
                    item.optional_vars,
                    self._stepped(value, stmt, item.context_expr, item.optional_vars, state),
                    state,
                )
        return self.exec_block(stmt.body, state)

    def _s_Try(self, stmt: ast.Try, state: State) -> State | None:
        before = dict(state)
        body = self.exec_block(stmt.body, dict(state))
        after_body = self.exec_block(stmt.orelse, dict(body)) if body is not None else None
        outcomes = [after_body]
        # a handler may start anywhere in the body: from the state before it or after it
        for handler in stmt.handlers:
            start = merge_states([before, body]) or dict(before)
            if handler.type is not None:
                self.eval(handler.type, start)
            if handler.name:
                start[handler.name] = CLEAN
            outcomes.append(self.exec_block(handler.body, start))
        merged = merge_states(outcomes)
        if stmt.finalbody:
            if merged is None:
                self.exec_block(stmt.finalbody, merge_states([before, body]) or before)
                return None
            return self.exec_block(stmt.finalbody, merged)
        return merged

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
        return merge_states(outcomes)

    def _s_While(self, stmt: ast.While, state: State) -> State | None:
        test = truth(self.eval(stmt.test, state))
        if test is False:
            return self.exec_block(stmt.orelse, state)
        return self._fixpoint(stmt, state, None, None)

    def _s_For(self, stmt: ast.For | ast.AsyncFor, state: State) -> State | None:
        iterable = self.eval(stmt.iter, state)
        over_batch = iterates_rows(iterable)
        before = set(state)
        if (
            iterable.items is not None
            and len(iterable.items) <= UNROLL_MAX
            and distinguishable(iterable.items)
        ):
            result = self._unrolled(stmt, state, iterable)
        else:
            result = self._fixpoint(stmt, state, stmt.target, iterable.element())
        if over_batch and result is not None:
            self._lift_row_accumulators(stmt, before, result)
        return result

    def _bind_target(
        self, stmt: ast.For | ast.AsyncFor | ast.While, target: ast.expr | None, value: Value, state: State
    ) -> None:
        if target is None:
            return
        iter_node = stmt.iter if isinstance(stmt, ast.For | ast.AsyncFor) else stmt.test
        self.assign(target, self._stepped(value, stmt, iter_node, target, state), state)

    def _unrolled(self, stmt: ast.For | ast.AsyncFor, state: State, iterable: Value) -> State | None:
        loop = Loop()
        self.frame.loops.append(loop)
        current: State | None = state
        try:
            for item in iterable.items or ():
                if current is None:
                    break
                running = dict(current)
                self._bind_target(stmt, stmt.target, item, running)
                out = self.exec_block(stmt.body, running)
                current = merge_states([out, *loop.continues])
                loop.continues.clear()
        finally:
            self.frame.loops.pop()
        if current is not None and stmt.orelse:
            current = self.exec_block(stmt.orelse, current)
        return merge_states([current, *loop.breaks])

    def _fixpoint(
        self,
        stmt: ast.For | ast.AsyncFor | ast.While,
        state: State,
        target: ast.expr | None,
        element: Value | None,
    ) -> State | None:
        loop = Loop()
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
                merged = merge_states([entry, out, *loop.continues]) or entry
                loop.continues.clear()
                if merged == entry:
                    break
                if iteration >= WIDEN_AFTER:
                    # only what is still changing grows without end: the rest keeps its structure
                    merged = {k: v if entry.get(k) == v else widen(v) for k, v in merged.items()}
                entry = merged
        finally:
            self.frame.loops.pop()
        after = self.exec_block(stmt.orelse, dict(entry)) if stmt.orelse else entry
        return merge_states([after, *loop.breaks])

    def _lift_row_accumulators(self, stmt: ast.For | ast.AsyncFor, before: set[str], state: State) -> None:
        """After a loop over the batch's rows, a variable that existed before it and now holds row values
        has collected them across rows: a list of them is a column (BATCH); a running total or a dict keyed
        by row values (`counts[v] = counts.get(v, 0) + 1`) is a cross-row statistic."""
        lifted = self._loop_lift.get(id(stmt))
        if lifted is None:
            lifted = self._loop_lift[id(stmt)] = accumulator_names(stmt)
        accumulators, keyed = lifted
        for name in before:
            value = state.get(name)
            if value is None or not value.total.has(Kind.BATCH_ROW):
                continue
            if name in accumulators or name in keyed:
                origin = Step(
                    stmt.lineno,
                    self.code(stmt),
                    (name,),
                    "accumulated across the rows of the batch",
                    self.frame.name,
                )
                state[name] = value.map_taints(_converter(Kind.BATCH_ROW, Kind.BATCH_STAT, origin))
            else:
                state[name] = value.map_taints(lift_rows)

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
            extra = drop_size(key, isinstance(key_node, ast.Slice))
            if column is not None:
                old = frame.field(column) or Value(base=frame.base)
                self.write_place(
                    frame_node, frame.with_field(column, join(old, value).with_base(extra)), state
                )
            else:
                self.write_place(frame_node, frame.with_base(value.total.join(extra)), state)
            return
        container = self.eval(container_node, state)
        self.write_place(
            container_node, set_item(container, key, value, isinstance(key_node, ast.Slice)), state
        )

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
            self.write_place(
                node.value, set_item(container, key, value, isinstance(node.slice, ast.Slice)), state
            )
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
            self.write_back("self", value, state)

    _s_Nonlocal = _s_Global

    _s_AsyncFunctionDef = _s_FunctionDef

    _s_AsyncWith = _s_With

    _s_TryStar = _s_Try

    _s_AsyncFor = _s_For


def distinguishable(items: tuple[Value, ...]) -> bool:
    """Whether unrolling a loop over these items can tell more than one pass over their join: some item
    holds a string (a column name, a key, a path, a branch's tag) or an object of the file (a function to
    call). Seeds, counts, models, frames and arrays are as well handled by a fixpoint over their join (which
    runs a branch on them both ways)."""
    return any(_telling(item, 0) for item in items)


def _telling(value: Value, depth: int) -> bool:
    if isinstance(value.const, str | bytes):
        return True
    ref = value.ref
    if ref is not None and not isinstance(ref, LibRef):
        return True
    if depth >= 3:
        return False
    for part in value.items or ():
        if _telling(part, depth + 1):
            return True
    for _, part in value.fields or ():
        if _telling(part, depth + 1):
            return True
    return False


def _converter(source: Kind, target: Kind, step: Step) -> Callable[[Taints], Taints]:
    def convert(taints: Taints) -> Taints:
        return taints.convert(source, target, step)

    return convert
