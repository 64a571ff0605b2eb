"""Frames and their columns: the data files as frames whose columns are known, selecting and dropping
columns, stacking frames, merging them, and JSON settings files.

A frame read from one of the task's data files has the layout's columns: the features and the label. Its
`COLUMNS` field lists them, and that is what lets a selection of feature columns (`ev[FEATURES]`,
`ev.drop(columns=[TARGET])`, `ev["DepTime"]`) leave the evaluation file's labels behind (`Kind.EVAL_LABEL`
removed, `Kind.EVAL` kept), while `ev[TARGET]` or the whole frame keeps them. The batch's columns are known
too, and never include the label: reading the label column from it raises `KeyError` at run time, so a path
that does is not a path the scorer's call can take (`Infeasible`).

The label is removed only from a frame whose columns are known: a store under a column name the engine
cannot read (`X[name] = ...`) forgets them, because it may have written label-derived values under a
feature's name.
"""

from __future__ import annotations

from typing import Any

from orchestrator.compliance.axes import axes_of
from orchestrator.compliance.dataflow.core import CallSite, Host
from orchestrator.compliance.dataflow.ops import args_total, cross_row
from orchestrator.compliance.dataflow.scopes import Infeasible
from orchestrator.compliance.values import (
    BATCH_KINDS,
    COLUMNS,
    DEFAULT_AXES,
    NONE,
    OTHER,
    ROWS,
    UNKNOWN,
    Kind,
    Taints,
    Value,
    const_value,
    join_all,
)

#: functions that read a table from a file path
READERS = frozenset(
    {"pandas.read_csv", "pandas.read_table", "pandas.read_parquet", "pandas.read_feather",
     "pandas.read_pickle", "pandas.read_json", "pandas.read_excel", "polars.read_csv", "polars.scan_csv",
     "polars.read_parquet"}
)  # fmt: skip


def known_columns(frame: Value) -> set[Any] | None:
    columns = frame.field(COLUMNS)
    if columns is None or columns.items is None:
        return None
    names = {c.const for c in columns.items}
    return None if UNKNOWN in names else names


def _without_label(taints: Taints) -> Taints:
    return taints.only(lambda k: k is not Kind.EVAL_LABEL)


def _names(value: Value | None) -> list[str] | None:
    """Column names given as a string or a list of strings, when all are known."""
    if value is None:
        return None
    if isinstance(value.const, str):
        return [value.const]
    if value.items is not None and all(isinstance(i.const, str) for i in value.items):
        return [i.const for i in value.items]
    return None


def _column_axes(frame: Value) -> tuple[str, ...] | None:
    axes = axes_of(frame)
    return (ROWS,) if axes is not None and axes[:1] == (ROWS,) else None


def read_frame(host: Host, site: CallSite) -> Value | None:
    """A data file of the layout read into a frame: its columns are the layout's."""
    path = site.arg(0, "filepath_or_buffer")
    if path is None:
        path = site.arg(0, "source")
    if path is None or not isinstance(path.const, str) or not host.layout.is_data_path(path.const):
        return None
    names = list(host.layout.data_columns)
    chosen = _names(site.kwargs.get("usecols")) or _names(site.kwargs.get("columns"))
    taints = args_total(site)
    if chosen is not None:
        names = chosen
        target = host.layout.target
        if target is not None and target not in names:
            taints = _without_label(taints)
    columns = Value(items=tuple(Value(const=n) for n in names))
    return Value(base=taints, fields=((COLUMNS, columns),))


def column(host: Host, frame: Value, key: Value) -> Value | None:
    """`frame[name]` or `frame[[names]]`; None when the key is not a known name or list of names."""
    names = _names(key)
    if names is None:
        return None
    target = host.layout.target
    known = known_columns(frame)
    missing_label = (
        known is not None and target is not None and target in names and target not in known
        and frame.field(target) is None
    )  # fmt: skip
    if missing_label:
        raise Infeasible(f"the frame has no column {target!r}")
    label_free = (
        known is not None and target is not None and target not in names and all(n in known for n in names)
    )
    base = _without_label(frame.base) if label_free else frame.base
    if isinstance(key.const, str):
        found = frame.field(key.const)
        if found is not None:
            return found
        return Value(base=base.join(key.total), axes=_column_axes(frame))
    fields = [(n, f) for n in names if (f := frame.field(n)) is not None]
    if known is not None:
        fields.append((COLUMNS, Value(items=tuple(Value(const=n) for n in names))))
    return Value(base=base.join(key.total), fields=tuple(fields))


def drop(host: Host, frame: Value, site: CallSite) -> Value:
    """`frame.drop(columns=...)`, `frame.drop(labels, axis=1)`: the frame without those columns. Rows
    dropped by label keep the frame's columns as they are."""
    axis = site.kwargs.get("axis", NONE).const
    columns = site.kwargs.get("columns")
    if columns is None and axis in (1, "columns"):
        columns = site.arg(0, "labels")
    extra = args_total(site).only(lambda k: k not in BATCH_KINDS or k is Kind.BATCH_STAT)
    if columns is None:
        return Value(base=frame.base.join(extra), fields=frame.fields, axes=frame.axes)
    names = _names(columns)
    if names is None:
        # unknown columns dropped: the rest is some of what was there
        fields = tuple((k, v) for k, v in frame.fields or () if k != COLUMNS)
        return Value(base=frame.base.join(extra), fields=fields or None)
    kept = frame.without_fields(names)
    known = known_columns(frame)
    base = frame.base
    if known is not None:
        target = host.layout.target
        if target is not None and target in names:
            base = _without_label(base)
        remaining = tuple(Value(const=c) for c in _ordered(frame) if c not in names)
        kept = kept.with_field(COLUMNS, Value(items=remaining))
    return Value(base=base.join(extra), fields=kept.fields, axes=frame.axes)


def _ordered(frame: Value) -> list[Any]:
    columns = frame.field(COLUMNS)
    return [c.const for c in columns.items] if columns is not None and columns.items is not None else []


def concat(host: Host, site: CallSite) -> Value | None:
    """`pd.concat(frames)`: stacked rows keep what the frames have in common (their columns, a label column
    of each); side by side (`axis=1`) the columns are put together."""
    objs = site.arg(0, "objs")
    if objs is None or not objs.is_list:
        return None
    extra = args_total(site, skip_positions=(0,), skip_keywords=frozenset({"objs"}))
    axis = site.kwargs.get("axis", NONE).const
    parts = list(objs.items) if objs.items is not None else [objs.element()]
    if axis in (None, 0, "index", "rows"):
        joined = join_all(parts).with_base(objs.base.join(extra))
        if joined.ref is not None or joined.items is not None or joined.elem is not None:
            return Value(base=joined.total)
        return joined
    if axis in (1, "columns"):
        taints = Taints.union(p.total for p in parts).join(objs.base).join(extra)
        return Value(base=taints, axes=(ROWS, OTHER) if taints.has(Kind.BATCH) else None)
    return None


def merge(host: Host, left: Value, right: Value, site: CallSite, on_index: bool) -> Value:
    """A merge of two frames: a lookup in a table when one side is not from the batch; a self-join of the
    batch (rows matched with other rows of the batch) crosses rows, unless the rows are matched by index."""
    taints = left.total.join(right.total).join(args_total(site, skip_positions=(0,)))
    both = left.total.has(Kind.BATCH, Kind.BATCH_ROW) and right.total.has(Kind.BATCH, Kind.BATCH_ROW)
    if both and not on_index:
        return Value(base=cross_row(host, taints, site, "merge of the batch with itself"))
    return Value(base=taints, axes=DEFAULT_AXES if taints.has(Kind.BATCH) else None)


def on_index(name: str, site: CallSite) -> bool:
    """Whether a merge or join matches rows by their index labels (not by key columns)."""
    if name == "join":
        return "on" not in site.kwargs
    return all(site.kwargs.get(k, NONE).const is True for k in ("left_index", "right_index"))


def constant_tree(obj: Any) -> Value:
    """A parsed JSON document as a value: dicts with known keys, lists with known items."""
    if isinstance(obj, dict):
        return Value(fields=tuple((k, constant_tree(v)) for k, v in obj.items()))
    if isinstance(obj, list):
        return Value(items=tuple(constant_tree(v) for v in obj))
    return const_value(obj)
