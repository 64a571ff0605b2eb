"""The report's sections for the questions the reference study asks beyond one pairing's scores: against
the starting code, which factors matter, does it hold on later data, what does it cost. Each builds one
Section from the prepared runs, or says which column or setting it needs."""

from __future__ import annotations

from orchestrator.report import cost_tables, effects, keep_tables, tables
from orchestrator.report.prepare import Prepared
from orchestrator.report.render import Section, TableSpec
from orchestrator.report.runs_table import present
from orchestrator.stats import DEFAULT_KS

#: what a runs-table column holds, in the words a skipped section gives its reader (the column's name after it,
#: for whoever writes the runs table by hand)
COLUMN_WORDS = {
    "score": "scores on the holdout or evaluation rows (runs of an ML task that were scored)",
    "holdout_score": "scores on the holdout rows (runs of an ML task that were scored)",
    "eval_score": "scores on the evaluation rows",
    "later_score": "scores on the later period (a study whose datasets include `later`, or `sbx rescore --dataset later`)",
    "outcome": "pass/fail grades (runs of a tests task, graded by its hidden tests)",
    "agent": "the agent of each run",
    "model": "the model of each run",
    "cpu_seconds_metered": "the CPU meter's reading of each run",
    "cost_usd": "what each run's model calls cost (runs through the model gateway with a rate card)",
    "input_tokens": "the tokens each run's model calls used (runs through the model gateway)",
    "reported_input_tokens": "the agent CLIs' own usage reports (runs of a CLI agent that reports usage)",
    "holdout_positives": "the holdout's class counts (a binary task)",
    "holdout_negatives": "the holdout's class counts (a binary task)",
    "judge_outcome": "verdicts of a judge (a task or study that names one)",
    "node": "the node each run ran on", "slot": "the slot each run ran in",
    "run_order": "the order runs started in", "started_at": "when each run started",
}


def needs_words(columns: list[str] | tuple[str, ...], any_of: bool = False) -> str:
    """Why a section is skipped, in words: what data it needs (and the runs-table columns that hold it)."""
    words: list[str] = []
    for column in columns:
        said = COLUMN_WORDS.get(column, column)
        if said not in words:
            words.append(said)
    names = (" or " if any_of else ", ").join("holdout_score or eval_score" if c == "score" else c for c in columns)
    return f"needs {(' or ' if any_of else '; ').join(words)}, and these runs have none (column {names})"


def _needs(prep: Prepared, *columns: str) -> str:
    missing = [c for c in columns if not present(prep.runs, c)]
    return needs_words(missing) if missing else ""


def _baseline(prep: Prepared) -> Section:
    s = Section("baseline", "Against the starting code")
    if not prep.settings.baseline:
        s.skipped = "needs a baseline: the starting code's score (--baseline holdout_score=VALUE, or report.baseline)"
        return s
    if prep.score_column is None:
        s.skipped = "needs a score column"
        return s
    s.intro = (
        "The starting code's score (the baseline, as given) against the compliant runs: the mean gain over "
        "it, that gain in run-to-run SDs (the median pairing SD), the weakest compliant run's margin, and "
        "the runs that scored below it."
    )
    s.tables.append(TableSpec("baseline", "Gain over the starting code", effects.baseline_table(prep)))
    return s


def _factors(prep: Prepared) -> Section:
    s = Section("factors", "Which factors matter")
    if prep.score_column is None:
        s.skipped = "needs a score column"
        return s
    frame = effects.factor_effects_table(prep)
    if frame.empty:
        s.skipped = f"needs a factor ({', '.join(prep.settings.factors)}) with two levels run at matched settings"
        return s
    s.intro = (
        "Each factor's level against the reference level (named with --reference FACTOR=LEVEL, else the "
        "first in sorted order), pooled over the other factors' levels run at both (compliant runs): gain in "
        "the mean with SE (sqrt(var/n + var/n)), z, a 95% bootstrap interval (20,000 resamples of each arm's "
        "runs), the gain in run-to-run SDs (the median SD of the reference level's pairings), runs per arm "
        "16 sd^2 / gain^2, and how often one run of each puts the reference level ahead (averaged over the "
        "other factors' levels; pooled beside it)."
    )
    s.tables.append(TableSpec("factor_effects", "Factor-level effects", frame))
    return s


def _later(prep: Prepared) -> Section:
    s = Section("later", "Does it hold on later data")
    s.skipped = _needs(prep, "later_score", "score")
    if s.skipped:
        return s
    s.intro = (
        "The same compliant artifacts scored on later-period data. The later period has its own difficulty "
        "(the starting code scores differently there), so the table gives each period's gain over the "
        "starting code and the share of it kept, never later minus now"
        + ("." if prep.baseline("later_score") is not None and prep.baseline() is not None else
           "; without both baselines (--baseline) only the means and SDs are given.")
    )
    s.tables.append(TableSpec("later", "Each period: mean, SD and gain over the starting code", tables.later_table(prep)))
    later = prep.runs["compliant_scored"] & prep.runs["later_score"].notna()
    groups = [g for g in (prep.runs.loc[later & (prep.runs["pairing"] == p), "later_score"].to_numpy(float)
                          for p in prep.pairings) if g.size >= 2]
    if len(groups) >= 2:
        s.tables.append(TableSpec("later_spread", "Later period: spread of pairing means against run-to-run noise",
                                  tables.spread_table(prep, value_column="later_score")))
    s.tables.append(TableSpec("later_best_of_k", "Later period: best compliant of k (chosen as before, valued "
                              "on the later score), pairings weighted equally",
                              keep_tables.pooled_best_of_k_frame(prep, ks=DEFAULT_KS, value_column="later_score")))
    factors = effects.factor_effects_table(prep, value_column="later_score")
    if len(factors):
        s.tables.append(TableSpec("later_factor_effects", "Later period: factor-level effects", factors))
    if present(prep.runs, "agent", "model"):
        try:
            contrasts, wald = tables.interaction_table(prep, value_column="later_score")
            s.tables += [TableSpec("later_interaction", "Later period: interaction contrasts", contrasts),
                         TableSpec("later_interaction_wald", "Later period: joint Wald test", wald)]
        except ValueError as exc:
            s.notes.append(f"Later-period interactions could not be computed: {exc}")
    s.tables.append(TableSpec("later_rank_correlation", "Rank correlation of the two periods' scores, runs "
                              "ranked within their pairing and pooled", tables.within_rank_table(
                                  prep, "score", "later_score", name="periods")))
    return s


_COST_TEXT = (
    "Tokens (cached share = cached input / input), CPU-seconds and spend. Cost per scored run and per "
    "compliant run divide the whole spend (failed and flagged attempts were paid for too) by the runs "
    "scored, and by those scored and compliant; cost_per_pass_usd likewise."
)


def _cost(prep: Prepared) -> Section:
    s = Section("cost", "What it costs")
    if not any(present(prep.runs, c) for c in ("cost_usd", "input_tokens", "cpu_seconds_metered")):
        s.skipped = needs_words(("cost_usd", "input_tokens", "cpu_seconds_metered"), any_of=True)
        return s
    where = (
        "Spend was measured by the model gateway at the rate card in force on each run's date. "
        if prep.costs_from_gateway
        else "Spend (cost_usd) is as given in the runs table: sbx did not measure it. "
    )
    card = prep.settings.rate_card
    if card is not None:
        where += (f"list_price_cost prices each run's input and output tokens at {card.name} of {card.date} "
                  "(no cache discount; reasoning tokens, if any, are part of output); cached_price_cost prices "
                  "cached input at the card's cached rate; cost_at_best_cached_share prices a pairing's own "
                  "tokens at the best cached share of any pairing on its model (an accounting counterfactual: "
                  "how much of a gap the cache accounts for, not why it failed). ")
    s.intro = where + _COST_TEXT + (
        " cost_max_over_min_run is the swing between identical runs; cost_over_cheapest the ratio to the "
        "cheapest pairing."
    )
    s.tables.append(TableSpec("cost", "Cost", cost_tables.cost_table(prep)))
    repriced = cost_tables.repricing_table(prep)
    if len(repriced):
        s.tables.append(TableSpec(
            "repricing", "The token ledger repriced (a sensitivity calculation on one transcript: another model "
            "would write a different one)", repriced))
    return s
