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
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Self

#: longest witness path kept; longer ones keep their head and tail so both the source and sink stay visible
MAX_PATH = 40
_PATH_HEAD = 8


class Kind(StrEnum):
    """Where a value may come from."""

    #: derived from the evaluation file (its path, its rows, its labels, anything computed from them)
    EVAL = "eval"
    #: derived row by row from the frame passed to predict_proba (a column or frame of the batch)
    BATCH = "batch"
    #: the values of one row of the batch (inside a row loop, `apply(axis=1)`, `Series.map`)
    BATCH_ROW = "batch_row"
    #: the result of an operation across the batch's rows (a mean, a count, a rank, a fitted scaler)
    BATCH_STAT = "batch_stat"
    #: the number of rows in the batch (`len(df)`, `df.shape`), a cross-row value that shape arguments drop
    BATCH_SIZE = "batch_size"
    #: a categorical whose levels were taken from the batch (`astype("category")`). Not a feature problem by
    #: itself -- current xgboost, LightGBM and scikit-learn match categories by value -- but its integer
    #: codes (`.cat.codes`) number the batch's levels, and those are a statistic of the batch.
    BATCH_LEVELS = "batch_levels"


@dataclass(frozen=True, slots=True)
class Step:
    """One line of a witness path: where the taint was, the code there, and the names that carried it."""

    line: int
    code: str
    names: tuple[str, ...] = ()
    note: str = ""
    #: the function the line belongs to ("" at module level), so a reader can follow calls
    scope: str = ""


Path = tuple[Step, ...]


def extend_path(path: Path, step: Step) -> Path:
    """Append `step`; a step on the same line as the last one merges into it instead of repeating it."""
    if path and path[-1].line == step.line and path[-1].scope == step.scope:
        last = path[-1]
        names = last.names + tuple(n for n in step.names if n not in last.names)
        note = last.note or step.note
        return (*path[:-1], Step(last.line, last.code, names, note, last.scope))
    path = (*path, step)
    if len(path) > MAX_PATH:
        path = path[:_PATH_HEAD] + path[len(path) - (MAX_PATH - _PATH_HEAD) :]
    return path


@dataclass(frozen=True, slots=True)
class Taints:
    """A set of kinds, each with one witness path. Joining keeps the left side's path for a shared kind,
    so a state that has stopped gaining kinds compares equal to itself and loops reach a fixpoint."""

    entries: tuple[tuple[Kind, Path], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset(k for k, _ in self.entries)

    def get(self, kind: Kind) -> Path | None:
        for k, p in self.entries:
            if k is kind:
                return p
        return None

    def has(self, *kinds: Kind) -> bool:
        return any(k in kinds for k, _ in self.entries)

    def join(self, other: Taints) -> Taints:
        if not other.entries or other is self:
            return self
        if not self.entries:
            return other
        merged = dict(self.entries)
        changed = False
        for k, p in other.entries:
            if k not in merged:
                merged[k] = p
                changed = True
        return Taints(tuple(sorted(merged.items()))) if changed else self

    def with_step(self, step: Step) -> Taints:
        if not self.entries:
            return self
        return Taints(tuple((k, extend_path(p, step)) for k, p in self.entries))

    def with_steps(self, step_for: Callable[[Kind], Step]) -> Taints:
        """Append a step to each path, built per kind (each kind names the variables that carry it)."""
        if not self.entries:
            return self
        return Taints(tuple((k, extend_path(p, step_for(k))) for k, p in self.entries))

    def only(self, keep: Callable[[Kind], bool]) -> Taints:
        kept = tuple((k, p) for k, p in self.entries if keep(k))
        return self if len(kept) == len(self.entries) else Taints(kept)

    def convert(self, source: Kind, target: Kind, step: Step) -> Taints:
        """Turn `source` into `target` (keeping its path plus `step`); an existing `target` wins."""
        path = self.get(source)
        if path is None:
            return self
        rest = Taints(tuple((k, p) for k, p in self.entries if k is not source))
        return rest.join(Taints(((target, extend_path(path, step)),)))

    @staticmethod
    def of(kind: Kind, step: Step) -> Taints:
        return Taints(((kind, (step,)),))

    @staticmethod
    def union(parts: Iterable[Taints]) -> Taints:
        out = NO_TAINT
        for part in parts:
            out = out.join(part)
        return out


NO_TAINT = Taints()


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


# --- values -------------------------------------------------------------------------------------------

FieldKey = Hashable
#: the field of a frame that lists its column names, when they are known (the batch's are)
COLUMNS = "<columns>"


@dataclass(frozen=True, slots=True)
class Value:
    """What the engine knows about a value. `total` (all taints, including those of the parts) is derived."""

    #: taints of the value itself, not attributed to a known part (for a frame read from a file: the file)
    base: Taints = NO_TAINT
    const: Any = UNKNOWN
    #: a join with None happened: `x is None` is undecided rather than False
    may_none: bool = False
    items: tuple[Value, ...] | None = None
    #: the element of a collection whose length is unknown
    elem: Value | None = None
    #: known keys: dict keys, frame columns written by subscript, attributes of instances and classes
    fields: tuple[tuple[FieldKey, Value], ...] | None = None
    ref: Ref | None = None
    total: Taints = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        total = self.base
        for item in self.items or ():
            total = total.join(item.total)
        if self.elem is not None:
            total = total.join(self.elem.total)
        for _, v in self.fields or ():
            total = total.join(v.total)
        object.__setattr__(self, "total", total)

    # --- reading parts ---

    def field(self, key: FieldKey) -> Value | None:
        for k, v in self.fields or ():
            if k == key:
                return v
        return None

    def with_field(self, key: FieldKey, value: Value) -> Value:
        fields = (*((k, v) for k, v in (self.fields or ()) if k != key), (key, value))
        return Value(self.base, UNKNOWN, False, self.items, self.elem, fields, self.ref)

    def element(self) -> Value:
        """What iterating over the value yields, when its items are not individually known."""
        if self.items is not None:
            return join_all(self.items)
        if self.elem is not None:
            return self.elem
        if self.fields is not None and self.ref is None:
            # iterating a dict yields its keys
            return join_all(Value(const=k) for k, _ in self.fields).with_base(self.base)
        return Value(base=row_of(self.total))

    def with_base(self, taints: Taints) -> Value:
        if not taints:
            return self
        return Value(
            self.base.join(taints), self.const, self.may_none, self.items, self.elem, self.fields, self.ref
        )

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
        )

    def flat(self) -> Value:
        """The value without structure: all its taints as its base (what an unknown call returns)."""
        return Value(self.total)

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


def taint_value(taints: Taints) -> Value:
    return Value(base=taints) if taints else CLEAN


CLEAN = Value()
NONE = Value(const=None)


def const_value(c: Any) -> Value:
    return NONE if c is None else Value(const=c)


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
    return Value(base, const, may_none, items, elem, fields, ref)


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
