"""The content-addressed artifact store: addressing, read-only objects, atomic writes, hostile inputs."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from pathlib import Path

import pytest

from orchestrator import artifacts
from orchestrator.artifacts import ArtifactStore, canonical_json
from orchestrator.failures import ArtifactNotFound, InvalidArtifact, SbxError


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "artifacts")


def _objects(store: ArtifactStore) -> list[Path]:
    return sorted(p for p in store.root.rglob("*") if p.is_file() and ".tmp" not in p.parts)


def _temps(store: ArtifactStore) -> list[Path]:
    tmp = store.root / ".tmp"
    return list(tmp.iterdir()) if tmp.exists() else []


def test_an_object_is_stored_under_the_sha256_of_its_bytes(store: ArtifactStore) -> None:
    data = b"import xgboost\n"
    sha = store.put_bytes(data)
    assert sha == hashlib.sha256(data).hexdigest()
    path = store.get_path(sha)
    assert path == store.root / sha[:2] / sha[2:]
    assert path.read_bytes() == data
    assert store.has(sha) and store.verify(sha)


def test_the_same_bytes_are_stored_once_and_different_bytes_apart(
    store: ArtifactStore, tmp_path: Path
) -> None:
    a = store.put_bytes(b"v1")
    assert store.put_bytes(b"v1") == a
    f = tmp_path / "train.py"
    f.write_bytes(b"v1")
    assert store.put_file(f) == a  # a file and bytes with the same content share one object
    b = store.put_bytes(b"v2")
    assert a != b
    assert len(_objects(store)) == 2


def test_objects_are_read_only(store: ArtifactStore) -> None:
    mode = store.get_path(store.put_bytes(b"x")).stat().st_mode
    assert stat.S_ISREG(mode) and mode & 0o222 == 0


def test_an_empty_object_is_fine(store: ArtifactStore) -> None:
    sha = store.put_bytes(b"")
    assert sha == hashlib.sha256(b"").hexdigest() and store.get_path(sha).read_bytes() == b""


def test_a_large_file_is_streamed_in(store: ArtifactStore, tmp_path: Path) -> None:
    f = tmp_path / "bundle.git"
    data = os.urandom(3 * (1 << 20) + 17)
    f.write_bytes(data)
    sha = store.put_file(f)
    assert sha == hashlib.sha256(data).hexdigest() and store.get_path(sha).read_bytes() == data
    assert _temps(store) == []


def test_put_file_never_follows_a_symlink(store: ArtifactStore, tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text("root:x:0:0")
    link = tmp_path / "train.py"
    link.symlink_to(secret)
    with pytest.raises(InvalidArtifact, match="symlink"):
        store.put_file(link)
    assert _objects(store) == []


def test_put_file_refuses_what_is_not_a_regular_file(store: ArtifactStore, tmp_path: Path) -> None:
    with pytest.raises(InvalidArtifact, match="not a regular file"):
        store.put_file(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InvalidArtifact, match="not a regular file"):
        store.put_file(fifo)  # and does not block waiting for a writer
    with pytest.raises(FileNotFoundError):
        store.put_file(tmp_path / "missing")


@pytest.mark.parametrize("sha", ["", "abc", "A" * 64, "g" * 64, "../" + "a" * 61, "a" * 65, None])
def test_a_malformed_id_is_refused_before_any_path_is_built(store: ArtifactStore, sha: object) -> None:
    with pytest.raises(InvalidArtifact, match="not a sha256"):
        store.get_path(sha)  # type: ignore[arg-type]
    with pytest.raises(InvalidArtifact):
        store.has(sha)  # type: ignore[arg-type]


def test_an_unknown_object_is_not_found(store: ArtifactStore) -> None:
    sha = "0" * 64
    assert not store.has(sha)
    with pytest.raises(ArtifactNotFound) as exc:
        store.get_path(sha)
    assert isinstance(exc.value, FileNotFoundError) and isinstance(exc.value, SbxError)


def test_a_write_that_fails_midway_leaves_nothing(
    store: ArtifactStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"a" * 1000

    def crash(fd: int) -> None:
        raise OSError(5, "disk gone")

    monkeypatch.setattr(artifacts.os, "fsync", crash)  # the bytes are written, not yet flushed
    with pytest.raises(OSError, match="disk gone"):
        store.put_bytes(data)
    monkeypatch.undo()
    sha = hashlib.sha256(data).hexdigest()
    assert not store.has(sha) and _objects(store) == [] and _temps(store) == []
    assert store.put_bytes(data) == sha and store.get_path(sha).read_bytes() == data  # a retry works


def test_a_failed_rename_leaves_nothing(
    store: ArtifactStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    f = tmp_path / "log.txt"
    f.write_bytes(b"agent log\n")

    def crash(src: object, dst: object) -> None:
        raise OSError(28, "no space")

    monkeypatch.setattr(artifacts.os, "replace", crash)
    with pytest.raises(OSError, match="no space"):
        store.put_file(f)
    assert _objects(store) == [] and _temps(store) == []


def test_a_reader_never_sees_a_partial_object(store: ArtifactStore, monkeypatch: pytest.MonkeyPatch) -> None:
    data = os.urandom(1 << 16)
    sha = hashlib.sha256(data).hexdigest()
    seen: list[bool] = []
    real_fsync = os.fsync

    def look_while_writing(fd: int) -> None:
        seen.append(store.has(sha))  # the bytes are in the temp file, the object is not there yet
        real_fsync(fd)

    monkeypatch.setattr(artifacts.os, "fsync", look_while_writing)
    store.put_bytes(data)
    assert seen and seen[0] is False
    assert store.get_path(sha).read_bytes() == data


def test_concurrent_writers_of_the_same_bytes_agree(store: ArtifactStore) -> None:
    data = os.urandom(1 << 18)
    results: list[str] = []
    barrier = threading.Barrier(8)

    def put() -> None:
        barrier.wait()
        results.append(store.put_bytes(data))

    threads = [threading.Thread(target=put) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1 and len(results) == 8
    assert _objects(store) == [store.get_path(results[0])] and _temps(store) == []
    assert store.verify(results[0])


def test_verify_detects_a_changed_object(store: ArtifactStore) -> None:
    sha = store.put_bytes(b"original")
    path = store.get_path(sha)
    path.chmod(0o644)
    path.write_bytes(b"tampered")
    assert not store.verify(sha)


def test_a_manifest_is_canonical_json(store: ArtifactStore) -> None:
    a = store.put_manifest({"run_id": "r-1", "files": {"train.py": "ab" * 32, "log": "cd" * 32}, "n": 2})
    b = store.put_manifest({"n": 2, "files": {"log": "cd" * 32, "train.py": "ab" * 32}, "run_id": "r-1"})
    assert a == b  # key order does not matter
    raw = store.get_path(a).read_bytes()
    assert (
        raw
        == b'{"files":{"log":"' + b"cd" * 32 + b'","train.py":"' + b"ab" * 32 + b'"},"n":2,"run_id":"r-1"}'
    )
    assert store.get_manifest(a) == json.loads(raw)


def test_a_manifest_keeps_unicode_as_utf8() -> None:
    assert canonical_json({"note": "Zürich"}) == '{"note":"Zürich"}'.encode()


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": object()}, ["not", "an", "object"]])
def test_a_manifest_must_be_a_json_object_of_finite_values(store: ArtifactStore, bad: object) -> None:
    with pytest.raises(InvalidArtifact):
        store.put_manifest(bad)  # type: ignore[arg-type]


def test_get_manifest_of_a_non_object_is_refused(store: ArtifactStore) -> None:
    with pytest.raises(InvalidArtifact, match="not a manifest"):
        store.get_manifest(store.put_bytes(b"[1, 2]"))


def test_the_home_names_the_store(tmp_path: Path) -> None:
    from orchestrator.home import Home

    store = ArtifactStore(Home(tmp_path / "home").artifacts_dir)
    sha = store.put_bytes(b"x")
    assert store.get_path(sha).is_relative_to(tmp_path / "home" / "artifacts")
