"""Convert the reference study's published per-run CSVs into sbx's runs table.

The reference study ("Identical Runs, Different Results", data at
github.com/earino/identical-runs-different-results, transcribed in ../shared/reference-study/) is the
study sbx's report is checked against. Its files hold one row per run, per study, in its own columns;
this module maps them onto orchestrator/report/runs_table.py's columns so `sbx report --runs-csv` reads
them like any other runs table:

    python -m orchestrator.report.reference_study DIR runs.csv [--study 2|3|all] [--settings-out FILE]

`--study 2` gives Study 2's 312 runs (six pairings); `--study 3` gives Study 3's GLM-5.3 runs with the
GLM-5.3 Flash runs of Study 2 they are compared with (the paper's own design); `all` gives both studies.

Facts the mapping rests on come from the data README and the paper: a pairing is harness x model,
`seed` is the repeat, `box` the machine and `cpuset` its slot; an attempt with `counted` False was set
aside after an HTTP 429/502 (an infrastructure failure); `holdout_error` is a run whose delivered code
could not be scored (unscorable); budget used = counted + uncounted CPU-seconds; the holdout has
500,000 rows of each class.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from orchestrator.failures import DataError

#: the starting code's scores the paper prints (README of the data): the report's baselines
BASELINES = {"eval_score": 0.7141, "holdout_score": 0.714770751736, "later_score": 0.7175}
#: each run's CPU-second budget of counted experiments (paper, section 3.4)
BUDGET_CPU_SECONDS = 18_000.0
HOLDOUT_PER_CLASS = 500_000
TASK = "flight-delays"
#: the factor levels the paper compares against: the smaller model of each comparison
REFERENCE_LEVELS = {"model": "glm-5.3-flash", "agent": "pi"}

#: the paper's cost appendix: OpenRouter list prices of 16 September 2026, US dollars per million tokens
RATE_CARD = {
    "name": "OpenRouter list prices",
    "date": "2026-09-16",
    "prices": {
        "glm-5.3-flash": {"input": 0.10, "output": 0.33, "cached_input": 0.02},
        "deepseek-4.1-flash": {"input": 0.15, "output": 0.60, "cached_input": 0.003},
        "glm-5.3": {"input": 1.40, "output": 4.40, "cached_input": 0.26},
    },
}


#: Table 18's other models, per million tokens (GPT-5.5 Pro lists no cached rate)
REPRICE_AT = {
    "GLM-5.3": {"input": 1.40, "output": 4.40, "cached_input": 0.26},
    "Gemini 3.1 Pro": {"input": 2.00, "output": 12.00, "cached_input": 0.20},
    "Kimi K3": {"input": 2.65, "output": 13.28, "cached_input": 0.303},
    "Claude Opus 5": {"input": 5.00, "output": 25.00, "cached_input": 0.50},
    "GPT-5.5 Pro": {"input": 30.00, "output": 180.00},
}


def settings() -> dict[str, object]:
    """The report settings the paper states (a ReportSpec as plain data, for `sbx report --settings`)."""
    return {
        "factors": ["agent", "model"],
        "reference": dict(REFERENCE_LEVELS),
        "baseline": dict(BASELINES),
        "budget_cpu_seconds": BUDGET_CPU_SECONDS,
        "rate_card": RATE_CARD,
        "reprice_at": REPRICE_AT,
        "reprice_cached_share": 0.9,
        "top_n": 10,
    }


_CELLS = {"study2": "study2_cells.csv", "study3": "study3_cells.csv"}


def _verdict(value: str) -> str | None:
    text = str(value).strip().lower()
    if text == "true":
        return "flagged"
    if text == "false":
        return "clear"
    return None


def convert(folder: Path | str, study: str = "all") -> pd.DataFrame:
    """The reference study's runs as one runs table (rows in the files' order; the report sorts them)."""
    folder = Path(folder)
    if study not in ("2", "3", "all"):
        raise DataError(f"study must be 2, 3 or all, got {study!r}")
    frames = []
    for name, file in _CELLS.items():
        path = folder / file
        if not path.is_file():
            raise DataError(f"{path}: no such file (is {folder} the reference study's folder?)")
        cells = pd.read_csv(path, dtype=str, keep_default_na=False)
        cells.insert(0, "study", name)
        frames.append(cells)
    cells = pd.concat(frames, ignore_index=True)
    key = ["study", "harness", "model", "seed"]
    evals = pd.read_csv(folder / "final_eval.csv", dtype=str, keep_default_na=False)
    later = pd.read_csv(folder / "scores_2007.csv", dtype=str, keep_default_na=False)
    counted = cells["counted"].str.lower() == "true"
    # the eval and 2007 files hold counted attempts only; a set-aside attempt must not borrow their scores
    cells = cells.merge(evals, on=key, how="left").merge(later, on=key, how="left")
    cells.loc[~counted.to_numpy(), ["final_eval_auc", "auc_2007"]] = ""
    # a run that delivered the starting code unchanged scores the starting code's eval AUC; one such run
    # (Study 3, hermes seed 19) has a blank eval cell where the other (pi seed 43) has 0.7141
    unchanged = (cells["holdout_auc"] == repr(BASELINES["holdout_score"])) & (cells["final_eval_auc"] == "")
    cells.loc[unchanged & counted.to_numpy(), "final_eval_auc"] = repr(BASELINES["eval_score"])
    status = cells["status"]
    runs = pd.DataFrame(
        {
            "study": cells["study"],
            "pairing": cells["harness"] + "/" + cells["model"],
            "agent": cells["harness"],
            "model": cells["model"],
            "task": TASK,
            "repeat": cells["seed"],
            "status": status.where(status == "scored", "failed"),
            "failure_class": status.map({"holdout_error": "unscorable", "provider_error": "infra"}),
            "counted": cells["counted"],
            "eval_score": cells["final_eval_auc"],
            "holdout_score": cells["holdout_auc"].where(status == "scored", ""),
            "later_score": cells["auc_2007"],
            "holdout_positives": HOLDOUT_PER_CLASS,
            "holdout_negatives": HOLDOUT_PER_CLASS,
            "eval_labels_in_fit": cells["eval_trained"].map(_verdict),
            "frame_statistics": cells["frame_stats"].map(_verdict),
            "cpu_seconds_metered": pd.to_numeric(cells["cpu_seconds_counted"])
            + pd.to_numeric(cells["cpu_seconds_uncounted"]),
            "input_tokens": cells["tokens_in"],
            "output_tokens": cells["tokens_out"],
            "node": cells["box"],
            "slot": cells["cpuset"],
            "started_at": cells["started"],
        }
    )
    if study == "2":
        runs = runs[runs["study"] == "study2"]
    elif study == "3":
        runs = runs[(runs["study"] == "study3") | (runs["model"] == "glm-5.3-flash")]
    return runs.reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m orchestrator.report.reference_study",
        description="Write the reference study's runs as an sbx runs table (CSV) for `sbx report --runs-csv`.",
    )
    parser.add_argument("folder", type=Path, help="the reference study's folder (study2_cells.csv, ...)")
    parser.add_argument("out", type=Path, help="the runs table to write (CSV)")
    parser.add_argument("--study", default="all", choices=("2", "3", "all"))
    parser.add_argument("--settings-out", type=Path, metavar="FILE",
                        help="also write the report settings the paper states (for `sbx report --settings`)")
    args = parser.parse_args(argv)
    convert(args.folder, args.study).to_csv(args.out, index=False)
    print(args.out)
    if args.settings_out:
        import yaml

        args.settings_out.write_text(yaml.safe_dump(settings(), sort_keys=False))
        print(args.settings_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
