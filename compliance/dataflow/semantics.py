"""What calls into libraries do to taint: pandas, numpy, scikit-learn, xgboost, the standard library.

A call the tables in `compliance.library` do not mention returns the union of everything it was given
(receiver and arguments): sound for data flow, and right for the row-wise work that is most of feature
engineering. The cases below refine that: folding of paths, training and prediction sinks, cross-row
operations turning batch data into batch statistics, shape arguments that carry no values, callables passed
to `apply`/`map`/`pipe`, and containers whose items stay apart.
"""

from __future__ import annotations

from typing import Any

from compliance import library as lib
from compliance.dataflow.core import CallSite, Effect, Host, Role
from compliance.strings import fold_function, fold_method
from compliance.values import (
    CLEAN,
    NO_TAINT,
    NONE,
    UNKNOWN,
    Kind,
    LibRef,
    Taints,
    Value,
    extend_path,
    join_all,
    lift_rows,
    row_of,
    taint_value,
)

#: most items a folded listing or `range` keeps before collapsing into "some element"
MAX_ITEMS = 64
BATCHY = (Kind.BATCH, Kind.BATCH_STAT, Kind.BATCH_SIZE)


# --- helpers ------------------------------------------------------------------------------------------


def _drop(value: Value | None, *kinds: Kind) -> Taints:
    if value is None:
        return Taints()
    return value.total.only(lambda k: k not in kinds)


def _role_values(site: CallSite, roles: lib.Roles) -> list[tuple[Value, Any, str]]:
    """(value, node, label) of each argument that plays the role."""
    out: list[tuple[Value, Any, str]] = []
    for i, (v, n) in enumerate(zip(site.args, site.arg_nodes, strict=False)):
        if roles.all_positional or i in roles.positions:
            out.append((v, n, f"argument {i + 1}"))
    for k, v in site.kwargs.items():
        if k in roles.keywords:
            out.append((v, site.kwarg_nodes.get(k), k))
    if site.star is not None and (roles.all_positional or roles.positions):
        out.append((site.star, None, "*args"))
    if site.dstar is not None and roles.keywords:
        out.append((site.dstar, None, "**kwargs"))
    return out


def _is_row_axis(site: CallSite, method: str | None = None) -> bool:
    """`axis=1` / `axis="columns"`: the operation works within each row."""
    axis = site.kwargs.get("axis")
    if axis is not None:
        return axis.const in (1, "columns")
    if method in {"mean", "median", "std", "var", "sum", "min", "max", "prod", "count", "nunique", "apply"}:
        first = site.arg(0)
        return first is not None and first.const == 1 and method != "apply"
    return False


def _stat(host: Host, taints: Taints, site: CallSite, what: str) -> Taints:
    """Batch data through a cross-row operation becomes a batch statistic; the step says which operation.
    Values of one row (BATCH_ROW) stay what they are: an aggregate within a row is row-wise work."""
    if not taints.has(Kind.BATCH):
        return taints
    step = host.step(site, f"{what} across the rows of the batch", kind=Kind.BATCH)
    return taints.convert(Kind.BATCH, Kind.BATCH_STAT, step)


def _batch_levels(host: Host, taints: Taints, site: CallSite, what: str) -> Taints:
    """Mark batch data as a categorical whose levels come from the batch (see Kind.BATCH_LEVELS)."""
    path = taints.get(Kind.BATCH)
    if path is None:
        return taints
    step = host.step(site, f"{what}: category levels taken from the batch", kind=Kind.BATCH)
    return taints.join(Taints(((Kind.BATCH_LEVELS, extend_path(path, step)),)))


def _args_total(
    site: CallSite,
    skip_positions: tuple[int, ...] = (),
    skip_keywords: frozenset[str] = frozenset(),
    shape: lib.Roles | None = None,
) -> Taints:
    """Union of the arguments' taints; shape arguments and row labels give up the batch size."""
    out = Taints()
    for i, v in enumerate(site.args):
        if i in skip_positions:
            continue
        if shape is not None and (shape.all_positional or i in shape.positions):
            out = out.join(_drop(v, Kind.BATCH_SIZE))
        else:
            out = out.join(v.total)
    for k, v in site.kwargs.items():
        if k in skip_keywords:
            continue
        if k in lib.SHAPE_KEYWORDS or (shape is not None and k in shape.keywords):
            out = out.join(_drop(v, Kind.BATCH_SIZE))
        else:
            out = out.join(v.total)
    for extra in (site.star, site.dstar):
        if extra is not None:
            out = out.join(extra.total)
    return out


def _items_value(host: Host, consts: list[Any], site: CallSite, taints: Taints = NO_TAINT) -> Value:
    items = tuple(host.constant(c, site.node).with_base(taints) for c in consts[:MAX_ITEMS])
    if len(consts) > MAX_ITEMS:
        return Value(elem=join_all(items))
    return Value(items=items)


def _eval_listing(host: Host, site: CallSite, what: str) -> Value:
    """A listing whose folder or pattern is not known may include the evaluation file."""
    step = host.step(site, f"{what} over an unresolved path may include the evaluation file")
    return Value(elem=Value(base=Taints.of(Kind.EVAL, step)))


def _const_args(site: CallSite) -> tuple[list[Any], dict[str, Any]]:
    args = [v.const if v.items is None else tuple(i.const for i in v.items) for v in site.args]
    return args, {k: v.const for k, v in site.kwargs.items()}


def _folded(host: Host, const: Any, site: CallSite) -> Value:
    taints = _args_total(site).join(site.receiver.total if site.receiver is not None else Taints())
    if isinstance(const, tuple):
        return Value(items=tuple(host.constant(c, site.node) for c in const)).with_base(taints)
    return host.constant(const, site.node, taint_value(taints))


# --- library functions --------------------------------------------------------------------------------


def call_function(host: Host, qualname: str, site: CallSite) -> Value:
    """The value a call to the library function `qualname` returns."""
    consts, kwconsts = _const_args(site)
    folded = fold_function(qualname, consts, kwconsts)
    if folded is not UNKNOWN:
        return _folded(host, folded, site)
    if qualname in lib.GLOB_FUNCTIONS:
        pattern = site.arg(0, "pathname")
        if pattern is not None and isinstance(pattern.const, str):
            return _items_value(host, host.layout.glob(pattern.const), site, pattern.total)
        return _eval_listing(host, site, "glob")
    if qualname in lib.LISTDIR_FUNCTIONS:
        folder = site.arg(0, "path")
        if qualname == "os.listdir" and folder is not None and isinstance(folder.const, str):
            names = host.layout.listdir(folder.const)
            if names is not None:
                return _items_value(host, names, site, folder.total)
            return CLEAN.with_base(folder.total)
        return _eval_listing(host, site, qualname)
    if qualname.startswith("builtins."):
        builtin = _call_builtin(host, qualname, site)
        if builtin is not None:
            return builtin
    if qualname in lib.TRAIN_FUNCTIONS:
        trained = Taints()
        for value, node, label in _role_values(site, lib.TRAIN_FUNCTIONS[qualname]):
            host.hit(Role.TRAIN, value, node, site, f"{qualname} ({label})")
            trained = trained.join(_stat(host, value.total, site, f"training {qualname}"))
        return Value(base=trained, ref=LibRef(qualname, instance=True))
    pairwise = qualname in lib.ITERABLE_AGGREGATES and len(site.args) > 1  # max(a, b): row-wise
    cross_row = qualname in lib.CROSS_ROW_FUNCTIONS or qualname in lib.ITERABLE_AGGREGATES
    if cross_row and not pairwise and not _is_row_axis(site):
        name = qualname.rsplit(".", 1)[-1]
        return Value(base=_stat(host, _args_total(site), site, f"{name}()"))
    if qualname == "pandas.cut":
        bins = site.arg(1, "bins")
        if bins is not None and (isinstance(bins.const, int) or bins.total.has(*BATCHY)):
            return Value(base=_stat(host, _args_total(site), site, "cut() with bins from the data"))
    if qualname == "pandas.Categorical" and "categories" not in site.kwargs and len(site.args) < 2:
        return Value(base=_batch_levels(host, _args_total(site), site, "Categorical()"))
    if qualname in lib.SPLITTING_FUNCTIONS and site.args:
        # a list of chunks, each a slice of rows of the first argument (not one row each)
        chunk = Value(base=site.args[0].total)
        return Value(base=_args_total(site, shape=lib.SHAPE_ARGS.get(qualname)), elem=chunk)
    if qualname in {"copy.copy", "copy.deepcopy"} and site.args:
        return site.args[0]
    if (
        qualname in {"pandas.DataFrame", "pandas.Series"}
        and site.args
        and site.args[0].fields is not None
        and site.args[0].ref is None
    ):
        # a frame built from a dict keeps its columns apart
        first = site.args[0]
        return Value(base=first.base.join(_args_total(site, skip_positions=(0,))), fields=first.fields)
    shape = lib.SHAPE_ARGS.get(qualname)
    instance = qualname.rsplit(".", 1)[-1][:1].isupper()
    return Value(
        base=_args_total(site, shape=shape), ref=LibRef(qualname, instance=True) if instance else None
    )


def _call_builtin(host: Host, qualname: str, site: CallSite) -> Value | None:
    name = qualname.removeprefix("builtins.")
    first = site.arg(0)
    if name == "len" and first is not None:
        if first.items is not None:
            return Value(base=first.total, const=len(first.items))
        if first.total.has(Kind.BATCH):
            step = host.step(site, "len(): the number of rows in the batch", kind=Kind.BATCH)
            return Value(base=first.total.convert(Kind.BATCH, Kind.BATCH_SIZE, step))
        return Value(base=first.total)
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
        return Value(base=_args_total(site), elem=Value(items=tuple(parts)))
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
        if first.total.has(Kind.BATCH):
            return Value(base=_stat(host, first.total, site, f"{name}()"))
        return Value(base=first.total)
    if name == "sorted" and first is not None:
        if first.items is not None and all(isinstance(i.const, str | int | float) for i in first.items):
            try:
                return Value(items=tuple(sorted(first.items, key=lambda i: i.const)))
            except TypeError:
                pass
        if first.total.has(Kind.BATCH):
            return Value(base=_stat(host, first.total, site, "sorted()"))
        return Value(base=first.total, elem=first.element())
    return None


# --- methods ------------------------------------------------------------------------------------------


def call_method(host: Host, receiver: Value, name: str, site: CallSite) -> Effect:
    """The effect of `receiver.name(...)` where the receiver is not an object of the audited file."""
    if isinstance(receiver.const, str):
        folded = fold_method(receiver.const, name, *_const_args(site))
        if folded is not UNKNOWN:
            return Effect(_folded(host, folded, site))
        if name in lib.PATH_GLOB_METHODS and site.args and isinstance(site.args[0].const, str):
            pattern = receiver.const.rstrip("/") + "/" + site.args[0].const
            if name == "rglob":
                pattern = receiver.const.rstrip("/") + "/**/" + site.args[0].const
            return Effect(_items_value(host, host.layout.glob(pattern), site, receiver.total))
        if name in lib.PATH_LIST_METHODS:
            names = host.layout.listdir(receiver.const)
            if names is not None:
                folder = receiver.const.rstrip("/")
                return Effect(_items_value(host, [f"{folder}/{n}" for n in names], site, receiver.total))
    structured = _container_method(host, receiver, name, site)
    if structured is not None:
        return structured
    if (
        isinstance(receiver.ref, LibRef)
        and receiver.ref.instance
        and receiver.ref.qualname.endswith("ArgumentParser")
    ):
        parsed = _argparse(receiver, name, site)
        if parsed is not None:
            return parsed
    with_callable = _callable_method(host, receiver, name, site)
    if with_callable is not None:
        return with_callable
    if name in lib.TRAIN_METHODS:
        return _fit(host, receiver, name, site)
    if name in lib.PREDICT_METHODS:
        for value, node, label in _role_values(site, lib.PREDICT_ROLES):
            host.hit(Role.PREDICT, value, node, site, f"{name} ({label})")
        host.hit(Role.PREDICT, receiver, site.receiver_node, site, f"{name} (the model)")
        return Effect(Value(base=receiver.total.join(_args_total(site))))
    return Effect(*_data_method(host, receiver, name, site))


def _supervised(receiver: Value, site: CallSite) -> bool:
    """Whether a fit learns from labels: it is given a y, or the estimator is a model that always does.
    A label-free fit (a scaler, an encoder, a clustering) is not itself training on the data it sees; what
    it learned is followed instead, into whatever it transforms."""
    if len(site.args) >= 2 or "y" in site.kwargs or site.star is not None:
        return True
    ref = receiver.ref
    return isinstance(ref, LibRef) and any(m in ref.qualname for m in lib.SUPERVISED_ESTIMATORS)


def _fit(host: Host, receiver: Value, name: str, site: CallSite) -> Effect:
    trained = Taints()
    supervised = _supervised(receiver, site)
    for value, node, label in _role_values(site, lib.TRAIN_METHOD_ROLES):
        if supervised:
            host.hit(Role.TRAIN, value, node, site, f"{name} ({label})")
        trained = trained.join(_stat(host, value.total, site, f"{name}()"))
    fitted = receiver.with_base(trained)
    if name in {"fit", "partial_fit"}:
        return Effect(fitted, receiver=fitted)
    return Effect(Value(base=fitted.total), receiver=fitted)


def _data_method(host: Host, receiver: Value, name: str, site: CallSite) -> tuple[Value, Value | None]:
    """Methods of frames, series, arrays and other library objects: returns (result, new receiver)."""
    element_accessor = isinstance(receiver.ref, LibRef) and receiver.ref.qualname == "<element accessor>"
    base = receiver.total
    if not element_accessor and base.has(Kind.BATCH):
        if name in lib.CROSS_ROW_METHODS and not (name in lib.AXIS_AWARE and _is_row_axis(site, name)):
            base = _stat(host, base, site, f"{name}()")
        elif name == "astype" and _mentions_category(site):
            base = _batch_levels(host, base, site, "astype('category')")
        elif name == "fillna" and site.kwargs.get("method", CLEAN).const in lib.FILL_FROM_NEIGHBOURS:
            base = _stat(host, base, site, "fillna() from neighbouring rows")
    shape = lib.SHAPE_METHOD_ARGS.get(name)
    args = _args_total(site, shape=shape)
    if name == "assign":
        result = receiver
        for key, value in site.kwargs.items():
            if value.ref is not None and not isinstance(value.ref, LibRef):
                value = host.invoke(value, [receiver], site)
            result = result.with_field(key, value)
        return result, None
    if name in lib.FIX_LEVELS_METHODS and not _args_total(site).has(*BATCHY, Kind.BATCH_LEVELS):
        # levels set from outside the batch: codes no longer depend on it
        base = base.only(lambda k: k is not Kind.BATCH_LEVELS)
    converted = base is not receiver.total
    if name in lib.FRAME_PRESERVING and receiver.ref is None and not converted:
        # copies, renames and reorderings keep the columns written earlier apart
        result = Value(base=receiver.base.join(args), fields=receiver.fields)
    else:
        result = Value(base=base.join(args))
    inplace = site.kwargs.get("inplace")
    if inplace is not None and inplace.const is True:
        return NONE, result
    if name in lib.MUTATING_METHODS:
        # changed in place; the result is None for most, the changed object for some (`dict.setdefault`)
        return Value(base=receiver.total.join(args)), receiver.with_base(args)
    return result, None


def _mentions_category(site: CallSite) -> bool:
    values = list(site.args) + list(site.kwargs.values())
    for v in values:
        if v.const == "category":
            return True
        if any(f.const == "category" for _, f in v.fields or ()):
            return True
    return False


def _container_method(host: Host, receiver: Value, name: str, site: CallSite) -> Effect | None:
    """dict and list methods on values whose keys or items are known."""
    first = site.arg(0)
    if receiver.fields is not None and receiver.ref is None:
        key = first.const if first is not None else UNKNOWN
        if name == "get" and key is not UNKNOWN:
            found = receiver.field(key)
            default = site.arg(1, "default") or NONE
            return Effect(found if found is not None else default.with_base(receiver.base))
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


def _callable_method(host: Host, receiver: Value, name: str, site: CallSite) -> Effect | None:
    """Methods that call a function of the file: `pipe`, `apply`, `map`, `agg`, `transform`."""
    func = site.arg(0, "func")
    if func is None or func.ref is None or isinstance(func.ref, LibRef):
        return None
    rest = site.args[1:]
    if name == "pipe":
        return Effect(host.invoke(func, [receiver, *rest], site))
    if name in {"apply", "map", "applymap", "agg", "aggregate", "transform"}:
        by_row = name in {"map", "applymap"} or (name == "apply" and _is_row_axis(site))
        whole = receiver.total
        if name in {"agg", "aggregate", "transform"}:
            whole = _stat(host, whole, site, f"{name}()")
        arg = Value(base=row_of(whole)) if by_row else Value(base=whole)
        out = host.invoke(func, [arg, *rest], site)
        result = lift_rows(out.total)
        if name in {"agg", "aggregate", "transform"}:
            result = result.join(whole)
        return Effect(Value(base=result))
    return None


def _argparse(receiver: Value, name: str, site: CallSite) -> Effect | None:
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
