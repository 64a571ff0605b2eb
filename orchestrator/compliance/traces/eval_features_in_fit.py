"""Rule `eval_features_in_fit`: the evaluation file's feature columns reach a model fit without its labels.

Flagged for a training call (the X, y or sample weights of a fit, the training data of `xgboost.train`,
cross-validation) reached by data derived from the rows of `data/eval.csv` but not by its labels: an
adversarial-validation model fitted on training plus evaluation features with synthetic 0/1 domain labels,
pseudo-labelling, an encoder or scaler fitted on training plus evaluation features whose output trains the
model. A training call the evaluation labels reach is `eval_labels_in_fit` instead, and not repeated here.

This is reported with its evidence but is not part of a study's default exclusion: using the evaluation
features without their labels is a judgement call a study makes (`Exclusion.ALL` in
`orchestrator.stats.exclusion`, or this rule on its own).

Version history:
  1  first version (split from `eval_labels_in_fit` version 1).
  2  the delivered repo, not one file (compliance.repo); files holding the evaluation file's rows, found
     by content, are the evaluation file; evaluation rows without labels inside the delivered code are flagged.
"""

from __future__ import annotations

from orchestrator.compliance.dataflow import Analysis, SinkHit
from orchestrator.compliance.traces.eval_labels_in_fit import shortest_per_call, training_call
from orchestrator.compliance.values import Kind

RULE = "eval_features_in_fit"
RULE_VERSION = "3"
#: what each version decided differently from the one before (shown in reports beside re-audited verdicts)
CHANGES = {
    "1": "new (split from eval_labels_in_fit 1): the evaluation file's features reach a fit without its labels",
    "2": "the delivered repo, not one file: files holding the evaluation file's rows, found by content under any "
         "name, are the evaluation file; evaluation rows without labels inside the delivered code are flagged",
    "3": "code whose data flow can pass where the trace cannot see (dynamic code, names computed at run "
         "time, imports it cannot follow: compliance/opaque.py) is unanalysable, no longer clear",
}
TITLE = "the evaluation file's features reach a model fit (without its labels)"
DEFAULT_EXCLUSION = False
#: the kinds of taint whose witness paths make this rule's evidence
WITNESS_KINDS = frozenset({Kind.EVAL})


def select(analysis: Analysis) -> list[SinkHit]:
    """Training arguments reached by evaluation features, at calls no evaluation label reaches."""
    labelled = {training_call(h) for h in shortest_per_call(analysis, Kind.EVAL_LABEL).values()}
    best = shortest_per_call(analysis, Kind.EVAL)
    hits = [h for h in best.values() if training_call(h) not in labelled]
    return sorted(hits, key=lambda h: (h.path[-1].line, h.target))


def summarize(hit: SinkHit) -> str:
    source, sink = hit.path[0], hit.path[-1]
    text = (
        f"rows of the evaluation file (line {source.line}, features only, not its labels) reach the training "
        f"data of {hit.target} at line {sink.line}"
    )
    if hit.unreached:
        text += f"; in {hit.unreached}(), which no call in the file was seen to reach"
    return text
