"""Whether a run's audit verdicts make it compliant, from (rule, final verdict) pairs alone: what
`compliance.records.is_compliant` decides for records, kept free of pydantic so that reading a study's
100,000 runs back (run/record.py) decides each run without building a record."""

from __future__ import annotations

from collections.abc import Collection, Iterable


def passes(verdicts: Iterable[tuple[str, str]], rules: Collection[str] | None = None) -> bool:
    """Whether every (rule, final verdict) of the rules in `rules` is clear. By default every rule decides
    except those that are reported only (`compliance.traces.REPORTED_ONLY`: `eval_features_in_fit`,
    outside the default exclusion). A flagged, undecided (`error`) or `unanalysable` rule fails it; a run
    with no deciding verdicts at all has not been audited and does not pass either."""
    if rules is None:
        from compliance.traces import REPORTED_ONLY

        deciding = [v for rule, v in verdicts if rule not in REPORTED_ONLY]
    else:
        deciding = [v for rule, v in verdicts if rule in rules]
    return bool(deciding) and all(v == "clear" for v in deciding)
