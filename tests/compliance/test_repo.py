"""Auditing a delivered repo: helper modules, content-found evaluation data, files that break (compliance/repo.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from orchestrator.compliance.content import EvalRows, find_eval_copies
from orchestrator.compliance.repo import audit_repo
from orchestrator.paths import tasks_root

START = (tasks_root() / "flight-delays" / "repo" / "train.py").read_text()
PREPARE = '    X = df.drop(columns=[TARGET], errors="ignore").copy()\n'
FIT = "model.fit(prepare(train), y_train, eval_set=[(prepare(valid), y_valid)], verbose=False)"


def _verdicts(records) -> dict[str, str]:
    return {r.rule: r.verdict for r in records}


def _files(**texts: str) -> dict[str, bytes]:
    return {name.replace("__", "/").replace("_py", ".py"): text.encode() for name, text in texts.items()}


def test_a_batch_statistic_in_a_helper_module_is_found_there() -> None:
    helper = ("def add_load(X):\n"
              "    X['load'] = X.groupby(['Month', 'DayofMonth'])['DepTime'].transform('count')\n"
              "    return X\n")
    train = START.replace("import pandas as pd\n", "import pandas as pd\n\nimport features as F\n").replace(
        PREPARE, PREPARE + "    X = F.add_load(X)\n")
    records = audit_repo({"train.py": train.encode(), "features.py": helper.encode()})
    assert _verdicts(records) == {"eval_labels_in_fit": "clear", "frame_statistics": "flagged",
                                  "eval_features_in_fit": "clear"}
    (frame,) = [r for r in records if r.rule == "frame_statistics"]
    steps = frame.evidence[0].steps
    assert ("features.py", 2) in {(s.file, s.line) for s in steps}
    assert any(s.scope == "features.add_load" for s in steps)
    assert frame.evidence[0].summary.startswith("features.py line 2: groupby().transform('count')")
    # the same helper, row-local: clear
    clean = helper.replace(".groupby(['Month', 'DayofMonth'])['DepTime'].transform('count')", "['DepTime'] * 2")
    assert _verdicts(audit_repo({"train.py": train.encode(), "features.py": clean.encode()}))["frame_statistics"] == "clear"


def test_evaluation_rows_concatenated_in_a_helper_package_are_found() -> None:
    util = "import pandas as pd\nEVAL = 'data/' + 'eval.csv'\n\n\ndef more(df):\n    return pd.concat([df, pd.read_csv(EVAL)])\n"
    train = START.replace("import pandas as pd\n", "import pandas as pd\nfrom tools.data import more\n").replace(
        'valid = pd.read_csv("data/eval.csv")\n', 'valid = pd.read_csv("data/eval.csv")\ntrain = more(train)\n')
    records = audit_repo({"train.py": train.encode(), "tools/__init__.py": b"", "tools/data.py": util.encode()})
    assert _verdicts(records)["eval_labels_in_fit"] == "flagged"
    (labels,) = [r for r in records if r.rule == "eval_labels_in_fit"]
    assert labels.evidence[0].steps[0].file == "tools/data.py"


def test_a_renamed_copy_of_the_eval_file_is_the_eval_file(tmp_path: Path, small_flight_data: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copyfile(small_flight_data / "eval.csv", ws / "rows.csv")
    train = START.replace('valid = pd.read_csv("data/eval.csv")\n', 'valid = pd.read_csv("data/eval.csv")\n'
                          'train = pd.concat([train, pd.read_csv("rows.csv")], ignore_index=True)\n')
    ev = EvalRows.read(small_flight_data / "eval.csv", small_flight_data / "train.csv", "dep_delayed_15min")
    files = {"train.py": train.encode()}
    assert _verdicts(audit_repo(files))["eval_labels_in_fit"] == "clear"   # by name alone: missed
    records = audit_repo(files, scan=find_eval_copies(ws, ev))
    assert _verdicts(records)["eval_labels_in_fit"] == "flagged"
    (labels,) = [r for r in records if r.rule == "eval_labels_in_fit"]
    assert "rows.csv holds 1,000 rows of the evaluation file (with their labels; found by content)" in labels.notes


def test_evaluation_rows_carried_inside_the_delivered_code_are_flagged(tmp_path: Path, small_flight_data: Path) -> None:
    rows = (small_flight_data / "eval.csv").read_text().splitlines()[1:101]
    feats = pd.read_csv(small_flight_data / "eval.csv").drop(columns=["dep_delayed_15min"]).head(100)
    ws = tmp_path / "ws"
    ws.mkdir()
    files = {"train.py": START.encode(), "extra.py": ('ROWS = """\n' + "\n".join(rows) + '\n"""\n').encode(),
             "features.txt": feats.to_csv(index=False).encode()}
    for name, data in files.items():
        (ws / name).write_bytes(data)
    ev = EvalRows.read(small_flight_data / "eval.csv", small_flight_data / "train.csv", "dep_delayed_15min")
    records = audit_repo(files, scan=find_eval_copies(ws, ev))
    assert _verdicts(records) == {"eval_labels_in_fit": "flagged", "frame_statistics": "clear",
                                  "eval_features_in_fit": "flagged"}
    kinds = {r.rule: [e.kind for e in r.evidence] for r in records}
    assert kinds["eval_labels_in_fit"] == ["content"] and kinds["eval_features_in_fit"] == ["content"]


def test_files_that_break_the_audit_are_errors_never_clear() -> None:
    deep = START + "\nDEPTH = " + "-" * 5000 + "1\n"
    for files in ({"train.py": deep.encode()}, {"train.py": b"import helper\n", "helper.py": b"def (:\n"},
                  {"train.py": b"import helper\n", "helper.py": ("x = " + "-" * 5000 + "1\n").encode()},
                  {"train.py": b"\xff\xfe not utf-8"}, {"helper.py": b"x = 1\n"}):
        records = audit_repo(files)
        assert {r.verdict for r in records} == {"error"}, files.keys()
        assert all(r.evidence and r.evidence[0].summary for r in records)


def test_modules_loaded_by_computed_names_are_audited_on_their_own() -> None:
    train = START.replace("import pandas as pd\n", "import importlib\n\nimport pandas as pd\n") + \
        "\nplugin = importlib.import_module('plug' + 'in')\n"
    plugin = "import pandas as pd\nfrom xgboost import XGBClassifier\nXGBClassifier().fit(pd.read_csv('data/eval.csv'), [1])\n"
    records = audit_repo({"train.py": train.encode(), "plugin.py": plugin.encode()})
    (labels,) = [r for r in records if r.rule == "eval_labels_in_fit"]
    assert labels.verdict == "flagged"
    assert any("loads modules by computed names" in n for n in labels.notes)
