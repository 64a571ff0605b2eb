"""`sbx data prepare` end to end through `orchestrator.cli.main` (tests orchestrator/cli/data.py)."""

import io
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple

import pytest

from orchestrator import log
from orchestrator.cli import main
from orchestrator.data import load_manifest


class Ran(NamedTuple):
    code: int
    out: str
    err: str


Sbx = Callable[..., Ran]


@pytest.fixture
def sbx() -> Sbx:
    """Run `sbx ARGS` in-process with its own stdout/stderr.

    Not capsys: `main` binds structlog to the sys.stderr of the moment, and capsys's stream is closed after
    the test, so later tests would log into a closed file. Here logging is pointed back at the real stderr.
    """

    def run(*args: str) -> Ran:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:
                code = int(exc.code or 0)
        log.configure()
        return Ran(code, out.getvalue(), err.getvalue())

    return run


SMALL = ["--train-rows", "200", "--eval-rows", "100", "--holdout-rows", "200", "--later-rows", "200"]


def test_prepare_writes_and_summarises(tmp_path: Path, sbx: Sbx) -> None:
    out = tmp_path / "flights"
    ran = sbx("data", "prepare", "--out", str(out), *SMALL)
    assert ran.code == 0
    assert f"wrote {out}" in ran.out
    assert "holdout.labels.csv" in ran.out and "200 rows  Y  50.0%" in ran.out
    assert load_manifest(out).options.sizes.eval == 100
    assert '"event": "data.prepare"' in ran.err

    ran = sbx("data", "prepare", "--out", str(out), *SMALL)
    assert ran.code == 0
    assert "already holds data prepared from the same inputs with these options; nothing to do" in ran.out
    assert "train.csv" in ran.out

    ran = sbx("data", "prepare", "--out", str(out), *SMALL, "--force")
    assert ran.code == 0 and f"replaced {out}" in ran.out


def test_unset_sizes_keep_the_source_defaults(tmp_path: Path, sbx: Sbx) -> None:
    assert sbx("data", "prepare", "--out", str(tmp_path / "f"), "--holdout-rows", "1000").code == 0
    sizes = load_manifest(tmp_path / "f").options.sizes
    assert (sizes.train, sizes.eval, sizes.holdout, sizes.later) == (20_000, 10_000, 1_000, 20_000)


def test_default_out_is_under_sbx_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sbx: Sbx) -> None:
    monkeypatch.setenv("SBX_HOME", str(tmp_path / "home"))
    assert sbx("data", "prepare", *SMALL).code == 0
    assert (tmp_path / "home" / "data" / "flights" / "manifest.json").is_file()


def test_actual_dep_time_warns(tmp_path: Path, sbx: Sbx) -> None:
    ran = sbx("data", "prepare", "--out", str(tmp_path / "f"), "--dep-time", "actual", *SMALL)
    assert ran.code == 0 and "leaks the delay label" in ran.out


def test_help_says_actual_dep_time_leaks(sbx: Sbx) -> None:
    ran = sbx("data", "prepare", "--help")
    assert ran.code == 0 and "LEAKS the label" in " ".join(ran.out.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--eval-rows", "101"], "sbx: error: slice 'eval': size 101 must be a positive even number"),
        (["--source", "asa"], "sbx: error: source 'asa' needs --dir"),
        (["--later-rows", "40000"], "sbx: error: slice 'later' needs 40000 rows"),
    ],
)
def test_bad_input_is_exit_2_with_a_message(tmp_path: Path, sbx: Sbx, args: list[str], message: str) -> None:
    ran = sbx("data", "prepare", "--out", str(tmp_path / "f"), *args)
    assert ran.code == 2 and message in ran.err
    assert list(tmp_path.iterdir()) == []


def test_asa_through_the_cli(asa_dir: Path, tmp_path: Path, sbx: Sbx) -> None:
    out = tmp_path / "out"
    args = [
        "--source",
        "asa",
        "--dir",
        str(asa_dir),
        "--out",
        str(out),
        "--train-rows",
        "100",
        "--eval-rows",
        "50",
        "--holdout-rows",
        "100",
        "--later-rows",
        "100",
    ]
    assert sbx("data", "prepare", *args).code == 0
    manifest = load_manifest(out)
    assert manifest.source == "asa"
    assert [i.name for i in manifest.inputs] == ["2005.csv", "2006.csv.bz2", "2007.csv"]
    assert manifest.options.periods == {"train": "2005", "eval": "2006", "holdout": "2006", "later": "2007"}
