"""Taints: where a value may come from (`Kind`), with one witness path of source lines per kind.

A path is the chain of steps (line, code, the names carrying the data there, a note) from a source to the
point reached; a record's evidence is a sink's path. Witness paths can be kept for some kinds only, or none
(`witness_paths`): the interpreter's quick pass keeps none, so values that carry the same kinds are equal
however they got them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

#: longest witness path kept; longer ones keep their head and tail so both the source and sink stay visible
MAX_PATH = 40
_PATH_HEAD = 8


class Kind(StrEnum):
    """Where a value may come from."""

    #: derived from the evaluation file's rows: its feature columns, anything computed from them
    EVAL = "eval"
    #: derived from the evaluation file's label column (the task's target): the labels themselves, a target
    #: encoding of them, a model fitted on them. The whole evaluation frame carries both kinds; selecting
    #: its feature columns (`ev[FEATURES]`, `ev.drop(columns=[TARGET])`) leaves only EVAL.
    EVAL_LABEL = "eval_label"
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


class _Witness:
    """The kinds of taint whose witness paths are kept, as a bit mask (see `witness_paths`)."""

    mask = -1


def witness_paths(mask: int) -> int:
    """Keep witness paths for the kinds in `mask` (see `kind_mask`; -1 for all, 0 for none). A path of a
    kind not kept is empty, so values that carry the same kinds are equal however they got them. The
    interpreter sets this for each pass and restores it after; returns the previous mask."""
    previous, _Witness.mask = _Witness.mask, mask
    return previous


def kind_mask(kinds: Iterable[Kind]) -> int:
    out = 0
    for k in kinds:
        out |= _BIT[k]
    return out


def witnessed(kind: Kind) -> bool:
    """Whether paths of `kind` are kept in the current pass."""
    return bool(_Witness.mask & _BIT[kind])


def extend_path(path: Path, step: Step, kind: Kind | None = None) -> Path:
    """Append `step`; a step on the same line as the last one merges into it instead of repeating it. A
    path of a kind whose witnesses are not kept stays empty."""
    mask = _Witness.mask
    if not mask or (kind is not None and not mask & _BIT[kind]):
        return ()
    if path and path[-1].line == step.line and path[-1].scope == step.scope:
        last = path[-1]
        names = last.names + tuple(n for n in step.names if n not in last.names)
        # two things happened on one line (passed to a callback that crosses rows): keep both notes
        note = (
            last.note
            if not step.note or step.note in last.note
            else (f"{last.note}; {step.note}" if last.note else step.note)
        )
        return (*path[:-1], Step(last.line, last.code, names, note, last.scope))
    path = (*path, step)
    if len(path) > MAX_PATH:
        path = path[:_PATH_HEAD] + path[len(path) - (MAX_PATH - _PATH_HEAD) :]
    return path


class Taints:
    """A set of kinds, each with one witness path. Joining keeps the left side's path for a shared kind,
    so a state that has stopped gaining kinds compares equal to itself and loops reach a fixpoint.

    Immutable by convention (a hand-written slotted class: the interpreter makes a great many of these, and
    a frozen dataclass costs several times as much to build). `mask` has one bit per kind present."""

    __slots__ = ("_hash", "entries", "mask")

    def __init__(self, entries: tuple[tuple[Kind, Path], ...] = ()) -> None:
        self.entries = entries
        mask = 0
        for k, _ in entries:
            mask |= _BIT[k]
        self.mask = mask
        self._hash: int | None = None

    def __bool__(self) -> bool:
        return self.mask != 0

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, Taints):
            return NotImplemented
        return self.mask == other.mask and self.entries == other.entries

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash(self.entries)
        return h

    def __repr__(self) -> str:
        return f"Taints({self.entries!r})"

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset(k for k, _ in self.entries)

    def get(self, kind: Kind) -> Path | None:
        if not self.mask & _BIT[kind]:
            return None
        for k, p in self.entries:
            if k is kind:
                return p
        return None

    def has(self, *kinds: Kind) -> bool:
        mask = self.mask
        if not mask:
            return False
        for k in kinds:
            if mask & _BIT[k]:
                return True
        return False

    def join(self, other: Taints) -> Taints:
        if other is self or not other.mask:
            return self
        if not self.mask:
            return other
        if other.mask & ~self.mask == 0:
            return self  # nothing new: the left side's paths are kept
        if not _Witness.mask:
            return _pathless(self.mask | other.mask)
        merged = dict(self.entries)
        for k, p in other.entries:
            if k not in merged:
                merged[k] = p
        return Taints(tuple(sorted(merged.items())))

    def with_step(self, step: Step) -> Taints:
        if not self.entries:
            return self
        return Taints(tuple((k, extend_path(p, step, k)) for k, p in self.entries))

    def with_steps(self, step_for: Callable[[Kind], Step]) -> Taints:
        """Append a step to each path, built per kind (each kind names the variables that carry it)."""
        if not self.entries:
            return self
        return Taints(
            tuple((k, extend_path(p, step_for(k), k) if witnessed(k) else p) for k, p in self.entries)
        )

    def only(self, keep: Callable[[Kind], bool]) -> Taints:
        if not self.mask:
            return self
        kept = tuple((k, p) for k, p in self.entries if keep(k))
        return self if len(kept) == len(self.entries) else Taints(kept)

    def without(self, *kinds: Kind) -> Taints:
        """The taints without these kinds."""
        drop = 0
        for k in kinds:
            drop |= _BIT[k]
        if not self.mask & drop:
            return self
        return Taints(tuple((k, p) for k, p in self.entries if not _BIT[k] & drop))

    def convert(self, source: Kind, target: Kind, step: Step) -> Taints:
        """Turn `source` into `target` (keeping its path plus `step`); an existing `target` wins."""
        path = self.get(source)
        if path is None:
            return self
        rest = Taints(tuple((k, p) for k, p in self.entries if k is not source))
        return rest.join(Taints(((target, extend_path(path, step, target)),)))

    @staticmethod
    def of(kind: Kind, step: Step) -> Taints:
        if not _Witness.mask & _BIT[kind]:
            return _pathless(_BIT[kind])
        return Taints(((kind, (step,)),))

    @staticmethod
    def union(parts: Iterable[Taints]) -> Taints:
        out = NO_TAINT
        for part in parts:
            out = out.join(part)
        return out


_BIT: dict[Kind, int] = {k: 1 << i for i, k in enumerate(Kind)}
_PATHLESS: dict[int, Taints] = {}


def _pathless(mask: int) -> Taints:
    """The taints of these kinds with empty paths (without witnesses): one shared object per set of kinds."""
    found = _PATHLESS.get(mask)
    if found is None:
        found = _PATHLESS[mask] = Taints(tuple(sorted((k, ()) for k in Kind if _BIT[k] & mask)))
    return found


NO_TAINT = Taints()


def stepper(step_for: Callable[[Kind], Step]) -> Callable[[Taints], Taints]:
    """A function adding one step to every path of the taints it is given, for `Value.map_taints`. The
    step of each kind is made once, and a path shared by several parts of a value is extended once."""
    steps: dict[Kind, Step] = {}
    done: dict[int, tuple[Taints, Taints]] = {}

    def apply(taints: Taints) -> Taints:
        if not taints.entries:
            return taints
        known = done.get(id(taints))
        if known is not None and known[0] is taints:
            return known[1]
        entries = []
        mask = _Witness.mask
        for k, path in taints.entries:
            if not mask & _BIT[k]:
                entries.append((k, path))  # not witnessed in this pass
                continue
            step = steps.get(k)
            if step is None:
                step = steps[k] = step_for(k)
            entries.append((k, extend_path(path, step, k)))
        out = Taints(tuple(entries))
        done[id(taints)] = (taints, out)
        return out

    return apply
