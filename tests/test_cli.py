import pytest

from orchestrator.cli import build_parser, main


def test_help_lists_every_command_group(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("data", "images"):
        assert command in out


def test_unknown_command_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["no-such-command"])
    assert exc.value.code == 2


def test_an_interrupted_study_says_how_to_resume(monkeypatch: pytest.MonkeyPatch, tmp_path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import orchestrator.cli.study as study_cli

    def stopped(_args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(study_cli, "_run", stopped)
    assert main(["study", "run", str(tmp_path / "s.yaml")]) == 130
    err = capsys.readouterr().err
    assert "sbx: interrupted (SIGINT)" in err and "run the same `sbx study run` again to resume it" in err
    monkeypatch.setattr(study_cli, "_plan", stopped)
    assert main(["study", "plan", str(tmp_path / "s.yaml")]) == 130
    assert "resume" not in capsys.readouterr().err  # only a study run has anything to resume
