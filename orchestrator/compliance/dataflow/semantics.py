"""What calls into libraries do to taint: pandas, numpy, scikit-learn, xgboost, the standard library.

A call the tables in `compliance.library` do not mention returns the union of everything it was given
(receiver and arguments): sound for data flow, and right for the row-wise work that is most of feature
engineering. The cases below refine that: folding of paths, training and prediction sinks, cross-row
operations turning batch data into batch statistics, shape arguments that carry no values, callables passed
to `apply`/`map`/`pipe`, and containers whose items stay apart.
"""

from __future__ import annotations

from typing import Any

from orchestrator.compliance import library as lib
from orchestrator.compliance.axes import axes_of
from orchestrator.compliance.dataflow import arrays, frames, groups
from orchestrator.compliance.dataflow.core import CallSite, Effect, Host, Role
from orchestrator.compliance.dataflow.ops import args_total, cross_row
from orchestrator.compliance.dataflow.pysemantics import (
    SettingsFile,
    argparse_method,
    call_builtin,
    container_method,
)
from orchestrator.compliance.strings import fold_function, fold_method
from orchestrator.compliance.values import (
    CLEAN,
    COLUMNS,
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


def _is_row_axis(site: CallSite, position: int | None = None) -> bool:
    """`axis=1` / `axis="columns"`: the operation works within each row."""
    axis = site.kwargs.get("axis")
    if axis is None and position is not None:
        axis = site.arg(position)
    return axis is not None and axis.const in (1, "columns")


def _batch_levels(host: Host, taints: Taints, site: CallSite, what: str) -> Taints:
    """Mark batch data as a categorical whose levels come from the batch (see Kind.BATCH_LEVELS)."""
    path = taints.get(Kind.BATCH)
    if path is None:
        return taints
    step = host.step(site, f"{what}: category levels taken from the batch", kind=Kind.BATCH)
    return taints.join(Taints(((Kind.BATCH_LEVELS, extend_path(path, step, Kind.BATCH_LEVELS)),)))


def _items_value(host: Host, consts: list[Any], site: CallSite, taints: Taints = NO_TAINT) -> Value:
    items = tuple(host.constant(c, site.node).with_base(taints) for c in consts[:MAX_ITEMS])
    if len(consts) > MAX_ITEMS:
        return Value(elem=join_all(items))
    return Value(items=items)


def _eval_listing(host: Host, site: CallSite, what: str) -> Value:
    """A listing whose folder or pattern is not known may include the evaluation file."""
    step = host.step(site, f"{what} over an unresolved path may include the evaluation file")
    entries = (
        (Kind.EVAL, extend_path((), step, Kind.EVAL)),
        (Kind.EVAL_LABEL, extend_path((), step, Kind.EVAL_LABEL)),
    )
    return Value(elem=Value(base=Taints(entries)))


def _const_args(site: CallSite) -> tuple[list[Any], dict[str, Any]]:
    args = [v.const if v.items is None else tuple(i.const for i in v.items) for v in site.args]
    return args, {k: v.const for k, v in site.kwargs.items()}


#: functions `fold_function` may fold without a string among their arguments (numbers, no arguments)
_FOLDABLE = frozenset(
    {
        "builtins.str",
        "builtins.int",
        "builtins.float",
        "builtins.bool",
        "pathlib.Path",
        "pathlib.PurePath",
        "pathlib.PosixPath",
        "pathlib.PurePosixPath",
        "pathlib.WindowsPath",
    }
)


def _any_string(site: CallSite) -> bool:
    for v in site.args:
        if isinstance(v.const, str) or v.items is not None:
            return True
    for v in site.kwargs.values():
        if isinstance(v.const, str):
            return True
    return False


def _folded(host: Host, const: Any, site: CallSite) -> Value:
    taints = args_total(site).join(site.receiver.total if site.receiver is not None else Taints())
    if isinstance(const, tuple):
        return Value(items=tuple(host.constant(c, site.node) for c in const)).with_base(taints)
    return host.constant(const, site.node, taint_value(taints))


# --- library functions --------------------------------------------------------------------------------


def call_function(host: Host, qualname: str, site: CallSite) -> Value:
    """The value a call to the library function `qualname` returns."""
    if qualname in _FOLDABLE or _any_string(site):
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
        builtin = call_builtin(host, qualname, site)
        if builtin is not None:
            return builtin
    if qualname in {"json.load", "json.loads"} and site.args and isinstance(site.args[0].const, SettingsFile):
        content = host.layout.json_content(site.args[0].const.path)
        if content is not UNKNOWN:
            return frames.constant_tree(content)
    if qualname in frames.READERS:
        frame = frames.read_frame(host, site)
        if frame is not None:
            return frame
    if qualname == "pandas.concat":
        joined = frames.concat(host, site)
        if joined is not None:
            return joined
    if qualname == "pandas.merge" and len(site.args) >= 2:
        on_index = frames.on_index("merge", site)
        return frames.merge(host, site.args[0], site.args[1], site, on_index)
    if qualname in lib.TRAIN_FUNCTIONS:
        trained = Taints()
        for value, node, label in _role_values(site, lib.TRAIN_FUNCTIONS[qualname]):
            host.hit(Role.TRAIN, value, node, site, f"{qualname} ({label})")
            trained = trained.join(cross_row(host, value.total, site, f"training {qualname}"))
        return Value(base=trained, ref=LibRef(qualname, instance=True))
    table = lib.TABLE_FUNCTION_ARGS.get(qualname)
    if table is not None and _table_from_batch(site, table):
        return Value(
            base=cross_row(
                host,
                args_total(site),
                site,
                f"{qualname.rsplit('.', 1)[-1]}() with a table built from the batch's own rows",
            )
        )
    reduced = arrays.function_reduction(host, qualname, site)
    if reduced is not None:
        return reduced
    pairwise = qualname in lib.ITERABLE_AGGREGATES and len(site.args) > 1  # max(a, b): row-wise
    combines_rows = qualname in lib.CROSS_ROW_FUNCTIONS or qualname in lib.ITERABLE_AGGREGATES
    if combines_rows and not pairwise and not _is_row_axis(site):
        name = qualname.rsplit(".", 1)[-1]
        return Value(base=cross_row(host, args_total(site), site, f"{name}()"))
    stacked = arrays.stacked(qualname, site)
    if stacked is not None:
        return stacked
    if qualname == "numpy.transpose" and site.args:
        return arrays.transposed(site.args[0])
    if qualname == "pandas.cut":
        bins = site.arg(1, "bins")
        if bins is not None and (isinstance(bins.const, int) or bins.total.has(*BATCHY)):
            return Value(base=cross_row(host, args_total(site), site, "cut() with bins from the data"))
    if qualname == "pandas.Categorical" and "categories" not in site.kwargs and len(site.args) < 2:
        return Value(base=_batch_levels(host, args_total(site), site, "Categorical()"))
    if qualname in lib.SPLITTING_FUNCTIONS and site.args:
        # a list of chunks, each a slice of rows of the first argument (not one row each)
        chunk = Value(base=site.args[0].total)
        return Value(base=args_total(site, shape=lib.SHAPE_ARGS.get(qualname)), elem=chunk)
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
        return Value(base=first.base.join(args_total(site, skip_positions=(0,))), fields=first.fields)
    shape = lib.SHAPE_ARGS.get(qualname)
    instance = qualname.rsplit(".", 1)[-1][:1].isupper()
    axes = None
    if qualname in lib.ELEMENTWISE_FUNCTIONS:
        axes = arrays.elementwise(site)
    elif qualname in {"pandas.DataFrame", "pandas.Series"} and site.args:
        axes = axes_of(site.args[0])  # a frame of member predictions has the members as its rows
    result = Value(
        base=args_total(site, shape=shape),
        ref=LibRef(qualname, instance=True) if instance else None,
        axes=axes,
    )
    if qualname in lib.ROW_WISE_FUNCTIONS or qualname in lib.SHAPE_ARGS or not _library_name(qualname):
        return result
    return host.unknown_call(f"{qualname}()", site, result)


def _library_name(qualname: str) -> bool:
    """Whether a name is a library's (imported), not a builtin the engine handles, an unknown object, or a
    question about types (`pandas.api.types.is_numeric_dtype`)."""
    return "." in qualname and not qualname.startswith(("builtins.", "<", "pandas.api.types."))


# --- methods ------------------------------------------------------------------------------------------


def call_method(host: Host, receiver: Value, name: str, site: CallSite) -> Effect:
    """The effect of `receiver.name(...)` where the receiver is not an object of the audited file."""
    if receiver.ref is not None:
        if groups.is_groupby(receiver):
            return groups.method(host, receiver, name, site)
        if groups.is_groups(receiver):
            return groups.groups_method(receiver, name, site)
    if isinstance(receiver.const, SettingsFile) and name in {"read", "__enter__"}:
        return Effect(receiver)
    if (
        isinstance(receiver.const, str)
        and name in {"read_text", "open", "read_bytes"}
        and host.layout.json_content(receiver.const) is not UNKNOWN
    ):
        return Effect(Value(const=SettingsFile(receiver.const)))
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
    structured = container_method(host, receiver, name, site)
    if structured is not None:
        return structured
    if (
        isinstance(receiver.ref, LibRef)
        and receiver.ref.instance
        and receiver.ref.qualname.endswith("ArgumentParser")
    ):
        parsed = argparse_method(receiver, name, site)
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
        taints = receiver.total.join(args_total(site))
        axes = lib.PREDICT_AXES.get(name) if taints.has(Kind.BATCH) else None
        return Effect(Value(base=taints, axes=axes))
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
        trained = trained.join(cross_row(host, value.total, site, f"{name}()"))
    fitted = receiver.with_base(trained)
    if name in {"fit", "partial_fit"}:
        return Effect(fitted, receiver=fitted)
    return Effect(Value(base=fitted.total), receiver=fitted)


def _data_method(host: Host, receiver: Value, name: str, site: CallSite) -> tuple[Value, Value | None]:
    """Methods of frames, series, arrays and other library objects: returns (result, new receiver)."""
    element_accessor = isinstance(receiver.ref, LibRef) and receiver.ref.qualname == "<element accessor>"
    if not element_accessor:
        special = _frame_method(host, receiver, name, site)
        if special is not None:
            return special, None
    base = receiver.total
    if not element_accessor and base.has(Kind.BATCH):
        if name in lib.METHOD_AXIS:
            reduced = arrays.method_reduction(host, receiver, name, site)
            if reduced is not None:
                return reduced, None
        by_row = name in lib.FUNCTION_METHODS and _is_row_axis(site, 1)
        table = lib.TABLE_METHOD_ARGS.get(name)
        if table is not None and _table_from_batch(site, table):
            base = cross_row(
                host,
                base.join(args_total(site)),
                site,
                f"{name}() with a table built from the batch's own rows",
            )
        elif name in lib.CROSS_ROW_METHODS and name not in lib.METHOD_AXIS and not by_row:
            base = cross_row(host, base, site, f"{name}()")
        elif name == "apply" and not by_row and _reduces(site.arg(0, "func")):
            base = cross_row(host, base, site, "apply() of a reduction to each column")
        elif name == "astype" and _mentions_category(site):
            base = _batch_levels(host, base, site, "astype('category')")
        elif name == "fillna" and site.kwargs.get("method", CLEAN).const in lib.FILL_FROM_NEIGHBOURS:
            base = cross_row(host, base, site, "fillna() from neighbouring rows")
    shape = lib.SHAPE_METHOD_ARGS.get(name)
    args = args_total(site, shape=shape)
    if name == "assign":
        result = receiver
        for key, value in site.kwargs.items():
            if value.ref is not None and not isinstance(value.ref, LibRef):
                value = host.invoke(value, [receiver], site)
            result = result.with_field(key, value)
        return result, None
    if name in lib.FIX_LEVELS_METHODS and not args_total(site).has(*BATCHY, Kind.BATCH_LEVELS):
        # levels set from outside the batch: codes no longer depend on it
        base = base.only(lambda k: k is not Kind.BATCH_LEVELS)
    converted = base is not receiver.total
    if name in lib.FRAME_PRESERVING and receiver.ref is None and not converted:
        # copies, renames and reorderings keep the columns written earlier apart
        fields = receiver.fields
        keeps_columns = name in lib.COLUMN_PRESERVING or (
            name == "reset_index" and site.kwargs.get("drop", CLEAN).const is True
        )
        if not keeps_columns and fields is not None:
            fields = tuple((k, v) for k, v in fields if k != COLUMNS)
        result = Value(base=receiver.base.join(args), fields=fields, axes=receiver.axes)
    else:
        axes = receiver.axes if name in lib.ELEMENTWISE_METHODS and not converted else None
        joined = base.join(args)
        result = Value(base=joined, axes=axes) if axes is not None else taint_value(joined)
        if not converted and not element_accessor and name not in _KNOWN_METHODS and not name.startswith("_"):
            result = host.unknown_call(f".{name}()", site, result)
    inplace = site.kwargs.get("inplace")
    if inplace is not None and inplace.const is True:
        return NONE, result
    if name in lib.MUTATING_METHODS:
        # changed in place; the result is None for most, the changed object for some (`dict.setdefault`)
        return Value(base=receiver.total.join(args)), receiver.with_base(args)
    return result, None


#: methods whose effect on rows the engine knows (row-wise, cross-row, or handled by name above)
_KNOWN_METHODS = (
    lib.ROW_WISE_METHODS
    | lib.CROSS_ROW_METHODS
    | frozenset(lib.METHOD_AXIS)
    | lib.MUTATING_METHODS
    | lib.FRAME_PRESERVING
    | lib.TRAIN_METHODS
    | lib.PREDICT_METHODS
    | lib.FIX_LEVELS_METHODS
    | frozenset(lib.SHAPE_METHOD_ARGS)
    | {"groupby", "drop", "merge", "join", "transpose", "assign", "fillna"}
)


def _frame_method(host: Host, receiver: Value, name: str, site: CallSite) -> Value | None:
    """Methods whose result is known more precisely than "everything it was given": groupby objects,
    column drops, merges, transposes."""
    if name == "groupby":
        return groups.groupby(host, receiver, site)
    if name == "drop":
        return frames.drop(host, receiver, site)
    if name in {"merge", "join"} and site.args:
        return frames.merge(host, receiver, site.args[0], site, frames.on_index(name, site))
    if name == "transpose" and not site.args:
        return arrays.transposed(receiver)
    return None


def _table_from_batch(site: CallSite, roles: lib.Roles) -> bool:
    """Whether an argument used as a lookup table or set holds batch rows (not one row's value, not a
    statistic already counted as one)."""
    return any(value.total.has(Kind.BATCH) for value, _, _ in _role_values(site, roles))


def _reduces(func: Value | None) -> bool:
    """A library function or a name of one that summarises what it is given (`np.mean`, `"sum"`)."""
    if func is None:
        return False
    if isinstance(func.const, str):
        return func.const in lib.CROSS_ROW_METHODS or func.const in lib.METHOD_AXIS
    if isinstance(func.ref, LibRef):
        q = func.ref.qualname
        return q in lib.CROSS_ROW_FUNCTIONS or q in lib.AXIS_FUNCTIONS or q in lib.ITERABLE_AGGREGATES
    return False


def _mentions_category(site: CallSite) -> bool:
    values = list(site.args) + list(site.kwargs.values())
    for v in values:
        if v.const == "category":
            return True
        if any(f.const == "category" for _, f in v.fields or ()):
            return True
    return False


def _callable_method(host: Host, receiver: Value, name: str, site: CallSite) -> Effect | None:
    """Methods that call a function of the file: `pipe`, `apply`, `map`, `agg`, `transform`."""
    func = site.arg(0, "func")
    if func is None or func.ref is None or isinstance(func.ref, LibRef):
        return None
    rest = site.args[1:]
    if name == "pipe":
        return Effect(host.invoke(func, [receiver, *rest], site))
    if name in {"apply", "map", "applymap", "agg", "aggregate", "transform"}:
        # map and applymap call the function on each element; apply, agg and transform on each column,
        # or on each row with axis=1
        by_row = name in {"map", "applymap"} or _is_row_axis(site, 1)
        whole = receiver.total
        if name in {"agg", "aggregate"} and not by_row:
            # an aggregation of each column: whatever the function does, it summarises the column
            whole = cross_row(host, whole, site, f"{name}()")
        arg = Value(base=row_of(whole)) if by_row else Value(base=whole)
        out = host.invoke(func, [arg, *rest], site)
        return Effect(
            Value(base=lift_rows(out.total).join(whole if name in {"agg", "aggregate"} else NO_TAINT))
        )
    return None
