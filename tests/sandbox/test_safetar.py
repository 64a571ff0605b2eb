"""The host-side tar parser against hand-made malicious archives: nothing but plain files and folders
under the destination, within the caps, whatever the archive says."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import time
from pathlib import Path

import pytest

from orchestrator.failures import CopyOutError, CopyOutTimeout, InfraError
from orchestrator.sandbox.copyout import CappedStream
from orchestrator.sandbox.safetar import TarCaps, extract_strictly, member_name_problem

CAPS = TarCaps(max_entries=100, max_file_bytes=1000, max_total_bytes=5000)


def make_tar(*members: tuple[tarfile.TarInfo, bytes | None], fmt: int = tarfile.PAX_FORMAT) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    buf.seek(0)
    return buf


def f(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    return info, data


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    return info, None


def d(name: str) -> tuple[tarfile.TarInfo, None]:
    return special(name, tarfile.DIRTYPE)


def tree(root: Path) -> dict[str, str]:
    """Every path under root with its kind; fails on anything but files and directories."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            mode = os.lstat(p).st_mode
            assert stat.S_ISDIR(mode) or stat.S_ISREG(mode), f"{p} is neither a file nor a folder"
            out[str(p.relative_to(root))] = "dir" if stat.S_ISDIR(mode) else "file"
    return out


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    out = tmp_path / "dest"
    out.mkdir()
    return out


def test_plain_files_and_folders_come_out_with_hashes(dest: Path) -> None:
    res = extract_strictly(make_tar(d("a"), f("a/b.txt", b"hello"), f("top.py", b"print(1)\n"),
                                    f("new\nline-ünï.txt", b"u")), dest, CAPS)
    assert tree(dest) == {"a": "dir", "a/b.txt": "file", "top.py": "file", "new\nline-ünï.txt": "file"}
    assert (dest / "a/b.txt").read_bytes() == b"hello"
    assert res.files["a/b.txt"] == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    assert res.bytes == 5 + 9 + 1 and not res.skipped and not res.truncated


@pytest.mark.parametrize("name", ["/etc/passwd", "../evil", "a/../../evil", "a/./b", "a//b", "./x", ".", ".."])
def test_unsafe_names_are_skipped(dest: Path, tmp_path: Path, name: str) -> None:
    res = extract_strictly(make_tar(f(name, b"pwned"), f("ok", b"1")), dest, CAPS)
    assert [s.reason for s in res.skipped] == ["bad_name"]
    assert tree(dest) == {"ok": "file"}
    assert {p.name for p in tmp_path.iterdir()} == {"dest"}


def test_links_devices_and_fifos_are_never_created(dest: Path, tmp_path: Path) -> None:
    members = [
        special("abs", tarfile.SYMTYPE, "/etc/shadow"),
        special("rel", tarfile.SYMTYPE, "../../../../etc/passwd"),
        special("dirlink", tarfile.SYMTYPE, "/"),
        f("dirlink/etc/pwned", b"through the link"),        # would land in / if the link had been made
        special("hard", tarfile.LNKTYPE, "/etc/passwd"),
        special("chr", tarfile.CHRTYPE), special("blk", tarfile.BLKTYPE), special("fifo", tarfile.FIFOTYPE),
        special("cont", tarfile.CONTTYPE),
    ]
    res = extract_strictly(make_tar(*members), dest, CAPS)
    reasons = {s.path: s.reason for s in res.skipped}
    assert reasons == {"abs": "symlink", "rel": "symlink", "dirlink": "symlink", "hard": "hardlink",
                       "chr": "special", "blk": "special", "fifo": "special", "cont": "special"}
    # the file that tried to go through the link is a plain file in a plain folder under dest
    assert tree(dest) == {"dirlink": "dir", "dirlink/etc": "dir", "dirlink/etc/pwned": "file"}
    assert not Path("/etc/pwned").exists()


def test_sparse_members_are_refused(dest: Path) -> None:
    info, data = f("sparse.bin", b"abcde")
    info.pax_headers = {"GNU.sparse.map": "0,5", "GNU.sparse.size": "1000000000", "GNU.sparse.name": "sparse.bin"}
    res = extract_strictly(make_tar((info, data)), dest, CAPS)
    assert [(s.reason, s.detail) for s in res.skipped] == [("special", "sparse member")]
    assert tree(dest) == {}


def test_size_caps(dest: Path) -> None:
    res = extract_strictly(make_tar(f("big", b"x" * 1001), *(f(f"m{i}", b"y" * 1000) for i in range(6))), dest, CAPS)
    assert [s.reason for s in res.skipped] == ["too_big", "over_total"]
    assert res.bytes == 5000 and res.truncated
    assert not (dest / "big").exists() and not (dest / "m5").exists()


def test_entry_cap_stops_the_stream(dest: Path) -> None:
    res = extract_strictly(make_tar(*(f(f"f{i}", b"") for i in range(150))),
                           dest, TarCaps(max_entries=100, max_file_bytes=10, max_total_bytes=10))
    assert len(res.files) == 100 and res.truncated
    assert res.skipped_counts["over_count"] == 1


def test_duplicates_and_file_folder_clashes_keep_the_first(dest: Path) -> None:
    res = extract_strictly(make_tar(f("a", b"first"), f("a", b"second"), f("a/b", b"under a file"),
                                    d("c"), f("c", b"file over folder")), dest, CAPS)
    assert [s.reason for s in res.skipped] == ["conflict", "conflict", "conflict"]
    assert (dest / "a").read_bytes() == b"first" and (dest / "c").is_dir()


def test_modes_are_reduced(dest: Path) -> None:
    extract_strictly(make_tar(f("suid", b"x", 0o4777), f("plain", b"x", 0o666)), dest, CAPS)
    assert stat.S_IMODE(os.lstat(dest / "suid").st_mode) & 0o7022 == 0
    assert stat.S_IMODE(os.lstat(dest / "plain").st_mode) & 0o7133 == 0


def test_old_formats_are_read_the_same_way(dest: Path) -> None:
    long = "d/" + "n" * 200
    res = extract_strictly(make_tar(f(long, b"gnu"), special("l", tarfile.SYMTYPE, "/etc"), fmt=tarfile.GNU_FORMAT),
                           dest, CAPS)
    assert (dest / long).read_bytes() == b"gnu" and [s.reason for s in res.skipped] == ["symlink"]


def test_garbage_and_truncated_streams_raise(dest: Path) -> None:
    with pytest.raises(tarfile.TarError):
        extract_strictly(io.BytesIO(b"not a tar at all" * 64), dest, CAPS)
    data = make_tar(f("a", b"x" * 900)).getvalue()[:700]
    with pytest.raises(tarfile.TarError):
        extract_strictly(io.BytesIO(data), dest, CAPS)


def test_destination_must_be_empty(dest: Path) -> None:
    (dest / "x").write_text("")
    with pytest.raises(FileExistsError):
        extract_strictly(make_tar(f("a")), dest, CAPS)


def test_a_policy_can_skip_members(dest: Path) -> None:
    res = extract_strictly(make_tar(f("keep"), f("drop")), dest, CAPS,
                           policy=lambda name, info: ("unexpected", "no") if name == "drop" else None)
    assert tree(dest) == {"keep": "file"} and res.skipped_counts["unexpected"] == 1


def test_member_name_problem() -> None:
    assert member_name_problem("a/b/c.py") is None
    assert member_name_problem("dir/") is None
    assert member_name_problem("a\x00b") is not None
    assert member_name_problem("x" * 256) == "name too long"


def test_capped_stream_stops_at_the_cap_and_the_deadline() -> None:
    chunks = iter([(b"a" * 600, None), (b"b" * 600, b"err")])
    stream = CappedStream(chunks, cap=1000, deadline=time.monotonic() + 60)
    assert stream.read(500) == b"a" * 500
    with pytest.raises(CopyOutError):
        stream.read(500)
    late = CappedStream(iter([(b"x", None)]), cap=10, deadline=time.monotonic() - 1)
    with pytest.raises(CopyOutTimeout) as exc:
        late.read(1)
    assert isinstance(exc.value, TimeoutError) and isinstance(exc.value, InfraError)
