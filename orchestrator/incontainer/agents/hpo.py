#!/usr/bin/env python3
"""hpo: a classical baseline. A seeded random search over XGBoost settings, one counted experiment a trial.

Runs in the workspace (a git repository). Trial 0 is the starting code as it is; each later trial rewrites
the keywords of the `XGBClassifier(...)` or `XGBRegressor(...)` call in train.py (located with `ast`,
everything else kept byte for byte), commits it, and spends one experiment through ./run_experiment. It
stops when the experiment budget is spent, the service refuses, or the wall clock would run out; then it
leaves the trial with the best eval score committed as HEAD, with HPO.md logging every trial. "Best"
follows the metric the experiment service names (`eval_<metric>` and `higher_is_better` in its answer):
the highest AUC, the lowest RMSE. It never touches the `.fit(...)` call:
the eval set stays what the starting code made it, the early-stopping set only.

Standard library only. Environment (see docs/agents.md): SBX_SEED, SBX_BUDGET_EXPERIMENTS,
SBX_EXPERIMENT_TIMEOUT_S, SBX_WALL_CLOCK_S; SBX_EXPERIMENT_SOCKET is read by ./run_experiment.
"""

import ast
import json
import math
import os
import random
import signal
import subprocess
import sys
import time

TRAIN = "train.py"
#: the model constructors whose keywords are tuned, and the early-stopping metric each gets
CALLEES = {"XGBClassifier": "auc", "XGBRegressor": "rmse"}
GIT_ID = ["-c", "user.name=hpo", "-c", "user.email=hpo@sbx", "-c", "commit.gpgSign=false"]
STOP = {"signal": None}


# --- the search space ----------------------------------------------------------------------------------


def log_uniform(rng, low, high):
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def sample(rng, n_cap):
    """One candidate; `n_cap(depth)` bounds n_estimators so a trial fits the time limit. n_estimators is an
    upper bound anyway: early stopping on the eval set ends most trials sooner."""
    depth = rng.randint(3, 10)
    cap = max(100, n_cap(depth))
    return {
        "n_estimators": min(cap, int(round(log_uniform(rng, 100, cap), -1))),
        "max_depth": depth,
        "learning_rate": round(log_uniform(rng, 0.02, 0.3), 4),
        "subsample": round(rng.uniform(0.5, 1.0), 3),
        "colsample_bytree": round(rng.uniform(0.5, 1.0), 3),
        "min_child_weight": round(log_uniform(rng, 1.0, 50.0), 3),
        "reg_lambda": round(log_uniform(rng, 0.1, 20.0), 3),
        "max_cat_to_onehot": rng.randint(1, 16),
        "max_cat_threshold": rng.choice([16, 32, 64, 128]),
    }


class CostModel:
    """Seconds of a trial ~ overhead + per_unit * n_estimators * max_depth / 6 (hist trees: linear in depth).

    Seeded from the baseline (most of a small baseline is reading data and importing), raised whenever a
    trial turns out slower than predicted, so n_estimators stays inside the time limit."""

    def __init__(self, timeout_s):
        self.timeout_s = timeout_s
        self.overhead = 5.0
        self.per_unit = 0.01

    def seed(self, seconds, n_estimators, depth):
        self.overhead = 0.6 * seconds
        self.per_unit = max(0.4 * seconds / (n_estimators * depth / 6), 1e-4)

    def observe(self, seconds, n_estimators, depth):
        unit = (seconds - self.overhead) / max(1.0, n_estimators * depth / 6)
        self.per_unit = max(self.per_unit, unit)

    def timed_out(self):
        self.per_unit *= 2

    def predict(self, n_estimators, depth):
        return self.overhead + self.per_unit * n_estimators * depth / 6

    def n_cap(self, depth):
        room = 0.5 * self.timeout_s - self.overhead
        return int(max(100, min(2000, room / (self.per_unit * depth / 6))))


# --- rewriting the XGBClassifier(...) call -------------------------------------------------------------


def _callee_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _offsets(source_bytes):
    starts, pos = [0], 0
    for line in source_bytes.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def fit_calls(tree):
    return [ast.dump(n) for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "fit"]


def has_eval_set(tree):
    return any(kw.arg == "eval_set" for n in ast.walk(tree)
               if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "fit"
               for kw in n.keywords)


def rewrite(source, params):
    """`source` with every XGBClassifier(...) call's keywords set to `params` (others kept, in order).

    Raises ValueError if there is no such call or the result does not parse. The fit calls are checked
    to be unchanged: the search never changes what the model is trained on."""
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _callee_name(n.func) in CALLEES]
    if not calls:
        raise ValueError(f"{TRAIN} has no {' or '.join(CALLEES)}(...) call to tune")
    data = source.encode("utf-8")
    starts = _offsets(data)

    def span(node):
        return starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset

    def text(node):
        a, b = span(node)
        return data[a:b].decode("utf-8")

    for call in sorted(calls, key=lambda n: span(n)[0], reverse=True):
        line_start = starts[call.lineno - 1]
        line = data[line_start:starts[call.lineno]].decode("utf-8")
        indent = line[: len(line) - len(line.lstrip())]
        items = [text(a) for a in call.args]
        seen = set()
        for kw in call.keywords:
            if kw.arg is None:
                items.append("**" + text(kw.value))
            elif kw.arg in params:
                items.append(f"{kw.arg}={params[kw.arg]!r}")
                seen.add(kw.arg)
            else:
                items.append(f"{kw.arg}={text(kw.value)}")
        items += [f"{k}={v!r}" for k, v in params.items() if k not in seen]
        new = text(call.func) + "(\n" + "".join(f"{indent}    {item},\n" for item in items) + indent + ")"
        a, b = span(call)
        data = data[:a] + new.encode("utf-8") + data[b:]
    result = data.decode("utf-8")
    if fit_calls(ast.parse(result)) != fit_calls(tree):
        raise ValueError("rewriting changed a fit call")
    return result


# --- git and the experiment service --------------------------------------------------------------------


def git(*args):
    proc = subprocess.run(["git", *GIT_ID, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {args[0]} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def commit(message, *paths):
    git("add", "--", *paths)
    git("commit", "-q", "--no-verify", "-m", message, "--", *paths)
    return git("rev-parse", "HEAD")


def run_experiment(note, timeout_s):
    """One counted experiment through ./run_experiment; its `EXPERIMENT {json}` line as a dict."""
    proc = subprocess.Popen([sys.executable, "./run_experiment", note], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    deadline = time.monotonic() + 2 * timeout_s + 120
    while proc.poll() is None:
        if STOP["signal"] is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return {"status": "stopped" if STOP["signal"] is not None else "timeout"}
        time.sleep(0.2)
    # no EXPERIMENT line: the client could not reach the service (exit 3) or broke; nothing was counted
    result = {"status": "no-result", "reason": f"./run_experiment exited {proc.returncode} without a result"}
    for line in proc.stdout.read().splitlines():
        if line.startswith("EXPERIMENT "):
            try:
                parsed = json.loads(line[len("EXPERIMENT "):])
            except ValueError:
                continue
            if isinstance(parsed, dict):
                result = parsed
    proc.stdout.close()
    return result


# --- the search ----------------------------------------------------------------------------------------


def env_number(name, default, kind=float):
    try:
        return kind(os.environ.get(name, default))
    except ValueError:
        return kind(default)


def write_log(trials, best, seed, stopped_because, callee="XGBClassifier", metric="auc"):
    label = metric.upper()
    lines = [
        "# HPO log",
        "",
        f"Seeded random search (seed {seed}) over the keywords of the `{callee}(...)` call in {TRAIN}; each",
        "trial is one counted experiment through ./run_experiment. Trial 0 is the starting code. The eval set",
        f"is used for early stopping and the eval {label} only; the fit call is never changed.",
        "",
        f"Stopped because: {stopped_because}.",
        "",
        f"| trial | commit | status | eval {label} | seconds | settings |",
        "|---|---|---|---|---|---|",
    ]
    for t in trials:
        auc = f"{t['eval_score']:.4f}" if t.get("eval_score") is not None else "-"
        secs = f"{t['seconds']:.1f}" if isinstance(t.get("seconds"), (int, float)) else "-"
        settings = ", ".join(f"{k}={v}" for k, v in t["params"].items()) or "(starting code)"
        lines.append(f"| {t['trial']} | {t['commit'][:10]} | {t['status']} | {auc} | {secs} | {settings} |")
    lines.append("")
    if best is None:
        lines.append("No trial succeeded: the starting code is left as it was.")
    else:
        lines.append(f"Best: trial {best['trial']} (commit {best['commit'][:10]}, eval {label} "
                     f"{best['eval_score']:.4f}), "
                     f"left committed as HEAD.")
    with open("HPO.md", "w") as f:
        f.write("\n".join(lines) + "\n")


def on_signal(signum, _frame):
    STOP["signal"] = signum


def literal_keywords(tree):
    """Literal keyword values of the first tuned call (XGBClassifier(...)), e.g. the baseline's n_estimators."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and _callee_name(n.func) in CALLEES:
            out = {}
            for kw in n.keywords:
                try:
                    out[kw.arg] = ast.literal_eval(kw.value)
                except ValueError:
                    pass
            return out
    return {}


def search(state):
    """Run trials until the budget, a refusal, the wall clock or a signal stops them; fills `state`."""
    budget = env_number("SBX_BUDGET_EXPERIMENTS", 20, int)
    timeout_s = env_number("SBX_EXPERIMENT_TIMEOUT_S", 120.0)
    wall_s = env_number("SBX_WALL_CLOCK_S", 3600.0)
    started = time.monotonic()
    rng = random.Random(state["seed"])
    costs = CostModel(timeout_s)
    start_source = open(TRAIN, encoding="utf-8").read()
    start_tree = ast.parse(start_source)
    baseline = literal_keywords(start_tree)
    base_n = baseline.get("n_estimators") if isinstance(baseline.get("n_estimators"), int) else 100
    base_depth = baseline.get("max_depth") if isinstance(baseline.get("max_depth"), int) else 6
    state["callee"] = callee_of(start_tree)
    fixed = ({"early_stopping_rounds": 40, "eval_metric": CALLEES.get(state["callee"], "auc")}
             if has_eval_set(start_tree) else {})
    state["stopped_because"] = "the experiment budget is spent"

    for n in range(budget):
        if STOP["signal"] is not None:
            state["stopped_because"] = f"signal {STOP['signal']}"
            return
        if n == 0:
            params, sha = {}, state["start_commit"]
        else:
            params = sample(rng, costs.n_cap)
            if time.monotonic() - started + costs.predict(params["n_estimators"], params["max_depth"]) + 60 > wall_s:
                state["stopped_because"] = "the wall clock would run out"
                return
            params.update(fixed)
            with open(TRAIN, "w", encoding="utf-8") as f:
                f.write(rewrite(start_source, params))
            sha = commit(f"hpo trial {n}: " + ", ".join(f"{k}={v}" for k, v in params.items()), TRAIN)
        result = run_experiment(f"hpo trial {n}", timeout_s)
        status = str(result.get("status"))
        if status == "refused":
            state["stopped_because"] = f"the experiment service refused: {result.get('reason', 'no reason given')}"
            return
        if status == "no-result":
            state["stopped_because"] = result["reason"]
            return
        if status == "stopped":
            state["stopped_because"] = f"signal {STOP['signal']}"
            return
        learn_metric(state, result)
        auc = result.get(f"eval_{state['metric']}")
        auc = float(auc) if status == "ok" and isinstance(auc, (int, float)) and math.isfinite(auc) else None
        seconds = result.get("seconds") if isinstance(result.get("seconds"), (int, float)) else None
        state["trials"].append({"trial": n, "commit": sha, "status": status, "eval_score": auc, "seconds": seconds,
                                "params": {k: v for k, v in params.items() if k not in fixed}})
        best = best_trial(state["trials"], state["higher_is_better"])
        print(f"hpo: trial {n}/{budget - 1} {status} eval {state['metric'].upper()} "
              f"{auc if auc is not None else '-'} (best {best['eval_score'] if best else '-'})", flush=True)
        if seconds is not None and status == "ok":
            if n == 0:
                costs.seed(seconds, base_n, base_depth)
            else:
                costs.observe(seconds, params["n_estimators"], params["max_depth"])
        if status == "timeout":
            costs.timed_out()


def callee_of(tree):
    """The first tuned constructor train.py calls (XGBClassifier when there is none: the search then stops
    at its first rewrite, saying so)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and _callee_name(n.func) in CALLEES:
            return _callee_name(n.func)
    return "XGBClassifier"


def learn_metric(state, result):
    """The task's metric and direction, from the experiment service's answer: `eval_<metric>` beside
    `eval_score`, and `higher_is_better` (an answer without them leaves the AUC, higher is better)."""
    named = [k[len("eval_"):] for k in result if k.startswith("eval_") and k != "eval_score"]
    if len(named) == 1:
        state["metric"] = named[0]
    if isinstance(result.get("higher_is_better"), bool):
        state["higher_is_better"] = result["higher_is_better"]


def best_trial(trials, higher_is_better=True):
    """The trial with the best eval score in the metric's direction (the first of equals)."""
    scored = [t for t in trials if t["eval_score"] is not None]
    pick = max if higher_is_better else min
    return pick(scored, key=lambda t: t["eval_score"], default=None)


def finish(state):
    """Leave the best trial's train.py committed as HEAD, with HPO.md."""
    trials = state["trials"]
    best = best_trial(trials, state["higher_is_better"])
    git("checkout", best["commit"] if best else state["start_commit"], "--", TRAIN)
    write_log(trials, best, state["seed"], state["stopped_because"], state["callee"], state["metric"])
    message = (f"hpo: keep trial {best['trial']} (eval {state['metric'].upper()} {best['eval_score']:.4f})" if best
               else "hpo: no trial succeeded; keep the starting code")
    git("add", "--", TRAIN, "HPO.md")
    git("commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    print("HPO " + json.dumps({"best": best, "trials": trials, "stopped_because": state["stopped_because"],
                               "metric": state["metric"], "higher_is_better": state["higher_is_better"]}),
          flush=True)
    return best


def main():
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    workspace = os.environ.get("SBX_WORKSPACE")
    if workspace and os.path.isdir(workspace):
        os.chdir(workspace)
    if not os.path.isfile(TRAIN):
        print(f"hpo: no {TRAIN} in {os.getcwd()}", file=sys.stderr)
        return 2
    state = {"trials": [], "start_commit": git("rev-parse", "HEAD"), "seed": env_number("SBX_SEED", 0, int),
             "stopped_because": "an error", "metric": "auc", "higher_is_better": True, "callee": "XGBClassifier"}
    try:
        search(state)
    except (ValueError, RuntimeError, OSError, SyntaxError) as exc:
        print(f"hpo: the search stopped: {exc}", file=sys.stderr)
        state["stopped_because"] = f"an error: {exc}"
    finish(state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
