"""The report on the reference study's own runs gives the figures its paper prints.

The study ("Identical Runs, Different Results", ../shared/reference-study/) is converted into sbx's runs
table by orchestrator.report.reference_study and reported with the settings its paper states (baselines,
budget, rate card, reference levels). Each figure is compared to the printed digit: `printed(x, "0.7361")`
holds when x rounds to the printed text. Bootstrap intervals and permutation p-values get a stated
tolerance (other resamples give other draws). Figures the report does not produce are listed in
docs/statistics.md.
"""

from __future__ import annotations

import os
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.report.reference_study import convert, main, settings
from orchestrator.specs.study import ReportSpec

FOLDER = Path(os.environ.get("SBX_REFERENCE_STUDY", Path(__file__).resolve().parents[3] / "shared" / "reference-study"))
pytestmark = pytest.mark.skipif(not (FOLDER / "study2_cells.csv").is_file(), reason=f"no reference study at {FOLDER}")

#: how far a bootstrap interval's end may lie from the printed one, in AUC: the paper's resamples are not
#: ours, and across seeds the ends of these 2,000- and 5,000-resample intervals move by up to about this much
BOOT = 0.0004
SETTINGS = ReportSpec.model_validate(settings())


def printed(value: float, text: str, *, percent: bool = False) -> bool:
    """Does `value` round to the printed figure `text` (e.g. "0.7361", "+0.0081", "96.8")?"""
    shown = Decimal(text.replace("+", ""))
    v = Decimal(repr(float(value) * (100 if percent else 1)))
    return any(v.quantize(shown, rounding=mode) == shown for mode in (ROUND_HALF_EVEN, ROUND_HALF_UP))


def _report(tmp_path_factory: pytest.TempPathFactory, study: str) -> dict[str, pd.DataFrame]:
    """The documented commands: convert (with the settings file), then `sbx report --runs-csv`."""
    from orchestrator.cli import main as sbx

    out = tmp_path_factory.mktemp(f"study{study}")
    csv, yaml_file = out / "runs.csv", out / "reference.yaml"
    assert main([str(FOLDER), str(csv), "--study", study, "--settings-out", str(yaml_file)]) == 0
    assert sbx(["report", "--runs-csv", str(csv), "--settings", str(yaml_file), "--out", str(out / "report")]) == 0
    return {path.stem: pd.read_csv(path) for path in (out / "report" / "tables").glob("*.csv")}


def test_the_settings_file_is_the_papers(tmp_path: Path) -> None:
    import yaml

    main([str(FOLDER), str(tmp_path / "r.csv"), "--study", "2", "--settings-out", str(tmp_path / "s.yaml")])
    assert ReportSpec.model_validate(yaml.safe_load((tmp_path / "s.yaml").read_text())) == SETTINGS
    assert len(pd.read_csv(tmp_path / "r.csv")) == 312 and len(convert(FOLDER, "3")) == 179 + 156
    assert SETTINGS.baseline["holdout_score"] == 0.714770751736 and SETTINGS.budget_cpu_seconds == 18_000


@pytest.fixture(scope="module")
def s2(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    return _report(tmp_path_factory, "2")


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    return _report(tmp_path_factory, "3")


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    return _report(tmp_path_factory, "all")


def test_printed_rounds_like_the_paper() -> None:
    assert printed(0.73614, "0.7361") and not printed(0.73616, "0.7361") and printed(0.0081158, "+0.0081")
    assert printed(0.967949, "96.8", percent=True) and not printed(0.9671, "96.8", percent=True)


# Table 3: Study 2, holdout AUC over compliant runs (the last column over all runs)
TABLE3 = {
    "pi/glm-5.3-flash": ("52", "0.7361", "0.7359", "0.0104", "0.7332", "0.7389", "0.7597", "0.7361"),
    "hermes/glm-5.3-flash": ("47", "0.7379", "0.7404", "0.0112", "0.7347", "0.7411", "0.7590", "0.7427"),
    "opencode/glm-5.3-flash": ("51", "0.7400", "0.7402", "0.0097", "0.7373", "0.7427", "0.7596", "0.7417"),
    "opencode/deepseek-4.1-flash": ("52", "0.7403", "0.7418", "0.0096", "0.7377", "0.7429", "0.7578", "0.7403"),
    "hermes/deepseek-4.1-flash": ("49", "0.7441", "0.7437", "0.0109", "0.7411", "0.7472", "0.7663", "0.7459"),
    "pi/deepseek-4.1-flash": ("51", "0.7456", "0.7462", "0.0125", "0.7421", "0.7490", "0.7695", "0.7455"),
}


def test_table_3(s2: dict[str, pd.DataFrame]) -> None:
    t = s2["pairings"].set_index("pairing")
    for p, (n, mean, median, sd, lo, hi, best, all_mean) in TABLE3.items():
        r = t.loc[p]
        assert r["compliant"] == int(n), p
        for col, text in (("mean", mean), ("median", median), ("sd", sd), ("best", best), ("all_run_mean", all_mean)):
            assert printed(r[col], text), (p, col, r[col], text)
        assert abs(r["ci_low"] - float(lo)) <= BOOT and abs(r["ci_high"] - float(hi)) <= BOOT, p


def test_section_4_1_and_4_3(s2: dict[str, pd.DataFrame]) -> None:
    spread = s2["spread"].iloc[0]
    assert printed(spread["range_of_means"], "0.0095") and printed(spread["median_run_sd"], "0.0107")
    base = s2["baseline"].set_index("score").loc["holdout_score"]
    # every compliant run beat the starting code, the weakest by 0.0007; the one run below it broke a rule
    assert base["compliant_below_baseline"] == 0 and printed(base["weakest_compliant_minus_baseline"], "0.0007")
    assert base["scored_below_baseline"] == 1 and base["noncompliant_below_baseline"] == 1
    top = s2["top_runs"].set_index(["runs", "score"]).loc[("all", "holdout_score")]
    # the seven highest scores are among the ten rule-breakers, which scored 0.7116 to 0.8293
    assert top["rule_breakers"] == 7 and top["rule_breakers_in_scored"] == 10
    assert printed(top["best"], "0.8293") and printed(top["best_compliant"], "0.7695")
    assert printed(top["noncompliant_min"], "0.7116") and printed(top["noncompliant_max"], "0.8293")


def test_section_4_2_three_run_misordering(s2: dict[str, pd.DataFrame]) -> None:
    t = s2["runs_needed"]
    model = lambda p: p.split("/")[1]  # noqa: E731
    same = t[[model(a) == model(b) for a, b in zip(t["stronger"], t["weaker"], strict=True)]]
    assert printed(same["p_weaker_ahead_r3"].min(), "0.28") and printed(same["p_weaker_ahead_r3"].max(), "0.44")


# Table 5: Study 2 headline numbers under four exclusion rules
TABLE5 = {
    "nothing": ("312", "0.0098", "0.0133", "0.8293", "0.7499", "0.7565"),
    "eval_labels_in_fit": ("307", "0.0098", "0.0111", "0.8036", "0.7493", "0.7548"),
    "frame_statistics": ("307", "0.0095", "0.0117", "0.8293", "0.7498", "0.7564"),
    "both": ("302", "0.0095", "0.0107", "0.7695", "0.7493", "0.7548"),
}


def test_table_5(s2: dict[str, pd.DataFrame]) -> None:
    t = s2["exclusion_summary"].set_index("exclusion")
    for rule, (runs, spread, sd, best, b3, b10) in TABLE5.items():
        r = t.loc[rule]
        assert r["runs"] == int(runs)
        for col, text in (("spread_of_means", spread), ("median_run_sd", sd), ("best", best),
                          ("best_of_3_median", b3), ("best_of_10_median", b10)):
            assert printed(r[col], text), (rule, col, r[col], text)


# Table 6: best compliant of k, Study 2, the six pairings weighted equally
TABLE6 = {
    1: ("0.7412", "0.7220", "0.7587", None),
    3: ("0.7493", "0.7355", "0.7641", ("+0.0081", "+0.0063", "+0.0098")),
    5: ("0.7526", "0.7409", "0.7645", ("+0.0114", "+0.0085", "+0.0131")),
    10: ("0.7548", "0.7460", "0.7663", ("+0.0136", "+0.0113", "+0.0154")),
}


def test_table_6(s2: dict[str, pd.DataFrame]) -> None:
    t = s2["best_of_k_pooled"]
    t = t[t["factor"] == "all"].set_index("k")
    for k, (median, p05, p95, gain) in TABLE6.items():
        r = t.loc[k]
        assert printed(r["median_kept"], median) and printed(r["p05_kept"], p05) and printed(r["p95_kept"], p95), k
        if gain:
            # the paper's gain is the difference of its printed (rounded) medians: within one printed unit
            assert abs(r["gain_median"] - float(gain[0])) <= 0.0001, (k, r["gain_median"])
            assert abs(r["gain_median_low"] - float(gain[1])) <= BOOT and abs(r["gain_median_high"] - float(gain[2])) <= BOOT
    one = t.loc[1]
    assert printed(one["p_any_compliant"], "96.8", percent=True)
    assert printed(one["p_any_wilson_low"], "94.2", percent=True) and printed(one["p_any_wilson_high"], "98.2", percent=True)
    assert abs(t.loc[3, "p_any_low"] - 0.9988) <= 0.0002  # "at least 99.88%"
    assert t.loc[5, "p_any_low"] >= 0.9999 and t.loc[10, "p_any_low"] >= 0.9999
    # section 4.4: the oracle's mean differs by at most 0.00005; eval and holdout ranks agree at +0.99
    sel = s2["selection"].set_index("subset").loc["all pairings"]
    assert 0 <= sel[["oracle_regret_k3", "oracle_regret_k5", "oracle_regret_k10"]].max() <= 0.00005
    assert printed(sel["rho"], "0.99")


# Table 17: median kept holdout AUC per Study 2 pairing
TABLE17 = {
    "pi/glm-5.3-flash": ("0.7359", "0.7460", "0.7493", "0.7529", "+0.0101", "+0.0170"),
    "hermes/glm-5.3-flash": ("0.7404", "0.7461", "0.7499", "0.7543", "+0.0057", "+0.0139"),
    "opencode/glm-5.3-flash": ("0.7402", "0.7486", "0.7518", "0.7532", "+0.0084", "+0.0130"),
    "opencode/deepseek-4.1-flash": ("0.7418", "0.7488", "0.7506", "0.7533", "+0.0070", "+0.0115"),
    "hermes/deepseek-4.1-flash": ("0.7437", "0.7535", "0.7550", "0.7607", "+0.0098", "+0.0170"),
    "pi/deepseek-4.1-flash": ("0.7462", "0.7567", "0.7590", "0.7613", "+0.0105", "+0.0151"),
}


def test_table_17(s2: dict[str, pd.DataFrame]) -> None:
    t = s2["best_of_k"].set_index(["pairing", "k"])
    for p, (m1, m3, m5, m10, g3, g10) in TABLE17.items():
        for k, text in ((1, m1), (3, m3), (5, m5), (10, m10)):
            assert printed(t.loc[(p, k), "median_kept"], text), (p, k)
        assert abs(t.loc[(p, 3), "gain_median"] - float(g3)) <= 0.0001
        assert abs(t.loc[(p, 10), "gain_median"] - float(g10)) <= 0.0001
        # "an oracle choosing on the holdout would raise the mean kept score by at most 0.00013"
        assert (t.loc[p, "oracle_mean_kept"] - t.loc[p, "mean_kept"]).max() < 0.000135  # 0.00013 as printed


def _contrasts(t: pd.DataFrame) -> pd.DataFrame:
    return t.set_index(["agent", "against"])


# Table 10: interaction contrasts (estimate, SE, in SEs, interval, Holm p) and the joint Wald tests
TABLE10 = {
    "2": {("pi", "hermes"): ("+0.0033", "0.0032", "1.0", "-0.0029", "+0.0094", "0.30"),
          ("pi", "opencode"): ("+0.0092", "0.0030", "3.1", "+0.0034", "+0.0150", "0.006"),
          ("hermes", "opencode"): ("+0.0059", "0.0030", "2.0", "+0.0002", "+0.0116", "0.095")},
    "3": {("pi", "hermes"): ("+0.0085", "0.0032", "2.7", "+0.0024", "+0.0148", "0.015"),
          ("pi", "opencode"): ("+0.0097", "0.0029", "3.3", "+0.0040", "+0.0155", "0.003"),
          ("hermes", "opencode"): ("+0.0012", "0.0031", "0.4", "-0.0049", "+0.0072", "0.71")},
}
WALD = {"2": ("10.2", "0.006"), "3": ("12.3", "0.002")}


@pytest.mark.parametrize("study", ["2", "3"])
def test_table_10(study: str, s2: dict[str, pd.DataFrame], s3: dict[str, pd.DataFrame]) -> None:
    tables = s2 if study == "2" else s3
    t = _contrasts(tables["interaction"])
    assert (tables["interaction"]["reference_model"] == "glm-5.3-flash").all()
    for pair, (est, se, z, lo, hi, holm) in TABLE10[study].items():
        r = t.loc[pair]
        assert printed(r["contrast"], est) and printed(r["se"], se) and printed(r["z"], z), pair
        assert printed(r["p_holm"], holm), (pair, r["p_holm"])
        assert abs(r["boot_low"] - float(lo)) <= BOOT and abs(r["boot_high"] - float(hi)) <= BOOT, pair
    wald = tables["interaction_wald"].iloc[0]
    assert printed(wald["statistic"], WALD[study][0]) and printed(wald["p_value"], WALD[study][1])


# Table 7: Study 3, the larger model's gain per agent and pooled (compliant runs)
TABLE7 = {
    "agent=pi": ("0.7513", "47", "0.7361", "52", "+0.0152", "+0.0110", "+0.0193"),
    "agent=hermes": ("0.7446", "47", "0.7379", "47", "+0.0067", "+0.0021", "+0.0113"),
    "agent=opencode": ("0.7455", "50", "0.7400", "51", "+0.0055", "+0.0016", "+0.0094"),
    "all": ("0.7471", "144", "0.7380", "150", "+0.0091", "+0.0066", "+0.0115"),
}


def test_table_7_and_section_4_5(s3: dict[str, pd.DataFrame]) -> None:
    t = s3["factor_effects"]
    t = t[t["factor"] == "model"].set_index("within")
    for scope, (m_l, n_l, m_r, n_r, gain, lo, hi) in TABLE7.items():
        r = t.loc[scope]
        assert r["level"] == "glm-5.3" and r["reference"] == "glm-5.3-flash"
        assert r["runs_level"] == int(n_l) and r["runs_reference"] == int(n_r), scope
        assert printed(r["mean_level"], m_l) and printed(r["mean_reference"], m_r) and printed(r["gain"], gain)
        assert abs(r["ci_low"] - float(lo)) <= BOOT and abs(r["ci_high"] - float(hi)) <= BOOT, scope
    pooled = t.loc["all"]
    # 7.1 standard errors, 0.87 run-to-run SDs, about 21 runs per arm (Table 9), and one run of each
    # favours the smaller model 28% of the time: 15% with pi, 33 with Hermes, 35 with OpenCode
    assert printed(pooled["in_ses"], "7.1") and printed(pooled["gain_in_run_sds"], "0.87")
    assert printed(pooled["reference_run_sd"], "0.0104") and pooled["runs_per_arm"] == 21
    assert printed(pooled["p_reference_ahead_one_run"], "0.28")
    for scope, text in (("agent=pi", "0.15"), ("agent=hermes", "0.33"), ("agent=opencode", "0.35")):
        assert printed(t.loc[scope, "p_reference_ahead_one_run"], text), scope


def test_table_8(s3: dict[str, pd.DataFrame]) -> None:
    y = s3["yield"].set_index(["by", "level"])
    flash, big = y.loc[("model", "glm-5.3-flash")], y.loc[("model", "glm-5.3")]
    assert (flash["runs"], flash["compliant"], big["runs"], big["compliant"]) == (156, 150, 156, 144)
    assert printed(flash["yield"], "96.2", percent=True) and printed(big["yield"], "92.3", percent=True)
    assert printed(big["wilson_low"], "87.0", percent=True) and printed(big["wilson_high"], "95.5", percent=True)
    assert printed(flash["wilson_low"], "91.9", percent=True) and printed(flash["wilson_high"], "98.2", percent=True)
    tests = s3["yield_tests"].set_index(["factor", "level"]).loc[("model", "glm-5.3")]
    assert printed(tests["fisher_p"], "0.22")
    b = s3["best_of_k_pooled"].set_index(["factor", "level", "k"])
    for level, mean, one, at_least, three in (("glm-5.3-flash", "0.7380", "0.7385", 0.9976, "0.7473"),
                                              ("glm-5.3", "0.7471", "0.7482", 0.9967, "0.7564")):
        assert printed(b.loc[("model", level, 1), "mean_kept"], mean)
        assert printed(b.loc[("model", level, 1), "median_kept"], one)
        assert printed(b.loc[("model", level, 3), "median_kept"], three)
        assert abs(b.loc[("model", level, 3), "p_any_low"] - at_least) <= 0.0005, level


def test_table_9(s2: dict[str, pd.DataFrame], s3: dict[str, pd.DataFrame]) -> None:
    # against the median within-pairing SD of GLM-5.3 Flash, 0.0104
    base = s3["baseline"].set_index("score").loc["holdout_score"]
    assert printed(base["gain_over_baseline"], "+0.0277") and printed(base["gain_in_reference_model_sds"], "2.7")
    runs = s3["runs_needed"]
    assert printed(runs["reference_model_sd"].iloc[0], "0.0104")
    on = lambda m: runs[runs["stronger"].str.endswith("/" + m) & runs["weaker"].str.endswith("/" + m)]  # noqa: E731
    for model, gap, sds, n in (("glm-5.3", "+0.0067", "0.6", 39), ("glm-5.3-flash", "+0.0039", "0.4", 113)):
        widest = on(model).loc[on(model)["gap"].idxmax()]
        assert printed(widest["gap"], gap) and printed(widest["gap_in_reference_model_sds"], sds), model
        assert round(widest["runs_per_arm_at_reference_model_sd"]) == n, model


# Table 11: the same programs on the 2006 holdout and on 2007 flights
def test_table_11(s2: dict[str, pd.DataFrame], s3: dict[str, pd.DataFrame], both: dict[str, pd.DataFrame]) -> None:
    later = both["later"].set_index("pairing").loc["all"]
    assert later["runs"] == 446
    assert printed(later["gain_score"], "+0.0280") and printed(later["gain_later"], "+0.0092")
    assert later["below_baseline_score"] == 0 and later["below_baseline_later"] == 33
    assert printed(later["share_of_gain_kept"], "0.33")  # "kept a third of their gain"
    assert printed(s2["later_spread"].iloc[0]["range_of_means"], "0.0021")
    assert printed(s2["later_spread"].iloc[0]["median_run_sd"], "0.0060")
    b = s2["later_best_of_k"].set_index(["factor", "k"])
    assert printed(b.loc[("all", 3), "gain_median"], "+0.0022")
    assert abs(b.loc[("all", 3), "gain_median_low"] - 0.0010) <= BOOT and abs(b.loc[("all", 3), "gain_median_high"] - 0.0032) <= BOOT
    f = s3["later_factor_effects"]
    f = f[(f["factor"] == "model") & (f["within"] == "all")].iloc[0]
    assert printed(f["gain"], "+0.0027") and printed(f["in_ses"], "3.8")
    assert printed(f["gain_in_run_sds"], "0.44") and f["runs_per_arm"] == 82
    c = _contrasts(s3["later_interaction"]).loc[("pi", "opencode")]
    assert printed(c["contrast"], "+0.0023") and printed(c["z"], "1.3")
    for tables, text in ((s2, 7), (s3, 6)):
        top = tables["top_runs"].set_index(["runs", "score"])
        scope = "all" if tables is s2 else "model=glm-5.3"
        assert top.loc[(scope, "holdout_score"), "rule_breakers"] == text
        assert top.loc[(scope, "later_score"), "rule_breakers"] == text
    rank = both["later_rank_correlation"].iloc[0]
    assert printed(rank["rho"], "+0.38")


# Table 13: per-run tokens, list-price cost, yield, compliant mean, best of 3 median
TABLE13 = {
    "pi/glm-5.3-flash": ("4.34", "58", "0.45", "100", "0.7361", "0.7460"),
    "hermes/glm-5.3-flash": ("8.12", "68", "0.83", "90.4", "0.7379", "0.7461"),
    "opencode/glm-5.3-flash": ("5.70", "32", "0.58", "98.1", "0.7400", "0.7486"),
    "pi/deepseek-4.1-flash": ("3.93", "63", "0.63", "98.1", "0.7456", "0.7567"),
    "hermes/deepseek-4.1-flash": ("8.65", "69", "1.34", "94.2", "0.7441", "0.7535"),
    "opencode/deepseek-4.1-flash": ("5.07", "26", "0.78", "100", "0.7403", "0.7488"),
    "pi/glm-5.3": ("5.87", "91", "8.61", "90.4", "0.7513", "0.7594"),
    "hermes/glm-5.3": ("7.43", "62", "10.67", "90.4", "0.7446", "0.7537"),
    "opencode/glm-5.3": ("6.40", "38", "9.13", "96.2", "0.7455", "0.7563"),
}


def test_table_13(both: dict[str, pd.DataFrame]) -> None:
    cost = both["cost"].set_index("pairing")
    y = both["yield"].set_index(["by", "level"])
    means = both["pairings"].set_index("pairing")
    best = both["best_of_k"].set_index(["pairing", "k"])
    for p, (tin, tout, usd, yld, mean, b3) in TABLE13.items():
        assert printed(cost.loc[p, "mean_input_tokens"] / 1e6, tin) and printed(cost.loc[p, "mean_output_tokens"] / 1e3, tout), p
        assert printed(cost.loc[p, "list_price_cost_per_run_usd"], usd), (p, cost.loc[p, "list_price_cost_per_run_usd"])
        assert printed(y.loc[("pairing", p), "yield"], yld, percent=True), p
        assert printed(means.loc[p, "mean"], mean) and printed(best.loc[(p, 3), "median_kept"], b3), p


# Table 16: Study 2, budget use against score, ranked within pairings and pooled
TABLE16 = {
    "all scored runs": ("312", "+0.55", "+0.45", "+0.63"),
    "compliant runs": ("302", "+0.55", "+0.46", "+0.63"),
    "compliant, above a quarter of the budget": ("209", "+0.43", "+0.29", "+0.54"),
    "compliant, above half of the budget": ("110", "+0.29", "+0.10", "+0.45"),
}


def test_table_16_and_section_4_8(s2: dict[str, pd.DataFrame]) -> None:
    t = s2["budget_pooled"].set_index("subset")
    for subset, (runs, rho, lo, hi) in TABLE16.items():
        r = t.loc[subset]
        assert r["runs"] == int(runs) and printed(r["rho"], rho), subset
        assert abs(r["ci_low"] - float(lo)) <= 0.02 and abs(r["ci_high"] - float(hi)) <= 0.02, subset
    assert t.loc["all scored runs", "p_value"] < 0.001 and t.loc["compliant, above half of the budget", "p_value"] < 0.01
    last = t.loc["compliant, above three quarters of the budget"]
    assert last["runs"] == 70 and last["ci_low"] < 0 < last["ci_high"] and last["p_value"] > 0.3
    per = s2["budget_correlation"]
    # positive in every pairing, from +0.38 to +0.70
    assert printed(per["rho"].min(), "+0.38") and printed(per["rho"].max(), "+0.70")


def test_section_4_1_two_runs_and_4_2_run_counts(s2: dict[str, pd.DataFrame]) -> None:
    gaps = s2["run_gaps"].set_index(["runs", "pairing"]).loc[("all scored", "all")]
    # two runs of one pairing differ by 0.0147 on average over all runs, 0.0285 at the ninth decile
    assert printed(gaps["mean_gap"], "0.0147") and printed(gaps["p90_gap"], "0.0285")
    t = s2["runs_needed"]
    widest = t.loc[t["gap"].idxmax()]
    assert printed(widest["gap"], "0.0095") and round(widest["runs_per_arm_at_median_sd"]) == 20
    model = lambda p: p.split("/")[1]  # noqa: E731
    same = t[[model(a) == model(b) for a, b in zip(t["stronger"], t["weaker"], strict=True)]]
    agents = same.loc[same["gap"].idxmax()]
    assert printed(agents["gap"], "0.0053") and round(agents["runs_per_arm_at_median_sd"]) == 66


def test_sections_4_4_and_4_6(s2: dict[str, pd.DataFrame], s3: dict[str, pd.DataFrame]) -> None:
    b = s2["best_of_k_pooled"]
    b = b[b["factor"] == "all"].set_index("k")
    # from one attempt to ten the 5th percentile improves by 0.0240 and the 95th by 0.0076
    assert printed(b.loc[10, "p05_kept"] - b.loc[1, "p05_kept"], "0.0240")
    assert printed(b.loc[10, "p95_kept"] - b.loc[1, "p95_kept"], "0.0076")
    assert printed(s3["selection"].set_index("subset").loc["model=glm-5.3", "rho"], "0.98")  # Study 3's own runs
    # Study 2: moving to DeepSeek 4.1 Flash raised pi by 0.0095, Hermes by 0.0062 and OpenCode by 0.0003
    f = s2["factor_effects"]
    f = f[f["factor"] == "model"].set_index("within")
    for scope, text in (("agent=pi", "+0.0095"), ("agent=hermes", "+0.0062"), ("agent=opencode", "+0.0003")):
        assert printed(f.loc[scope, "gain"], text), scope
    # (OpenCode minus pi) pi trails OpenCode by 0.0039 on GLM-5.3 Flash, and leads it by 0.0053 and 0.0058
    # at 2.4 and 2.6 SE on the stronger models
    for tables, model, gap, ses in ((s2, "glm-5.3-flash", "+0.0039", None), (s2, "deepseek-4.1-flash", "-0.0053", "-2.4"),
                                    (s3, "glm-5.3", "-0.0058", "-2.6")):
        a = tables["factor_effects"]
        r = a[(a["factor"] == "agent") & (a["level"] == "opencode") & (a["within"] == f"model={model}")].iloc[0]
        assert printed(r["gain"], gap) and (ses is None or printed(r["in_ses"], ses)), model


def test_one_compliant_count_for_an_arm(s3: dict[str, pd.DataFrame]) -> None:
    # issue 21: the compliance table said 148 (unscorable runs counted compliant), the pairings table 144
    glm = lambda t: t[t["pairing"].str.endswith("/glm-5.3")]  # noqa: E731
    assert glm(s3["compliance"])["compliant"].sum() == glm(s3["pairings"])["compliant"].sum() == 144
    assert glm(s3["compliance"])["unscorable"].sum() == 4


def test_section_4_5_no_drift_within_the_larger_models_arm(s3: dict[str, pd.DataFrame]) -> None:
    # "the first and second halves of the GLM-5.3 arm average the same to four decimals"
    d = s3["drift"].set_index("arm").loc["model=glm-5.3"]
    assert d["ordered_by"] == "started_at" and d["first_runs"] + d["second_runs"] == 144
    assert f"{d['first_mean']:.4f}" == f"{d['second_mean']:.4f}" == "0.7471"


# Table 18: Study 2's ledger repriced; the data hold no reasoning tokens (8.7 million, billed at the output
# rate in the paper), so each printed price is the report's plus those tokens at the model's output price
TABLE18 = {"GLM-5.3": (4.40, 2718, 807), "Gemini 3.1 Pro": (12.00, 4026, 1009), "Kimi K3": (13.28, 5268, 1335),
           "Claude Opus 5": (25.00, 9939, 2397), "GPT-5.5 Pro": (180.00, 60385, None)}


def test_table_18_and_appendix_d(s2: dict[str, pd.DataFrame]) -> None:
    t = s2["repricing"].set_index("prices")
    assert printed(t["input_tokens"].iloc[0] / 1e9, "1.86")  # 1.86 billion input tokens
    assert printed((t["output_tokens"].iloc[0] + 8.7e6) / 1e6, "25.1")  # 25.1 million with reasoning
    for name, (out_price, ledger, cached) in TABLE18.items():
        # within the printed rounding: half a dollar, and 0.05 million of the 8.7 million reasoning tokens
        slack = 0.5 + 0.05 * out_price
        assert abs(t.loc[name, "ledger_usd"] + 8.7 * out_price - ledger) <= slack, name
        if cached is None:
            assert pd.isna(t.loc[name, "if_90%_cached_usd"])  # no cached rate listed: N/A, never $0
        else:
            assert abs(t.loc[name, "if_90%_cached_usd"] + 8.7 * out_price - cached) <= slack, name
