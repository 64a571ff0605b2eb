"""`groupby`: a partition of the rows, then either a lookup by each row's own key or an aggregate of other rows.

`df.groupby(k)` is not itself a statistic. What is done with the groups decides:

* an aggregate of each group (`size`, `count`, `mean`, `rank`, `cumcount`, `first`, `ngroup`,
  `transform("mean")`, `agg(...)`) gives each row a value computed from other rows of its group: it crosses
  rows, as does the number of groups or a group's size;
* iterating over the groups (`for key, g in df.groupby(k)`, `.groups.items()`, `.indices`, `get_group`) only
  partitions the rows: each group's key is every one of its rows' own key, and its rows are rows of the batch,
  so a value computed per row from them (a lookup of the key in a table fitted on training rows, written
  back to the group's rows) stays row-local, while `len(g)` or `g.x.mean()` still cross rows;
* `transform` or `apply` with a function of the file runs that function on each group: it crosses rows when
  the function does (an aggregate, the group's length, one row's value broadcast to the group).

A groupby object is a `Value` whose ref is `GROUPBY`, whose fields hold what it groups (`DATA`) and by what
(`KEY`), and whose element (what iterating yields) is a `(key, group)` pair. Its base is a cross-row statistic,
so using the object as a whole in any way the engine does not know is taken to cross rows.
"""

from __future__ import annotations

from orchestrator.compliance import library as lib
from orchestrator.compliance.dataflow.core import CallSite, Effect, Host
from orchestrator.compliance.dataflow.ops import args_total, cross_row
from orchestrator.compliance.values import (
    BATCH_KINDS,
    CLEAN,
    FuncRef,
    Kind,
    LibRef,
    Taints,
    Value,
    extend_path,
    lift_rows,
    row_of,
)

GROUPBY = "<groupby>"
GROUPS = "<groups>"
DATA = "<data>"
KEY = "<key>"
ROWS_OF = "<rows>"

#: groupby methods that hand out the partition itself
_PARTITION_METHODS = frozenset({"get_group", "__iter__"})
#: groupby methods that run a function on each group (the function decides)
_PER_GROUP = frozenset({"transform", "apply"})


def is_groupby(value: Value) -> bool:
    ref = value.ref
    return ref is not None and ref.__class__ is LibRef and ref.qualname == GROUPBY


def is_groups(value: Value) -> bool:
    ref = value.ref
    return ref is not None and ref.__class__ is LibRef and ref.qualname == GROUPS


def make(host: Host, data: Value, key: Value, site: CallSite) -> Value:
    """The groupby object of `data` grouped by `key`. A group's key is one value, each of its rows' own
    (`Kind.BATCH_ROW`); its rows are rows of the batch (`Kind.BATCH`)."""
    group = Value(base=data.total.join(key.total))
    key = Value(base=row_of(key.total))
    whole = cross_row(host, group.total, site, "groupby(): the groups of the batch taken as a whole")
    return Value(
        base=whole,
        elem=Value(items=(key, group)),
        fields=((DATA, group), (KEY, key)),
        ref=LibRef(GROUPBY, instance=True),
    )


def groupby(host: Host, receiver: Value, site: CallSite) -> Value:
    """`receiver.groupby(by, level=...)`: rows keyed by `by` (column names of the receiver, arrays, a
    function), or by the receiver's index."""
    by = site.arg(0, "by")
    names_columns = (
        by is None
        or isinstance(by.const, str)
        or (by.items is not None and all(isinstance(i.const, str) for i in by.items))
    )
    key_taints = args_total(site)
    if "level" in site.kwargs:
        # the index labels: positions in the values are not part of them
        key_taints = key_taints.join(receiver.total.only(lambda k: k is not Kind.BATCH_SIZE))
    elif names_columns:
        key_taints = key_taints.join(receiver.total)
    return make(host, receiver, Value(base=key_taints), site)


def _with_data(gb: Value, data: Value) -> Value:
    key = gb.field(KEY) or CLEAN
    group = Value(base=data.total.join(lift_rows(key.total)))
    return Value(base=gb.base, elem=Value(items=(key, group)), fields=((DATA, group), (KEY, key)), ref=gb.ref)


def select(gb: Value, key: Value) -> Value:
    """`gb["col"]`, `gb[["a", "b"]]`, `gb.col`: the same groups over a selection of the columns."""
    data = gb.field(DATA) or CLEAN
    return _with_data(gb, Value(base=data.total.join(key.total)))


def attribute(host: Host, gb: Value, attr: str, site: CallSite) -> Value:
    if attr in {"groups", "indices"}:
        key = gb.field(KEY) or CLEAN
        data = gb.field(DATA) or CLEAN
        step = host.step(site, f".{attr}: the row labels of each group", kind=Kind.BATCH)
        rows = Value(base=data.total.convert(Kind.BATCH, Kind.BATCH_SIZE, step))
        return Value(
            base=gb.base, elem=key, fields=((KEY, key), (ROWS_OF, rows)), ref=LibRef(GROUPS, instance=True)
        )
    if attr in {"ngroups", "ngroup", "size"} or attr.startswith("_"):
        data = gb.field(DATA) or CLEAN
        return Value(base=cross_row(host, data.total, site, f"groupby().{attr}"))
    return select(gb, CLEAN)  # a column by attribute


def groups_method(gb_groups: Value, name: str, site: CallSite) -> Effect:
    key = gb_groups.field(KEY) or CLEAN
    rows = gb_groups.field(ROWS_OF) or CLEAN
    if name == "items":
        return Effect(Value(elem=Value(items=(key, rows))))
    if name == "keys":
        return Effect(Value(elem=key))
    if name == "values":
        return Effect(Value(elem=rows))
    if name == "get":
        return Effect(Value(base=rows.total.join((site.arg(1, "default") or CLEAN).total)))
    return Effect(Value(base=gb_groups.total.join(args_total(site))))


def method(host: Host, gb: Value, name: str, site: CallSite) -> Effect:
    """A method called on a groupby object."""
    data = gb.field(DATA) or CLEAN
    if name in _PARTITION_METHODS:
        return Effect(data if name == "get_group" else Value(elem=gb.elem))
    func = site.arg(0, "func")
    if name in _PER_GROUP and func is not None and isinstance(func.ref, FuncRef):
        out = host.invoke(func, [data, *site.args[1:]], site)
        return Effect(Value(base=_broadcast(host, out.total, site, name)))
    if name in {"transform", "apply"} and func is not None and _elementwise(func):
        return Effect(Value(base=data.total.join(args_total(site))))
    what = f"groupby().{name}({_describe(func)})" if func is not None else f"groupby().{name}()"
    # the groups' rows and keys (not the groupby object's own summary) say what the aggregate combines
    parts = data.total.join((gb.field(KEY) or CLEAN).total).join(args_total(site))
    return Effect(Value(base=cross_row(host, lift_rows(parts), site, what)))


def _elementwise(func: Value) -> bool:
    return isinstance(func.ref, LibRef) and func.ref.qualname in lib.ELEMENTWISE_FUNCTIONS


def _describe(func: Value) -> str:
    if isinstance(func.const, str):
        return repr(func.const)
    if isinstance(func.ref, LibRef):
        return func.ref.qualname
    return "..."


def _broadcast(host: Host, taints: Taints, site: CallSite, name: str) -> Taints:
    """What a function run on each group returned, given back to the group's rows: a group's size or one
    of its rows (`len(g)`, `g.iloc[0]`) becomes every row's value, so it crosses rows."""
    for kind, note in (
        (Kind.BATCH_SIZE, "the size of each group"),
        (Kind.BATCH_ROW, "one row's value given to its whole group"),
        (Kind.BATCH_LEVELS, "category levels of each group"),
    ):
        path = taints.get(kind)
        if path is None:
            continue
        step = host.step(site, f"groupby().{name}(): {note}, across the rows of the batch", kind=kind)
        rest = taints.without(kind)
        taints = rest.join(Taints(((Kind.BATCH_STAT, extend_path(path, step, Kind.BATCH_STAT)),)))
    return taints


def length(host: Host, value: Value, site: CallSite) -> Value:
    """`len(gb)`, `len(gb.groups)`: the number of groups, a statistic of the batch."""
    taints = value.total
    if taints.has(*BATCH_KINDS):
        step = host.step(site, "len(): the number of groups, across the rows of the batch")
        path = next((p for k, p in taints.entries if k in BATCH_KINDS), ())
        taints = taints.only(lambda k: k not in BATCH_KINDS).join(
            Taints(((Kind.BATCH_STAT, extend_path(path, step, Kind.BATCH_STAT)),))
        )
    return Value(base=taints)
