"""The rules, one module each. Each module has `RULE`, `RULE_VERSION`, `TITLE`, `select(analysis)` (the
hits that break it) and `summarize(hit)` (one sentence for people). Change a rule's behaviour, or a table in
`compliance.library` it depends on, and bump its `RULE_VERSION`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from compliance.dataflow import Analysis, SinkHit
from compliance.traces import eval_labels_in_fit, frame_statistics


@dataclass(frozen=True)
class Rule:
    name: str
    version: str
    title: str
    select: Callable[[Analysis], list[SinkHit]]
    summarize: Callable[[SinkHit], str]

    @staticmethod
    def of(module: ModuleType) -> Rule:
        return Rule(module.RULE, module.RULE_VERSION, module.TITLE, module.select, module.summarize)


RULES: tuple[Rule, ...] = (Rule.of(eval_labels_in_fit), Rule.of(frame_statistics))
RULES_BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}

__all__ = ["RULES", "RULES_BY_NAME", "Rule"]
