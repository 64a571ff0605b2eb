"""Reference patches: made from two trees, cut to hunks, applied strictly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.tasks.patches import (
    PatchError,
    apply_patch,
    count_hunks,
    diff_stat,
    make_patch,
    parse_patch,
)

OLD = "".join(f"line {i}\n" for i in range(1, 60))


def _trees(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "pkg").mkdir(parents=True)
    (b / "pkg").mkdir(parents=True)
    (a / "pkg" / "m.py").write_text(OLD)
    new = OLD.replace("line 5\n", "line five\n").replace("line 30\n", "").replace("line 50\n", "line 50\nadded\n")
    (b / "pkg" / "m.py").write_text(new)
    (a / "pkg" / "same.py").write_text("x\n")
    (b / "pkg" / "same.py").write_text("x\n")
    (b / "pkg" / "new.py").write_text("created\nno newline")
    (a / "pkg" / "gone.py").write_text("bye\n")
    return a, b


def test_full_patch_round_trips_and_matches_gnu_patch(tmp_path: Path) -> None:
    a, b = _trees(tmp_path)
    text = make_patch(a, b, ["pkg/m.py", "pkg/same.py", "pkg/new.py", "pkg/gone.py"])
    assert diff_stat(text) == (4, 3) and count_hunks(a, b, "pkg/m.py") == 3
    mine = tmp_path / "mine"
    shutil.copytree(a, mine)
    assert apply_patch(mine, text) == ["pkg/m.py", "pkg/new.py", "pkg/gone.py"]
    assert (mine / "pkg" / "m.py").read_text() == (b / "pkg" / "m.py").read_text()
    assert (mine / "pkg" / "new.py").read_text() == "created\nno newline"
    assert not (mine / "pkg" / "gone.py").exists()
    gnu = tmp_path / "gnu"
    shutil.copytree(a, gnu)
    subprocess.run(["patch", "-p1", "--batch", "-s"], input=text.encode(), cwd=gnu, check=True)
    for rel in ("pkg/m.py", "pkg/new.py"):
        assert (gnu / rel).read_text() == (mine / rel).read_text()


def test_selected_hunks_apply_alone(tmp_path: Path) -> None:
    a, b = _trees(tmp_path)
    text = make_patch(a, b, ["pkg/m.py"], hunks={"pkg/m.py": [1, 3]})
    out = tmp_path / "out"
    shutil.copytree(a, out)
    apply_patch(out, text)
    got = (out / "pkg" / "m.py").read_text()
    assert "line five\n" in got and "added\n" in got and "line 30\n" in got
    gnu = tmp_path / "gnu"
    shutil.copytree(a, gnu)
    subprocess.run(["patch", "-p1", "--batch", "-s"], input=text.encode(), cwd=gnu, check=True)
    assert (gnu / "pkg" / "m.py").read_text() == got
    with pytest.raises(PatchError, match=r"hunks \[7\] do not exist"):
        make_patch(a, b, ["pkg/m.py"], hunks={"pkg/m.py": [7]})


def test_a_patch_that_does_not_fit_changes_nothing(tmp_path: Path) -> None:
    a, b = _trees(tmp_path)
    text = make_patch(a, b, ["pkg/new.py", "pkg/m.py"])
    (a / "pkg" / "m.py").write_text(OLD.replace("line 4\n", "line four\n"))
    with pytest.raises(PatchError, match="pkg/m.py:4: expected 'line 4"):
        apply_patch(a, text)
    assert not (a / "pkg" / "new.py").exists()


@pytest.mark.parametrize("path", ["../evil.py", "/etc/passwd", "a//b.py"])
def test_unsafe_paths_are_refused(path: str) -> None:
    with pytest.raises(PatchError, match="unsafe path"):
        parse_patch(f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-x\n+y\n".replace("a//etc", "/etc").replace("b//etc", "/etc"))
