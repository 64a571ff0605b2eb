"""Calls: into functions, methods and classes of the audited file (interpreted with the actual arguments,
in-place changes copied back to the caller) and into libraries (`semantics`)."""

from __future__ import annotations

import ast

from orchestrator.compliance.dataflow import semantics
from orchestrator.compliance.dataflow.base import ABSENT, InterpreterBase
from orchestrator.compliance.dataflow.composites import UNPICKLED
from orchestrator.compliance.dataflow.core import CallSite
from orchestrator.compliance.dataflow.folding import (
    class_attr,
)
from orchestrator.compliance.dataflow.scopes import (
    MAX_CALL_DEPTH,
    Frame,
    Infeasible,
    State,
    decorator_names,
    dotted,
    locals_of,
)
from orchestrator.compliance.values import (
    CLEAN,
    NONE,
    ClassRef,
    FuncRef,
    InstanceRef,
    Kind,
    LibRef,
    Step,
    Taints,
    Value,
    join,
    join_all,
    library_value,
    stepper,
)

#: outcomes kept per distinct call (the same arguments under different module variables)
MEMO_VARIANTS = 4


class Calls(InterpreterBase):
    __slots__ = ()  # the state is in InterpreterBase's slots

    def _e_Call(self, node: ast.Call, state: State) -> Value:
        self._tick()
        receiver: Value | None = None
        receiver_node: ast.expr | None = None
        callee: Value | None = None
        method = ""
        func = node.func
        if isinstance(func, ast.Attribute):
            receiver_node = func.value
            receiver = (
                self.lookup(receiver_node.id, state)
                if type(receiver_node) is ast.Name
                else self.eval(receiver_node, state)
            )
            method = func.attr
        elif (
            isinstance(func, ast.Name)
            and func.id == "super"
            and self.lookup("super", state).ref == LibRef("builtins.super")
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

    def _site(
        self, node: ast.Call, state: State, receiver: Value | None, receiver_node: ast.expr | None
    ) -> CallSite:
        args: list[Value] = []
        arg_nodes: list[ast.expr] = []
        star: Value | None = None
        for a in node.args:
            value = self.lookup(a.id, state) if type(a) is ast.Name else self.eval(a, state)
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
            value = (
                self.lookup(kw.value.id, state) if type(kw.value) is ast.Name else self.eval(kw.value, state)
            )
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
        callee = self._callees.get(id(node))
        if callee is None:
            callee = self._callees[id(node)] = dotted(node.func) or "call"
        return CallSite(
            node,
            self.frame.name,
            self.code(node) if self.witness else "",
            args,
            arg_nodes,
            kwargs,
            kwarg_nodes,
            star,
            dstar,
            receiver,
            receiver_node,
            callee,
        )

    def _super(self, state: State) -> Value:
        """`super()` inside a method: self, seen as an instance of the first base class of the file."""
        self_value = (
            self.lookup("self", state)
            if self.frame.local_names and "self" in self.frame.local_names
            else CLEAN
        )
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
            return self.call_value(library_value(f"{ref.qualname}.{method}"), site, state)
        elif ref is not None:
            # a library object: one holding the file's functions (a namespace), an unpickled object of the
            # file's classes, or a composite built from the file's objects
            member = receiver.field(method)
            if member is not None and isinstance(member.ref, FuncRef | ClassRef):
                return self.call_value(member, site, state)
            if isinstance(ref, LibRef) and ref.qualname == UNPICKLED:
                unpickled = self._unpickled_call(method, site, state)
                if unpickled is not None:
                    return unpickled
            site = self._through_members(receiver, method, site, state)
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
        if isinstance(ref, InstanceRef):
            call = self._member(callee, "__call__")
            if call is not None and isinstance(call.ref, FuncRef):
                return self.call_value(call, site, state)
        if isinstance(ref, LibRef):
            if (
                ref.qualname == "builtins.getattr"
                and len(site.args) >= 2
                and isinstance(site.args[1].const, str)
            ):
                return self.load_attr(site.args[0], site.args[1].const, site.node, state)
            if (
                ref.qualname in {"builtins.setattr"}
                and len(site.args) == 3
                and isinstance(site.args[1].const, str)
            ):
                if site.arg_nodes:
                    obj = site.args[0].with_field(site.args[1].const, site.args[2])
                    self.write_place(site.arg_nodes[0], obj, state)
                return NONE
            if ref.qualname == "functools.partial" and site.args:
                return site.args[0]
            if not ref.instance:
                return self._library_result(
                    ref.qualname, semantics.call_function(self, ref.qualname, site), site
                )
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

    def call_function(
        self, func: FuncRef, args: list[Value], kwargs: dict[str, Value], site: CallSite
    ) -> tuple[Value, dict[str, Value]]:
        """Interpret a function of the file with these arguments: (returned value, final values of the
        parameters it changed in place)."""
        node = func.node
        self.reached.add(id(node))
        if id(node) in self.stack or len(self.stack) >= MAX_CALL_DEPTH:
            # recursion (or very deep calls): whatever it returns may derive from its arguments
            self._cutoffs += 1
            out = Taints()
            for v in [*args, *kwargs.values()]:
                out = out.join(v.total)
            return Value(base=out), {}
        self._tick()
        key = self._memo_key(func, args, kwargs, site)
        module = self._module_state()
        if key is not None:
            for reads, result, finals in self._memo.get(key, ()):
                if all(module.get(name, ABSENT) is value for name, value in reads.items()):
                    self._note_reads(reads)
                    if result is None:
                        raise Infeasible(f"{func.qualname}() does not return")
                    return result, finals
        cutoffs, writes = self._cutoffs, self.global_writes
        self._reads.append({})
        try:
            result, finals = self._interpret_call(func, args, kwargs, site)
        except Infeasible:
            reads = self._reads.pop()
            self._remember(key, reads, None, {}, cutoffs, writes)
            raise
        except BaseException:
            self._reads.pop()
            raise
        reads = self._reads.pop()
        self._remember(key, reads, result, finals, cutoffs, writes)
        return result, finals

    def _remember(
        self,
        key: object,
        reads: dict[str, object],
        result: Value | None,
        finals: dict[str, Value],
        cutoffs: int,
        writes: int,
    ) -> None:
        """Keep a call's outcome for the same call later, valid while the module variables it read are
        the same objects; a call that changed module variables, or was cut short, is not kept."""
        self._note_reads(reads)
        if key is None or cutoffs != self._cutoffs or writes != self.global_writes:
            return
        entries = self._memo.setdefault(key, [])
        if len(entries) < MEMO_VARIANTS:
            entries.append((reads, result, finals))

    def _note_reads(self, reads: dict[str, object]) -> None:
        """What a call read is read by its caller too (for the caller's own memo entry)."""
        if self._reads:
            self._reads[-1].update(reads)

    def _memo_key(self, func: FuncRef, args: list[Value], kwargs: dict[str, Value], site: CallSite) -> object:
        """What a call's outcome depends on besides module variables, or None when that cannot be captured
        (closures, whose variables may change between calls, and arguments that are not hashable)."""
        if func.closure is not None:
            return None
        star = site.star if site.args is args else None
        parts = [*args, *kwargs.values()]
        if star is not None:
            parts.append(star)
        if func.bound is not None:
            parts.append(func.bound)
        if any(_has_closure(v, 0) for v in parts):
            return None
        key = (
            id(func.node),
            func.bound,
            func.defaults,
            func.kw_defaults,
            tuple(args),
            tuple(sorted(kwargs.items(), key=lambda kv: kv[0])),
            star,
            self.unreached,
        )
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def _module_state(self) -> State:
        return self.frame.globals if not self.frame.is_module else self._current_state

    def _interpret_call(
        self, func: FuncRef, args: list[Value], kwargs: dict[str, Value], site: CallSite
    ) -> tuple[Value, dict[str, Value]]:
        node = func.node
        cached = self._locals_cache.get(id(node))
        if cached is None:
            cached = self._locals_cache[id(node)] = locals_of(node, self._walrus)
        local_names, declared = cached
        frame = Frame(
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
        if frame.infeasible and not frame.exits and not frame.yields:
            # every path through the function reads what is not there (the batch's labels): it raises
            raise Infeasible(f"{func.qualname}() does not return")
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

    def _bind_params(
        self, func: FuncRef, args: list[Value], kwargs: dict[str, Value], site: CallSite, frame: Frame
    ) -> State:
        node = func.node
        a = node.args
        positional = [*a.posonlyargs, *a.args]
        values = list(args)
        if func.bound is not None and func.flavor in {"function", "classmethod", "property"}:
            values.insert(0, func.bound)
        state: State = {}
        defaults = dict(
            zip(
                [p.arg for p in positional[len(positional) - len(func.defaults) :]],
                func.defaults,
                strict=False,
            )
        )
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
            extra = values[len(positional) :]
            state[a.vararg.arg] = (
                Value(items=tuple(extra)) if star is None else Value(elem=join_all([*extra, star.element()]))
            )
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
        if not value.total.mask & self.witness_mask or site.extra.get("synthetic"):
            return value
        node = site.arg_nodes[arg_index] if 0 <= arg_index < len(site.arg_nodes) else None
        state = self._current_state

        def step_for(kind: Kind) -> Step:
            names = self.names_in(node, state, kind) if node is not None else ()
            return Step(
                site.line,
                site.code,
                (*names, f"{func.qualname}:{param}"),
                f"passed to {func.qualname}()",
                self.frame.name,
            )

        return value.map_taints(stepper(step_for))

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
        if not value.total.mask & self.witness_mask:
            return value
        name = dotted(arg_node) or ""
        step = Step(
            site.line,
            site.code,
            (name,) if name else (),
            f"changed in place by {func.qualname}()",
            self.frame.name,
        )
        return value.map_taints(stepper(lambda _: step))

    def _instantiate(self, cls: Value, site: CallSite, state: State) -> Value:
        assert isinstance(cls.ref, ClassRef)
        instance = Value(fields=(), ref=InstanceRef(cls))
        init = class_attr(cls, "__init__")
        if init is not None and isinstance(init.ref, FuncRef):
            bound = FuncRef(
                init.ref.node,
                init.ref.qualname,
                init.ref.closure,
                instance,
                "function",
                init.ref.defaults,
                init.ref.kw_defaults,
            )
            _, finals = self.call_function(bound, site.args, site.kwargs, site)
            params = [*init.ref.node.args.posonlyargs, *init.ref.node.args.args]
            if params and params[0].arg in finals:
                instance = finals[params[0].arg]
            self._copy_back(
                bound,
                CallSite(
                    site.node, site.scope, site.code, site.args, site.arg_nodes, site.kwargs, site.kwarg_nodes
                ),
                finals,
                state,
            )
            return instance
        if "dataclass" in decorator_names(cls.ref.node):
            return self._dataclass_instance(cls, instance, site)
        # a class without its own __init__ (a library base class) may keep any argument
        taints = Taints()
        for v in [*site.args, *site.kwargs.values()]:
            taints = taints.join(v.total)
        return instance.with_base(taints)

    def _dataclass_instance(self, cls: Value, instance: Value, site: CallSite) -> Value:
        assert isinstance(cls.ref, ClassRef)
        names = [
            s.target.id
            for s in cls.ref.node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        ]
        for i, name in enumerate(names):
            if i < len(site.args):
                instance = instance.with_field(name, site.args[i])
            elif name in site.kwargs:
                instance = instance.with_field(name, site.kwargs[name])
        return instance


def _has_closure(value: Value, depth: int) -> bool:
    """Whether a value holds a function whose enclosing variables the interpreter reads live."""
    if value.items is None and value.elem is None and value.fields is None:
        ref = value.ref
        return ref is not None and isinstance(ref, FuncRef) and ref.closure is not None
    ref = value.ref
    if isinstance(ref, FuncRef) and ref.closure is not None:
        return True
    if depth >= 3:
        return False
    for part in value.items or ():
        if _has_closure(part, depth + 1):
            return True
    if value.elem is not None and _has_closure(value.elem, depth + 1):
        return True
    for _, part in value.fields or ():
        if _has_closure(part, depth + 1):
            return True
    return False
