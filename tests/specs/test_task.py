from pathlib import Path

import pytest
import yaml

from orchestrator.failures import ConfigError
from orchestrator.specs import load_task


def test_flight_delays_bundle_loads() -> None:
    t = load_task("flight-delays")
    assert t.metric == "auc" and t.target == "dep_delayed_15min" and t.positive_label == "Y"
    assert (t.repo_dir / "train.py").is_file()
    assert (t.repo_dir / "program.md").is_file()
    assert set(t.hidden_sets()) == {"holdout", "later"}
    assert t.files.train.to == "data/train.csv" and t.files.eval.to == "data/eval.csv"


def test_a_hidden_set_cannot_be_marked_visible(tmp_path: Path) -> None:
    src = Path(load_task("flight-delays").root)
    data = yaml.safe_load((src / "task.yaml").read_text())
    data["files"]["holdout"]["visible_to_agent"] = True
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "train.py").write_text("")
    (tmp_path / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="files.holdout.visible_to_agent"):
        load_task(tmp_path)


def test_program_states_the_rules_and_budget() -> None:
    text = (load_task("flight-delays").repo_dir / "program.md").read_text()
    for phrase in ("data/train.csv", "early-stopping", "predict_proba", "XGBoost", "18,000 CPU-seconds", "40 counted experiments"):
        assert phrase in text


# --- the `tests` kind ------------------------------------------------------------------------------------

TESTS_TASK = """name: demo-fix
kind: tests
environment:
  type: python
  python: "3.11"
  packages: {pytest: "8.3.5", Pluggy: "1.5.0", iniconfig: "2.0.0", packaging: "24.2"}
grader:
  type: pytest
  fail_to_pass: ["tests/test_a.py::test_new"]
  pass_to_pass: ["tests/test_a.py::test_old"]
reference_patch: reference.patch
"""


def _bundle(tmp_path: Path, text: str = TESTS_TASK) -> Path:
    for d in ("repo", "hidden"):
        (tmp_path / d).mkdir(exist_ok=True)
    (tmp_path / "instruction.md").write_text("It breaks.\n")
    (tmp_path / "reference.patch").write_text("")
    (tmp_path / "task.yaml").write_text(text)
    return tmp_path


def test_a_tests_task_loads_with_defaults(tmp_path: Path) -> None:
    from orchestrator.specs import load_tests_task
    from orchestrator.specs.task import DEFAULT_PROTECTED

    t = load_tests_task(_bundle(tmp_path))
    assert t.kind == "tests" and t.grade_repeats == 1 and t.install == "editable"
    assert t.protected == DEFAULT_PROTECTED and "conftest.py" in t.protected
    assert t.environment.packages == {"iniconfig": "2.0.0", "packaging": "24.2", "pluggy": "1.5.0", "pytest": "8.3.5"}
    assert t.grader.command[:3] == ("python", "-I", "-m")
    assert t.timeouts.tests_s == 600 and t.limits.memory_mb == 2048


def test_the_environment_digest_ignores_key_order_and_name_spelling() -> None:
    from orchestrator.specs import PythonEnvironment

    a = PythonEnvironment(python="3.11", packages={"pytest": "8.3.5", "Foo_Bar": "1.0"})
    b = PythonEnvironment(python="3.11", packages={"foo-bar": "1.0", "pytest": "8.3.5"})
    c = PythonEnvironment(python="3.13", packages={"foo-bar": "1.0", "pytest": "8.3.5"})
    assert a.digest() == b.digest() != c.digest()
    assert a.lock_text() == "foo-bar==1.0\npytest==8.3.5\n"


@pytest.mark.parametrize(("old", "new", "message"), [
    ('python: "3.11"', 'python: "3.12"', r"environment.python.python: .*Python 3.12 cannot be had here; "
     r"available: 3.11 \(Debian bookworm: CPython 3.11.2\), 3.13 \(Debian trixie: CPython 3.13.5\)"),
    ('pytest: "8.3.5"', "pytest: 8.3", "not an exact version"),
    ('pytest: "8.3.5"', 'pytest: ">=8"', "not an exact version"),
    ('fail_to_pass: ["tests/test_a.py::test_new"]', "fail_to_pass: []", "grader.pytest.fail_to_pass"),
    ('pass_to_pass: ["tests/test_a.py::test_old"]', 'pass_to_pass: ["tests/test_a.py::test_new"]', "in both"),
    ("reference_patch: reference.patch", "reference_patch: ../outside.patch", "reference_patch: Value error"),
    ("kind: tests", "kind: tests\ngrade_repeats: 0", "grade_repeats"),
    ("kind: tests", "kind: tests\nprotect: [x]", "protect: Extra inputs are not permitted"),
])
def test_tests_task_errors_name_their_key(tmp_path: Path, old: str, new: str, message: str) -> None:
    from orchestrator.specs import load_tests_task

    p = _bundle(tmp_path, TESTS_TASK.replace(old, new))
    with pytest.raises(ConfigError, match=message):
        load_tests_task(p)


def test_missing_bundle_files_are_named(tmp_path: Path) -> None:
    from orchestrator.specs import load_tests_task

    p = _bundle(tmp_path)
    (p / "reference.patch").unlink()
    with pytest.raises(ConfigError, match="reference_patch: .*reference.patch does not exist"):
        load_tests_task(p)


def test_kinds_do_not_mix(tmp_path: Path) -> None:
    from orchestrator.specs import load_tests_task

    with pytest.raises(ConfigError, match="is a 'tests' task, not an 'ml' task"):
        load_task(_bundle(tmp_path))
    with pytest.raises(ConfigError, match="is a 'ml' task, not a 'tests' task"):
        load_tests_task("flight-delays")
