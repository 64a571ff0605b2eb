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
                # the swing between identical runs of one pairing
                cost_max_over_min_run=df["cost_usd"].max() / df["cost_usd"].min() if df["cost_usd"].min() > 0 else np.nan,
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
        cached = cached_price_cost(prep, df)
        if cached is not None:
            row["cached_price_cost_per_run_usd"] = cached.mean()
        for col in ("input_tokens", "output_tokens"):
            if col in df:
                row[f"mean_{col}"] = df[col].mean()
        rows.append(row)
    frame = pd.DataFrame(rows)
    if "mean_cost_usd" in frame and frame["mean_cost_usd"].min() > 0:
        frame["cost_over_cheapest"] = frame["mean_cost_usd"] / frame["mean_cost_usd"].min()
    if "cached_price_cost_per_run_usd" in frame:
        frame["cost_at_best_cached_share_usd"] = _at_best_cached_share(prep, frame)
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


def _prices(prep: Prepared, df: pd.DataFrame, field: str) -> pd.Series:
    card = prep.settings.rate_card
    assert card is not None
    return df["model"].map(lambda m: getattr(card.prices[m], field) if m in card.prices else None).astype(float)


def cached_price_cost(prep: Prepared, df: pd.DataFrame) -> pd.Series | None:
    """Each run's cost at the rate card with its cache discount: uncached input at the input price, cached
    input at the cached price, output at the output price. None without a rate card, a model column or the
    token columns; NaN for a model whose card lists no cached price (an unlisted price is not zero)."""
    card = prep.settings.rate_card
    cols = ("model", "input_tokens", "cached_input_tokens", "output_tokens")
    if card is None or any(c not in df for c in cols) or not df["cached_input_tokens"].notna().any():
        return None
    uncached = df["input_tokens"] - df["cached_input_tokens"]
    return (uncached * _prices(prep, df, "input") + df["cached_input_tokens"] * _prices(prep, df, "cached_input")
            + df["output_tokens"] * _prices(prep, df, "output")) / 1e6


def _at_best_cached_share(prep: Prepared, frame: pd.DataFrame) -> list[float]:
    """The cache counterfactual: each pairing's own mean tokens, priced as if its input had been served from
    the cache at the highest cached share of any pairing on the same model (an accounting counterfactual: it
    says how much of a cost gap the cache accounts for, not why the cache failed)."""
    out = []
    share = frame.set_index("pairing")["cached_share"]
    for p in frame["pairing"]:
        df = prep.of(p)
        model = df["model"].dropna().astype(str)
        if model.nunique() != 1 or prep.settings.rate_card is None or model.iloc[0] not in prep.settings.rate_card.prices:
            out.append(np.nan)
            continue
        same = [q for q in frame["pairing"] if set(prep.of(q)["model"].dropna().astype(str)) == {model.iloc[0]}]
        best = share.loc[same].max()
        price = prep.settings.rate_card.prices[model.iloc[0]]
        if price.cached_input is None or np.isnan(best):
            out.append(np.nan)
            continue
        tokens_in, tokens_out = df["input_tokens"].mean(), df["output_tokens"].mean()
        out.append((tokens_in * (1 - best) * price.input + tokens_in * best * price.cached_input
                    + tokens_out * price.output) / 1e6)
    return out


def repricing_table(prep: Prepared) -> pd.DataFrame:
    """The whole token ledger (every counted run) priced as run, at the rate card's price for each run's
    model, and at each of `reprice_at`'s prices; beside each, the price if `reprice_cached_share` of the
    input had been served from the cache (blank where no cached rate is listed: an unlisted price is not
    a zero price). Reasoning tokens, when the table has them apart, are billed at the output rate."""
    runs = prep.runs
    if "input_tokens" not in runs or "output_tokens" not in runs or not runs["input_tokens"].notna().any():
        return pd.DataFrame()
    share = prep.settings.reprice_cached_share
    out_tokens = runs["output_tokens"] + (runs["reasoning_tokens"].fillna(0) if "reasoning_tokens" in runs else 0)

    def priced(p_in: pd.Series | float, p_out: pd.Series | float, p_cached: pd.Series | float) -> tuple[float, float]:
        full = float(((runs["input_tokens"] * p_in + out_tokens * p_out) / 1e6).sum(min_count=1))
        cached = ((runs["input_tokens"] * ((1 - share) * p_in + share * p_cached) + out_tokens * p_out) / 1e6)
        return full, float(cached.sum(min_count=len(runs)))  # NaN if any run's cached rate is unlisted

    rows = []
    card = prep.settings.rate_card
    if card is not None and "model" in runs:
        full, cached = priced(_prices(prep, runs, "input"), _prices(prep, runs, "output"),
                              _prices(prep, runs, "cached_input"))
        rows.append({"prices": f"as run ({card.name}, {card.date})", "input_tokens": runs["input_tokens"].sum(),
                     "output_tokens": out_tokens.sum(), "ledger_usd": full, f"if_{share:.0%}_cached_usd": cached})
    for name, price in prep.settings.reprice_at.items():
        full, cached = priced(price.input, price.output, np.nan if price.cached_input is None else price.cached_input)
        rows.append({"prices": name, "input_tokens": runs["input_tokens"].sum(), "output_tokens": out_tokens.sum(),
                     "ledger_usd": full, f"if_{share:.0%}_cached_usd": cached})
    return pd.DataFrame(rows)


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
