"""Statistics over run results: small pure functions, numbers in, each answering one question.

Missing results are dropped and counted, never scored 0. Anything random takes a required `seed`.
See docs/statistics.md for each statistic, its definition and the reference it is tested against.

The names below are loaded on first use (PEP 562), so `import orchestrator.stats` costs nothing and
`sbx --help` never loads numpy or scipy through it; `from orchestrator.stats import x` works as usual.
"""

from __future__ import annotations

import importlib
from typing import Any

#: exported name -> the module of orchestrator.stats that defines it
_EXPORTS: dict[str, str] = {
    "GroupShare": "anova",
    "group_share": "anova",
    "auc_se": "auc",
    "hanley_mcneil_se": "auc",
    "CauseAgainstBaseRate": "base_rate",
    "cause_against_base_rate": "base_rate",
    "fisher_exact_two_sided": "base_rate",
    "BestOfKRow": "keep_best",
    "DEFAULT_KS": "keep_best",
    "KeptDistribution": "keep_best",
    "best_of_k": "keep_best",
    "best_of_k_table": "keep_best",
    "PooledBestOfKRow": "pooled_keep_best",
    "pooled_best_of_k": "pooled_keep_best",
    "Halves": "drift",
    "halves": "drift",
    "MeanDifference": "effects",
    "mean_difference": "effects",
    "Agreement": "binary",
    "CostPerSolve": "binary",
    "TaskAverage": "binary",
    "clopper_pearson_interval": "binary",
    "cohen_kappa": "binary",
    "cost_per_solved_task": "binary",
    "discordant_pairs": "binary",
    "mcnemar_exact": "binary",
    "mean_pass_at_k": "binary",
    "mean_pass_hat_k": "binary",
    "pass_at_k": "binary",
    "pass_curves": "binary",
    "pass_hat_k": "binary",
    "wilson_interval": "binary",
    "BootstrapInterval": "bootstrap",
    "TaskTotals": "bootstrap",
    "bootstrap_mean": "bootstrap",
    "resample_count_blocks": "bootstrap",
    "resample_counts": "bootstrap",
    "resample_indices": "bootstrap",
    "task_bootstrap": "bootstrap",
    "task_bootstrap_draws": "bootstrap",
    "totals_by_task": "bootstrap",
    "RunSummary": "continuous",
    "SpreadVsNoise": "continuous",
    "WrongOrder": "continuous",
    "RunGaps": "continuous",
    "run_gaps": "continuous",
    "spread_against_noise": "continuous",
    "summarize_runs": "continuous",
    "wrong_order_probability": "continuous",
    "RankCorrelation": "correlation",
    "rank_correlation": "correlation",
    "PooledRankCorrelation": "correlation",
    "pooled_rank_correlation": "correlation",
    "Exclusion": "exclusion",
    "RULES": "exclusion",
    "compliant": "exclusion",
    "verdicts": "exclusion",
    "ClusteredEstimate": "flips",
    "OutcomeTable": "flips",
    "SeedControl": "flips",
    "clustered_mean": "flips",
    "disagreement_rate": "flips",
    "net_swing": "flips",
    "outcome_table": "flips",
    "seed_control": "flips",
    "DivergenceHazard": "hazard",
    "HazardRow": "hazard",
    "divergence_hazard": "hazard",
    "Contrast": "interaction",
    "InteractionResult": "interaction",
    "WaldTest": "interaction",
    "holm_adjust": "interaction",
    "interaction_contrasts": "interaction",
    "wald_test": "interaction",
    "MIN_TASKS_FOR_RANGE": "paired",
    "PairedComparison": "paired",
    "PermutationResult": "paired",
    "compare_by_task": "paired",
    "sign_flip_test": "paired",
    "task_differences": "paired",
    "PlacementCheck": "placement",
    "placement_checks": "placement",
    "SimulatedPower": "power",
    "miller_task_count": "power",
    "runs_per_arm": "power",
    "simulated_paired_power": "power",
    "RepeatScores": "variance",
    "VarianceSplit": "variance",
    "score_per_repeat": "variance",
    "variance_components": "variance",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
