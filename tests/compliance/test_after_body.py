"""The evidence pass of `frame_statistics` starts where the quick pass left the module body
(`witnessed_after_body`): it must find exactly the hits, with exactly the witness paths, that a full pass
with the same witnesses finds. Checked on every file of the own corpus and of the development set (when it
is beside the repository) that the quick pass lets start there, and on small programs for when it must not."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from orchestrator.compliance.dataflow import NodeCaches, analyze_tree, witnessed_after_body
from orchestrator.compliance.dataflow.interpreter import SCORER_KINDS
from orchestrator.compliance.values import Kind

REPO = Path(__file__).resolve().parents[2]
OWN_CORPUS = REPO / "tests" / "compliance" / "corpus"
REAL_CORPUS = next(
    (f / "shared/corpus/real-train-py" for f in REPO.parents if (f / "shared/corpus/real-train-py").is_dir()),
    None,
)


def _files() -> list[Path]:
    files = sorted(OWN_CORPUS.rglob("*.py"))
    if REAL_CORPUS is not None:
        files += sorted(REAL_CORPUS.glob("*.py"))
    return files


def _scorer_hits(hits: list) -> list:
    return [h for h in hits if h.kind in SCORER_KINDS]


def _both(source: str) -> tuple[object, object]:
    tree = ast.parse(source)
    caches = NodeCaches()
    quick = analyze_tree(tree, source, witness=False, caches=caches)
    resumed = witnessed_after_body(tree, source, quick, SCORER_KINDS, caches=caches)
    full = analyze_tree(tree, source, witness=True, caches=caches, witness_kinds=SCORER_KINDS)
    return resumed, full


def test_resumed_pass_equals_full_pass_on_every_corpus_file() -> None:
    resumed_files = 0
    for path in _files():
        resumed, full = _both(path.read_text())
        if resumed is None:
            continue
        resumed_files += 1
        assert _scorer_hits(resumed.hits) == _scorer_hits(full.hits), path  # paths, steps, names and all
        assert resumed.uncertain == full.uncertain, path
        assert resumed.notes == full.notes, path
        assert resumed.complete == full.complete, path
    assert resumed_files >= 40  # nearly every file can start after the body


def test_not_resumed_when_the_scorer_writes_a_module_variable() -> None:
    source = textwrap.dedent(
        """
        import pandas as pd
        SEEN = {}

        def predict_proba(df):
            global SEEN
            SEEN = df.mean()
            return df["a"] - SEEN["a"]
        """
    )
    tree = ast.parse(source)
    quick = analyze_tree(tree, source, witness=False)
    assert quick.after_body is None
    assert witnessed_after_body(tree, source, quick, SCORER_KINDS) is None


def test_not_resumed_for_kinds_the_module_body_starts() -> None:
    source = textwrap.dedent(
        """
        import pandas as pd
        ev = pd.read_csv("eval.csv")

        def predict_proba(df):
            return df["a"]
        """
    )
    tree = ast.parse(source)
    quick = analyze_tree(tree, source, witness=False)
    assert quick.after_body is not None
    assert witnessed_after_body(tree, source, quick, {Kind.EVAL, Kind.BATCH}) is None
    assert witnessed_after_body(tree, source, quick, SCORER_KINDS) is not None


def test_a_witness_pass_keeps_no_state_after_the_body() -> None:
    source = "def predict_proba(df):\n    return df\n"
    tree = ast.parse(source)
    assert analyze_tree(tree, source, witness=False).after_body is not None
    assert analyze_tree(tree, source, witness=True).after_body is None
