"""The built-in agents, run for real on a small slice of real flights: on the host in a temp git repo
(./run_experiment runs train.py directly there), and in the sandbox image as uid 1000 with no network."""

from __future__ import annotations

import ast
import hashlib
import json
import random
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from orchestrator.agents import agent_environment, resolve_agent
from orchestrator.incontainer.agents import hpo
from orchestrator.sandbox.copyout import copy_out_workspace
from orchestrator.sandbox.workspace import WORKSPACE, workspace_tar
from orchestrator.specs import load_budget, load_task

START = (Path(__file__).resolve().parents[2] / "tasks" / "flight-delays" / "repo" / "train.py").read_text()
PARAMS = {"n_estimators": 200, "max_depth": 4, "learning_rate": 0.05, "max_cat_threshold": 32}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo), "PATH": "/usr/bin:/bin"}).stdout


def eval_names(tree: ast.Module) -> set[str]:
    """Names bound, directly or through other assignments, to something read from data/eval.csv."""
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            reads_eval = any(isinstance(n, ast.Constant) and n.value == "data/eval.csv" for n in ast.walk(node.value))
            if reads_eval or used & tainted:
                for target in node.targets:
                    for n in ast.walk(target):
                        if isinstance(n, ast.Name) and n.id not in tainted:
                            tainted.add(n.id)
                            changed = True
    return tainted


def fits_on_eval(source: str) -> list[str]:
    """Every fit call argument, other than eval_set=, that touches eval data."""
    tree = ast.parse(source)
    tainted = eval_names(tree)
    bad = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "fit":
            args = list(call.args) + [kw.value for kw in call.keywords if kw.arg != "eval_set"]
            for arg in args:
                if {n.id for n in ast.walk(arg) if isinstance(n, ast.Name)} & tainted:
                    bad.append(ast.unparse(arg))
    return bad


# --- rewriting train.py ------------------------------------------------------------------------------


def test_rewrite_sets_the_keywords_and_keeps_everything_else() -> None:
    out = hpo.rewrite(START, PARAMS)
    call = next(n for n in ast.walk(ast.parse(out)) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "XGBClassifier")
    kws = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    assert kws == {**PARAMS, "enable_categorical": True, "random_state": 42}
    head, tail = START.split("model = XGBClassifier(")[0], START.split("model.fit(")[1]
    assert out.startswith(head) and out.endswith(tail)
    assert hpo.fit_calls(ast.parse(out)) == hpo.fit_calls(ast.parse(START))
    assert hpo.rewrite(out, PARAMS) == out  # idempotent


def test_rewrite_handles_attribute_calls_unicode_and_several_calls() -> None:
    src = ('import xgboost as xgb\ns = "é→"; a = xgb.XGBClassifier(n_estimators=3, **extra)  # ü\n'
           'b = [xgb.XGBClassifier(max_depth=2), 1]\na.fit(X, y)\n')
    out = hpo.rewrite(src, {"max_depth": 7})
    assert out.startswith('import xgboost as xgb\ns = "é→"; a = xgb.XGBClassifier(\n')
    assert "    n_estimators=3,\n    **extra,\n    max_depth=7,\n)  # ü\n" in out
    assert "b = [xgb.XGBClassifier(\n    max_depth=7,\n), 1]\n" in out
    ast.parse(out)
    with pytest.raises(ValueError, match="no XGBClassifier"):
        hpo.rewrite("import xgboost\n", {"max_depth": 3})


def test_sampling_is_seeded_and_in_range() -> None:
    draws = [hpo.sample(random.Random(5), lambda depth: 600) for _ in range(2)]
    assert draws[0] == draws[1]
    rng = random.Random(1)
    for _ in range(200):
        p = hpo.sample(rng, lambda depth: 1200 // depth)
        assert 100 <= p["n_estimators"] <= max(100, 1200 // p["max_depth"]) and 3 <= p["max_depth"] <= 10
        assert 0.02 <= p["learning_rate"] <= 0.3 and 0.5 <= p["subsample"] <= 1 and 0.5 <= p["colsample_bytree"] <= 1
        assert 1 <= p["min_child_weight"] <= 50 and 0.1 <= p["reg_lambda"] <= 20
        assert 1 <= p["max_cat_to_onehot"] <= 16 and p["max_cat_threshold"] in (16, 32, 64, 128)


def test_cost_model_keeps_trials_inside_the_limit() -> None:
    costs = hpo.CostModel(timeout_s=120)
    costs.seed(seconds=4.0, n_estimators=30, depth=6)
    assert costs.predict(costs.n_cap(10), 10) <= 60 + 1e-9 or costs.n_cap(10) == 100
    before = costs.n_cap(6)
    costs.observe(seconds=50.0, n_estimators=200, depth=6)
    costs.timed_out()
    assert costs.n_cap(6) < before


def test_the_eval_trace_catches_training_on_eval() -> None:
    assert fits_on_eval(START) == []
    cheat = START.replace("model.fit(prepare(train), y_train,",
                          "model.fit(pd.concat([prepare(train), prepare(valid)]), pd.concat([y_train, y_valid]),")
    assert len(fits_on_eval(cheat)) == 2


# --- running them --------------------------------------------------------------------------------------


def test_noop_delivers_the_start_untouched(workspace: Path, agent_env) -> None:
    head = git(workspace, "rev-parse", "HEAD")
    spec = resolve_agent("noop")
    proc = subprocess.run([sys.executable, str(spec.host_path)], cwd=workspace, env=agent_env(SBX_TASK="flight-delays"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert git(workspace, "rev-parse", "HEAD") == head and git(workspace, "status", "--porcelain") == ""


def check_delivery(repo_log: dict, committed: dict[str, str], head_source: str) -> None:
    """The HPO record against what git holds: every trial committed as claimed, the best at HEAD."""
    trials, best = repo_log["trials"], repo_log["best"]
    assert len(trials) >= 2 and best is not None
    scores = [t["eval_score"] for t in trials if t["eval_score"] is not None]
    assert best["eval_score"] == (max(scores) if repo_log.get("higher_is_better", True) else min(scores))
    assert head_source == committed[best["commit"]]
    assert fits_on_eval(head_source) == []


@pytest.mark.slow
def test_hpo_on_the_host(workspace: Path, agent_env) -> None:
    start = git(workspace, "rev-parse", "HEAD").strip()
    env = agent_env(SBX_SEED="11", SBX_BUDGET_EXPERIMENTS="4", SBX_EXPERIMENT_TIMEOUT_S="60", SBX_WALL_CLOCK_S="900")
    proc = subprocess.run([sys.executable, str(resolve_agent("hpo").host_path)], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout.strip().splitlines()[-1].removeprefix("HPO "))
    trials = record["trials"]
    assert [t["trial"] for t in trials] == [0, 1, 2, 3] and all(t["status"] == "ok" for t in trials)
    assert trials[0]["commit"] == start
    commits = git(workspace, "rev-list", "HEAD").split()
    assert len(commits) == 1 + 3 + 1  # start, three candidates, the final keep
    committed = {t["commit"]: git(workspace, "show", f"{t['commit']}:train.py") for t in trials}
    assert len(set(committed.values())) == 4  # every candidate is a distinct, committed train.py
    check_delivery(record, committed, git(workspace, "show", "HEAD:train.py"))
    assert (workspace / "train.py").read_text() == git(workspace, "show", "HEAD:train.py")
    assert git(workspace, "status", "--porcelain") == ""
    files_ever = set(git(workspace, "log", "--all", "--name-only", "--format=").split())
    assert not any(f.startswith("data/") for f in files_ever) and "HPO.md" in files_ever
    assert "| 3 |" in (workspace / "HPO.md").read_text()
    check = subprocess.run([sys.executable, "validate"], cwd=workspace, capture_output=True, text=True, timeout=300)
    assert check.returncode == 0 and "CONTRACT OK" in check.stdout, check.stdout + check.stderr


@pytest.mark.docker
@pytest.mark.slow
def test_hpo_in_the_sandbox_then_copied_out(docker_client, built_images, flight_data: Path, tmp_path: Path) -> None:
    """As uid 1000 with no network (./run_experiment direct), then the workspace copied out of its volume."""
    labels = {"sbx.test": "copyout"}
    task, budget = load_task("flight-delays"), load_budget("smoke").model_copy(update={"experiments": 3})
    spec = resolve_agent("hpo")
    env = agent_environment(run_id="test-hpo", task=task.name, budget=budget, experiment_socket="", seed=5)
    del env["SBX_EXPERIMENT_SOCKET"]  # no host service here: run_experiment runs train.py itself
    tar, start = workspace_tar(task, budget, branch="sbx/test-hpo", data_dir=flight_data)
    image = built_images["sandbox"].tag
    volume = docker_client.volumes.create(name=f"sbx-test-hpo-{uuid.uuid4().hex[:8]}", labels=labels)
    container = None
    try:
        container = docker_client.containers.create(
            image, ["sleep", "infinity"], user="1000:1000", network_mode="none", cap_drop=["ALL"],
            security_opt=["no-new-privileges"], init=True, working_dir=WORKSPACE, pids_limit=budget.pids,
            mem_limit=f"{budget.memory_mb}m", memswap_limit=f"{budget.memory_mb}m", labels=labels,
            volumes={volume.name: {"bind": WORKSPACE, "mode": "rw"}, **spec.volumes()})
        assert container.put_archive(WORKSPACE, tar)
        container.start()
        run = container.exec_run(list(spec.command), environment=env, workdir=WORKSPACE, user="1000:1000")
        out = run.output.decode(errors="replace")
        assert run.exit_code == 0, out
        validate = container.exec_run(["./validate"], workdir=WORKSPACE, user="1000:1000")
        assert validate.exit_code == 0 and b"CONTRACT OK" in validate.output, validate.output.decode()
        network = container.exec_run(["python", "-c", "import socket; socket.create_connection(('1.1.1.1', 53), 3)"])
        assert network.exit_code != 0
        container.stop(timeout=5)
        result = copy_out_workspace(docker_client, volume.name, tmp_path / "out", image=image, run_id="test-hpo")
    finally:
        if container is not None:
            container.remove(force=True)
        volume.remove(force=True)
    record = json.loads(next(ln for ln in reversed(out.splitlines()) if ln.startswith("HPO "))[4:])
    trials = record["trials"]
    assert [t["trial"] for t in trials] == [0, 1, 2] and trials[0]["commit"] == start
    assert result.commits == 1 + 2 + 1 and result.unreachable_commits == 0
    committed = {t["commit"]: result.train_path(result.train_versions[t["commit"]]).read_text() for t in trials}
    head_source = result.train_path(result.delivered_sha256).read_text()
    check_delivery(record, committed, head_source)
    assert result.delivered_sha256 == hashlib.sha256(head_source.encode()).hexdigest()
    assert result.worktree_train_sha256 == result.delivered_sha256
    assert (result.workspace_dir / "HPO.md").is_file() and (result.workspace_dir / "data" / "eval.csv").is_file()
    assert not result.skipped and not result.truncated


@pytest.mark.slow
def test_hpo_stops_on_sigterm_with_its_best_committed(workspace: Path, agent_env) -> None:
    """The host stops agents with SIGTERM at the wall clock: hpo kills its experiment and delivers."""
    env = agent_env(SBX_SEED="2", SBX_BUDGET_EXPERIMENTS="40", SBX_EXPERIMENT_TIMEOUT_S="60")
    proc = subprocess.Popen([sys.executable, str(resolve_agent("hpo").host_path)], cwd=workspace, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if line.startswith("hpo: trial 1/"):
                break
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, err
    record = json.loads(out.strip().splitlines()[-1].removeprefix("HPO "))
    assert record["stopped_because"] == "signal 15" and len(record["trials"]) in (2, 3)
    committed = {t["commit"]: git(workspace, "show", f"{t['commit']}:train.py") for t in record["trials"]}
    check_delivery(record, committed, git(workspace, "show", "HEAD:train.py"))
    assert git(workspace, "status", "--porcelain") == ""
