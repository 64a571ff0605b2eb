"""A hostile train.py gets none of what it wants, and the scorer stays healthy."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from orchestrator.scoring import ScoreOptions, score_repo

sys.path.insert(0, str(Path(__file__).parent))
from probe import ENCODE, decode, predictions_of  # noqa: E402

pytestmark = pytest.mark.docker

PROBE = textwrap.dedent('''
    import errno, json, os, socket, subprocess

    import numpy as np
    import pandas as pd

    LABEL = b"dep_delayed_15min"
    HEADER = b"Month,DayofMonth,DayOfWeek,DepTime"

    def search():
        """Every readable file that holds the label column or a features header, outside /proc and /sys."""
        labels, features, seen = [], [], 0
        for top in ("/",):
            for dirpath, dirnames, filenames in os.walk(top):
                if dirpath in ("/proc", "/sys", "/dev"):
                    dirnames[:] = []
                    continue
                for name in filenames:
                    path = os.path.join(dirpath, name)
                    try:
                        if os.path.islink(path) or not os.path.isfile(path):
                            continue
                        with open(path, "rb") as f:
                            head = f.read(1 << 16)
                    except OSError:
                        continue
                    seen += 1
                    first = head.split(b"\\n", 1)[0]
                    if LABEL in first:            # a data file with the label column (not code naming it)
                        labels.append(path)
                    elif HEADER in first:
                        features.append(path)
        return labels, features, seen

    def connect(family, address):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(3)
        try:
            s.connect(address)
            return "connected"
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc))
        finally:
            s.close()

    def write(path):
        try:
            with open(path, "w") as f:
                f.write("pwned")
            return "written"
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc))

    def probe():
        labels, features, seen = search()
        out = {
            "labels": labels, "features": features, "files_seen": seen,
            "net": {a: connect(socket.AF_INET, (a, p)) for a, p in
                    (("172.17.0.1", 2375), ("8.8.8.8", 53), ("1.1.1.1", 443), ("127.0.0.1", 22))},
            "score_socket": connect(socket.AF_UNIX, "/run/sbx/score.sock"),
            "docker_socket": connect(socket.AF_UNIX, "/var/run/docker.sock"),
            "mount": sorted(os.listdir("/run/sbx")),
            "writes": {p: write(p) for p in ("/etc/pwned", "/opt/sbx/sandbox/gate.py", "/run/sbx/pwned",
                                            "/pwned", "/usr/lib/pwned")},
            "own_folder": write(os.path.join(os.getcwd(), "model.txt")),
            "env": sorted(os.environ),
            "uid": os.getuid(),
        }
        try:
            os.setuid(0)
            out["setuid"] = "root"
        except OSError as exc:
            out["setuid"] = errno.errorcode.get(exc.errno, str(exc))
        environs = []
        for pid in os.listdir("/proc"):
            try:
                environs.append(open(f"/proc/{pid}/environ", "rb").read())
            except (OSError, ValueError):
                pass
        out["secret_in_any_environ"] = any(b"hunter2" in e for e in environs)
        out["environs_read"] = len(environs)
        return out

    def summary(f):
        """What the test checks, small enough to come back in one batch's predictions."""
        return {"labels": f["labels"], "features": f["features"], "files_seen": f["files_seen"] > 1000,
                "net": sorted(set(f["net"].values())), "score_socket": f["score_socket"],
                "docker_socket": f["docker_socket"], "mount": f["mount"], "writes": sorted(set(f["writes"].values())),
                "own_folder": f["own_folder"], "uid": f["uid"], "setuid": f["setuid"],
                "environs": f["environs_read"] >= 2, "secret": f["secret_in_any_environ"],
                "env": [k for k in f["env"] if not k.startswith("SBX_")] + sorted(k for k in f["env"] if k.startswith("SBX_"))}

    AT_TRAIN = summary(probe())
    FINDINGS = {}

    def predict_proba(df):
        FINDINGS.update(train=AT_TRAIN, predict=summary(probe()))
        return _encoded(df)
''')

ALLOWED_LABEL_FILES = {"/workspace/data/train.csv", "/workspace/data/eval.csv"}
#: the environment an experiment's train.py gets (sandbox/docker.py, sandbox/experiments.py, the image)
EXPERIMENT_ENV = ["HOME", "HOSTNAME", "LANG", "OMP_WAIT_POLICY", "PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED",
                  "SBX_EXPERIMENT", "SBX_GATE_TOKEN", "SBX_RUN_ID"]


def _repo(tmp_path: Path, source: str) -> Path:
    repo = tmp_path / f"repo-{uuid.uuid4().hex[:6]}"
    repo.mkdir()
    (repo / "train.py").write_text(source)
    return repo


def _containers_of(client, run_id: str) -> list:
    return client.containers.list(all=True, sparse=True, filters={"label": ["sbx.kind=scorer", f"sbx.run={run_id}"]})


def test_a_probing_train_py_finds_no_labels_no_network_and_no_way_out(docker_client, scorer_image, flight_data,
                                                                       monkeypatch) -> None:
    monkeypatch.setenv("SBX_TEST_HOST_SECRET", "hunter2")  # must not reach the container
    run_id = f"hostile-{uuid.uuid4().hex[:8]}"
    source = PROBE.replace("def predict_proba(df):", ENCODE.replace("def predict_proba(df):", "def _encoded(df):")
                           + "\n\ndef predict_proba(df):")
    found = decode(predictions_of(docker_client, scorer_image, flight_data, source, run_id=run_id,
                                  options=ScoreOptions(train_timeout_s=300)))
    print("\n" + json.dumps(found["predict"], indent=1))
    for phase in ("train", "predict"):
        f = found[phase]
        assert f["files_seen"]  # it really searched
        assert set(f["labels"]) <= ALLOWED_LABEL_FILES, f["labels"]
        assert f["features"] == [], f["features"]  # no holdout features file anywhere
        assert set(f["net"]) <= {"ENETUNREACH", "ECONNREFUSED", "EHOSTUNREACH"}, f["net"]
        assert f["score_socket"] in ("ENOENT", "ECONNREFUSED"), f["score_socket"]
        assert f["docker_socket"] in ("ENOENT", "EACCES"), f["docker_socket"]
        assert f["mount"] == ["experiments.sock", "gate.sock"]  # as in the sandbox: nothing of the scorer's
        assert set(f["writes"]) <= {"EROFS", "EACCES"}, f["writes"]
        assert f["own_folder"] == "written"
        assert f["uid"] == 1000 and f["setuid"] == "EPERM"
        assert f["environs"] and f["secret"] is False
        assert sorted(f["env"]) == EXPERIMENT_ENV, f["env"]
    assert not _containers_of(docker_client, run_id)


SLEEPER = textwrap.dedent('''
    import subprocess, time
    subprocess.Popen(["sleep", "infinity"], start_new_session=True)
    subprocess.Popen(["sh", "-c", "trap '' TERM HUP; while :; do sleep 1; done"], start_new_session=True)
    while True:
        time.sleep(1)
''')


def test_sleeping_forever_times_out_and_leaves_nothing_behind(docker_client, scorer_image, flight_data,
                                                               tmp_path) -> None:
    run_id = f"hostile-{uuid.uuid4().hex[:8]}"
    r = score_repo(docker_client, _repo(tmp_path, SLEEPER), flight_data, image=scorer_image, run_id=run_id,
                   options=ScoreOptions(train_timeout_s=5))
    assert (r.status, r.reason) == ("unscorable", "timeout"), r.detail
    assert 5 <= r.seconds < 30
    assert not _containers_of(docker_client, run_id)


FLOOD = textwrap.dedent('''
    import os, subprocess, sys
    subprocess.run(["sh", "-c", "yes pwned >&2"])        # a child floods first; it dies at the limit
    chunk = b"x" * (1 << 20)
    for _ in range(4096):                                # then four gigabytes from Python itself
        os.write(1, chunk)
''')


def _docker_root_free() -> int:
    return shutil.disk_usage("/var/lib/docker" if os.path.isdir("/var/lib/docker") else "/").free


def test_printing_gigabytes_is_output_flooding_and_never_reaches_the_host_disk(docker_client, scorer_image,
                                                                             flight_data, tmp_path) -> None:
    run_id = f"hostile-{uuid.uuid4().hex[:8]}"
    free_before = _docker_root_free()
    r = score_repo(docker_client, _repo(tmp_path, FLOOD), flight_data, image=scorer_image, run_id=run_id,
                   options=ScoreOptions(output_limit_mb=64, train_timeout_s=120))
    free_after = _docker_root_free()
    assert (r.status, r.reason) == ("unscorable", "output_flooding"), r.detail
    assert "64 MB" in r.detail
    # 4 GB were attempted; the host disk moved by far less (other work on this machine moves it a little)
    assert free_before - free_after < 256 << 20
    assert not _containers_of(docker_client, run_id)


def test_the_scorer_stays_healthy_after_hostile_runs(docker_client, scorer_image, flight_data, tmp_path) -> None:
    fast = textwrap.dedent('''
        import pandas as pd
        train = pd.read_csv("data/train.csv")
        RATE = (train["dep_delayed_15min"] == "Y").groupby(train["Dest"]).mean()
        def predict_proba(df):
            return df["Dest"].map(RATE).astype(float).fillna(0.5).to_numpy()
    ''')
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    own_dirs = f"sbx-score-{os.getpid()}-*"  # other processes' scorings may run beside this test
    before = set(tmp.glob(own_dirs))
    r = score_repo(docker_client, _repo(tmp_path, fast), flight_data, image=scorer_image)
    assert r.status == "scored" and 0.5 < r.auc < 0.8
    assert not set(tmp.glob(own_dirs)) - before
    mine = f"{os.uname().nodename}:{os.getpid()}"
    assert not [c for c in docker_client.containers.list(all=True, sparse=True, filters={"label": "sbx.kind=scorer"})
                if (c.attrs.get("Labels") or {}).get("sbx.owner") == mine]


FORK_BOMB = textwrap.dedent('''
    import os, time
    for _ in range(100000):
        try:
            os.fork()
        except OSError:
            time.sleep(0.01)
''')


def test_a_fork_bomb_hits_the_pids_limit_and_is_cleaned_up(docker_client, scorer_image, flight_data,
                                                            tmp_path) -> None:
    run_id = f"hostile-{uuid.uuid4().hex[:8]}"
    r = score_repo(docker_client, _repo(tmp_path, FORK_BOMB), flight_data, image=scorer_image, run_id=run_id,
                   options=ScoreOptions(train_timeout_s=5, pids=64))
    print(f"\nfork bomb: {r.reason} in {r.seconds:.1f}s: {(r.detail or '').splitlines()[:2]}")
    assert r.status == "unscorable" and r.reason in ("timeout", "crashed", "train_error"), r.detail
    assert r.seconds < 60
    assert not _containers_of(docker_client, run_id)
