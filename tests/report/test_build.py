import math
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orchestrator.report import build_report
from orchestrator.stats import best_of_k, runs_per_arm

from .conftest import make_ml_study, make_pass_fail_study


def _with_run_ids(runs: pd.DataFrame) -> pd.DataFrame:
    return runs.assign(run_id=[f"r-20261203120000-{i:06x}" for i in range(len(runs))])


#: studies whose reports several tests read: each is built once per test process (the report is a few CPU-s)
_STUDIES = {
    "ml": make_ml_study,
    "ml20": lambda: make_ml_study(runs=20),
    "ml20-ids": lambda: _with_run_ids(make_ml_study(runs=20)),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """built(STUDY, exclusion=...) -> the report of a study at seed 0, written once; the tests only read it."""
    reports: dict[tuple[str, str], object] = {}

    def get(study: str, exclusion: str = "both"):
        if (study, exclusion) not in reports:
            reports[study, exclusion] = build_report(_STUDIES[study](), tmp_path_factory.mktemp(study), seed=0,
                                                     exclusion=exclusion)
        return reports[study, exclusion]

    return get


def test_ml_study_report_has_every_continuous_section(tmp_path: Path, ml_study: pd.DataFrame) -> None:
    paths = build_report(ml_study, tmp_path, title="ML", seed=1)
    assert paths.html.is_file() and paths.markdown.is_file()
    assert {
        "pairings",
        "compliance",
        "exclusion_sensitivity",
        "spread",
        "runs_needed",
        "best_of_k",
        "interaction",
        "interaction_wald",
        "budget_correlation",
        "scoring_noise",
        "later",
        "cost",
    } <= set(paths.tables)
    assert set(paths.figures) == {"strip", "best_of_k"}
    html = paths.html.read_text()
    assert html.count("data:image/png;base64,") == 2 and "<link" not in html and "src='http" not in html
    md = paths.markdown.read_text()
    assert "## Keeping the best compliant of k attempts" in md and "figures/strip.png" in md
    # pass/fail sections say in words why they are missing, and name the column for a hand-written runs table
    assert "Skipped: needs pass/fail grades (runs of a tests task, graded by its hidden tests), and these runs have none (column outcome)" in md


def test_pairing_table_matches_direct_computation(built, ml_study: pd.DataFrame) -> None:
    paths = built("ml", exclusion="both")
    table = pd.read_csv(paths.tables["pairings"]).set_index("pairing")
    runs = ml_study[ml_study.get("counted", "").ne("false")]
    g = runs[runs["pairing"] == "codex/m-mid"]
    score = pd.to_numeric(g["holdout_score"], errors="coerce")
    ok = (g["eval_labels_in_fit"] == "clear") & (g["frame_statistics"] == "clear") & score.notna()
    row = table.loc["codex/m-mid"]
    assert row["compliant"] == ok.sum() and row["runs"] == len(g)
    assert row["mean"] == pytest.approx(score[ok].mean()) and row["best"] == pytest.approx(score[ok].max())
    assert row["all_run_mean"] == pytest.approx(score.mean())
    assert row["ci_low"] < row["mean"] < row["ci_high"]


def test_best_of_k_table_matches_the_stats_function(built, ml_study: pd.DataFrame) -> None:
    paths = built("ml", exclusion="nothing")
    table = pd.read_csv(paths.tables["best_of_k"])
    assert sorted(table["k"].unique()) == [1, 3, 5, 10]
    g = ml_study[(ml_study["pairing"] == "claude/m-large") & ml_study.get("counted", "").ne("false")]
    e = pd.to_numeric(g["eval_score"], errors="coerce").to_numpy()
    h = pd.to_numeric(g["holdout_score"], errors="coerce").to_numpy()
    keep = ~np.isnan(h)
    expected = best_of_k(e, h, keep, 5)
    row = table[(table["pairing"] == "claude/m-large") & (table["k"] == 5)].iloc[0]
    assert row["mean_kept"] == pytest.approx(expected.mean)
    assert row["p_any_compliant"] == pytest.approx(expected.p_any)
    # one estimand per column: the gain beside the median columns is the gain in the median; the gain in
    # the mean is named apart (the old table printed a gain of the mean as "gain" beside median_kept)
    one = table[(table["pairing"] == "claude/m-large") & (table["k"] == 1)].iloc[0]
    assert row["gain_median"] == pytest.approx(row["median_kept"] - one["median_kept"])
    assert row["gain_mean"] == pytest.approx(row["mean_kept"] - one["mean_kept"])
    assert "gain" not in table.columns
    assert row["gain_median_low"] <= row["gain_median"] <= row["gain_median_high"]
    assert (table.loc[table["k"] == 1, ["gain_median", "gain_mean"]] == 0).all().all()


def test_runs_needed_uses_the_16_rule(built) -> None:
    paths = built("ml")  # the default exclusion
    row = pd.read_csv(paths.tables["runs_needed"]).iloc[0]
    assert row["runs_per_arm"] == math.ceil(runs_per_arm(row["pooled_sd"], row["gap"]))
    assert 0 <= row["p_weaker_ahead_r10"] <= row["p_weaker_ahead_r1"] <= 0.5 + 1e-9


def test_exclusion_changes_compliant_counts(tmp_path: Path, built, ml_study: pd.DataFrame) -> None:
    nothing, both = built("ml", exclusion="nothing"), built("ml", exclusion="both")
    n0 = pd.read_csv(nothing.tables["pairings"])["compliant"].sum()
    n2 = pd.read_csv(both.tables["pairings"])["compliant"].sum()
    assert n0 > n2
    with pytest.raises(ValueError, match="unknown exclusion"):
        build_report(ml_study, tmp_path / "c", seed=0, exclusion="either")


def test_same_seed_same_tables(tmp_path: Path) -> None:
    study = make_ml_study(runs=20)
    a = build_report(study, tmp_path / "a", seed=5)
    b = build_report(study, tmp_path / "b", seed=5)
    for name in a.tables:
        assert a.tables[name].read_text() == b.tables[name].read_text(), name


def test_pass_fail_study_report(tmp_path: Path, pass_fail_study: pd.DataFrame) -> None:
    paths = build_report(pass_fail_study, tmp_path, seed=0)
    assert {"pass_rates", "pass_k", "variance", "paired", "judge_agreement", "judge_gap_bias", "cost"} <= set(paths.tables)
    assert set(paths.figures) == {"pass_k", "task_pass_rates"}
    pk = pd.read_csv(paths.tables["pass_k"])
    assert (pk.groupby("pairing")["pass_at_k"].diff().dropna() >= 0).all()
    paired = pd.read_csv(paths.tables["paired"])
    assert len(paired) == 3 and paired["range_low"].notna().all()  # 20 tasks: ranges are given
    assert {"mcnemar_p", "sign_flip_p", "tasks_needed"} <= set(paired.columns)
    assert (paired["tasks_needed"] > 0).all()
    cost = pd.read_csv(paths.tables["cost"])
    assert "cost_per_pass_usd" in cost.columns


def test_few_tasks_give_counts_only(tmp_path: Path) -> None:
    paths = build_report(make_pass_fail_study(tasks=6), tmp_path, seed=0)
    paired = pd.read_csv(paths.tables["paired"])
    assert paired["range_low"].isna().all() and paired["tasks"].eq(6).all()


def test_minimal_csv_from_elsewhere(tmp_path: Path) -> None:
    """A study run elsewhere: pairing, task, repeat, outcome, eval score, compliance, cost."""
    rng = np.random.default_rng(0)
    rows = [
        {
            "pairing": p,
            "task": f"t{t}",
            "repeat": r,
            "outcome": bool(rng.random() < 0.5),
            "eval_score": rng.random(),
            "eval_labels_in_fit": "flagged" if rng.random() < 0.1 else "clear",
            "cost_usd": 0.2,
        }
        for p in ("x", "y")
        for t in range(4)
        for r in range(3)
    ]
    csv = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    from orchestrator.report import load_runs_csv

    paths = build_report(load_runs_csv(csv), tmp_path / "out", seed=0, exclusion="eval_labels_in_fit")
    assert {"pairings", "best_of_k", "pass_k", "paired", "cost"} <= set(paths.tables)
    text = paths.markdown.read_text()
    assert "chosen and valued on the same score" in text


def test_degenerate_data_skips_a_section_instead_of_failing(tmp_path: Path) -> None:
    df = pd.DataFrame(
        {"pairing": ["a", "b"], "task": ["t", "t"], "repeat": [1, 1], "holdout_score": [0.7, 0.8]}
    )
    paths = build_report(df, tmp_path, seed=0)
    assert "Skipped" in paths.html.read_text()
    assert pd.read_csv(paths.tables["pairings"])["sd"].isna().all()


def test_the_highest_scoring_runs_are_named_by_the_id_sbx_view_opens(built) -> None:
    runs = _STUDIES["ml20-ids"]()
    paths = built("ml20-ids")
    table = pd.read_csv(paths.tables["highest_runs"])
    scores = pd.to_numeric(runs["holdout_score"], errors="coerce")  # the study writes blanks for unscored runs
    top = runs.assign(s=scores)[scores.notna()].sort_values("s", ascending=False, kind="stable").head(10)
    assert table["run"].tolist() == [rid[-6:] for rid in top["run_id"]]  # the hex tail: /run/ID, `sbx show ID`
    assert table["score"].tolist() == pytest.approx(top["s"].tolist())
    assert "`sbx view`, then /run/ID" in paths.markdown.read_text()
    without = built("ml20")
    assert "highest_runs" not in without.tables  # a hand-written runs table without ids: nothing to point at


class _Links(HTMLParser):
    """Each link of the page: (its class, its href, its text), text outside tags kept apart."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str | None, str | None, str]] = []
        self.tags: list[str] = []
        self._open: tuple[str | None, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self._open = (dict(attrs).get("class"), dict(attrs).get("href"))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self.links.append((*self._open, data))
            self._open = None


def _run_links(html: str) -> list[tuple[str | None, str]]:
    page = _Links()
    page.feed(html)
    return [(href, text) for cls, href, text in page.links if cls == "run"]


def test_every_run_id_links_to_its_page_in_sbx_view(tmp_path: Path, built) -> None:
    """The short id shown links /run/FULL-ID at sbx view's default address (a file cannot know where a viewer
    runs), the page says so, the CSV keeps the full id, the Markdown links too; --viewer-url names another."""
    from orchestrator.cli.report import VIEWER_URL as CLI_VIEWER_URL
    from orchestrator.cli.view import DEFAULT_PORT
    from orchestrator.report.render import VIEWER_URL

    assert VIEWER_URL == CLI_VIEWER_URL == f"http://127.0.0.1:{DEFAULT_PORT}/"
    runs = _STUDIES["ml20-ids"]()
    paths = built("ml20-ids")
    table = pd.read_csv(paths.tables["highest_runs"])
    links = _run_links(paths.html.read_text())
    assert links == [(f"http://127.0.0.1:8700/run/{full}", short)
                     for full, short in zip(table["run_id"], table["run"], strict=True)]
    assert len(links) == 10 and all(full.endswith(short) for full, short in zip(table["run_id"], table["run"],
                                                                                strict=True))
    html = paths.html.read_text()
    assert "<th>run_id</th>" not in html  # the full id is the link's, not a column of its own
    assert "start <code>sbx view</code>" in html and "http://127.0.0.1:8700/" in html
    md = paths.markdown.read_text()
    assert f"[{table['run'][0]}](http://127.0.0.1:8700/run/{table['run_id'][0]})" in md
    assert "| run_id |" not in md

    other = build_report(runs, tmp_path / "other", seed=0, viewer="https://box.example:9000/sbx/")
    assert [href for href, _ in _run_links(other.html.read_text())][:1] == [
        f"https://box.example:9000/sbx/run/{table['run_id'][0]}"]
    with pytest.raises(ValueError, match="http:// or https://"):
        build_report(runs, tmp_path / "bad", seed=0, viewer="javascript:alert(1)//")
    # no run ids (a runs table written by hand): no links and no line about them
    plain = built("ml20").html.read_text()
    assert _run_links(plain) == [] and "start <code>sbx view</code>" not in plain


def test_a_hostile_run_id_stays_text_and_one_path_segment(tmp_path: Path) -> None:
    """A runs CSV is anyone's: its run id is quoted into the link and escaped in the text."""
    runs = make_ml_study(runs=20)
    hostile = '"><script>window.pwned=1</script>/../../x?y#z'
    runs["run_id"] = [hostile + str(i) for i in range(len(runs))]
    html = build_report(runs, tmp_path / "r", seed=0).html.read_text()
    page = _Links()
    page.feed(html)
    assert page.tags.count("script") == 1  # the report's own figure check, nothing of the id's
    hrefs = [href for href, _ in _run_links(html)]
    assert len(hrefs) == 10
    for href in hrefs:
        assert href is not None and href.startswith("http://127.0.0.1:8700/run/")
        assert "/" not in href.removeprefix("http://127.0.0.1:8700/run/")  # the id is one segment
        assert "?" not in href and "#" not in href and "<" not in href
