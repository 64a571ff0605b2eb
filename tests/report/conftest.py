"""Report test setup: synthetic studies, and the browser gate.

Browser tests carry the `browser` marker. Outside CI they are skipped when no Chromium is installed;
in CI (CI set) a missing Chromium is a usage error, never a skip.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pandas as pd
import pytest

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The Chromium to drive: $SBX_CHROMIUM if set (None when that is not an executable), else from PATH."""
    explicit = os.environ.get("SBX_CHROMIUM")
    if explicit:
        return shutil.which(explicit)
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    browser_items = [i for i in items if "browser" in i.keywords]
    if not browser_items or chromium_path():
        return
    if os.environ.get("CI"):
        raise pytest.UsageError(
            "CI is set but no Chromium is installed (apt-get install chromium); "
            "browser tests may not skip in CI"
        )
    skip = pytest.mark.skip(reason="Chromium not installed (apt-get install chromium)")
    for item in browser_items:
        item.add_marker(skip)


def make_ml_study(seed: int = 0, runs: int = 52) -> pd.DataFrame:
    """Six pairings (2 agents x 3 models) of one ML task scored by AUC, with audits, usage and cost."""
    rng = np.random.default_rng(seed)
    rows = []
    for a, agent in enumerate(("codex", "claude")):
        for m, model in enumerate(("m-small", "m-mid", "m-large")):
            centre = 0.735 + 0.004 * m + 0.003 * a - 0.006 * (a == 1 and m == 2)
            for r in range(1, runs + 1):
                failed = rng.random() < 0.04
                holdout = centre + rng.normal(0, 0.0104)
                label_leak = rng.random() < 0.08
                frame_stats = rng.random() < 0.1
                if label_leak:
                    holdout += 0.01
                rows.append(
                    {
                        "pairing": f"{agent}/{model}",
                        "agent": agent,
                        "model": model,
                        "task": "flight-delays",
                        "repeat": r,
                        "status": "failed" if failed else "audited",
                        "failure_class": "agent" if failed else "",
                        "eval_score": "" if failed else holdout + rng.normal(0, 0.004),
                        "holdout_score": "" if failed else holdout,
                        "later_score": "" if failed else holdout - 0.01 + rng.normal(0, 0.003),
                        "holdout_positives": 200_000,
                        "holdout_negatives": 800_000,
                        "eval_labels_in_fit": "" if failed else ("flagged" if label_leak else "clear"),
                        "frame_statistics": "" if failed else ("flagged" if frame_stats else "clear"),
                        "cpu_seconds_metered": rng.uniform(2000, 18000),
                        "cost_usd": rng.uniform(0.5, 3.0),
                        "input_tokens": 1_000_000,
                        "cached_input_tokens": rng.integers(300_000, 900_000),
                        "output_tokens": 40_000,
                    }
                )
    # one infra retry that does not count
    rows.append(
        {
            **rows[0],
            "repeat": 1,
            "status": "failed",
            "failure_class": "infra",
            "counted": "false",
            "holdout_score": "",
            "eval_score": "",
        }
    )
    return pd.DataFrame(rows)


def make_pass_fail_study(seed: int = 0, tasks: int = 20, repeats: int = 5) -> pd.DataFrame:
    """Three pairings on the same pass/fail tasks, with a judge's verdicts and cost."""
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0.1, 0.9, size=tasks)
    rows = []
    for i, pairing in enumerate(("a/x", "b/x", "c/y")):
        for t in range(tasks):
            p = np.clip(difficulty[t] + 0.1 * i, 0, 1)
            for r in range(repeats):
                ok = bool(rng.random() < p)
                rows.append(
                    {
                        "pairing": pairing,
                        "task": f"task-{t:02d}",
                        "repeat": r,
                        "outcome": ok,
                        "judge_outcome": ok if rng.random() < 0.85 else not ok,
                        "cost_usd": rng.uniform(0.1, 0.5),
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture
def ml_study() -> pd.DataFrame:
    return make_ml_study()


@pytest.fixture
def pass_fail_study() -> pd.DataFrame:
    return make_pass_fail_study()
