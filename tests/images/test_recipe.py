"""One image recipe and one `ensure` for every family (orchestrator/images/recipe.py), tagged by one content
hash (orchestrator/images/content.py).

The fixed-input tags below were computed by each family's own hash before the families were moved onto the
one builder (commit e51b15c): they pin the tag derivation bit for bit, so images built before the change are
found, not rebuilt."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orchestrator.failures import ImageError
from orchestrator.images import build as standard
from orchestrator.images import fleet
from orchestrator.images.agents import build as agents
from orchestrator.images.content import tree_files
from orchestrator.images.recipe import Recipe, ensure, existing, folder
from orchestrator.specs.task import PythonEnvironment
from orchestrator.tasks import environment as env_images
from tests.files import write_files

ROOT = Path(__file__).resolve().parents[2]

FILES = {
    "images/Dockerfile": "FROM scratch\n",
    "images/requirements.lock": "a==1\n",
    "images/.dockerignore": "wheelhouse/*.lock\n",
    "images/sandbox/launcher.py": "print(1)\n",
    "images/sandbox/sub/gate.py": "print(3)\n",
    "images/sandbox/__pycache__/launcher.cpython-311.pyc": "junk",
    "images/scorer/run.py": "print(2)\n",
    ".dockerignore": "**/__pycache__\n",
    "pyproject.toml": "[project]\nname='x'\n",
    "orchestrator/__init__.py": "",
    "orchestrator/m.py": "x = 1\n",
    "orchestrator/m.pyc": "junk",
    "budgets/b.yaml": "cpu: 1\n",
    "images/fleet/Dockerfile": "FROM x\n",
    "images/fleet/requirements.lock": "ray==1\n",
    "images/fleet/node.sh": "#!/bin/sh\n",
    "agents/Dockerfile": "FROM agent\n",
    "agents/install.py": "print('install')\n",
    "env/Dockerfile": "FROM env\n",
    "task/Dockerfile": "FROM task\n",
    "task-sandbox/Dockerfile": "FROM tasksandbox\n",
    "repo/pkg/__init__.py": "v = 1\n",
    "repo/setup.py": "setup()\n",
    "harbor/Dockerfile": "FROM harbor\n",
    "harbor/data.txt": "d\n",
}
MANIFEST = {"name": "pi", "version": "1.0", "kind": "npm", "digest": "sha256:" + "1" * 64, "before": "2026-11-30"}
ENV = PythonEnvironment(python="3.11", packages={"a": "1", "B_c": "2.0"})
#: family -> its digest for FILES, by the code before the one builder (the fleet's moved when compliance/ went
#: into orchestrator/ and left its inputs)
BEFORE = {
    "sandbox": "8ac419dd051d", "scorer": "75a187bffec7", "venv": "e08d9b16c630", "fleet": "bfb5f8451fe6",
    "agent": "299a99ae3412", "env": "42bebc67e8d2", "task": "86cdb0a3829e", "harbor": "35ea27e67874",
    "task-sandbox": "800dbb7a9405", "ml": "b12fde30111a",
}


def _tree(root: Path) -> Path:
    return write_files(root, FILES)


def _tags(root: Path) -> dict[str, str]:
    """Every family's tag for the inputs under `root`, as each family derives it."""
    return {
        **{t: f"sbx-{t}:{standard.input_hash(t, 'sha256:base', root / 'images')}" for t in ("sandbox", "scorer", "venv")},
        "fleet": f"sbx-fleet:{fleet.input_hash('sha256:base', root)}",
        "agent": agents.agent_tag("pi", agents.input_hash(MANIFEST, "sha256:sandbox", root / "agents")),
        "env": f"sbx-env:{env_images.env_digest('sha256:base', ENV, root / 'env/Dockerfile')}",
        "task": f"sbx-task:{env_images.task_digest('sha256:env', 'pip install -e .', root / 'repo', root / 'task/Dockerfile')}",
        "harbor": f"sbx-task:{env_images.harbor_digest(root / 'harbor', 'Dockerfile')}",
        "task-sandbox": "sbx-task-sandbox:" + env_images.task_sandbox_digest(
            "sha256:task", root / "task-sandbox/Dockerfile", root / "images/sandbox"),
        "ml": f"sbx-env-sandbox:{env_images.ml_env_digest('sha256:base', ENV, root / 'images')}",
    }


def test_every_familys_tag_is_what_it_was_before_the_one_builder(tmp_path: Path) -> None:
    tags = _tags(_tree(tmp_path))
    assert {family: tag.partition(":")[2] for family, tag in tags.items()} == BEFORE


def test_no_two_families_share_a_tag(tmp_path: Path) -> None:
    tags = list(_tags(_tree(tmp_path)).values())
    assert len(set(tags)) == len(tags)


@pytest.mark.parametrize(("changed", "moves"), [
    ("images/sandbox/launcher.py", {"sandbox", "scorer", "venv", "fleet", "task-sandbox", "ml"}),
    ("images/scorer/run.py", {"sandbox", "scorer", "venv", "fleet", "ml"}),
    ("images/Dockerfile", {"sandbox", "scorer", "venv", "fleet", "ml"}),
    ("orchestrator/m.py", {"fleet"}),
    ("agents/install.py", {"agent"}),
    ("env/Dockerfile", {"env"}),
    ("repo/pkg/__init__.py", {"task"}),
    ("harbor/data.txt", {"harbor"}),
    ("task-sandbox/Dockerfile", {"task-sandbox"}),
])
def test_a_changed_input_file_moves_the_tags_that_hash_it_and_no_other(tmp_path: Path, changed: str,
                                                                      moves: set[str]) -> None:
    root = _tree(tmp_path)
    before = _tags(root)
    (root / changed).write_text(FILES[changed] + "# changed\n")
    after = _tags(root)
    assert {family for family in before if before[family] != after[family]} == moves


def test_bytecode_is_never_an_input(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = _tags(root)
    (root / "images/sandbox/__pycache__/launcher.cpython-311.pyc").write_text("other junk")
    (root / "orchestrator/m.pyc").write_text("other junk")
    assert _tags(root) == before
    assert [p.name for p in tree_files(root / "images/sandbox")] == ["launcher.py", "gate.py"]


def test_the_fleet_builds_from_the_repository_on_the_venv_stage_the_sandbox_build_shares(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    venv = standard.venv_recipe(root / "images", root / "images" / "wheelhouse", "sbx-base:x", "sha256:base")
    recipe = fleet.recipe(None, "sbx-fleet:t", "sbx-base:x", venv, root)  # type: ignore[arg-type]  # no build
    assert venv.tag == f"sbx-venv:{BEFORE['venv']}" and venv.target == "venv"
    assert dict(venv.buildargs) == {"BASE_IMAGE": "sbx-base:x"}
    assert dict(recipe.buildargs) == {"BASE_IMAGE": "sbx-base:x", "VENV_IMAGE": venv.tag}
    assert recipe.dockerfile == "images/fleet/Dockerfile" and recipe.network_mode is None
    assert dict(recipe.labels) == {"sbx.target": "fleet", "sbx.base": "sbx-base:x"}


def test_every_image_build_goes_through_the_one_builder() -> None:
    """No module but images/recipe.py starts a `docker build`, so every family's build takes the tag's lock,
    checks again once it holds it, and turns the build's stream into the same typed failures."""
    builds = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "orchestrator").rglob("*.py")
                    if re.search(r"\.api\.build\(|images\.build\(", p.read_text()))
    assert builds == ["orchestrator/images/recipe.py"]


# --- the builder itself, on the real engine ----------------------------------------------------------------


def _recipe(context: Path, tag: str, dockerfile: str = "FROM scratch\nCOPY hello.txt /hello.txt\n") -> Recipe:
    context.mkdir(parents=True, exist_ok=True)
    (context / "Dockerfile").write_text(dockerfile)
    (context / "hello.txt").write_text("hello\n")
    return Recipe(tag=tag, context=folder(context), labels={"sbx.kind": "test-recipe"})


@pytest.mark.docker
def test_ensure_builds_a_missing_image_once_and_records_its_lock(docker_client, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    tag = f"sbx-test-recipe:{tmp_path.name[-12:].lower()}"
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("SBX_BUILD_RECORD", str(record))
    try:
        first = ensure(docker_client, _recipe(tmp_path / "ctx", tag))
        again = ensure(docker_client, _recipe(tmp_path / "ctx", tag))
        assert first.built and not again.built and again.image.id == first.image.id
        assert first.image.labels["sbx.kind"] == "test-recipe"
        # the lock is taken only when there is something to build: once, by the first call
        assert [json.loads(line)["what"] for line in record.read_text().splitlines()] == [tag]
    finally:
        if existing(docker_client, tag) is not None:
            docker_client.images.remove(tag, force=True)


@pytest.mark.docker
def test_a_failing_build_is_an_image_error_with_the_builds_output(docker_client, tmp_path: Path) -> None:
    tag = f"sbx-test-recipe:fail-{tmp_path.name[-8:].lower()}"
    recipe = _recipe(tmp_path / "ctx", tag, "FROM scratch\nCOPY missing.txt /missing.txt\n")
    with pytest.raises(ImageError, match=f"building {re.escape(tag)} failed: .*missing.txt"):
        ensure(docker_client, recipe)
    assert existing(docker_client, tag) is None
