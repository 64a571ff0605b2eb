"""Small rules of the abstract domain: truth of a value, folding of operators on constants, stores into
items, class attribute lookup."""

from __future__ import annotations

import ast

from orchestrator.compliance.strings import path_join
from orchestrator.compliance.values import (
    CLEAN,
    COLUMNS,
    UNKNOWN,
    ClassRef,
    FuncRef,
    InstanceRef,
    Kind,
    Taints,
    Value,
    join,
    key_const,
    lift_rows,
)


def truth(v: Value) -> bool | None:
    """Whether a value is truthy, when that is known."""
    if v.const is not UNKNOWN:
        try:
            return bool(v.const)
        except (TypeError, ValueError):  # an odd constant: undecided
            return None
    if isinstance(v.ref, FuncRef | ClassRef | InstanceRef):
        return None if v.may_none else True
    if v.items is not None and not v.may_none:
        return bool(v.items)
    return None


def fold_binop(op: ast.operator, a: object, b: object) -> object:
    try:
        if isinstance(op, ast.Div) and isinstance(a, str) and isinstance(b, str):
            return path_join([a, b])  # pathlib: Path("data") / "eval.csv"
        if isinstance(op, ast.Add) and type(a) is type(b) and isinstance(a, str | int | float | tuple):
            return a + b  # type: ignore[operator]  # a and b are one type (checked)
        if isinstance(op, ast.Mod) and isinstance(a, str):
            return a % b
        if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
            ops = {
                ast.Sub: lambda: a - b,
                ast.Mult: lambda: a * b,
                ast.Div: lambda: a / b if b else UNKNOWN,
                ast.FloorDiv: lambda: a // b if b else UNKNOWN,
                ast.Add: lambda: a + b,
            }
            fn = ops.get(type(op))
            return fn() if fn is not None else UNKNOWN
    except (TypeError, ValueError, OverflowError):
        return UNKNOWN
    return UNKNOWN


def fold_compare(op: ast.cmpop, left: Value, right: Value) -> object:
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
    columns = right.field(COLUMNS)
    if columns is not None:
        right = columns  # `"label" in df` asks about the frame's columns
    if isinstance(op, ast.In | ast.NotIn) and right.items is not None and a is not UNKNOWN:
        consts = [i.const for i in right.items]
        if all(c is not UNKNOWN for c in consts):
            return (a in consts) == isinstance(op, ast.In)
        return UNKNOWN
    if (
        isinstance(op, ast.In | ast.NotIn)
        and right.fields is not None
        and right.ref is None
        and a is not UNKNOWN
        and not right.base
    ):
        return any(k == a for k, _ in right.fields) == isinstance(op, ast.In)
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    try:
        if isinstance(op, ast.Eq):
            return a == b
        if isinstance(op, ast.NotEq):
            return a != b
        if isinstance(op, ast.In):
            return a in b
        if isinstance(op, ast.NotIn):
            return a not in b
        if isinstance(op, ast.Lt):
            return a < b
        if isinstance(op, ast.LtE):
            return a <= b
        if isinstance(op, ast.Gt):
            return a > b
        if isinstance(op, ast.GtE):
            return a >= b
        if isinstance(op, ast.Is):
            return a is b
        if isinstance(op, ast.IsNot):
            return a is not b
    except TypeError:
        return UNKNOWN
    return UNKNOWN


def set_item(container: Value, key: Value, value: Value, is_slice: bool) -> Value:
    """`container[key] = value`: constant keys of dicts and frames stay apart; other stores mix in. A store
    under a name that is not known forgets which columns a frame has (it may have replaced any of them)."""
    const = key_const(key) if not is_slice else UNKNOWN
    if const is not UNKNOWN and isinstance(const, str | int | float | bool | tuple):
        position = const
        if (
            container.items is not None
            and isinstance(position, int)
            and not isinstance(position, bool)
            and -len(container.items) <= position < len(container.items)
        ):
            items = list(container.items)
            items[position] = value
            return Value(base=container.base, items=tuple(items))
        if container.items is None and container.elem is None and not isinstance(container.ref, FuncRef):
            updated = container.with_field(position, value).with_base(key.total)
            if isinstance(position, tuple) and all(isinstance(p, str) for p in position):
                # `df[["a", "b"]] = ...` writes each of those columns (or a dict is keyed by a tuple)
                for name in position:
                    old = container.field(name) or Value(base=container.base)
                    updated = updated.with_field(name, join(old, value))
            columns = container.field(COLUMNS)
            if columns is not None and columns.items is not None and isinstance(position, str):
                # a new column of a frame whose columns are known
                names = {c.const for c in columns.items}
                if position not in names:
                    updated = updated.with_field(
                        COLUMNS, Value(items=(*columns.items, Value(const=position)))
                    )
            return updated
    stored = container.with_base(value.total.join(drop_size(key, is_slice)))
    if stored.field(COLUMNS) is not None and not is_slice and key.items is None:
        stored = stored.without_fields((COLUMNS,))
    return stored


def drop_size(key: Value, is_slice: bool) -> Taints:
    """A position, slice bound or index array taken from the batch size (`df.iloc[i:i + n]`,
    `out[idx] = ...` with `idx` from `np.arange(len(df))`) selects rows; it is not a value of them."""
    return key.total.only(lambda k: k is not Kind.BATCH_SIZE)


def class_attr(cls: Value, name: str) -> Value | None:
    """A class attribute, looked up through the file's base classes (depth first, as single inheritance)."""
    found = cls.field(name)
    if found is not None:
        return found
    if isinstance(cls.ref, ClassRef):
        for base in cls.ref.bases:
            if isinstance(base.ref, ClassRef):
                inherited = class_attr(base, name)
                if inherited is not None:
                    return inherited
    return None


def collect(results: list[Value] | None, over_batch: bool) -> Value:
    """The collection a comprehension builds. One value per batch row makes a batch column."""
    if results is None:
        return CLEAN
    if len(results) == 1 and results[0].elem is not None and results[0].items is None:
        elem = results[0].elem
        return Value(elem=elem, base=lift_rows(elem.total) if over_batch else Taints())
    return Value(items=tuple(results))
