"""train.py and the delivered modules it imports, bundled into one program (compliance/bundle.py)."""

from __future__ import annotations

import ast

import pytest

from orchestrator.compliance.bundle import build_bundle, module_name

FEATURES = """\
import numpy as np
N = 3
SCALE = 2


def add_load(X):
    X["c"] = X.groupby(["Month"])["DepTime"].transform("count")
    return X


def scale(X, s=SCALE):
    global N
    N = [N for N in range(3)]
    return X * s + np.mean([1])
"""
TRAIN = """\
import pandas as pd
from features import add_load, N as K
import pkg.util as U
import features


def prepare(df):
    X = df.copy()
    X = add_load(X)
    return features.scale(X) + U.helper(K)
"""
FILES = {"train.py": TRAIN, "features.py": FEATURES, "pkg/__init__.py": "", "pkg/other.py": "val = 1\n",
         "pkg/util.py": "from ..features import N\nfrom . import other\n\n\ndef helper(k):\n    return other.val + k\n",
         "unused.py": "raise SystemExit\n"}


def _names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


@pytest.mark.parametrize(("rel", "name"), [("a.py", "a"), ("a/b.py", "a.b"), ("a/__init__.py", "a"),
                                           ("my-mod.py", None), ("x.txt", None)])
def test_module_names(rel: str, name: str | None) -> None:
    assert module_name(rel) == name


def test_helpers_come_first_renamed_and_every_line_maps_back() -> None:
    b = build_bundle(FILES)
    assert b.files == ["features.py", "pkg/__init__.py", "pkg/other.py", "pkg/util.py", "train.py"]
    names = _names(b.tree)
    assert {"features__add_load", "features__scale", "features__N", "features__np", "pkg__util__helper",
            "pkg__other__val"} <= names
    assert "add_load" in names and "K" in names  # train.py's own names are train.py's
    code = ast.unparse(b.tree)
    assert "add_load = features__add_load" in code and "K = features__N" in code
    assert "features__scale(X) + pkg__util__helper(K)" in code
    assert "global features__N" in code and "[N for N in range(3)]" in code  # the comprehension's N is its own
    assert "def features__scale(X, s=features__SCALE)" in code
    lines = b.source.splitlines()
    for piece in b.pieces:
        own = FILES[piece.file].splitlines()
        for i, text in enumerate(own, start=1):
            at = piece.first + i - 1
            assert b.locate(at) == (piece.file, i) and lines[at - 1] == text
    assert b.readable("features__add_load:X and pkg__util__helper") == "features.add_load:X and pkg.util.helper"
    assert b.dynamic == []


def test_a_train_py_that_imports_nothing_delivered_is_itself() -> None:
    b = build_bundle({"train.py": "import pandas as pd\nx = 1\n", "helper.py": "y = 2\n"})
    assert b.files == ["train.py"] and b.source == "import pandas as pd\nx = 1\n"


def test_star_imports_imports_in_functions_and_computed_imports() -> None:
    files = {
        "train.py": "from lib import *\nimport importlib\n\n\ndef f(df):\n    from lib import g\n    return g(df) + h(df)\n\n"
                    "mod = importlib.import_module('li' + 'b2')\n",
        "lib.py": "def g(x):\n    return x\n\n\ndef h(x):\n    return _private(x)\n\n\ndef _private(x):\n    return x\n",
        "lib2.py": "z = 1\n",
    }
    b = build_bundle(files)
    code = ast.unparse(b.tree)
    assert "g = lib__g" in code and "h = lib__h" in code and "_private = " not in code
    assert "    g = lib__g" in code  # the import inside f binds f's local g
    assert b.dynamic == ["train.py:9"]


def test_a_bundled_file_that_does_not_parse_says_which() -> None:
    with pytest.raises(SyntaxError) as exc:
        build_bundle({"train.py": "import helper\n", "helper.py": "def (:\n"})
    assert exc.value.filename == "helper.py"
