import os
from pathlib import Path

import pytest

from orchestrator.failures import DataError, UnscorableArtifact
from orchestrator.scoring.data import load_hidden, pristine_files
from orchestrator.scoring.service import clean_copy


def test_hidden_set_keeps_raw_lines_and_labels(flight_data: Path) -> None:
    hidden = load_hidden(flight_data, "holdout")
    raw = (flight_data / "holdout.features.csv").read_bytes().splitlines(keepends=True)
    assert hidden.n == 3000 == len(raw) - 1 == len(hidden.labels)
    assert hidden.batch_csv([0, 2]) == raw[0] + raw[1] + raw[3]
    assert int(hidden.labels.sum()) == 1500
    assert load_hidden(flight_data, "later").n == 3000


def test_hidden_set_problems_are_data_errors(tmp_path: Path, flight_data: Path) -> None:
    with pytest.raises(DataError, match="unknown dataset"):
        load_hidden(flight_data, "eval")
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("train.csv", "eval.csv", "holdout.labels.csv"):
        (bad / name).write_bytes((flight_data / name).read_bytes())
    (bad / "holdout.features.csv").write_text("Month,Dest\nc-1,BOS\n")
    with pytest.raises(DataError, match="differ from train.csv"):
        load_hidden(bad, "holdout")
    with pytest.raises(DataError, match="missing"):
        load_hidden(bad, "later")


def test_clean_copy_takes_regular_files_only_and_pristine_data(tmp_path: Path, flight_data: Path) -> None:
    src = tmp_path / "delivered"
    (src / "pkg").mkdir(parents=True)
    (src / ".git").mkdir()
    (src / "data").mkdir()
    (src / "train.py").write_text("print('hi')\n")
    (src / "pkg" / "helper.py").write_text("X = 1\n")
    (src / ".git" / "HEAD").write_text("ref: x\n")
    (src / "data" / "train.csv").write_text("tampered\n")
    (src / "data" / "holdout.labels.csv").write_text("dep_delayed_15min\nY\n")
    os.symlink("/etc/passwd", src / "passwd")
    os.symlink(src / "pkg", src / "linked_pkg")
    os.mkfifo(src / "fifo")
    dest = tmp_path / "copy"
    sha, train_sha = clean_copy(src, dest, pristine_files(flight_data))
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file() or p.is_symlink())
    assert files == ["data/eval.csv", "data/train.csv", "pkg/helper.py", "train.py"]
    assert (dest / "data" / "train.csv").read_bytes() == (flight_data / "train.csv").read_bytes()
    assert len(sha) == len(train_sha) == 64
    # the same content gives the same artifact hash; a changed file changes it
    assert clean_copy(src, tmp_path / "copy2", pristine_files(flight_data))[0] == sha
    (src / "pkg" / "helper.py").write_text("X = 2\n")
    assert clean_copy(src, tmp_path / "copy3", pristine_files(flight_data))[0] != sha


def test_clean_copy_of_a_single_file_and_of_a_folder_without_train_py(tmp_path: Path, flight_data: Path) -> None:
    one = tmp_path / "my_train.py"
    one.write_text("print(1)\n")
    clean_copy(one, tmp_path / "a", pristine_files(flight_data))
    assert (tmp_path / "a" / "train.py").read_text() == "print(1)\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UnscorableArtifact) as exc:
        clean_copy(empty, tmp_path / "b", pristine_files(flight_data))
    assert exc.value.reason == "no_train_py"


def test_clean_copy_refuses_an_oversized_artifact_before_reading_it(tmp_path: Path, flight_data: Path,
                                                                   monkeypatch) -> None:
    from orchestrator.scoring import service

    monkeypatch.setattr(service, "MAX_BYTES", 1000)
    src = tmp_path / "big"
    src.mkdir()
    (src / "train.py").write_text("x = 1\n")
    with open(src / "weights.bin", "wb") as f:
        f.truncate(10 << 30)  # sparse: 10 GB that must never be read
    with pytest.raises(UnscorableArtifact) as exc:
        clean_copy(src, tmp_path / "copy", pristine_files(flight_data))
    assert exc.value.reason == "bad_artifact"
