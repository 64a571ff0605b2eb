"""Whether a run's audit verdicts make it compliant, from (rule, final verdict) pairs alone: what
`compliance.records.is_compliant` decides for records, kept free of pydantic so that reading a study's
100,000 runs back (run/record.py) decides each run without building a record."""

from __future__ import annotations

from collections.abc import Collection, Iterable

# the reported-only rules by name, without importing the rules and their data-flow engine
# (tests/test_architecture.py holds these names to compliance.traces' REPORTED_ONLY)
from orchestrator.stats.exclusion import OPTIONAL_RULES


def passes(verdicts: Iterable[tuple[str, str]], rules: Collection[str] | None = None) -> bool:
    """Whether every (rule, final verdict) of the rules in `rules` is clear. By default every rule decides
    except those that are reported only (`compliance.traces.REPORTED_ONLY`: `eval_features_in_fit`,
    outside the default exclusion). A flagged, undecided (`error`) or `unanalysable` rule fails it; a run
    with no deciding verdicts at all has not been audited and does not pass either."""
    if rules is None:
        deciding = [v for rule, v in verdicts if rule not in OPTIONAL_RULES]
    else:
        deciding = [v for rule, v in verdicts if rule in rules]
    return bool(deciding) and all(v == "clear" for v in deciding)
