"""Report tables for what the runs cost: spend, tokens, list-price cost at a rate card, and the agents' own
usage reports against the gateway's. Each function takes the prepared runs and returns a DataFrame."""

from __future__ import annotations

import numpy as np
import pandas as pd

from orchestrator.report.prepare import Prepared
from orchestrator.report.runs_table import present


def cost_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: spend, cost per scored and per compliant run, tokens and cached share, CPU-seconds, and
    cost per pass where outcomes exist. A run's spend counts whether or not it was scored (a failed or
    flagged attempt was paid for too), so cost per scored run = total spend / scored runs."""
    from orchestrator.stats import cost_per_solved_task

    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        row: dict[str, object] = {"pairing": p, "runs": len(df)}
        if "cost_usd" in df:
            total = df["cost_usd"].sum()
            scored = df["score"].notna()
            kept = scored & (df["compliant"] == 1.0)
            row.update(
                runs_with_cost=int(df["cost_usd"].notna().sum()),
                total_cost_usd=total,
                mean_cost_usd=df["cost_usd"].mean(),
                scored_runs=int(scored.sum()),
                cost_per_scored_run_usd=total / int(scored.sum()) if scored.any() else np.nan,
                compliant_runs=int(kept.sum()),
                cost_per_compliant_run_usd=total / int(kept.sum()) if kept.any() else np.nan,
            )
            if present(prep.runs, "outcome"):
                cps = cost_per_solved_task(df["cost_usd"].to_numpy(float), df["outcome"].to_numpy(float))
                row.update(passes=cps.solved, cost_per_pass_usd=cps.value)
        for col in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens", "model_calls"):
            if col in df:
                row[f"total_{col}"] = df[col].sum()
        if "input_tokens" in df and "cached_input_tokens" in df:
            both = df["input_tokens"].notna() & df["cached_input_tokens"].notna()
            total_in = df.loc[both, "input_tokens"].sum()
            row["cached_share"] = (
                df.loc[both, "cached_input_tokens"].sum() / total_in if total_in > 0 else np.nan
            )
        if "cpu_seconds_metered" in df:
            row["mean_cpu_seconds"] = df["cpu_seconds_metered"].mean()
        listed = list_price_cost(prep, df)
        if listed is not None:
            row["list_price_cost_per_run_usd"] = listed.mean()
            row["list_price_total_usd"] = listed.sum()
            row["list_price_max_over_min_run"] = listed.max() / listed.min() if listed.min() > 0 else np.nan
        for col in ("input_tokens", "output_tokens"):
            if col in df:
                row[f"mean_{col}"] = df[col].mean()
        rows.append(row)
    frame = pd.DataFrame(rows)
    if "list_price_cost_per_run_usd" in frame and frame["list_price_cost_per_run_usd"].min() > 0:
        frame["list_price_over_cheapest"] = frame["list_price_cost_per_run_usd"] / frame["list_price_cost_per_run_usd"].min()
    return frame


def list_price_cost(prep: Prepared, df: pd.DataFrame) -> pd.Series | None:
    """Each run's cost at the rate card's list prices: input and output tokens at the model's prices (no
    cache discount), or None without a rate card, tokens or a model column. A model the card does not
    list gets no price (an unlisted price is not a zero price)."""
    card = prep.settings.rate_card
    if card is None or "model" not in df or "input_tokens" not in df or "output_tokens" not in df:
        return None
    price_in = df["model"].map(lambda m: card.prices[m].input if m in card.prices else np.nan)
    price_out = df["model"].map(lambda m: card.prices[m].output if m in card.prices else np.nan)
    return (df["input_tokens"] * price_in + df["output_tokens"] * price_out) / 1e6


#: the agent CLI's own usage report, beside the gateway's measurement of the same
SELF_REPORT_PAIRS = (("input_tokens", "reported_input_tokens"), ("output_tokens", "reported_output_tokens"),
                     ("model_calls", "reported_calls"), ("cost_usd", "reported_cost_usd"))


def self_report_gap_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: the CLI's self-reported usage against the gateway's, summed over the runs that have
    both, and the gap (reported - gateway) / gateway. The gateway's numbers are the ones sbx counts."""
    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        row: dict[str, object] = {"pairing": p}
        for gateway, reported in SELF_REPORT_PAIRS:
            if gateway not in df or reported not in df:
                continue
            both = df[gateway].notna() & df[reported].notna()
            g, r = df.loc[both, gateway].sum(), df.loc[both, reported].sum()
            name = gateway.removesuffix("_usd").removesuffix("_tokens")
            row[f"runs_{name}"] = int(both.sum())
            row[f"gateway_{name}"] = g
            row[f"reported_{name}"] = r
            row[f"gap_{name}"] = (r - g) / g if both.any() and g > 0 else np.nan
        rows.append(row)
    return pd.DataFrame(rows)
