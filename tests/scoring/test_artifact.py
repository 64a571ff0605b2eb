"""What of a delivered repo the scorer gets: its code and small text configuration; the rest is withheld
and reported (scoring/artifact.py)."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from orchestrator.failures import UnscorableArtifact
from orchestrator.scoring import artifact
from orchestrator.scoring.artifact import classify, select_code
from orchestrator.scoring.data import pristine_files


def _repo(tmp_path: Path) -> Path:
    src = tmp_path / "delivered"
    for folder in ("pkg", ".git", "data", "models", ".venv/lib", "pkg/__pycache__"):
        (src / folder).mkdir(parents=True)
    files = {
        "train.py": "print('hi')\n", "pkg/__init__.py": "", "pkg/helper.py": "X = 1\n", "task.json": '{"a": 1}\n',
        "README.md": "notes\n", "run_experiment": "#!/bin/sh\necho\n", ".git/HEAD": "ref: x\n",
        "data/train.csv": "tampered\n", "data/extra.csv": "a,b\n1,2\n", "rows.csv": "a,b\n1,2\n",
        "models/model.ubj": "{}", "model.pkl": "not really a pickle", "weights.json": "[" + "1," * 40_000 + "1]",
        ".venv/lib/site.py": "x = 1\n", "pkg/__pycache__/helper.cpython-311.pyc": "bytecode",
        "big.py": "X = '" + "a" * (300 << 10) + "'\n", "notes.txt": "caf\xe9\n",
    }
    for rel, text in files.items():
        (src / rel).write_text(text, encoding="latin-1" if rel == "notes.txt" else "utf-8")
    (src / "blob.txt").write_bytes(b"\x00\x01binary")
    os.symlink("/etc/passwd", src / "passwd.txt")
    os.symlink(src / "pkg", src / "linked_pkg")
    os.mkfifo(src / "fifo")
    return src


def test_the_scorer_gets_code_and_small_text_and_every_other_file_is_reported(tmp_path: Path) -> None:
    sel = select_code(_repo(tmp_path))
    assert sorted(sel.files) == ["README.md", "pkg/__init__.py", "pkg/helper.py", "run_experiment", "task.json",
                                 "train.py"]
    withheld = {w.path: w.reason for w in sel.withheld}
    assert withheld == {
        ".venv/": "an environment or cache folder",
        "big.py": "a .py file over 256 KB",
        "blob.txt": "binary",
        "data/extra.csv": "under data/ (the scorer uses the pristine data files)",
        "fifo": "a link or special file",
        "linked_pkg": "a link or special file",
        "model.pkl": "a data or model file",
        "models/model.ubj": "a data or model file",
        "notes.txt": "binary",
        "passwd.txt": "a link or special file",
        "rows.csv": "a data or model file",
        "weights.json": "text over 64 KB",
    }
    assert sel.withheld_count == len(withheld)
    assert sel.python_files().keys() == {"pkg/__init__.py", "pkg/helper.py", "train.py"}


def test_the_committed_train_py_counts_and_the_working_tree_may_be_anything(tmp_path: Path) -> None:
    src = _repo(tmp_path)
    (src / "train.py").unlink()
    (src / "train.py").mkdir()            # a folder where a file is expected
    (src / "train.py" / "x.py").write_text("y = 2\n")
    (src / "data" / "train.csv").unlink()
    committed = tmp_path / "committed.py"
    committed.write_text("print('committed')\n")
    sel = select_code(src, train_py=committed)
    assert sel.files["train.py"] == b"print('committed')\n"
    assert "train.py/x.py" not in sel.files   # it cannot sit beside the committed train.py
    assert {w.path: w.reason for w in sel.withheld}["train.py/x.py"] == "under a folder named like a file the scorer gets"
    data_as_file = tmp_path / "other"
    data_as_file.mkdir()
    (data_as_file / "data").write_text("a file where the data folder should be\n")
    sel = select_code(data_as_file, train_py=committed)
    assert [(w.path, w.reason) for w in sel.withheld] == [("data", "a file where the data folder goes")]


def test_hashes_follow_content_and_a_repo_without_train_py_is_unscorable(tmp_path: Path) -> None:
    src = _repo(tmp_path)
    a, b = select_code(src), select_code(src)
    assert a.artifact_sha256 == b.artifact_sha256 and len(a.train_sha256) == 64
    (src / "pkg" / "helper.py").write_text("X = 2\n")
    assert select_code(src).artifact_sha256 != a.artifact_sha256
    (src / "model.pkl").write_text("another model")  # withheld files are not the artifact
    assert select_code(src).artifact_sha256 == select_code(src).artifact_sha256
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UnscorableArtifact) as exc:
        select_code(empty)
    assert exc.value.reason == "no_train_py"
    one = tmp_path / "solo.py"
    one.write_text("print(1)\n")
    assert select_code(one).files == {"train.py": b"print(1)\n"}


def test_the_tar_holds_the_code_and_the_pristine_data_only(tmp_path: Path, flight_data: Path) -> None:
    sel = select_code(_repo(tmp_path))
    with tarfile.open(fileobj=io.BytesIO(sel.tar(pristine_files(flight_data)))) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert all(m.isfile() or m.isdir() for m in members.values())
        assert all(m.uid == 1000 and not m.name.startswith(("/", "..")) for m in members.values())
        assert tar.extractfile("data/train.csv").read() == (flight_data / "train.csv").read_bytes()
    assert sorted(n for n, m in members.items() if m.isfile()) == sorted(
        [*sel.files, "data/train.csv", "data/eval.csv"])
    assert members["run_experiment"].mode == 0o644  # written without the executable bit in the fixture


def test_a_huge_sparse_file_is_never_read(tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "big"
    src.mkdir()
    (src / "train.py").write_text("x = 1\n")
    with open(src / "notes.txt", "wb") as f:
        f.truncate(10 << 30)  # sparse: 10 GB that must never be read
    with open(src / "weights.py", "wb") as f:
        f.truncate(10 << 30)
    sel = select_code(src)
    assert {w.path: w.reason for w in sel.withheld} == {"notes.txt": "text over 64 KB", "weights.py": "a .py file over 256 KB"}


def test_caps_on_the_number_of_files_and_the_list(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(artifact, "MAX_KEPT_FILES", 5)
    src = tmp_path / "many"
    src.mkdir()
    (src / "train.py").write_text("x = 1\n")
    for i in range(80):
        (src / f"m{i:02d}.py").write_text("y = 1\n")
    sel = select_code(src)
    assert len(sel.files) == 5 and sel.withheld_count == 76 and len(sel.withheld) == artifact.LISTED


@pytest.mark.parametrize(("rel", "size", "kept"), [
    ("train.py", 10, True), ("a/b/c.py", 200 << 10, True), ("x.py", 300 << 10, False), ("conf.yaml", 10, True),
    ("data/x.py", 10, False), ("d.parquet", 10, False), ("m.joblib", 10, False), ("Makefile", 10, True),
    ("x.json.gz", 10, False), ("image.png", 10, False),
])
def test_classify(rel: str, size: int, kept: bool) -> None:
    assert (classify(rel, size) is None) is kept
