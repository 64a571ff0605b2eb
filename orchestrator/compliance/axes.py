"""What each axis of an array-like value indexes (the batch's rows or something else), and what follows:
which axis a reduction crosses, whether iterating a value goes through the batch's rows.

See `compliance.values` (`ROWS`, `OTHER`, `MORE`, `DEFAULT_AXES`) for the representation.
"""

from __future__ import annotations

from orchestrator.compliance.values import DEFAULT_AXES, MORE, OTHER, ROWS, Axes, Kind, LibRef, Value


def axes_of(v: Value) -> Axes | None:
    """What each axis of `v` indexes, when `v` carries batch data: a list of batch arrays has its members
    on axis 0 (unless it was built one item per batch row); an array with recorded axes has those; any
    other batch value has the rows first. None for values without batch data."""
    if v.is_list:
        if v.base.has(Kind.BATCH):
            return DEFAULT_AXES  # one item per batch row: a column
        inner = v.element()
        inner_axes = axes_of(inner)
        return (OTHER, *inner_axes) if inner_axes is not None else None
    if v.axes is not None:
        return v.axes
    if v.total.has(Kind.BATCH):
        return DEFAULT_AXES
    return None


def axis_role(axes: Axes, axis: int) -> str | None:
    """What axis `axis` (negative counts from the end) of an array with these axes indexes: ROWS, OTHER,
    or None when that cannot be known (a position inside the unknown `MORE` part that may be the rows)."""
    if MORE not in axes:
        return axes[axis] if -len(axes) <= axis < len(axes) else None
    cut = axes.index(MORE)
    prefix, suffix = axes[:cut], axes[cut + 1 :]
    if axis >= 0:
        if axis < len(prefix):
            return prefix[axis]
        return OTHER if ROWS in prefix else None
    if -axis <= len(suffix):
        return suffix[axis]
    return None  # counted from an end whose length is not known: it may be the rows


def drop_axis(axes: Axes, axis: int) -> Axes | None:
    """The axes after a reduction over `axis`, when they can be known."""
    if MORE not in axes:
        if -len(axes) <= axis < len(axes):
            rest = list(axes)
            del rest[axis]
            return tuple(rest) or None
        return None
    cut = axes.index(MORE)
    if 0 <= axis < cut:
        return axes[:axis] + axes[axis + 1 :]
    if axis < 0 and -axis <= len(axes) - cut - 1:
        rest = list(axes)
        del rest[axis]
        return tuple(rest)
    return axes[:cut] + (MORE,) if ROWS in axes[:cut] else None


def iterates_rows(v: Value) -> bool:
    """Whether iterating over `v` goes through the batch's rows (not through the members of a list of
    batch columns, the groups of a groupby, or the columns of a frame's dict)."""
    if isinstance(v.ref, LibRef) and v.ref.qualname.startswith("<group"):
        return False
    if v.is_list:
        return v.base.has(Kind.BATCH)
    if not v.total.has(Kind.BATCH):
        return False
    if v.fields is not None and v.ref is None and not v.base.has(Kind.BATCH):
        return False  # a dict of batch columns: its keys
    axes = axes_of(v)
    return axes is None or not axes or axes[0] == ROWS
