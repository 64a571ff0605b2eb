"""Rule `eval_labels_in_fit`: the evaluation file's labels reach the training of a model.

Flagged when values derived from the label column (the task's target) of `data/eval.csv` reach a training
argument: the X, y or sample weights of `.fit`, `.fit_transform`, `.partial_fit`; the training DMatrix of
`xgboost.train`; a model to continue from (`xgb_model=`); or the data of cross-validation. That covers the
labels themselves, a target encoding or any statistic of them that becomes a feature, a model fitted on them,
and evaluation rows joined to training rows together with their labels (`pd.concat([train, evald])` then
`fit(prepare(full), to_y(full))`). The early-stopping set (`eval_set=`, `evals=`, `valid_sets=`) is allowed
and does not count. Evaluation *features* that reach a fit without the labels are the separate rule
`eval_features_in_fit`.

Version history:
  1  first version: any data from the evaluation file reaching a fit.
  2  only the evaluation file's labels count (features alone are `eval_features_in_fit`); row counts and row
     labels of the evaluation frame carry no labels; the dataflow engine's version 2 semantics (row
     locality, structure kept through dicts keyed by tuples, frames whose columns are known).
  3  the delivered repo, not one file: train.py with the delivered modules it imports (compliance.repo);
     files holding the evaluation file's rows, found by content under any name, are the evaluation file;
     evaluation rows with labels inside the delivered code itself are flagged (`content` evidence).
"""

from __future__ import annotations

from orchestrator.compliance.dataflow import Analysis, Role, SinkHit
from orchestrator.compliance.values import Kind

RULE = "eval_labels_in_fit"
RULE_VERSION = "4"
#: what each version decided differently from the one before (shown in reports beside re-audited verdicts)
CHANGES = {
    "1": "any value derived from the evaluation file reaching a fit",
    "2": "only the evaluation file's labels count (its features alone became eval_features_in_fit); row "
         "counts and row labels carry no labels; dicts keyed by tuples, frames with known columns, row "
         "selections that keep columns",
    "3": "the delivered repo, not one file: train.py with the delivered modules it imports; files holding the "
         "evaluation file's rows, found by content under any name, are the evaluation file; evaluation rows "
         "with labels inside the delivered code are flagged",
    "4": "code whose data flow can pass where the trace cannot see (dynamic code, names computed at run "
         "time, imports it cannot follow: compliance/opaque.py) is unanalysable, no longer clear",
}
TITLE = "the evaluation file's labels reach a model fit"
#: a study's default exclusion removes runs this rule flags
DEFAULT_EXCLUSION = True
#: the kinds of taint whose witness paths make this rule's evidence
WITNESS_KINDS = frozenset({Kind.EVAL_LABEL})


def training_call(hit: SinkHit) -> tuple[int, str]:
    """The training call a hit reached: its line and the call's name without the argument."""
    return hit.path[-1].line, hit.target.split(" (", 1)[0]


def shortest_per_call(analysis: Analysis, kind: Kind) -> dict[tuple[int, str], SinkHit]:
    """Training hits of `kind`, the shortest path per (line, target)."""
    best: dict[tuple[int, str], SinkHit] = {}
    for hit in analysis.hits:
        if hit.role is not Role.TRAIN or hit.kind is not kind:
            continue
        key = (hit.path[-1].line, hit.target)
        if key not in best or len(hit.path) < len(best[key].path):
            best[key] = hit
    return best


def select(analysis: Analysis) -> list[SinkHit]:
    """The hits that break the rule, one per training argument (the shortest path to it)."""
    best = shortest_per_call(analysis, Kind.EVAL_LABEL)
    return sorted(best.values(), key=lambda h: (h.path[-1].line, h.target))


def summarize(hit: SinkHit) -> str:
    source, sink = hit.path[0], hit.path[-1]
    text = (
        f"labels of the evaluation file (line {source.line}) reach the training data of "
        f"{hit.target} at line {sink.line}"
    )
    if hit.unreached:
        text += f"; in {hit.unreached}(), which no call in the file was seen to reach"
    return text
