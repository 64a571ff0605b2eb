"""The images, built for real (offline here: a Debian base made here and a host wheelhouse)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orchestrator.images import build_images, resolve_image
from orchestrator.images.build import input_hash
from orchestrator.images.wheelhouse import pinned

pytestmark = pytest.mark.docker
LOCK = Path(__file__).resolve().parents[2] / "images" / "requirements.lock"


def _run(client, tag: str, cmd: list[str], **kw) -> str:
    return client.containers.run(tag, cmd, remove=True, network_mode="none", **kw).decode()


def test_images_record_the_exact_pinned_versions(built_images) -> None:
    pins = pinned(LOCK)
    for img in built_images.values():
        recorded = {re.sub(r"[-_.]+", "_", k).lower(): v for k, v in
                    (line.split("==") for line in img.versions.splitlines() if "==" in line)}
        for name, version in pins.items():
            assert recorded.get(name) == version, f"{img.tag}: {name} is {recorded.get(name)}, pinned {version}"
        assert img.versions.startswith("Python 3.11")


def test_an_unchanged_image_is_not_rebuilt(docker_client, built_images) -> None:
    again = {img.name: img for img in build_images(docker_client)}
    for name, img in again.items():
        assert not img.built
        assert img.image_id == built_images[name].image_id
    assert resolve_image(docker_client, "sandbox").id == built_images["sandbox"].image_id


def test_input_hash_changes_with_any_input(tmp_path: Path) -> None:
    root = tmp_path / "images"
    for sub in ("sandbox", "scorer"):
        (root / sub).mkdir(parents=True)
    (root / "Dockerfile").write_text("FROM x\n")
    (root / "requirements.lock").write_text("a==1\n")
    first = input_hash("sandbox", "sha256:base", root)
    assert input_hash("sandbox", "sha256:base", root) == first
    assert input_hash("scorer", "sha256:base", root) != first
    assert input_hash("sandbox", "sha256:other", root) != first
    (root / "sandbox" / "tool.py").write_text("print(1)\n")
    assert input_hash("sandbox", "sha256:base", root) != first


def test_sandbox_runs_as_agent_uid_1000_with_the_stack(docker_client, built_images) -> None:
    tag = built_images["sandbox"].tag
    assert _run(docker_client, tag, ["id", "-u"]).strip() == "1000"
    assert _run(docker_client, tag, ["id", "-un"]).strip() == "agent"
    out = _run(docker_client, tag, ["python", "-c", "import xgboost, pandas, numpy, sklearn, psutil; print(xgboost.__version__)"])
    assert out.strip() == pinned(LOCK)["xgboost_cpu"]
    assert _run(docker_client, tag, ["git", "--version"]).startswith("git version")


def test_scorer_is_the_sandbox_with_the_stack_and_no_runner_baked_in(docker_client, built_images) -> None:
    # the scorer is an experiment's twin (docs/scoring.md): built FROM the sandbox, so the scored code meets
    # the same files; the runner is handed over per scoring by the host, never part of an image
    tag = built_images["scorer"].tag
    assert _run(docker_client, tag, ["id", "-u"]).strip() == "1000"
    out = _run(docker_client, tag, ["sh", "-c", "ls /opt/sbx; python -c 'import xgboost, sklearn'"]).split()
    sandbox = _run(docker_client, built_images["sandbox"].tag, ["ls", "/opt/sbx"]).split()
    assert out == sandbox and "scorer" not in out


def test_no_secret_is_baked_into_the_images(docker_client, built_images) -> None:
    for img in built_images.values():
        env = docker_client.images.get(img.tag).attrs["Config"]["Env"] or []
        assert not [e for e in env if re.search(r"(KEY|TOKEN|SECRET|PASSWORD)=", e, re.I)], env
        found = _run(docker_client, img.tag, ["sh", "-c",
                     "ls -a /root /home/agent 2>/dev/null; find / -xdev \\( -name '*.pem' -path '*private*' -o -name 'id_rsa*' -o -name '.netrc' \\) 2>/dev/null"],
                     user="root")
        assert "id_rsa" not in found and ".netrc" not in found and ".docker" not in found
