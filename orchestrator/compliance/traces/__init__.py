"""The rules, one module each. Each module has `RULE`, `RULE_VERSION`, `TITLE`, `select(analysis)` (the
hits that break it) and `summarize(hit)` (one sentence for people) and `CHANGES` (per version, what it changed). Change a rule's behaviour, or a table in
`compliance.library` it depends on, bump its `RULE_VERSION` and say in `CHANGES` what changed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

from orchestrator.compliance.dataflow import Analysis, SinkHit
from orchestrator.compliance.traces import eval_features_in_fit, eval_labels_in_fit, frame_statistics
from orchestrator.compliance.values import Kind


@dataclass(frozen=True)
class Rule:
    name: str
    version: str
    title: str
    select: Callable[[Analysis], list[SinkHit]]
    summarize: Callable[[SinkHit], str]
    #: whether a study's default exclusion removes runs the rule flags (the others are reported only)
    default_exclusion: bool = True
    #: what the rule's verdict assumed, for the record's notes (optional in a rule module)
    notes: Callable[[Analysis], list[str]] = lambda analysis: []
    #: the kinds of taint whose witness paths make its evidence
    witness_kinds: frozenset[Kind] = frozenset(Kind)
    #: per version, what it decided differently from the version before
    changes: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def of(module: ModuleType) -> Rule:
        return Rule(
            module.RULE,
            module.RULE_VERSION,
            module.TITLE,
            module.select,
            module.summarize,
            module.DEFAULT_EXCLUSION,
            getattr(module, "notes", lambda analysis: []),
            module.WITNESS_KINDS,
            dict(module.CHANGES),
        )


RULES: tuple[Rule, ...] = (
    Rule.of(eval_labels_in_fit),
    Rule.of(frame_statistics),
    Rule.of(eval_features_in_fit),
)
RULES_BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}
#: the rules whose flags make a run non-compliant unless a study chooses otherwise
DEFAULT_RULES: tuple[str, ...] = tuple(r.name for r in RULES if r.default_exclusion)
#: the rules that are reported with their evidence but do not decide compliance unless a study chooses them
REPORTED_ONLY: frozenset[str] = frozenset(r.name for r in RULES if not r.default_exclusion)

__all__ = ["DEFAULT_RULES", "REPORTED_ONLY", "RULES", "RULES_BY_NAME", "Rule"]
