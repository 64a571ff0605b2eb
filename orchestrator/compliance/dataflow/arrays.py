"""Arrays and their axes: reductions that know which axis they run over, stacking, transposes, and indexing
that drops axes.

A reduction of batch data crosses rows only when it runs over the axis that indexes the batch's rows:
`np.mean([m.predict_proba(X)[:, 1] for m in models], axis=0)` averages ensemble members for each row (axis 0
is the list of members), `np.mean(p)` averages the batch. `compliance.values.axes_of` says what each axis of
a value indexes; the functions here keep that knowledge through the operations ensembles are written with,
and fall back to the pandas reading (rows first) where it is lost. When the axis a reduction runs over
cannot be known, the reduction is taken to cross rows, and the step says the axis was uncertain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.compliance import library as lib
from orchestrator.compliance.axes import axes_of, axis_role, drop_axis
from orchestrator.compliance.dataflow.core import CallSite, Host
from orchestrator.compliance.dataflow.ops import args_total, cross_row
from orchestrator.compliance.values import (
    DEFAULT_AXES,
    MORE,
    OTHER,
    ROWS,
    UNKNOWN,
    Axes,
    Kind,
    LibRef,
    Taints,
    Value,
    row_of,
)

_AXIS_NAMES = {"index": 0, "rows": 0, "columns": 1}


def _axis_const(value: Value | None, default: Any) -> Any:
    if value is None:
        return default
    const = value.const
    if isinstance(const, str):
        return _AXIS_NAMES.get(const, UNKNOWN)
    if isinstance(const, bool):
        return UNKNOWN
    if isinstance(const, int) or const is None:
        return const
    if value.items is not None and all(isinstance(i.const, int) for i in value.items):
        return tuple(i.const for i in value.items)
    return UNKNOWN


def reduce_over(
    host: Host, site: CallSite, data: Value, extra: Taints, axis: Value | None, default: Any, what: str
) -> Value:
    """`data` reduced along `axis` (None: over every axis). Crosses rows when that axis is the batch's
    rows, or may be; otherwise the result is row-local and keeps the remaining axes."""
    taints = data.total.join(extra)
    if not data.total.has(Kind.BATCH):
        return Value(base=taints)
    chosen = _axis_const(axis, default)
    axes = axes_of(data) or DEFAULT_AXES
    if chosen is None:
        return Value(base=cross_row(host, taints, site, what))
    if isinstance(chosen, int):
        role = axis_role(axes, chosen)
        if role == OTHER:
            return Value(base=taints, axes=drop_axis(axes, chosen))
        if role == ROWS:
            return Value(base=cross_row(host, taints, site, what))
        return Value(base=cross_row(host, taints, site, f"{what} (axis={chosen}, which may be the rows)"))
    if isinstance(chosen, tuple):
        roles = [axis_role(axes, a) for a in chosen]
        if all(r == OTHER for r in roles):
            return Value(base=taints)
        return Value(base=cross_row(host, taints, site, what))
    return Value(base=cross_row(host, taints, site, f"{what} (axis not known, assumed to include the rows)"))


def function_reduction(host: Host, qualname: str, site: CallSite) -> Value | None:
    """A library function from `lib.AXIS_FUNCTIONS` (numpy, scipy reductions with an axis argument)."""
    spec = lib.AXIS_FUNCTIONS.get(qualname)
    if spec is None or not site.args:
        return None
    position, default = spec
    axis = site.arg(position if position is not None else 10_000, "axis")
    extra = args_total(site, skip_positions=(0,), skip_keywords=frozenset({"axis"}))
    name = qualname.rsplit(".", 1)[-1]
    return reduce_over(host, site, site.args[0], extra, axis, default, f"{name}()")


def method_reduction(host: Host, receiver: Value, name: str, site: CallSite) -> Value | None:
    """A method from `lib.METHOD_AXIS` (`.mean(axis=...)`, `.rank()`, `.cumsum()`...) on batch data."""
    spec = lib.METHOD_AXIS.get(name)
    if spec is None or not receiver.total.has(Kind.BATCH):
        return None
    position, default = spec
    if default == lib.LIBRARY_DEFAULT:
        # pandas reduces down the rows (axis 0) by default; numpy over everything
        made_by_numpy = receiver.axes is not None and not _pandas_object(receiver)
        default = None if made_by_numpy else 0
    axis = site.arg(position, "axis")
    extra = args_total(site, skip_positions=(position,), skip_keywords=frozenset({"axis"}))
    return reduce_over(host, site, receiver, extra, axis, default, f"{name}()")


def _pandas_object(value: Value) -> bool:
    return isinstance(value.ref, LibRef) and value.ref.qualname.startswith("pandas.")


def stacked(qualname: str, site: CallSite) -> Value | None:
    """Arrays built from a list of arrays, with the axes the stacking gives them."""
    first = site.arg(0)
    if first is None or qualname not in lib.STACKING_FUNCTIONS:
        return None
    base = args_total(site)
    if not base.has(Kind.BATCH):
        return None
    parts = axes_of(first.element()) if first.is_list else None
    if qualname in {"numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray"}:
        axes = axes_of(first) if first.is_list else first.axes
        return Value(base=base, axes=axes)
    if parts is None:
        return Value(base=base)
    one_d = parts == (ROWS,)
    known = MORE not in parts
    if qualname == "numpy.stack":
        k = _axis_const(site.arg(1, "axis"), 0)
        return Value(base=base, axes=_insert(parts, k))
    if qualname in {"numpy.vstack", "numpy.row_stack"}:
        if one_d:
            return Value(base=base, axes=(OTHER, ROWS))
        return Value(base=base, axes=parts if known and parts[0] == ROWS else None)
    if qualname == "numpy.column_stack":
        return Value(base=base, axes=(ROWS, OTHER) if known and len(parts) <= 2 else DEFAULT_AXES)
    if qualname == "numpy.hstack":
        return Value(base=base, axes=parts if known else None)
    if qualname == "numpy.concatenate":
        k = _axis_const(site.arg(1, "axis"), 0)
        return Value(base=base, axes=parts if k in (0, 1, -1) and known else None)
    return Value(base=base)


def _insert(axes: Axes, k: Any) -> Axes | None:
    if not isinstance(k, int):
        return None
    if MORE in axes:
        cut = axes.index(MORE)
        if 0 <= k <= cut:
            return (*axes[:k], OTHER, *axes[k:])
        if k == -1:
            return (*axes, OTHER)
        return None
    position = k if k >= 0 else len(axes) + 1 + k
    if not 0 <= position <= len(axes):
        return None
    return (*axes[:position], OTHER, *axes[position:])


def transposed(value: Value) -> Value:
    """`x.T`, `np.transpose(x)`: the axes reversed when all of them are known."""
    axes = axes_of(value)
    new = tuple(reversed(axes)) if axes is not None and MORE not in axes else None
    return Value(base=value.total, axes=new)


def elementwise(site: CallSite) -> Axes | None:
    """The axes of an element-wise function's result: those of its batch argument, when one has them."""
    found: Axes | None = None
    for v in [*site.args, *site.kwargs.values()]:
        if not v.total.has(Kind.BATCH):
            continue
        axes = axes_of(v)
        if axes is None or (found is not None and axes != found):
            return None
        found = axes
    return found


def indexed(container: Value, parts: Sequence[tuple[str, Value | None]]) -> tuple[Axes | None, bool]:
    """Axes after `x[a, b, ...]` and whether a single batch row was picked. `parts` gives each index's
    kind: "slice", "int", "none" (np.newaxis), "array" (a list, mask or index array), "ellipsis"."""
    axes = axes_of(container)
    if axes is None or MORE in axes and len(parts) > axes.index(MORE):
        return None, False
    out: list[str] = []
    picked_row = False
    position = 0
    for kind, _ in parts:
        if kind == "ellipsis":
            return None, picked_row
        if kind == "none":
            out.append(OTHER)
            continue
        if position >= len(axes):
            return None, picked_row
        role = axes[position]
        if kind == "int":
            picked_row = picked_row or role == ROWS
        else:
            out.append(role)
        position += 1
    out.extend(axes[position:])
    return (tuple(out) or None), picked_row


def picked(container: Value, axes: Axes | None, picked_row: bool, key_taints: Taints) -> Value:
    taints = container.total.join(key_taints)
    if picked_row:
        taints = row_of(taints)
    return Value(base=taints, axes=axes if axes and ROWS in axes else None)
