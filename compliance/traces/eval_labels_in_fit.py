"""Rule `eval_labels_in_fit`: data read from the evaluation file reaches the training of a model.

Flagged when anything derived from `data/eval.csv` (its rows, its labels, a statistic of them, the file found
by a path variable, a glob over `data/` or a loop over file names) reaches a training argument: the X, y or
sample weights of `.fit`, `.fit_transform`, `.partial_fit`; the training DMatrix of `xgboost.train`; a model
to continue from (`xgb_model=`); or the data of cross-validation. The early-stopping set (`eval_set=`,
`evals=`) is allowed and does not count.

Version history:
  1  first version.
"""

from __future__ import annotations

from compliance.dataflow import Analysis, Role, SinkHit
from compliance.values import Kind

RULE = "eval_labels_in_fit"
RULE_VERSION = "1"
TITLE = "evaluation data reaches a model fit"


def select(analysis: Analysis) -> list[SinkHit]:
    """The hits that break the rule, one per training call (the shortest path to it)."""
    best: dict[tuple[int, str], SinkHit] = {}
    for hit in analysis.hits:
        if hit.role is not Role.TRAIN or hit.kind is not Kind.EVAL:
            continue
        key = (hit.path[-1].line, hit.target)
        if key not in best or len(hit.path) < len(best[key].path):
            best[key] = hit
    return sorted(best.values(), key=lambda h: (h.path[-1].line, h.target))


def summarize(hit: SinkHit) -> str:
    source, sink = hit.path[0], hit.path[-1]
    text = (
        f"data from the evaluation file (line {source.line}) reaches the training data of "
        f"{hit.target} at line {sink.line}"
    )
    if hit.unreached:
        text += f"; in {hit.unreached}(), which no call in the file was seen to reach"
    return text
