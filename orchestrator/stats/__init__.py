"""Statistics over run results: small pure functions, numbers in, each answering one question.

Missing results are dropped and counted, never scored 0. Anything random takes a required `seed`.
See docs/statistics.md for each statistic, its definition and the reference it is tested against.
"""

from orchestrator.stats.auc import auc_se, hanley_mcneil_se
from orchestrator.stats.best_of_k import DEFAULT_KS, BestOfKRow, KeptDistribution, best_of_k, best_of_k_table
from orchestrator.stats.binary import (
    Agreement,
    CostPerSolve,
    TaskAverage,
    clopper_pearson_interval,
    cohen_kappa,
    cost_per_solved_task,
    discordant_pairs,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_curves,
    pass_hat_k,
    wilson_interval,
)
from orchestrator.stats.bootstrap import (
    BootstrapInterval,
    TaskTotals,
    bootstrap_mean,
    resample_counts,
    resample_indices,
    task_bootstrap,
    task_bootstrap_draws,
    totals_by_task,
)
from orchestrator.stats.continuous import (
    RunSummary,
    SpreadVsNoise,
    WrongOrder,
    spread_against_noise,
    summarize_runs,
    wrong_order_probability,
)
from orchestrator.stats.correlation import RankCorrelation, rank_correlation
from orchestrator.stats.exclusion import RULES, Exclusion, compliant, verdicts
from orchestrator.stats.interaction import (
    Contrast,
    InteractionResult,
    WaldTest,
    holm_adjust,
    interaction_contrasts,
    wald_test,
)
from orchestrator.stats.paired import (
    MIN_TASKS_FOR_RANGE,
    PairedComparison,
    PermutationResult,
    compare_by_task,
    sign_flip_test,
    task_differences,
)
from orchestrator.stats.power import SimulatedPower, miller_task_count, runs_per_arm, simulated_paired_power
from orchestrator.stats.variance import RepeatScores, VarianceSplit, score_per_repeat, variance_components

__all__ = [
    "DEFAULT_KS",
    "MIN_TASKS_FOR_RANGE",
    "RULES",
    "Agreement",
    "BestOfKRow",
    "BootstrapInterval",
    "Contrast",
    "CostPerSolve",
    "Exclusion",
    "InteractionResult",
    "KeptDistribution",
    "PairedComparison",
    "PermutationResult",
    "RankCorrelation",
    "RepeatScores",
    "RunSummary",
    "SimulatedPower",
    "SpreadVsNoise",
    "TaskAverage",
    "TaskTotals",
    "VarianceSplit",
    "WaldTest",
    "WrongOrder",
    "auc_se",
    "best_of_k",
    "best_of_k_table",
    "bootstrap_mean",
    "clopper_pearson_interval",
    "cohen_kappa",
    "compare_by_task",
    "compliant",
    "cost_per_solved_task",
    "discordant_pairs",
    "hanley_mcneil_se",
    "holm_adjust",
    "interaction_contrasts",
    "mcnemar_exact",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "miller_task_count",
    "pass_at_k",
    "pass_curves",
    "pass_hat_k",
    "rank_correlation",
    "resample_counts",
    "resample_indices",
    "runs_per_arm",
    "score_per_repeat",
    "sign_flip_test",
    "simulated_paired_power",
    "spread_against_noise",
    "summarize_runs",
    "task_bootstrap",
    "task_bootstrap_draws",
    "task_differences",
    "totals_by_task",
    "variance_components",
    "verdicts",
    "wald_test",
    "wilson_interval",
    "wrong_order_probability",
]
