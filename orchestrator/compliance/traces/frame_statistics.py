"""Rule `frame_statistics`: a statistic of the batch passed to `predict_proba` becomes a feature.

Flagged when data derived from the frame the scorer passes to `predict_proba` (followed into every function of
the file it reaches, such as a `prepare(df)` shared with training) goes through an operation across rows —
`value_counts`, `nunique`, `groupby`/`transform`/`agg`, `rank`, a mean/std/min/max/quantile/sum/count over
rows, `qcut`/`cut` with bins from the data, `duplicated`, `shift`/`rolling`/`expanding`/`diff`, `len` of the
frame, fitting a scaler, encoder or model on it, integer codes of category levels taken from it
(`astype("category").cat.codes`, `factorize`) — and the result reaches a
model's input or the returned predictions. Row-wise work is fine: arithmetic, `map` with a mapping learned on
training data, categoricals with levels fixed from training data, clipping, string parsing, aggregates within
one row (`axis=1`, `apply(..., axis=1)`). A categorical whose levels come from the batch is not flagged by
itself: xgboost (3.1 and later), LightGBM and scikit-learn match categories by value at prediction time.

The scorer's dynamic batch check (`compliance.dynamic`) is recorded as further evidence for this rule.

Version history:
  1  first version.
  2  row locality: a reduction crosses rows only over the axis that indexes the batch's rows (averaging
     ensemble members per row is row-local); loops over lists of columns are not loops over rows; `len` of
     a list counts its members; `groupby` is a partition (aggregates of groups cross rows, a lookup by each
     row's own key does not); `agg`/`transform`/`apply` with `axis=1` are row-wise; a merge of the batch
     with itself crosses rows; a dict lookup keyed by the batch size selects, as an index does; paths that
     read the label column from the batch are not paths the scorer's call takes.
  3  the delivered repo, not one file: a batch statistic in a module train.py imports is followed there
     (compliance.repo); a second batch check that the scored code made fail leaves a clear trace `error`.
"""

from __future__ import annotations

from orchestrator.compliance.dataflow import Analysis, Role, SinkHit
from orchestrator.compliance.values import Kind, Path, Step

RULE = "frame_statistics"
RULE_VERSION = "4"
#: what each version decided differently from the one before (shown in reports beside re-audited verdicts)
CHANGES = {
    "1": "a statistic computed over the scored batch reaching the model's input, by name and call",
    "2": "defined by row locality: axes of reductions, loops over columns, len of lists, groupby as a "
         "partition, lookups and merges with the batch's own rows, axis=1 forms of agg/transform, paths "
         "reading the batch's label dropped",
    "3": "the delivered repo, not one file: a batch statistic in a module train.py imports is followed there; "
         "a second batch check that the scored code made fail turns a clear verdict into error",
    "4": "code whose data flow can pass where the trace cannot see (dynamic code, names computed at run "
         "time, imports it cannot follow: compliance/opaque.py) is unanalysable, no longer clear",
}
TITLE = "a statistic of the scored batch becomes a feature"
DEFAULT_EXCLUSION = True
#: the kinds of taint whose witness paths make this rule's evidence
WITNESS_KINDS = frozenset({Kind.BATCH, Kind.BATCH_ROW, Kind.BATCH_STAT, Kind.BATCH_SIZE, Kind.BATCH_LEVELS})

_CROSS_ROW_KINDS = (Kind.BATCH_STAT, Kind.BATCH_SIZE)
_CROSS_ROW_NOTES = ("across the rows of the batch", "number of rows in the batch")


def origin(path: Path) -> Step:
    """The step where batch data became a cross-row value (the path's first cross-row note)."""
    for step in path:
        if any(marker in step.note for marker in _CROSS_ROW_NOTES):
            return step
    return path[0]


def select(analysis: Analysis) -> list[SinkHit]:
    """The hits that break the rule: one per cross-row operation, at the first sink it reaches (a model's
    input before the returned value, which the same operation usually reaches too)."""
    best: dict[int, SinkHit] = {}
    for hit in analysis.hits:
        if hit.role not in (Role.PREDICT, Role.OUTPUT) or hit.kind not in _CROSS_ROW_KINDS:
            continue
        key = origin(hit.path).line
        current = best.get(key)
        if current is None or _rank(hit) < _rank(current):
            best[key] = hit
    return sorted(best.values(), key=lambda h: (origin(h.path).line, h.path[-1].line))


def notes(analysis: Analysis) -> list[str]:
    """What the verdict assumed: calls in none of the audit's tables that received the scored frame's data
    were taken to work row by row (the flagged traces through them say so at that step)."""
    if not analysis.uncertain:
        return []
    shown = ", ".join(f"{what} (line {line})" for line, what in analysis.uncertain[:8])
    more = f" and {len(analysis.uncertain) - 8} more" if len(analysis.uncertain) > 8 else ""
    return [f"taken to work row by row (not in the audit's tables): {shown}{more}"]


def _rank(hit: SinkHit) -> tuple[int, int]:
    return (0 if hit.role is Role.PREDICT else 1, len(hit.path))


def summarize(hit: SinkHit) -> str:
    op = origin(hit.path)
    what = op.note or "a cross-row operation"
    where = "the model's input" if hit.role is Role.PREDICT else "the returned predictions"
    text = f"line {op.line}: {what}; it reaches {where} ({hit.target}) at line {hit.path[-1].line}"
    if hit.unreached:
        text += f"; in {hit.unreached}(), which no call in the file was seen to reach"
    return text
