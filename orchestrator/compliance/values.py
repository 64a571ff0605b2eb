"""The abstract values the data-flow engine computes with: taint kinds, the path a taint took, and values.

A `Value` stands for every runtime value an expression may have. It carries

* taints: which sources the value may derive from (`Kind`), each with one witness `Path` — the chain of
  source lines that carried it there, which becomes a record's evidence;
* a known constant (strings matter most: file paths are resolved by constant folding);
* structure where it is known: the items of a list or tuple, the keys of a dict, the columns written into a
  frame, the attributes of an instance. Structure is what keeps `frames["train"]` clean when
  `frames["eval"]` holds the evaluation file;
* a reference to what the value is when that matters for calls: an imported module or library object, a
  function, class or instance defined in the audited file.

Everything is immutable, so states can be copied cheaply at branches and compared at loop fixpoints. The
lattice is finite in practice: one witness path per kind (the first found is kept), structure collapses
when two shapes disagree, and the interpreter widens after a few loop iterations.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Self

from orchestrator.compliance.taints import (  # noqa: F401 - re-exported: the engine's modules import them from here
    MAX_PATH,
    NO_TAINT,
    Kind,
    Path,
    Step,
    Taints,
    extend_path,
    kind_mask,
    stepper,
    witness_paths,
    witnessed,
)


class _Unknown:
    """The constant of a value whose constant is not known."""

    _instance: Any = None

    def __new__(cls) -> Self:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


# --- what a value refers to --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LibRef:
    """An imported module, something reached from it (`numpy.mean`), or an object a library call made
    (`sklearn.preprocessing.StandardScaler()`): the dotted name is all the engine needs to know."""

    qualname: str
    instance: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class FuncRef:
    """A function or lambda of the audited file, with the variables it closes over and, for a method
    looked up on an instance or class, what it is bound to. Compared by identity of the definition."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    qualname: str
    closure: dict[str, Value] | None = None
    bound: Value | None = None
    #: "function", "staticmethod", "classmethod" or "property"
    flavor: str = "function"
    defaults: tuple[Value, ...] = ()
    kw_defaults: tuple[tuple[str, Value], ...] = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FuncRef) and other.node is self.node and other.bound == self.bound

    def __hash__(self) -> int:
        return hash((id(self.node), self.bound))


@dataclass(frozen=True, slots=True, eq=False)
class ClassRef:
    """A class of the audited file; its class-level attributes live in the value's fields."""

    node: ast.ClassDef
    bases: tuple[Value, ...] = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClassRef) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)


@dataclass(frozen=True, slots=True)
class InstanceRef:
    """An instance of a class of the audited file; its attributes live in the value's fields."""

    cls: Value


Ref = LibRef | FuncRef | ClassRef | InstanceRef

_LIBRARY_VALUES: dict[str, Value] = {}


def library_value(qualname: str) -> Value:
    """The value of a module or something reached from one (`numpy.mean`): one per name, shared."""
    found = _LIBRARY_VALUES.get(qualname)
    if found is None:
        found = Value(ref=LibRef(qualname))
        if len(_LIBRARY_VALUES) < 8192:
            _LIBRARY_VALUES[qualname] = found
    return found


# --- axes ---------------------------------------------------------------------------------------------
#
# What each axis of an array-like value indexes, where it is known: the rows of the batch, or something
# else (the members of a Python list that was stacked, the columns of a frame). `MORE` stands for any number
# of further axes whose meaning is not known. A value derived from the batch whose axes are not known is read
# the way pandas reads it: its rows are axis 0 (`DEFAULT_AXES`). Reductions use this to tell a mean across
# the members of an ensemble (`np.mean([m.predict_proba(X)[:, 1] for m in models], axis=0)`) from a mean
# down the rows of the batch.

ROWS = "rows"
OTHER = "other"
MORE = "*"
Axes = tuple[str, ...]
DEFAULT_AXES: Axes = (ROWS, MORE)


# --- values -------------------------------------------------------------------------------------------

FieldKey = Hashable
#: the field of a frame that lists its column names, when they are known (the batch's are)
COLUMNS = "<columns>"


class Value:
    """What the engine knows about a value. `total` (all taints, including those of the parts) is derived.

    Immutable by convention: a hand-written slotted class, because the interpreter builds a great many
    values and a frozen dataclass costs several times as much to build. Equality and hash cover every part
    but `total`."""

    __slots__ = ("_hash", "axes", "base", "const", "elem", "fields", "items", "may_none", "ref", "total")

    def __init__(
        self,
        base: Taints = NO_TAINT,
        const: Any = UNKNOWN,
        may_none: bool = False,
        items: tuple[Value, ...] | None = None,
        elem: Value | None = None,
        fields: tuple[tuple[FieldKey, Value], ...] | None = None,
        ref: Ref | None = None,
        axes: Axes | None = None,
        total: Taints | None = None,
    ) -> None:
        """`total`, when given, is the caller's fold of every part's taints (`with_field`), taken as is."""
        #: taints of the value itself, not attributed to a known part (for a frame read from a file: the file)
        self.base = base
        self.const = const
        #: a join with None happened: `x is None` is undecided rather than False
        self.may_none = may_none
        self.items = items
        #: the element of a collection whose length is unknown
        self.elem = elem
        #: known keys: dict keys, frame columns written by subscript, attributes of instances and classes
        self.fields = fields
        self.ref = ref
        #: what each axis indexes, for an array-like value whose axes are known (see `axes_of`)
        self.axes = axes
        self._hash: int | None = None
        #: every taint of the value and its parts
        self.total: Taints = base
        if total is not None:
            self.total = total
        elif items is not None or elem is not None or fields is not None:
            total = base
            for item in items or ():
                total = total.join(item.total)
            if elem is not None:
                total = total.join(elem.total)
            for _, v in fields or ():
                total = total.join(v.total)
            self.total = total

    def _key(self) -> tuple[Any, ...]:
        return (self.base, self.const, self.may_none, self.items, self.elem, self.fields, self.ref, self.axes)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, Value):
            return NotImplemented
        return (
            self.base == other.base
            and self.ref == other.ref
            and self.may_none == other.may_none
            and self.items == other.items
            and self.elem == other.elem
            and self.fields == other.fields
            and self.axes == other.axes
            and self.const == other.const
        )

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash(self._key())
        return h

    def __repr__(self) -> str:
        parts = [
            f"{name}={value!r}"
            for name, value in zip(
                ("base", "const", "may_none", "items", "elem", "fields", "ref", "axes"),
                self._key(),
                strict=True,
            )
        ]
        return f"Value({', '.join(parts)})"

    # --- reading parts ---

    def field(self, key: FieldKey) -> Value | None:
        for k, v in self.fields or ():
            if k == key:
                return v
        return None

    def with_field(self, key: FieldKey, value: Value) -> Value:
        fields = self.fields
        if fields and any(k == key for k, _ in fields):
            kept = [kv for kv in fields if kv[0] != key]
            kept.append((key, value))
            return Value(self.base, UNKNOWN, False, self.items, self.elem, tuple(kept), self.ref, self.axes)
        # a new key goes last, so the total is the old one joined with the new field's, as `__init__`
        # would fold it: one join instead of one per column (frames gain columns one by one)
        return Value(self.base, UNKNOWN, False, self.items, self.elem,
                     (*fields, (key, value)) if fields else ((key, value),), self.ref, self.axes,
                     self.total.join(value.total))

    def without_fields(self, keys: Iterable[FieldKey]) -> Value:
        drop = set(keys)
        fields = tuple((k, v) for k, v in (self.fields or ()) if k not in drop)
        return Value(self.base, UNKNOWN, False, self.items, self.elem, fields, self.ref, self.axes)

    def element(self) -> Value:
        """What iterating over the value yields, when its items are not individually known."""
        if self.items is not None:
            return join_all(self.items)
        if self.elem is not None:
            return self.elem
        if self.fields is not None and self.ref is None:
            # iterating a dict yields its keys
            return join_all(Value(const=k) for k, _ in self.fields).with_base(self.base)
        if self.axes is not None and self.axes and self.axes[0] == OTHER:
            # an array whose first axis is not the rows (stacked ensemble members): its members
            return Value(base=self.total, axes=self.axes[1:] or None)
        return Value(base=row_of(self.total))

    def with_base(self, taints: Taints) -> Value:
        if not taints:
            return self
        return Value(
            self.base.join(taints),
            self.const,
            self.may_none,
            self.items,
            self.elem,
            self.fields,
            self.ref,
            self.axes,
        )

    def with_axes(self, axes: Axes | None) -> Value:
        if axes == self.axes:
            return self
        return Value(self.base, self.const, self.may_none, self.items, self.elem, self.fields, self.ref, axes)

    def map_taints(self, fn: Callable[[Taints], Taints]) -> Value:
        """Apply `fn` to the base and every part (used to add a step to every path the value holds)."""
        if not self.total:
            return self
        return Value(
            fn(self.base),
            self.const,
            self.may_none,
            None if self.items is None else tuple(i.map_taints(fn) for i in self.items),
            None if self.elem is None else self.elem.map_taints(fn),
            None if self.fields is None else tuple((k, v.map_taints(fn)) for k, v in self.fields),
            self.ref,
            self.axes,
        )

    def flat(self) -> Value:
        """The value without structure: all its taints as its base (what an unknown call returns)."""
        return Value(self.total)

    @property
    def is_list(self) -> bool:
        """A Python list or tuple (items or element known), not a frame, dict or object."""
        return self.ref is None and self.fields is None and (self.items is not None or self.elem is not None)

    @property
    def is_none(self) -> bool:
        return self.const is None


def row_of(taints: Taints) -> Taints:
    """Taints of one element of a collection: an element of batch data is one row of the batch."""
    path = taints.get(Kind.BATCH)
    if path is None:
        return taints
    rest = Taints(tuple((k, p) for k, p in taints.entries if k is not Kind.BATCH))
    return rest.join(Taints(((Kind.BATCH_ROW, path),)))


def lift_rows(taints: Taints) -> Taints:
    """Taints of a collection built from one value per batch row: a column of the batch."""
    path = taints.get(Kind.BATCH_ROW)
    if path is None:
        return taints
    rest = Taints(tuple((k, p) for k, p in taints.entries if k is not Kind.BATCH_ROW))
    return rest.join(Taints(((Kind.BATCH, path),)))


BATCH_KINDS = frozenset({Kind.BATCH, Kind.BATCH_ROW, Kind.BATCH_STAT, Kind.BATCH_SIZE, Kind.BATCH_LEVELS})


def key_const(v: Value) -> Any:
    """The constant of a value usable as a dict key: its constant, or a tuple of its items' constants."""
    if v.const is not UNKNOWN:
        return v.const
    if v.items is not None and v.ref is None:
        parts = tuple(key_const(i) for i in v.items)
        if all(p is not UNKNOWN for p in parts):
            return parts
    return UNKNOWN


def taint_value(taints: Taints) -> Value:
    return Value(base=taints) if taints else CLEAN


CLEAN = Value()
NONE = Value(const=None)


_SMALL_CONSTANTS: dict[tuple[type, Any], Value] = {}


def const_value(c: Any) -> Value:
    """A value that is the constant `c` (small constants are shared: values are immutable)."""
    if c is None:
        return NONE
    key = (type(c), c)
    try:
        found = _SMALL_CONSTANTS.get(key)
    except TypeError:  # not hashable
        return Value(const=c)
    if found is None:
        found = Value(const=c)
        if len(_SMALL_CONSTANTS) < 4096:
            _SMALL_CONSTANTS[key] = found
    return found


# --- join ---------------------------------------------------------------------------------------------


def join(a: Value, b: Value) -> Value:
    """Least upper bound: what is known of both. Structure survives only where both sides agree on it."""
    if a is b or a == b:
        return a
    const = (
        a.const
        if (a.const is not UNKNOWN and b.const is not UNKNOWN and _same_const(a.const, b.const))
        else UNKNOWN
    )
    may_none = a.may_none or b.may_none or (a.is_none != b.is_none)
    ref = a.ref if a.ref == b.ref else _join_ref(a.ref, b.ref)
    items: tuple[Value, ...] | None = None
    elem: Value | None = None
    base = a.base.join(b.base)
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items, strict=True))
    elif a.items is not None or b.items is not None or a.elem is not None or b.elem is not None:
        parts = [v.element() for v in (a, b) if v.items is not None or v.elem is not None]
        elem = join_all(parts)
    fields: tuple[tuple[FieldKey, Value], ...] | None = None
    if a.fields is not None or b.fields is not None:
        keys: list[FieldKey] = []
        for k, _ in (a.fields or ()) + (b.fields or ()):
            if k not in keys:
                keys.append(k)
        merged = []
        for k in keys:
            fa, fb = a.field(k), b.field(k)
            if fa is None or fb is None:
                # the key is known on one side only; on the other side its value is the base
                other = Value(base=(b.base if fa is not None else a.base))
                merged.append((k, join(fa if fa is not None else other, fb if fb is not None else other)))
            else:
                merged.append((k, join(fa, fb)))
        fields = tuple(merged)
    axes = a.axes if a.axes == b.axes else None
    return Value(base, const, may_none, items, elem, fields, ref, axes)


def join_all(values: Iterable[Value]) -> Value:
    out: Value | None = None
    for v in values:
        out = v if out is None else join(out, v)
    return out if out is not None else CLEAN


def _same_const(x: Any, y: Any) -> bool:
    return type(x) is type(y) and x == y


def _join_ref(a: Ref | None, b: Ref | None) -> Ref | None:
    # None on one side is the usual "x = None ... x = Model()" pattern: keep what the other side is
    if a is None:
        return b
    if b is None:
        return a
    return None


def widen(v: Value) -> Value:
    """Drop constants and structure so a loop that keeps growing a value stops growing it."""
    if v.ref is not None and not isinstance(v.ref, LibRef):
        return v
    return Value(v.total, ref=v.ref)
