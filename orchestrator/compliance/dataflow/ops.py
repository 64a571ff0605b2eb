"""Taint operations the library semantics share: a cross-row operation turning batch data into a batch
statistic, and the union of a call's arguments (shape arguments giving up the batch size)."""

from __future__ import annotations

from orchestrator.compliance import library as lib
from orchestrator.compliance.dataflow.core import CallSite, Host
from orchestrator.compliance.values import Kind, Taints, Value


def drop_kinds(value: Value | None, *kinds: Kind) -> Taints:
    if value is None:
        return Taints()
    return value.total.only(lambda k: k not in kinds)


def cross_row(host: Host, taints: Taints, site: CallSite, what: str) -> Taints:
    """Batch data through a cross-row operation becomes a batch statistic; the step says which operation.
    Values of one row (BATCH_ROW) stay what they are: an aggregate within a row is row-wise work."""
    if not taints.has(Kind.BATCH):
        return taints
    step = host.step(site, f"{what} across the rows of the batch", kind=Kind.BATCH)
    return taints.convert(Kind.BATCH, Kind.BATCH_STAT, step)


def args_total(
    site: CallSite,
    skip_positions: tuple[int, ...] = (),
    skip_keywords: frozenset[str] = frozenset(),
    shape: lib.Roles | None = None,
) -> Taints:
    """Union of the arguments' taints; shape arguments and row labels give up the batch size (and carry
    nothing of the evaluation file's labels)."""
    out = Taints()
    for i, v in enumerate(site.args):
        if i in skip_positions:
            continue
        if shape is not None and (shape.all_positional or i in shape.positions):
            out = out.join(drop_kinds(v, Kind.BATCH_SIZE, Kind.EVAL_LABEL))
        else:
            out = out.join(v.total)
    for k, v in site.kwargs.items():
        if k in skip_keywords:
            continue
        if k in lib.SHAPE_KEYWORDS or (shape is not None and k in shape.keywords):
            out = out.join(drop_kinds(v, Kind.BATCH_SIZE, Kind.EVAL_LABEL))
        else:
            out = out.join(v.total)
    for extra in (site.star, site.dstar):
        if extra is not None:
            out = out.join(extra.total)
    return out
