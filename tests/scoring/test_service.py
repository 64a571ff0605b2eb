"""score_repo against the real engine: sane scores, the batch check, and every failure class."""

from __future__ import annotations

import os
import textwrap
import uuid
from pathlib import Path

import pytest

from orchestrator.paths import tasks_root
from orchestrator.scoring import ScoreOptions, ScoreResult, score_repo

pytestmark = pytest.mark.docker

STARTING = (tasks_root() / "flight-delays" / "repo" / "train.py").read_text()

#: a quick model (no XGBoost): the carrier's and origin's delay rates in train.csv, per row
FAST = textwrap.dedent('''
    import numpy as np
    import pandas as pd

    train = pd.read_csv("data/train.csv")
    y = (train["dep_delayed_15min"] == "Y").astype(float)
    RATE = {c: y.groupby(train[c]).mean() for c in ("UniqueCarrier", "Origin", "Dest")}
    PRIOR = float(y.mean())

    def features(df):
        return np.column_stack([df[c].map(RATE[c]).astype(float).fillna(PRIOR).to_numpy() for c in RATE])

    def predict_proba(df):
        return features(df).mean(axis=1)
''')


def _score(client, image: str, data: Path, tmp_path: Path, source: str, **options) -> ScoreResult:
    repo = tmp_path / f"repo-{uuid.uuid4().hex[:6]}"
    repo.mkdir()
    (repo / "train.py").write_text(source)
    return score_repo(client, repo, data, "holdout", image=image, options=ScoreOptions(**options),
                      run_id=f"test-{uuid.uuid4().hex[:8]}")


def _scorer_containers(client) -> list:
    return client.containers.list(all=True, sparse=True, filters={"label": "sbx.kind=scorer"})


@pytest.fixture(scope="module")
def starting_twice(docker_client, scorer_image, flight_data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("twice")
    return [_score(docker_client, scorer_image, flight_data, tmp, STARTING) for _ in range(2)]


def test_starting_code_scores_in_a_sane_range(starting_twice) -> None:
    r = starting_twice[0]
    assert r.status == "scored", r.detail
    assert 0.6 <= r.auc <= 0.8
    assert 0.5 < r.ap < 1 and 0 < r.auc_se < 0.02
    assert (r.n, r.positives) == (3000, 1500)
    assert r.rows_checked == 512 and r.rows_changed == 0 and r.batch_dependent is False
    assert r.train_seconds > 0 and r.predict_seconds > 0 and r.seconds >= r.train_seconds
    print(f"\nstarting code: holdout AUC {r.auc:.4f} (SE {r.auc_se:.4f}), AP {r.ap:.4f}, {r.seconds:.1f}s")


def test_scoring_twice_agrees(starting_twice) -> None:
    a, b = starting_twice
    diff = abs(a.auc - b.auc)
    print(f"\nscoring the same artifact twice: AUC {a.auc:.6f} vs {b.auc:.6f}, difference {diff:.2e}")
    assert diff < 0.001
    assert a.artifact_sha256 == b.artifact_sha256


def test_frame_statistics_are_batch_dependent(docker_client, scorer_image, flight_data, tmp_path) -> None:
    source = FAST.replace("    return features(df).mean(axis=1)", textwrap.indent(textwrap.dedent('''
        count = df["Origin"].map(df["Origin"].value_counts()).to_numpy() / len(df)
        return np.clip(0.8 * features(df).mean(axis=1) + 0.2 * count, 0, 1)'''), "    "))
    r = _score(docker_client, scorer_image, flight_data, tmp_path, source)
    assert r.status == "scored", r.detail
    assert r.batch_dependent is True and r.rows_changed > 0 and r.max_abs_change > 1e-3


def test_the_starting_model_with_a_batch_fitted_scaler_is_batch_dependent(docker_client, scorer_image, flight_data,
                                                                   tmp_path) -> None:
    # A scaler fitted on the frame it is given: DepTime centred on the batch's mean.
    line = '    X = df.drop(columns=[TARGET], errors="ignore").copy()'
    source = STARTING.replace(line, line + '\n    X["DepTime"] = X["DepTime"] - X["DepTime"].mean()')
    assert source != STARTING
    r = _score(docker_client, scorer_image, flight_data, tmp_path, source)
    assert r.status == "scored", r.detail
    assert r.batch_dependent is True


def test_reordering_rows_inside_is_not_batch_dependent(docker_client, scorer_image, flight_data, tmp_path) -> None:
    source = FAST.replace("    return features(df).mean(axis=1)", textwrap.indent(textwrap.dedent('''
        shuffled = df.sample(frac=1.0, random_state=len(df))
        p = pd.Series(features(shuffled).mean(axis=1), index=shuffled.index)
        return p.loc[df.index].to_numpy()'''), "    "))
    r = _score(docker_client, scorer_image, flight_data, tmp_path, source)
    assert r.status == "scored", r.detail
    assert r.batch_dependent is False and r.rows_changed == 0


def test_predictions_in_a_shuffled_order_are_flagged_and_score_like_chance(docker_client, scorer_image,
                                                                           flight_data, tmp_path) -> None:
    # Well-formed output, wrong rows: the check flags it (a row's value depends on its batch) and the
    # AUC honestly collapses to chance. It stays `scored`: that is what the artifact is worth.
    source = FAST.replace("    return features(df).mean(axis=1)",
                          "    return np.random.default_rng(7).permutation(features(df).mean(axis=1))")
    r = _score(docker_client, scorer_image, flight_data, tmp_path, source)
    assert r.status == "scored", r.detail
    assert r.batch_dependent is True
    assert abs(r.auc - 0.5) < 0.05


# --- failures are outcomes --------------------------------------------------------------------------------

FAILURES = {
    "no_predict_proba": (FAST.replace("def predict_proba(df):", "def predict(df):"), {}, None),
    "train_error": (FAST + "\ndef boom():\n    raise ValueError('training went wrong')\n\nboom()\n", {},
                    ["ValueError: training went wrong", "boom()"]),
    "train_exit": (FAST + "\nimport sys\nsys.exit(3)\n", {}, ["train.py exited with status 3"]),
    "predict_error": (FAST.replace("    return features(df).mean(axis=1)",
                                   "    raise KeyError('no such column in predict')"), {},
                      ["raised KeyError at train.py:", "in predict_proba", "in a batch of"]),
    "cpu_limit": (FAST + "\nimport time\n_end = time.process_time() + 60\nwhile time.process_time() < _end:\n"
                         "    pass\n", {"train_cpu_limit_s": 3}, ["past the limit of 3 "]),
    "timeout_train": (FAST + "\nimport time\ntime.sleep(3600)\n", {"train_timeout_s": 4}, ["longer than 4s"]),
    "timeout_predict": (FAST.replace("    return features(df).mean(axis=1)",
                                     "    import time\n    time.sleep(3600)"), {"predict_timeout_s": 4},
                        ["predicting took longer than 4s"]),
    "oom": (FAST + "\nhog = [bytearray(64 << 20) for _ in range(64)]\nfor b in hog:\n    b[::4096] = b'x' * len(b[::4096])\n",
            {"memory_mb": 384}, ["384 MB"]),
    "wrong_shape": (FAST.replace("    return features(df).mean(axis=1)",
                                 "    p = features(df).mean(axis=1)\n    return np.column_stack([1 - p, p])"), {},
                    ["expected ("]),
    "extra_file": (FAST.replace("    return features(df).mean(axis=1)",
                                "    return np.asarray(open('data/extra.csv').read().split(), dtype=float)"), {},
                   ["raised FileNotFoundError", "in a batch of"]),
    "not_finite": (FAST.replace("    return features(df).mean(axis=1)",
                                "    p = features(df).mean(axis=1)\n    p[0] = np.nan\n    return p"), {}, ["NaN"]),
    "out_of_range": (FAST.replace("    return features(df).mean(axis=1)",
                                  "    return features(df).mean(axis=1) * 3 - 1"), {}, ["outside [0, 1]"]),
    "not_numbers": (FAST.replace("    return features(df).mean(axis=1)",
                                 "    return ['high'] * len(df)"), {}, ["not return one number per row"]),
    "output_flooding": (FAST + "\nline = 'x' * 1023\nwhile True:\n    print(line)\n", {"output_limit_mb": 8},
                        ["8 MB"]),
    "crashed": (FAST + "\nimport os\nos._exit(7)\n", {}, ["exit 7"]),
    "protocol_error": (FAST.replace("    return features(df).mean(axis=1)", textwrap.indent(textwrap.dedent('''
        import _socket, gc, socket
        for o in gc.get_objects():  # the runner's socket is in this process: write a frame of our own
            if isinstance(o, _socket.socket) and o.family == socket.AF_UNIX:
                o.sendall(b"Z\\0\\0\\0\\0")
        return features(df).mean(axis=1)'''), "    ")), {}, ["unexpected frame type"]),
}
EXPECTED_REASON = {"train_exit": "train_error", "timeout_train": "timeout", "timeout_predict": "timeout",
                   "not_numbers": "wrong_shape", "extra_file": "predict_error"}
#: text the scored code wrote once holdout rows were in the container: never kept
NEVER_KEPT = {"predict_error": "no such column in predict"}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_each_failure_is_an_unscorable_outcome_with_its_reason(case, docker_client, scorer_image, flight_data,
                                                                tmp_path) -> None:
    source, options, needles = FAILURES[case]
    r = _score(docker_client, scorer_image, flight_data, tmp_path, source, **options)
    print(f"\n{case}: {r.status} {r.reason} in {r.seconds:.1f}s: {(r.detail or '').splitlines()[:1]}")
    assert r.status == "unscorable"
    assert r.reason == EXPECTED_REASON.get(case, case), r.detail
    assert r.auc is None and r.batch_dependent is None
    for needle in needles or []:
        assert needle in (r.detail or ""), r.detail
    if case in NEVER_KEPT:
        assert NEVER_KEPT[case] not in (r.detail or "")
    mine = f":{os.getpid()}"
    assert not [c for c in _scorer_containers(docker_client) if (c.attrs.get("Labels") or {}).get("sbx.owner", "").endswith(mine)]


def test_a_missing_train_py_is_unscorable_without_a_container(docker_client, scorer_image, flight_data,
                                                              tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = score_repo(docker_client, empty, flight_data, image=scorer_image)
    assert (r.status, r.reason) == ("unscorable", "no_train_py")
