"""Expressions: constants (where evaluation-file paths are recognised), names, attributes, items,
operators, containers and comprehensions."""

from __future__ import annotations

import ast
from collections.abc import Callable

from orchestrator.compliance import library as lib
from orchestrator.compliance.axes import axes_of, iterates_rows
from orchestrator.compliance.dataflow import arrays, frames, groups
from orchestrator.compliance.dataflow.base import ELEMENT_ACCESSOR, InterpreterBase
from orchestrator.compliance.dataflow.folding import (
    class_attr,
    collect,
    drop_size,
    fold_binop,
    fold_compare,
    truth,
)
from orchestrator.compliance.dataflow.scopes import (
    UNROLL_MAX,
    State,
)
from orchestrator.compliance.strings import fold_attribute, fold_format
from orchestrator.compliance.values import (
    CLEAN,
    COLUMNS,
    NONE,
    OTHER,
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
    join,
    join_all,
    key_const,
    library_value,
    row_of,
    taint_value,
)


class Expressions(InterpreterBase):
    __slots__ = ()  # the state is in InterpreterBase's slots

    def eval(self, node: ast.expr | None, state: State) -> Value:
        if node is None:
            return NONE
        kind = type(node)
        if kind is ast.Name:
            return self.lookup(node.id, state)  # type: ignore[attr-defined]  # kind is type(node)
        if kind is ast.Constant:
            return self._e_Constant(node, state)  # type: ignore[arg-type]  # kind is type(node)
        handler = self.expression_handlers.get(kind)
        if handler is None:
            out = Taints()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    out = out.join(self.eval(child, state).total)
            return Value(base=out)
        result: Value = handler(self, node, state)
        return result

    def _e_Constant(self, node: ast.Constant, state: State) -> Value:
        found = self._constants.get(id(node))
        if found is not None:
            return found
        const = node.value
        if isinstance(const, str) and self._is_eval_path(const):
            return self.constant(const, node)  # where evaluation taint starts: its step names the scope
        found = self._constants[id(node)] = const_value(const)
        return found

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
        inner = node.value
        obj = self.lookup(inner.id, state) if type(inner) is ast.Name else self.eval(inner, state)
        return self.load_attr(obj, node.attr, node, state)

    def load_attr(self, obj: Value, attr: str, node: ast.AST, state: State) -> Value:
        ref = obj.ref
        if isinstance(ref, LibRef) and not ref.instance:
            return library_value(f"{ref.qualname}.{attr}")
        if ref is not None and groups.is_groupby(obj):
            return groups.attribute(self, obj, attr, self._synthetic_site(node, self.frame.name))
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
        if attr == "columns" and (columns := obj.field(COLUMNS)) is not None:
            return columns
        if attr in lib.SCHEMA_ATTRIBUTES:
            return CLEAN
        if attr in lib.CODE_ATTRIBUTES and obj.total.has(Kind.BATCH_LEVELS):
            step = Step(
                getattr(node, "lineno", 0),
                self.code(node),
                self.names_in(node, state, Kind.BATCH_LEVELS),
                f".{attr}: integer codes of category levels taken from the batch, across the rows "
                "of the batch",
                self.frame.name,
            )
            return Value(base=obj.total.convert(Kind.BATCH_LEVELS, Kind.BATCH_STAT, step))
        if attr in lib.SIZE_ATTRIBUTES or attr == "index":
            # the number of rows, or the rows' labels: nothing of the evaluation file's labels
            total = obj.total.only(lambda k: k is not Kind.EVAL_LABEL)
            if attr in lib.SIZE_ATTRIBUTES and total.has(Kind.BATCH):
                step = Step(
                    getattr(node, "lineno", 0),
                    self.code(node),
                    self.names_in(node, state, Kind.BATCH),
                    f".{attr}: the number of rows in the batch",
                    self.frame.name,
                )
                return Value(base=total.convert(Kind.BATCH, Kind.BATCH_SIZE, step))
            return Value(base=total)
        if attr == "T":
            return arrays.transposed(obj)
        if attr in {"values", "array"} and obj.total.has(Kind.BATCH):
            return Value(base=obj.total, axes=axes_of(obj))
        if attr in lib.ELEMENT_ACCESSORS:
            return Value(base=obj.total, ref=LibRef(ELEMENT_ACCESSOR, instance=True))
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
        found = class_attr(cls, name)
        if found is None or not isinstance(found.ref, FuncRef):
            return found
        func = found.ref
        if func.flavor == "staticmethod":
            return found
        bound_to = cls if func.flavor == "classmethod" else obj
        if isinstance(ref, ClassRef) and func.flavor in {"function", "property"}:
            return found  # a plain function looked up on the class: called with self explicitly
        return Value(
            ref=FuncRef(
                func.node, func.qualname, func.closure, bound_to, func.flavor, func.defaults, func.kw_defaults
            )
        )

    def _e_Subscript(self, node: ast.Subscript, state: State) -> Value:
        accessor = node.value.attr if isinstance(node.value, ast.Attribute) else None
        if accessor == "loc" or (accessor == "iloc" and not isinstance(node.slice, ast.Tuple)):
            frame = self.eval(node.value.value, state)  # type: ignore[attr-defined]  # accessor: an Attribute
            if frame.fields is not None and frame.ref is None:
                if accessor == "loc":
                    return self._loc(frame, node, state)
                rows = self.eval(node.slice, state)
                if not (isinstance(rows.const, int) and not isinstance(rows.const, bool)):
                    # some rows by position: the same columns
                    return Value(
                        base=frame.base.join(drop_size(rows, isinstance(node.slice, ast.Slice))),
                        fields=frame.fields,
                        axes=frame.axes,
                    )
        inner = node.value
        container = self.lookup(inner.id, state) if type(inner) is ast.Name else self.eval(inner, state)
        key = self.eval(node.slice, state)
        is_slice = isinstance(node.slice, ast.Slice)
        if container.ref is not None:
            if groups.is_groupby(container):
                return groups.select(container, key)
            if groups.is_groups(container):
                return Value(base=(container.field(groups.ROWS_OF) or CLEAN).total)
        const = key_const(key) if not is_slice else UNKNOWN
        if const is not UNKNOWN:
            found = container.field(const) if container.fields is not None else None
            if found is not None:
                return found
            if _index_in(container, const):
                return container.items[const]  # type: ignore[index]  # _index_in checked it
            if isinstance(container.const, str):
                return Value(base=container.total.join(key.total))
        if container.fields is not None and container.items is None and container.elem is None:
            selected = frames.column(self, container, key)
            if selected is not None:
                return selected
            if container.ref is None and const is not UNKNOWN:
                return Value(base=container.base.join(key.total))
            if container.field(COLUMNS) is not None and not isinstance(key.const, str):
                # a frame indexed by a mask or a slice: some of its rows, the same columns
                return Value(
                    base=container.base.join(drop_size(key, is_slice)),
                    fields=container.fields,
                    axes=container.axes,
                )
            if container.ref is None and not is_slice:
                # a key not known: any of the values (the key only selects: its size-of-batch taint is not
                # a value, as for positions)
                values = [v for k, v in container.fields if k != COLUMNS]
                return join_all(values).with_base(container.base.join(drop_size(key, is_slice)))
        if isinstance(node.slice, ast.Slice) and container.items is not None:
            sl = node.slice
            bounds = [
                self.eval(b, state).const if b is not None else None for b in (sl.lower, sl.upper, sl.step)
            ]
            if all(b is None or isinstance(b, int) for b in bounds):
                return Value(base=container.base, items=container.items[slice(*bounds)])
        if isinstance(node.slice, ast.Tuple) and container.total.has(Kind.BATCH) and accessor != "iloc":
            parts = [(_index_kind(e, v), v) for e, v in zip(node.slice.elts, key.items or (), strict=False)]
            if len(parts) == len(node.slice.elts):
                axes, picked_row = arrays.indexed(container, parts)
                if axes is not None:
                    return arrays.picked(container, axes, picked_row, drop_size(key, is_slice))
        taints = container.total.join(drop_size(key, is_slice))
        row_pick = (
            accessor in {"iloc", "iat", "at"} and not is_slice and not isinstance(node.slice, ast.Tuple)
        )
        if row_pick or (isinstance(key.const, int) and not isinstance(key.const, bool)):
            axes = axes_of(container)
            if axes is not None and axes[:1] == (OTHER,) and not row_pick:
                return Value(base=taints, axes=axes[1:] or None)  # a member of stacked arrays
            taints = row_of(taints)  # one row (or one element) of batch data
        return taint_value(taints)

    def _loc(self, frame: Value, node: ast.Subscript, state: State) -> Value:
        """`df.loc[rows]`, `df.loc[rows, cols]`: rows selected keep the frame's columns; columns selected by
        name are selected as `df[cols]` would."""
        key_node = node.slice
        if isinstance(key_node, ast.Tuple) and len(key_node.elts) == 2:
            rows = self.eval(key_node.elts[0], state)
            cols = self.eval(key_node.elts[1], state)
            selected = frames.column(self, frame, cols)
            rows_taint = drop_size(rows, isinstance(key_node.elts[0], ast.Slice))
            if selected is not None:
                return selected.with_base(rows_taint)
            return Value(base=frame.total.join(rows_taint).join(cols.total))
        rows = self.eval(key_node, state)
        return Value(
            base=frame.base.join(drop_size(rows, isinstance(key_node, ast.Slice))),
            fields=frame.fields,
            axes=frame.axes,
        )

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
            const = key_const(key)
            if const is not UNKNOWN and isinstance(const, str | int | float | bool | tuple):
                fields = [(fk, fv) for fk, fv in fields if fk != const]
                fields.append((const, value))
            else:
                base = base.join(value.total).join(key.total)
        return Value(base=base, fields=tuple(fields))

    def _e_BinOp(self, node: ast.BinOp, state: State) -> Value:
        left, right = node.left, node.right
        a = self.lookup(left.id, state) if type(left) is ast.Name else self.eval(left, state)
        b = self.lookup(right.id, state) if type(right) is ast.Name else self.eval(right, state)
        return self._binop(node.op, a, b, node)

    def _binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        taints = left.total.join(right.total)
        if not taints and (left.const is UNKNOWN or right.const is UNKNOWN) and left.items is None:
            return CLEAN  # nothing known of the result, nothing carried
        a, b = left.const, right.const
        if a is not UNKNOWN and b is not UNKNOWN:
            folded = fold_binop(op, a, b)
            if folded is not UNKNOWN:
                return self.constant(folded, node, Value(base=taints))
        if isinstance(op, ast.Add) and left.items is not None and right.items is not None:
            return Value(items=left.items + right.items)
        if isinstance(op, ast.Mult) and (left.items is not None or right.items is not None):
            # `[0.5] * len(df)` repeats a list: the count is a shape, not a value
            taints = taints.only(lambda k: k is not Kind.BATCH_SIZE).join(
                (left if left.items is not None else right).total
            )
        return Value(base=taints, axes=_broadcast_axes(left, right) if taints.has(Kind.BATCH) else None)

    def _e_UnaryOp(self, node: ast.UnaryOp, state: State) -> Value:
        operand = self.eval(node.operand, state)
        if isinstance(node.op, ast.Not):
            known = truth(operand)
            return Value(base=operand.total, const=(not known) if known is not None else UNKNOWN)
        if (
            operand.const is not UNKNOWN
            and isinstance(operand.const, int | float)
            and isinstance(node.op, ast.USub)
        ):
            return Value(base=operand.total, const=-operand.const)
        return Value(base=operand.total)

    def _e_BoolOp(self, node: ast.BoolOp, state: State) -> Value:
        values: list[Value] = []
        for operand in node.values:
            value = self.eval(operand, state)
            known = truth(value)
            # `a or b` stops at the first truthy operand, `a and b` at the first falsy one
            if known is not None and known == isinstance(node.op, ast.Or):
                if not values:
                    return value
                values.append(value)
                break
            if known is None or operand is node.values[-1]:
                values.append(value)
        return join_all(values)

    def _e_Compare(self, node: ast.Compare, state: State) -> Value:
        left = self.eval(node.left, state)
        taints = left.total
        result: object = True
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comparator, state)
            taints = taints.join(right.total)
            outcome = fold_compare(op, left, right)
            result = UNKNOWN if outcome is UNKNOWN or result is UNKNOWN else (result and outcome)
            left = right
        return Value(base=taints, const=result)

    def _e_IfExp(self, node: ast.IfExp, state: State) -> Value:
        known = truth(self.eval(node.test, state))
        if known is True:
            return self.eval(node.body, state)
        if known is False:
            return self.eval(node.orelse, state)
        return join(self.eval(node.body, state), self.eval(node.orelse, state))

    def _e_Lambda(self, node: ast.Lambda, state: State) -> Value:
        defaults = tuple(self.eval(d, state) for d in node.args.defaults)
        scope = self.frame.name
        qualname = f"{scope}.<lambda>" if scope else "<lambda>"
        return Value(ref=FuncRef(node, qualname, state, None, "function", defaults))

    def _e_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp, state: State) -> Value:
        over_batch: list[bool] = []
        results = self._comprehend(
            node.generators, 0, dict(state), lambda s: self.eval(node.elt, s), over_batch
        )
        return collect(results, bool(over_batch))

    def _e_DictComp(self, node: ast.DictComp, state: State) -> Value:
        def entry(s: State) -> Value:
            return Value(items=(self.eval(node.key, s), self.eval(node.value, s)))

        over_batch: list[bool] = []
        results = self._comprehend(node.generators, 0, dict(state), entry, over_batch)
        keys = [key_const(r.items[0]) if r.items else UNKNOWN for r in results or ()]
        if results is not None and all(k is not UNKNOWN for k in keys):
            return Value(fields=tuple((k, r.items[1]) for k, r in zip(keys, results, strict=True) if r.items))
        return Value(base=collect(results, bool(over_batch)).total)

    def _comprehend(
        self,
        generators: list[ast.comprehension],
        i: int,
        state: State,
        produce: Callable[[State], Value],
        over_batch: list[bool],
    ) -> list[Value] | None:
        """Values the comprehension produces: one per combination when every iterable is a known list,
        else a single `Value(elem=...)`. Appends to `over_batch` when it iterates over batch rows."""
        if i == len(generators):
            return [produce(state)]
        gen = generators[i]
        iterable = self.eval(gen.iter, state)
        if iterates_rows(iterable):
            over_batch.append(True)
        if iterable.items is not None and len(iterable.items) <= UNROLL_MAX:
            out: list[Value] = []
            for item in iterable.items:
                inner = dict(state)
                self.assign(gen.target, item, inner)
                if any(truth(self.eval(cond, inner)) is False for cond in gen.ifs):
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
        return (
            None
            if produced is None
            else [
                Value(
                    elem=join_all(
                        v.element() if v.items is None and v.elem is not None else v for v in produced
                    )
                )
            ]
        )

    _e_List = _e_Tuple

    _e_SetComp = _e_ListComp

    _e_GeneratorExp = _e_ListComp


def _index_in(container: Value, key: object) -> bool:
    """Whether `key` is an int position inside a container whose items are known."""
    return (
        container.items is not None
        and isinstance(key, int)
        and not isinstance(key, bool)
        and -len(container.items) <= key < len(container.items)
    )


def _index_kind(node: ast.expr, value: Value) -> str:
    """What one part of a tuple index does to its axis (see `arrays.indexed`)."""
    if isinstance(node, ast.Slice):
        return "slice"
    if isinstance(node, ast.Constant) and node.value is None:
        return "none"
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return "ellipsis"
    if isinstance(value.const, int) and not isinstance(value.const, bool):
        return "int"
    if value.is_none:
        return "none"
    if isinstance(value.ref, LibRef) and value.ref.qualname == "numpy.newaxis":
        return "none"
    return "array"


def _broadcast_axes(left: Value, right: Value) -> tuple[str, ...] | None:
    """Axes of an element-wise operation's result: those of the batch operand, when the other operand has
    no batch data or the same axes."""
    left_batch, right_batch = left.total.has(Kind.BATCH), right.total.has(Kind.BATCH)
    if left_batch and not right_batch:
        return None if left.is_list else axes_of(left)
    if right_batch and not left_batch:
        return None if right.is_list else axes_of(right)
    a, b = axes_of(left), axes_of(right)
    return a if a == b and not left.is_list else None
