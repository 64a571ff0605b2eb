"""Every kind of container sbx starts: its own log stream off (or capped), and a deadline of its own that no
process of the agent can stop, so a container outlives its limits by nothing even when sbx is gone."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from orchestrator.sandbox.container import LABEL_DEADLINE, ContainerSpec, create_box
from orchestrator.sandbox.copyout import CopyLimits, _copier_spec
from orchestrator.sandbox.docker import SandboxSpec, deadline_s, sandbox_container
from orchestrator.scoring.container import ScorerContainer
from orchestrator.scoring.options import ScoreOptions
from orchestrator.specs import load_budget


def _kinds() -> dict[str, ContainerSpec]:
    budget = load_budget("smoke")
    spec = SandboxSpec(run_id="r-1", image="img", budget=budget, cpuset=None, sock_dir=Path("/tmp"))
    scorer = ScorerContainer(None, "img", Path("/tmp"), ScoreOptions(), run_id="r-1", dataset="holdout",  # type: ignore[arg-type]
                             env_run_id="r-1")
    return {
        "sandbox": sandbox_container(spec, volume="v"),
        "smoke": sandbox_container(spec, volume="v", kind="smoke"),
        "copier": _copier_spec("img", "v", CopyLimits(timeout_s=300), "r-1", ""),
        "scorer": scorer.spec(1.0),
    }


def test_every_kind_keeps_no_log_but_the_copier_and_that_one_capped() -> None:
    for kind, spec in _kinds().items():
        log_config = spec.create_kwargs()["log_config"]
        if kind == "copier":  # it reports READY on its log; nothing of the agent's runs in it
            assert log_config["Type"] == "json-file" and log_config["Config"] == {"max-size": "1m", "max-file": "1"}
        else:
            assert log_config["Type"] == "none", kind


def test_the_sandbox_margin_is_the_hosts_setting_and_refuses_nonsense(monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.failures import ConfigError

    wall = load_budget("smoke").wall_clock_minutes * 60
    monkeypatch.setenv("SBX_SANDBOX_MARGIN_S", "20")
    assert deadline_s(load_budget("smoke")) == pytest.approx(wall + 20 + 0.1 * wall)
    for bad in ("0", "-5", "soon", "1e9", "nan"):
        monkeypatch.setenv("SBX_SANDBOX_MARGIN_S", bad)
        with pytest.raises(ConfigError, match="SBX_SANDBOX_MARGIN_S"):
            deadline_s(load_budget("smoke"))
    monkeypatch.setenv("SBX_SANDBOX_MARGIN_S", "")
    assert deadline_s(load_budget("smoke")) == pytest.approx(wall + 60 + 0.1 * wall)


def test_every_kind_ends_by_itself_at_its_deadline() -> None:
    kinds = _kinds()
    wall = load_budget("smoke").wall_clock_minutes * 60
    assert deadline_s(load_budget("smoke")) == pytest.approx(wall + 60 + 0.1 * wall)
    for kind, spec in kinds.items():
        kwargs = spec.create_kwargs()
        assert kwargs["labels"][LABEL_DEADLINE] == str(int(spec.deadline_s))
        if kind == "copier":
            assert kwargs["command"][:4] == ["timeout", "-s", "KILL", str(2 * 300 + 60)]  # the go, then the copy
            assert kwargs["user"] == "1000:1000"
        else:
            assert kwargs["command"] == ["sleep", str(int(spec.deadline_s))] and kwargs["user"] == "0:0", kind
    assert kinds["sandbox"].deadline_s == deadline_s(load_budget("smoke"))
    o = ScoreOptions()
    assert kinds["scorer"].deadline_s == o.connect_timeout_s + o.train_timeout_s + o.predict_timeout_s + 300


@pytest.mark.docker
def test_the_agent_can_neither_stop_the_deadline_nor_fill_the_host_through_the_log(docker_client, sandbox_image) -> None:
    """As the agent: stop every process it may signal, kill what it may, write 64 MiB to the main process's
    output. The container still ends at its 8 s deadline, and nothing reached a log file on the host."""
    spec = ContainerSpec(kind="sandbox", image=sandbox_image, deadline_s=8, run_id=f"test-{uuid.uuid4().hex[:8]}",
                         labels={"sbx.test": "deadline"})
    box = create_box(docker_client, spec)
    try:
        box.start()
        t0 = time.monotonic()
        attack = ("for p in /proc/[0-9]*; do [ ${p##*/} = $$ ] || kill -STOP ${p##*/} 2>/dev/null; done; "
                  "kill -9 -1 2>/dev/null; "
                  "head -c 67108864 /dev/zero > /proc/1/fd/1 2>/dev/null; echo wrote=$?; "
                  "for p in /proc/[0-9]*; do [ ${p##*/} = $$ ] || echo \"$(stat -c %U $p) $(awk '{print $3}' $p/stat)"
                  " $(tr '\\0' ' ' < $p/cmdline)\"; done")
        r = box.container.exec_run(["bash", "-c", attack], user="agent")
        out = r.output.decode()
        assert "wrote=1" in out, out                      # the main process's output is root's, not the agent's
        assert "root S sleep 8" in out, out               # root's sleep, sleeping: not stopped (T), not killed
        while box.is_running() and time.monotonic() - t0 < 60:
            time.sleep(0.5)
        assert not box.is_running()
        assert 6 <= time.monotonic() - t0 < 20
        attrs = box.attrs()
        assert attrs["HostConfig"]["LogConfig"]["Type"] == "none"
        assert not attrs.get("LogPath")                   # no log file on the host at all
    finally:
        box.remove()
