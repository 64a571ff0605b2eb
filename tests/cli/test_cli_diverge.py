"""`sbx diverge` end to end through the CLI entry point: plan, analyse arms of a study, import a CSV."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml

from orchestrator.artifacts import ArtifactStore
from orchestrator.cli import main
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from tests.diverge.gateway_runs import StandInGateway, expected
from tests.study.divergence_helpers import Planted, add_run

DEFINITIONS = {
    "agreement": {"kind": "score", "pass_threshold": 0.72},
    "thresholds": {"min_at_risk": 2, "n_resamples": 500},
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory):
    with StandInGateway(tmp_path_factory.mktemp("gw")).running() as gw:
        return {
            (f"t{t}", r, arm): gw.run(f"{arm}{t}{r}", 100 * t + 10 * r + (arm == "B"))
            for t in range(4)
            for r in (1, 2)
            for arm in "AB"
        }


def _home(tmp_path: Path) -> Home:
    return Home(tmp_path / "sbx")


def test_plan_then_analyse_a_study_from_the_ledger(tmp_path: Path, recorded, capsys) -> None:
    home = _home(tmp_path)
    defs = tmp_path / "defs.yaml"
    defs.write_text(yaml.safe_dump(DEFINITIONS))
    with Ledger(home.ledger_path) as ledger:
        ledger.create_study("s1")
    assert main(["--home", str(home.root), "diverge", "plan", "s1", str(defs)]) == 0
    out = capsys.readouterr().out
    assert "filed as version 1 of 1" in out and "counts as declared before the runs" in out
    assert main(["--home", str(home.root), "diverge", "plan", "s1", str(defs), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["new"] is False and plan["version"] == 1 and plan["preregistered"] is True
    with Ledger(home.ledger_path) as ledger:
        study = ledger.get_study_by_name("s1").study_id
        store = ArtifactStore(home.artifacts_dir)
        for (task, r, arm), run in recorded.items():
            add_run(
                ledger,
                store,
                study,
                Planted(
                    task,
                    arm,
                    r,
                    seed=r,
                    transcript=run.transcript,
                    score=0.70 + 0.01 * sum(v >= 0 for _, v in run.played),
                ),
            )
    assert main(["--home", str(home.root), "diverge", "s1", "--arms", "A", "B", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["definitions_used"]["preregistered"] is True and doc["stored_id"] == 1
    assert (
        doc["analysis"]["check"]["same_seed"] == 8
        and doc["analysis"]["outcome_table"]["exploratory"] is False
    )
    truth = [
        expected(recorded[(t, r, "A")], recorded[(t, r, "B")])
        for t in ("t0", "t1", "t2", "t3")
        for r in (1, 2)
    ]
    assert doc["analysis"]["divergence_classes"]["value"]["identical"] == sum(fd is None for fd, _ in truth)
    for pair in doc["pairs"]:  # every pair as analysed, with what its transcripts showed
        want = expected(
            recorded[(pair["task"], pair["repeat"], "A")], recorded[(pair["task"], pair["repeat"], "B")]
        )
        got = (pair["first_divergence"], pair["divergence_class"])
        assert got == (want[0], want[1].value if want[1] else None)
        assert pair["same_seed"] and pair["compared"] and pair["identical"] == (want[0] is None)
    assert doc["pair_check"]["counts"] == {"main: seeds equal, configs equal": 8}
    html = Path(doc["report"]["html"])
    assert html.parent == home.report_dir("s1.diverge.A.B")
    page = html.read_text()
    assert "data-table='pair'" in page and "first divergence" in page and "<tr class='first" in page
    assert {"outcome_table", "hazard", "divergence_classes", "placement", "tasks"} <= {
        Path(f).stem for f in doc["report"]["files"] if f.endswith(".csv")
    }
    # a chosen pair, and the human summary
    diverged = next(
        (t, r)
        for (t, r, arm), run in recorded.items()
        if arm == "A" and expected(run, recorded[(t, r, "B")])[0] is not None
    )
    assert (
        main(
            [
                "--home",
                str(home.root),
                "diverge",
                "s1",
                "--arms",
                "A",
                "B",
                "--pair",
                f"{diverged[0]}:{diverged[1]}",
                "--no-store",
                "--out",
                str(tmp_path / "r"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "8 pairs (8 same seed, 0 different seed)" in out and "first divergence: response" in out
    assert f"Task {diverged[0]}, repeat {diverged[1]}" in (tmp_path / "r" / "report.html").read_text()
    with Ledger(home.ledger_path) as ledger:
        assert len(ledger.divergence.analyses(study)) == 1  # --no-store stored nothing


def test_the_published_table_from_a_csv(tmp_path: Path, capsys) -> None:
    cells = [(1, 1)] * 67 + [(1, 0)] * 23 + [(0, 1)] * 21 + [(0, 0)] * 89
    random.Random(0).shuffle(cells)
    csv = tmp_path / "published.csv"
    csv.write_text(
        "task,repeat,outcome_a,outcome_b,seed\n"
        + "".join(f"task{i // 4:02d},{i % 4},{x},{y},1\n" for i, (x, y) in enumerate(cells))
    )
    assert main(["diverge", "--pairs-csv", str(csv), "--out", str(tmp_path / "r"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    table = doc["analysis"]["outcome_table"]["value"]
    assert (table["both"], table["first_only"], table["second_only"], table["neither"]) == (67, 23, 21, 89)
    assert round(table["mcnemar_p"], 3) == 0.880 and table["disagreement"] == pytest.approx(0.22)
    assert doc["analysis"]["outcome_table"]["exploratory"] is True and doc["stored_id"] is None
    assert doc["analysis"]["hazard"]["skipped"] == "no eligible same-seed pair has compared transcripts"
    md = (tmp_path / "r" / "summary.md").read_text()
    assert "| A passed | 67 | 23 | 90 |" in md and "| McNemar exact p | 0.8804 |" in md


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["diverge"], "usage: sbx diverge STUDY --arms A B"),
        (["diverge", "s1"], "usage: sbx diverge STUDY --arms A B"),
        (["diverge", "plan", "s1"], "usage: sbx diverge plan STUDY DEFINITIONS.yaml"),
        (["diverge", "ghost", "--arms", "A", "B"], "no study named 'ghost'"),
        (["diverge", "s1", "--arms", "A", "B", "--pair", "t1"], "--pair 't1': give TASK:REPEAT"),
        (["diverge", "s1", "--pairs-csv", "x.csv"], "--pairs-csv takes no STUDY"),
    ],
)
def test_usage_and_data_errors_exit_2(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    home = _home(tmp_path)
    with Ledger(home.ledger_path) as ledger:
        ledger.create_study("s1")
    assert main(["--home", str(home.root), *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_cause_without_control_is_not_filed(tmp_path: Path, capsys) -> None:
    home = _home(tmp_path)
    with Ledger(home.ledger_path) as ledger:
        ledger.create_study("s1")
    defs = tmp_path / "defs.yaml"
    defs.write_text(
        yaml.safe_dump(
            {"causes": [{"name": "fp", "observe": "response_value_differs", "key": "system_fingerprint"}]}
        )
    )
    assert main(["--home", str(home.root), "diverge", "plan", "s1", str(defs)]) == 2
    assert "cause fp has no base-rate control" in capsys.readouterr().err
    defs.write_text(
        "causes:\n  - {name: fp, observe: response_value_differs, key: system_fingerprint, contrl: {}}\n"
    )
    assert main(["--home", str(home.root), "diverge", "plan", "s1", str(defs)]) == 2
    assert "defs.yaml:2: causes.0.contrl: Extra inputs are not permitted" in capsys.readouterr().err
