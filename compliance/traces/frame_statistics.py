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
"""

from __future__ import annotations

from compliance.dataflow import Analysis, Role, SinkHit
from compliance.values import Kind, Path, Step

RULE = "frame_statistics"
RULE_VERSION = "1"
TITLE = "a statistic of the scored batch becomes a feature"

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
