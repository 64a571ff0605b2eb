"""`unanalysable`: a rule that found nothing in code whose data flow can pass where the trace cannot see
(dynamic code, a name computed at run time, an import it cannot follow) is not `clear` (issue 20, item 6).

The six forms that trained on the evaluation rows and came out `clear` are tests; so are honest programs
that use the look-alikes the trace does follow (`model.eval()`, `df.eval`, `re.compile`, `getattr` of a
fitted model, `vars(args)`, `importlib.metadata`), which must stay `clear`."""

from __future__ import annotations

import textwrap

import pytest

from orchestrator.compliance.audit import audit_source
from orchestrator.compliance.opaque import find_opaque
from orchestrator.compliance.records import AuditRecord, is_compliant

E = "eval_labels_in_fit"
HEAD = """
import json
import sys
import numpy as np
import pandas as pd
from xgboost import XGBClassifier
TASK = json.load(open("task.json"))
TARGET = TASK["target"]
train = pd.read_csv("data/train.csv")
evald = pd.read_csv("data/eval.csv")
FEATURES = [c for c in train.columns if c != TARGET]
def to_y(df):
    return (df[TARGET] == TASK["positive_label"]).astype(int).to_numpy()
model = XGBClassifier()
"""

# each trains on the evaluation rows with their labels; the data reaches the fit through a computed name
FORMS: dict[str, tuple[str, str, int]] = {
    "exec": ("""
        exec("full = pd.concat([train, evald])")
        model.fit(full[FEATURES], to_y(full))
    """, "dynamic code (exec)", 16),
    "compile + eval": ("""
        code = compile("pd.concat([train, evald])", "<x>", "eval")
        full = eval(code)
        model.fit(full[FEATURES], to_y(full))
    """, "dynamic code (compile)", 16),
    "globals()[...]": ("""
        globals()["tr" + "ain"] = pd.concat([train, evald])
        model.fit(train[FEATURES], to_y(train))
    """, "a namespace by key (globals())", 16),
    "vars()[...]": ("""
        vars()["train"] = pd.concat([train, evald])
        model.fit(train[FEATURES], to_y(train))
    """, "a namespace by key (vars())", 16),
    "getattr(sys.modules[__name__], ...)": ("""
        setattr(sys.modules[__name__], "train", pd.concat([train, evald]))
        data = getattr(sys.modules[__name__], "train")
        model.fit(data[FEATURES], to_y(data))
    """, "a module by key (sys.modules)", 16),
    "names built from chr codes": ("""
        name = "".join(map(chr, [116, 114, 97, 105, 110]))
        globals()[name] = pd.concat([train, evald])
        model.fit(train[FEATURES], to_y(train))
    """, "a string built from character codes (chr)", 16),
}


def _audit(body: str) -> dict[str, AuditRecord]:
    source = HEAD + textwrap.dedent(body)
    return {r.rule: r for r in audit_source(source, "train.py")}


@pytest.mark.parametrize("form", list(FORMS))
def test_the_six_forms_are_not_clear(form: str) -> None:
    body, construct, line = FORMS[form]
    records = _audit(body)
    rec = records[E]
    assert rec.verdict in ("flagged", "unanalysable"), rec
    if rec.verdict == "unanalysable":
        ev = rec.evidence[0]
        assert ev.kind == "unanalysable"
        first = ev.steps[0]
        assert (first.note, first.line) == (construct, line)
        assert first.code and first.file == "train.py"
        assert f"{construct} at line {line}" in ev.summary
    assert not is_compliant(records.values())
    # every rule that found nothing says so, none says clear
    assert all(r.verdict != "clear" for r in records.values())


def test_figures_before_and_after() -> None:
    """Before this verdict all six were `clear`; now none is."""
    verdicts = {form: _audit(FORMS[form][0])[E].verdict for form in FORMS}
    assert "clear" not in verdicts.values()
    assert sum(v == "unanalysable" for v in verdicts.values()) == 6, verdicts


HONEST = """
import argparse
import ast
import importlib.metadata
import re
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
parser = argparse.ArgumentParser()
parser.add_argument("--c", type=float, default=1.0)
args = parser.parse_args([])
config = vars(args)
params = ast.literal_eval("{'max_iter': 200}")
version = importlib.metadata.version("scikit-learn")
pattern = re.compile(r"^f_")
train = pd.read_csv("data/train.csv")
evald = pd.read_csv("data/eval.csv")
FEATURES = [c for c in train.columns if pattern.match(c)]
train["ratio"] = train.eval("f_a / (f_b + 1)")
model = LogisticRegression(C=config["c"], **params)
model.fit(train[FEATURES], train["y"])
for attr in ("coef_", "intercept_", "n_iter_"):
    print(attr, getattr(model, attr, None))
if "torch" in __import__("sys").modules:
    pass
def eval(model, frame):
    return model.predict_proba(frame[FEATURES])[:, 1]
print(eval(model, evald).mean())
def predict_proba(df):
    return model.predict_proba(df[FEATURES])
"""


def test_honest_look_alikes_stay_clear() -> None:
    # only `__import__("sys")` is opaque in it; without that line, nothing is
    assert [o.construct for o in find_opaque(__import__("ast").parse(HONEST), HONEST)] == [
        "import by a computed name (__import__)"]
    honest = HONEST.replace('if "torch" in __import__("sys").modules:\n    pass\n', "")
    assert find_opaque(__import__("ast").parse(honest), honest) == []
    records = {r.rule: r for r in audit_source(honest, "train.py")}
    assert records[E].verdict == "clear"


def test_a_flag_stays_a_flag() -> None:
    """Code that is flagged and also uses exec keeps its flag and its trace."""
    records = _audit("""
        exec("x = 1")
        full = pd.concat([train, evald])
        model.fit(full[FEATURES], to_y(full))
    """)
    assert records[E].verdict == "flagged" and records[E].evidence[0].kind == "static_trace"


OPAQUE_FORMS = {
    "import importlib\nm = importlib.import_module('pan' + 'das')\n": "import by a computed name",
    "from importlib import import_module\nm = import_module('x')\n": "import by a computed name",
    "import runpy\nrunpy.run_path('helper.py')\n": "code run from a file path",
    "import importlib.util\ns = importlib.util.spec_from_file_location('h', 'h.py')\n"
    "m = importlib.util.module_from_spec(s)\ns.loader.exec_module(m)\n": "module loaded from a file path",
    "import builtins\nbuiltins.exec('x = 1')\n": "dynamic code (exec)",
    "run = eval\nrun('1')\n": "dynamic code (eval)",
    "import pandas as pd\nf = getattr(pd, 'read_' + 'csv')\n": "getattr of a module by a computed name",
    "import sys\nf = sys._getframe().f_globals\n": "a frame's namespaces",
    "import base64\np = base64.b64decode('ZGF0YS9ldmFsLmNzdg==').decode()\n": "a string decoded at run time (base64)",
    "p = bytes.fromhex('6576616c').decode()\n": "a string decoded at run time (bytes.fromhex)",
    "x = __builtins__.__dict__\n": "the builtins namespace (__builtins__)",
    "import numpy as np\nd = np.__dict__\n": "a module's namespace by key (__dict__)",
}


@pytest.mark.parametrize("code", list(OPAQUE_FORMS))
def test_each_construct_is_found(code: str) -> None:
    found = find_opaque(__import__("ast").parse(code), code)
    assert OPAQUE_FORMS[code] in [o.construct for o in found], found


LOOK_ALIKES = [
    "import torch\nmodel = torch.compile(model)\nmodel.eval()\n",
    "import re\nr = re.compile('x')\n",
    "import pandas as pd\ndf = pd.DataFrame()\ndf.eval('a + b')\ndf.query('a > 1')\n",
    "import numpy as np\nf = getattr(np, 'float32')\n",
    "name = 'coef_'\nv = getattr(model, name)\nsetattr(model, name, v)\n",
    "import sys\nif 'xgboost' in sys.modules:\n    pass\n",
    "def compile(x):\n    return x\ncompile(1)\n",
    "from ast import literal_eval\nv = literal_eval('1')\n",
]


@pytest.mark.parametrize("code", LOOK_ALIKES)
def test_look_alikes_are_not_opaque(code: str) -> None:
    assert find_opaque(__import__("ast").parse(code), code) == []


def test_the_ledger_keeps_the_verdict_and_a_review_can_clear_it(tmp_path) -> None:
    from orchestrator.compliance.store import add_override, load_records, save_records
    from orchestrator.ledger import Ledger

    record = _audit(FORMS["exec"][0])[E].model_copy(update={"run_id": None})
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ledger.new_run(task="t", agent="a", budget_name="b")
        run = ledger.list_runs()[0].run_id
        save_records(ledger, run, [record])
        [back] = load_records(ledger, run)
        assert back.verdict == "unanalysable" and back.evidence == record.evidence
        assert not is_compliant([back], rules=[E])
        add_override(ledger, run, E, "clear", "read the exec'd string: it builds a plot")
        [reviewed] = load_records(ledger, run)
        assert reviewed.final_verdict == "clear" and is_compliant([reviewed], rules=[E])


def test_the_exclusion_counts_it_as_the_study_decides() -> None:
    import math

    from orchestrator.stats.exclusion import Exclusion, Unanalysable, compliant, verdicts

    labels, frames = ["unanalysable", "clear", "flagged"], ["clear", "clear", "clear"]
    assert compliant(labels, frames, Exclusion.BOTH).tolist() == [0.0, 1.0, 0.0]   # default: not clear
    got = compliant(labels, frames, Exclusion.BOTH, unanalysable=Unanalysable.UNKNOWN).tolist()
    assert math.isnan(got[0]) and got[1:] == [1.0, 0.0]
    assert compliant(labels, frames, "both", unanalysable="clear").tolist() == [1.0, 1.0, 0.0]
    # a rule the exclusion does not apply does not count its verdict
    assert compliant(labels, frames, Exclusion.FRAME_STATISTICS).tolist() == [1.0, 1.0, 1.0]
    assert verdicts(["UNANALYSABLE"], "x").tolist() == [1.0]
    with pytest.raises(ValueError, match="unanalysable"):
        compliant(labels, frames, "both", unanalysable="maybe")


def test_the_report_counts_it_apart() -> None:
    import pandas as pd

    from orchestrator.report.prepare import prepare
    from orchestrator.report.runs_table import validate_runs
    from orchestrator.report.tables import compliance_table
    from orchestrator.stats.exclusion import Exclusion

    runs = validate_runs(pd.DataFrame({
        "pairing": ["a/m"] * 4, "task": ["t"] * 4, "repeat": [1, 2, 3, 4], "holdout_score": [0.7, 0.8, 0.75, 0.9],
        "eval_labels_in_fit": ["clear", "unanalysable", "flagged", "unanalysable"],
        "frame_statistics": ["clear"] * 4}))
    row = compliance_table(prepare(runs, Exclusion.BOTH, seed=1)).iloc[0]
    assert (row["eval_labels_in_fit_flagged"], row["eval_labels_in_fit_clear"],
            row["eval_labels_in_fit_unanalysable"]) == (1, 1, 2)
    assert (row["compliant"], row["excluded"], row["unknown"]) == (1, 3, 0)


def test_a_repo_audit_says_unanalysable_too() -> None:
    """A run's audit (train.py bundled with its modules) maps the construct's line into its own file."""
    from orchestrator.compliance.repo import audit_repo

    helper = "def load(pd):\n    return eval('pd.read_csv(\"data/eval.csv\")')\n"
    train = HEAD + "from helpers import load\nextra = load(pd)\nmodel.fit(train[FEATURES], to_y(train))\n"
    records = {r.rule: r for r in audit_repo({"train.py": train.encode(), "helpers.py": helper.encode()})}
    rec = records[E]
    assert rec.verdict == "unanalysable", rec
    step = rec.evidence[0].steps[0]
    assert (step.file, step.line, step.note) == ("helpers.py", 2, "dynamic code (eval)")
