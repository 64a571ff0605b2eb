"""A tests-task study graded by the hidden tests and a stand-in judge, through the real study driver (issue 26):
`sbx study run --report` on calc-add-negative with two pairings, the oracle (the reference fix) and a scripted
agent that, by its seed, writes a wrong fix on the bug's line, only a comment, or crashes after editing (a
run that delivers nothing). The judge is the stand-in playing the shipped `judge-calc-add-negative`
scenario, whose verdicts are known from the diff alone: it passes every patch that changes the bug's line
(so the wrong fix is a false pass) and fails the rest; its errors go one way.

The report's judge section is then checked against an independent computation from the ledger's rows: a
by-hand confusion, scikit-learn's `cohen_kappa_score`, both error rates, per pairing pass rates and score
bias, the paired gap's bias and the cost per verdict (the stand-in's own usage priced at the card). The run
that delivered nothing has a `not_delivered` row (no call, no cost), is left out of the agreement and
counted, and fails by both graders in the pass rates."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.model import load_scenario
from orchestrator.paths import shipped_scenarios
from tests.run.standin_setup import KEY_ENV, MODEL, expected_cost, standin_gateway

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASK = "calc-add-negative"
JUDGE = "standin-judge"
#: by SBX_SEED % 3 (a study's seeds are consecutive by repeat): a wrong fix on the bug's line, a comment only,
#: or an edit and a crash (failed/agent: nothing delivered)
WRONG = '''#!/usr/bin/env python3
import os, pathlib, sys
init = pathlib.Path("calc/__init__.py")
src = init.read_text()
kind = int(os.environ["SBX_SEED"]) % 3
if kind == 0:
    init.write_text(src.replace("return a - b", "return a + abs(b)"))
elif kind == 1:
    init.write_text(src + "\\n# looked at it, found nothing\\n")
else:
    init.write_text(src.replace("return a - b", "return b - a"))
    sys.exit(3)
'''
PROMPT = "Issue:\\n{instruction}\\n\\nPatch:\\n{diff}\\n\\nEnd with one line: VERDICT: PASS or VERDICT: FAIL."


def _sbx(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, f"sbx {' '.join(args)}: {proc.stderr[-4000:]}"
    return proc


def test_a_judged_study_fills_the_judge_section(tmp_path: Path, built_images, docker_client) -> None:
    from orchestrator.specs.task import load_tests_task
    from orchestrator.tasks.environment import default_cache, task_image

    task_image(docker_client, load_tests_task(TASK), default_cache())   # built once, before the slots start
    agent = tmp_path / "wrong.py"
    agent.write_text(WRONG)
    agent.chmod(0o755)
    spec = tmp_path / "judged.yaml"
    spec.write_text(
        f"name: judged\ntask: {TASK}\nrepeats: 3\nbackend: {{type: local, slots: 2}}\npairings:\n"
        f"  - agent: oracle\n  - {{agent_command: {agent}, label: wrong}}\n"
        f"judge:\n  name: {JUDGE}\n  endpoint: standin-anthropic\n  model: {MODEL}\n  limit_usd: 0.05\n"
        f"  prompt: \"{PROMPT}\"\n")
    scenario = load_scenario(shipped_scenarios()["judge-calc-add-negative"])
    with standin_gateway(tmp_path / "model", scenario) as setup:
        env = {**os.environ, "SBX_HOME": str(tmp_path / "home"), KEY_ENV: os.environ[KEY_ENV]}
        files = ["--endpoints", str(setup.endpoints_file), "--ratecards", str(setup.ratecards_dir)]
        _sbx("study", "run", str(spec), *files, "--report", env=env)
        home = Home(tmp_path / "home")
        with Ledger(home.ledger_path) as ledger:
            runs = {r.run_id: r for r in ledger.list_runs()}
            verdicts = {v.run_id: v for v in ledger.judges.of_runs(list(runs))}
            outcomes = {r: ledger.outcomes.of_run(r) for r in runs}
        calls = {r: setup.calls(f"{r}.judge.{JUDGE}") for r in runs}

    # every run has its judge's row; a run that delivered nothing has one without a call
    assert set(verdicts) == set(runs) and len(runs) == 6
    crashed = [r for r, run in runs.items() if str(run.status) == "failed"]
    assert len(crashed) == 1 and str(runs[crashed[0]].failure_class) == "agent"
    nd = verdicts[crashed[0]]
    assert (nd.outcome, nd.verdict, nd.cost_usd, nd.transcript_sha256) == ("not_delivered", None, None, None)
    assert calls[crashed[0]] == [] and outcomes[crashed[0]] is None
    # the verdicts are the stand-in's (variant 0: PASS), each with its cost from the stand-in's own usage
    judged = [r for r in runs if r not in crashed]
    for r in judged:
        (call,) = calls[r]
        assert verdicts[r].verdict == ("pass" if call["variant"] == 0 else "fail") and verdicts[r].outcome == "ok"
        assert verdicts[r].cost_usd == pytest.approx(expected_cost(calls[r])) and verdicts[r].cost_usd > 0
        assert outcomes[r] is not None and str(runs[r].status) == "audited"

    # the by-hand confusion from the ledger's rows, per pairing: (tests passed, judge passed)
    pairs = {p: [(outcomes[r].passed, verdicts[r].verdict == "pass") for r in judged if runs[r].pairing == p]
             for p in ("oracle", "wrong")}
    every = pairs["oracle"] + pairs["wrong"]
    # the scenario's known verdicts: the oracle passes both, the wrong fix is a false pass, the comment a true
    # fail; no false fail anywhere (one-sided errors)
    assert pairs["oracle"] == [(True, True)] * 3 and sorted(pairs["wrong"]) == [(False, False), (False, True)]

    table = pd.read_csv(tmp_path / "home" / "reports" / "judged" / "tables" / "judge_agreement.csv")
    table = table.set_index("pairing")
    for name, got in (("oracle", pairs["oracle"]), ("wrong", pairs["wrong"]), ("all pairings", every)):
        row = table.loc[name]
        c = {k: sum(1 for t, j in got if (t, j) == v) for k, v in
             (("both_pass", (True, True)), ("false_pass", (False, True)), ("false_fail", (True, False)),
              ("both_fail", (False, False)))}
        assert {k: int(row[k]) for k in c} == c and row.runs == len(got)
        not_delivered = sum(1 for r in crashed if name in ("all pairings", runs[r].pairing))
        assert row.not_delivered == not_delivered and row.dropped == 0
        assert row.agreement == pytest.approx(sum(t == j for t, j in got) / len(got))
        fails = [j for t, j in got if not t]
        passes = [j for t, j in got if t]
        assert (pd.isna(row.false_pass_rate) if not fails else row.false_pass_rate == pytest.approx(sum(fails) / len(fails)))
        assert (pd.isna(row.false_fail_rate) if not passes else
                row.false_fail_rate == pytest.approx(sum(not j for j in passes) / len(passes)))
        # pass rates as the pairing's score counts its attempts: the run that delivered nothing fails by both
        attempts = len(got) + not_delivered
        tests_rate, judge_rate = sum(t for t, _ in got) / attempts, sum(j for _, j in got) / attempts
        assert (row.tests_pass_rate, row.judge_pass_rate) == (pytest.approx(tests_rate), pytest.approx(judge_rate))
        assert row.score_bias == pytest.approx(judge_rate - tests_rate)
        costs = [verdicts[r].cost_usd for r in judged if name in ("all pairings", runs[r].pairing)]
        assert row.cost_per_verdict_usd == pytest.approx(sum(costs) / len(costs))
    total = table.loc["all pairings"]
    tests, judge = zip(*every)
    assert total.kappa == pytest.approx(cohen_kappa_score(tests, judge), abs=1e-12)
    assert total.kappa_low < total.kappa < total.kappa_high
    assert total.false_fail_rate == 0 and total.false_pass_rate == pytest.approx(0.5)   # one way only
    assert pd.isna(table.loc["oracle", "kappa"])   # one verdict throughout: undefined, never 1 or 0

    # the gap the judge reports between the pairings, against the tests' gap
    (gap,) = pd.read_csv(tmp_path / "home" / "reports" / "judged" / "tables" / "judge_gap_bias.csv").itertuples()
    rates = {p: (table.loc[p, "tests_pass_rate"], table.loc[p, "judge_pass_rate"]) for p in ("oracle", "wrong")}
    a, b = gap.pairing_a, gap.pairing_b
    assert gap.gap_by_tests == pytest.approx(rates[a][0] - rates[b][0])
    assert gap.gap_by_judge == pytest.approx(rates[a][1] - rates[b][1])
    assert gap.gap_bias == pytest.approx(gap.gap_by_judge - gap.gap_by_tests) and gap.gap_bias != 0
    # the tests' own pass rates count the crashed run as a fail, as the judge section does
    pass_rates = pd.read_csv(tmp_path / "home" / "reports" / "judged" / "tables" / "pass_rates.csv")
    assert pass_rates.set_index("pairing").loc["wrong", "pass_rate"] == pytest.approx(rates["wrong"][0])
    summary = (tmp_path / "home" / "reports" / "judged" / "summary.md").read_text()
    assert "The judge against the tests" in summary and "not_delivered" in summary
    print(f"\njudged study: agreement {total.agreement:.3f}, kappa {total.kappa:.3f} "
          f"[{total.kappa_low:.3f}, {total.kappa_high:.3f}], false pass {total.false_pass_rate:.2f}, "
          f"bias oracle {table.loc['oracle', 'score_bias']:+.3f} wrong {table.loc['wrong', 'score_bias']:+.3f}, "
          f"gap bias {gap.gap_bias:+.3f}, cost/verdict ${total.cost_per_verdict_usd:.6f}")
