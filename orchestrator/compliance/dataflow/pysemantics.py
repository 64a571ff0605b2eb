"""What calls into Python itself do to taint: builtins (`len`, `range`, `sorted`, `zip`, `map` ...), dict and
list methods on values whose keys or items are known, and `argparse` options whose defaults name files."""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.compliance.axes import axes_of
from orchestrator.compliance.dataflow import groups
from orchestrator.compliance.dataflow.core import CallSite, Effect, Host
from orchestrator.compliance.dataflow.folding import drop_size
from orchestrator.compliance.dataflow.ops import args_total, cross_row
from orchestrator.compliance.values import (
    BATCH_KINDS,
    CLEAN,
    COLUMNS,
    NO_TAINT,
    NONE,
    OTHER,
    UNKNOWN,
    Kind,
    Taints,
    Value,
    join,
    join_all,
    key_const,
    lift_rows,
)

MAX_ITEMS = 64


@dataclass(frozen=True)
class SettingsFile:
    """An opened JSON settings file of the layout (`open("task.json")`), until `json.load` parses it."""

    path: str


def _size_of(host: Host, value: Value, site: CallSite) -> Value:
    """`len(value)`: the number of rows of batch data is a statistic of the batch (a shape where only used
    as one); the length of a list of batch columns is the number of members; the evaluation file's number
    of rows says nothing of its labels."""
    taints = value.total.only(lambda k: k is not Kind.EVAL_LABEL)
    if value.is_list:
        if value.base.has(Kind.BATCH):
            step = host.step(site, "len(): the number of rows in the batch", kind=Kind.BATCH)
            return Value(base=value.base.convert(Kind.BATCH, Kind.BATCH_SIZE, step))
        return Value(base=value.base.only(lambda k: k is not Kind.EVAL_LABEL))
    if groups.is_groupby(value) or groups.is_groups(value):
        return groups.length(host, value, site)
    axes = axes_of(value)
    if axes is not None and axes[:1] == (OTHER,):
        return Value(base=taints.only(lambda k: k not in BATCH_KINDS))  # the number of stacked members
    if taints.has(Kind.BATCH):
        step = host.step(site, "len(): the number of rows in the batch", kind=Kind.BATCH)
        return Value(base=taints.convert(Kind.BATCH, Kind.BATCH_SIZE, step))
    return Value(base=taints)


def call_builtin(host: Host, qualname: str, site: CallSite) -> Value | None:
    name = qualname.removeprefix("builtins.")
    first = site.arg(0)
    if name == "len" and first is not None:
        if first.items is not None:
            return Value(base=first.total.only(lambda k: k is not Kind.EVAL_LABEL), const=len(first.items))
        return _size_of(host, first, site)
    if (
        name == "open"
        and first is not None
        and isinstance(first.const, str)
        and host.layout.json_content(first.const) is not UNKNOWN
    ):
        return Value(const=SettingsFile(first.const))
    if name == "range":
        consts = [v.const for v in site.args]
        if consts and all(isinstance(c, int) for c in consts):
            r = range(*consts)
            if len(r) <= MAX_ITEMS:
                return Value(items=tuple(Value(const=i) for i in r))
        return Value(elem=CLEAN)
    if name in {"list", "tuple", "set", "frozenset"}:
        if first is None:
            return Value(items=())
        if first.items is not None or first.elem is not None:
            return Value(base=first.base, items=first.items, elem=first.elem)
        if first.fields is not None and first.ref is None:
            return Value(items=tuple(Value(const=k) for k, _ in first.fields), base=first.base)
        return Value(base=first.total)
    if name == "dict":
        fields = tuple(site.kwargs.items())
        if first is not None and first.fields is not None:
            return Value(base=first.base, fields=(first.fields or ()) + fields)
        return Value(base=first.total if first is not None else Taints(), fields=fields)
    if name in {"zip", "enumerate"}:
        if site.args and all(a.items is not None for a in site.args):
            if name == "enumerate":
                listed = first.items if first is not None and first.items is not None else ()
                items = tuple(Value(items=(Value(const=i), v)) for i, v in enumerate(listed))
            else:
                items = tuple(Value(items=t) for t in zip(*(a.items or () for a in site.args), strict=False))
            return Value(items=items)
        parts = [a.element() for a in site.args]
        if name == "enumerate":
            parts = [CLEAN, *parts]
        # the base keeps what is being iterated over (the batch's rows) visible to the loop
        return Value(base=args_total(site), elem=Value(items=tuple(parts)))
    if name in {"map", "filter"} and len(site.args) >= 2:
        iterable = site.args[1]
        if name == "filter":
            return Value(base=iterable.total)
        out = host.invoke(site.args[0], [iterable.element()], site)
        return Value(elem=out, base=lift_rows(out.total) if iterable.total.has(Kind.BATCH) else Taints())
    if name in {
        "isinstance",
        "issubclass",
        "hasattr",
        "callable",
        "print",
        "id",
        "type",
        "repr",
        "hash",
        "globals",
        "locals",
        "vars",
        "dir",
    }:
        return CLEAN
    if name == "getattr":
        return None  # resolved by the interpreter, which knows attributes
    if name in {"iter", "reversed"} and first is not None:
        return first
    if name == "next" and first is not None:
        return first.element()
    if name in {"sum", "min", "max", "any", "all"} and len(site.args) == 1 and first is not None:
        if first.is_list and not first.base.has(Kind.BATCH):
            # over the members of a list (`sum(member_predictions)`): element-wise for arrays
            return Value(base=first.total, axes=axes_of(first.element()))
        if first.total.has(Kind.BATCH):
            return Value(base=cross_row(host, first.total, site, f"{name}()"))
        return Value(base=first.total)
    if name == "sorted" and first is not None:
        if first.items is not None and all(isinstance(i.const, str | int | float) for i in first.items):
            try:
                return Value(items=tuple(sorted(first.items, key=lambda i: i.const)))
            except TypeError:
                pass
        if first.total.has(Kind.BATCH):
            return Value(base=cross_row(host, first.total, site, "sorted()"))
        return Value(base=first.total, elem=first.element())
    return None


def container_method(host: Host, receiver: Value, name: str, site: CallSite) -> Effect | None:
    """dict and list methods on values whose keys or items are known."""
    first = site.arg(0)
    if receiver.fields is not None and receiver.ref is None:
        key = key_const(first) if first is not None else UNKNOWN
        if name == "get" and key is not UNKNOWN:
            found = receiver.field(key)
            default = site.arg(1, "default") or NONE
            return Effect(found if found is not None else default.with_base(receiver.base))
        if name == "get" and first is not None:
            # a key not known: any of the values, or the default. The key only selects: as with `d[key]`,
            # the batch's size used as a key is not a value (a cache keyed by `len(df)`)
            default = site.arg(1, "default") or NONE
            values = [v for k, v in receiver.fields if k != COLUMNS]
            found = join(join_all(values), default) if values else default
            return Effect(found.with_base(receiver.base.join(drop_size(first, False))))
        if name in {"items", "keys", "values"}:
            if name == "keys":
                items = tuple(Value(const=k) for k, _ in receiver.fields)
            elif name == "values":
                items = tuple(v for _, v in receiver.fields)
            else:
                items = tuple(Value(items=(Value(const=k), v)) for k, v in receiver.fields)
            return Effect(Value(items=items, base=receiver.base))
        if name == "copy":
            return Effect(receiver)
        if name == "pop" and key is not UNKNOWN:
            found = receiver.field(key)
            return Effect(found if found is not None else Value(base=receiver.base))
        if name == "update" and first is not None:
            updated = receiver
            for k, v in first.fields or ():
                updated = updated.with_field(k, v)
            for k, v in site.kwargs.items():
                updated = updated.with_field(k, v)
            if first.fields is None:
                updated = updated.with_base(first.total)
            return Effect(NONE, receiver=updated)
        if name == "setdefault" and key is not UNKNOWN:
            found = receiver.field(key)
            if found is not None:
                return Effect(found)
            default = site.arg(1) or NONE
            return Effect(default, receiver=receiver.with_field(key, default))
    if name == "clear" and not site.args and receiver.ref is None:
        if receiver.fields is not None:
            return Effect(NONE, receiver=Value(fields=()))
        if receiver.items is not None or receiver.elem is not None:
            return Effect(NONE, receiver=Value(items=()))
    if name in {"tolist", "to_list", "copy"} and receiver.items is not None and not site.args:
        return Effect(receiver)
    if name in {"append", "appendleft", "extend"} and first is not None and receiver.ref is None:
        added = first if name != "extend" else first.element()
        if receiver.items is not None and (name != "extend" or first.items is not None):
            more = (first,) if name != "extend" else (first.items or ())
            grown = Value(
                base=receiver.base.join(first.base if name == "extend" else NO_TAINT),
                items=(*receiver.items, *more),
            )
            return Effect(NONE, receiver=grown)
        if receiver.items is not None or receiver.elem is not None:
            return Effect(
                NONE, receiver=Value(base=receiver.base, elem=join_all([receiver.element(), added]))
            )
        # not known to be a list: `frame.append(other)` returns the longer frame (old pandas)
        both = Value(base=receiver.total.join(first.total))
        return Effect(both, receiver=receiver.with_base(first.total))
    return None


def argparse_method(receiver: Value, name: str, site: CallSite) -> Effect | None:
    """`add_argument("--eval-path", default=...)` and `parse_args()`: keep each option's default apart."""
    if name == "add_argument":
        flags = [a.const for a in site.args if isinstance(a.const, str)]
        dest = site.kwargs["dest"].const if "dest" in site.kwargs else None
        if not isinstance(dest, str):
            longs = [f for f in flags if f.startswith("--")]
            chosen = longs[0] if longs else (flags[0] if flags else "")
            dest = chosen.lstrip("-").replace("-", "_")
        default = site.kwargs.get("default", NONE)
        return Effect(CLEAN, receiver=receiver.with_field(dest, default))
    if name in {"parse_args", "parse_known_args"}:
        namespace = Value(base=receiver.base, fields=receiver.fields or ())
        if name == "parse_known_args":
            return Effect(Value(items=(namespace, CLEAN)))
        return Effect(namespace)
    return None
