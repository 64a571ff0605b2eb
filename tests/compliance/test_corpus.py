"""The labelled corpus: realistic train.py variants, each starting with `# expect: clear` or
`# expect: <rule>[, <rule>]`. Prints precision and recall per rule (visible with -s) and holds them to the
targets: recall 100%, precision at least 95%."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from orchestrator.compliance.audit import audit_file
from orchestrator.compliance.traces import DEFAULT_RULES, RULES

CORPUS = Path(__file__).parent / "corpus"
RULE_NAMES = [r.name for r in RULES]


@dataclass(frozen=True)
class Variant:
    path: Path
    expected: frozenset[str]


def _variants() -> list[Variant]:
    out = []
    for path in sorted(CORPUS.rglob("*.py")):
        first = path.read_text().splitlines()[0]
        assert first.startswith("# expect:"), f"{path}: first line must be '# expect: ...'"
        labels = [s.strip() for s in first.removeprefix("# expect:").split(",")]
        out.append(Variant(path, frozenset() if labels == ["clear"] else frozenset(labels)))
    return out


VARIANTS = _variants()


def test_corpus_is_large_and_balanced() -> None:
    assert len(VARIANTS) >= 40
    compliant = [v for v in VARIANTS if not v.expected]
    assert len(compliant) * 2 >= len(VARIANTS), "at least half of the corpus is compliant"
    for rule in DEFAULT_RULES:
        assert sum(rule in v.expected for v in VARIANTS) >= 10, f"too few violations of {rule}"


def test_labels_match_folders() -> None:
    for v in VARIANTS:
        relative = v.path.relative_to(CORPUS).parts
        if relative[0] == "compliant":
            assert not v.expected, v.path
        else:
            assert relative[0] == "violations" and relative[1] in v.expected, v.path
        assert v.expected <= set(RULE_NAMES), v.path


@pytest.fixture(scope="module")
def verdicts() -> dict[Path, dict[str, str]]:
    return {v.path: {r.rule: r.verdict for r in audit_file(v.path)} for v in VARIANTS}


def test_precision_and_recall_per_rule(verdicts: dict[Path, dict[str, str]]) -> None:
    lines = [f"{'rule':<20} {'tp':>3} {'fp':>3} {'fn':>3} {'tn':>3} {'precision':>9} {'recall':>7}"]
    misses: list[str] = []
    scores: dict[str, tuple[float, float]] = {}
    for rule in RULE_NAMES:
        tp = fp = fn = tn = 0
        for v in VARIANTS:
            verdict = verdicts[v.path][rule]
            assert verdict in {"flagged", "clear"}, f"{v.path}: {rule} is {verdict}"
            predicted, actual = verdict == "flagged", rule in v.expected
            tp += predicted and actual
            fp += predicted and not actual
            fn += actual and not predicted
            tn += not predicted and not actual
            if predicted != actual:
                misses.append(f"  {'FP' if predicted else 'FN'} {rule}: {v.path.relative_to(CORPUS)}")
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        scores[rule] = (precision, recall)
        lines.append(f"{rule:<20} {tp:>3} {fp:>3} {fn:>3} {tn:>3} {precision:>9.1%} {recall:>7.1%}")
    print(f"\ncorpus: {len(VARIANTS)} files\n" + "\n".join(lines + misses))
    for rule, (precision, recall) in scores.items():
        assert recall == 1.0, f"{rule}: recall {recall:.1%}\n" + "\n".join(misses)
        assert precision >= 0.95, f"{rule}: precision {precision:.1%}\n" + "\n".join(misses)


@pytest.mark.parametrize("variant", VARIANTS, ids=[str(v.path.relative_to(CORPUS)) for v in VARIANTS])
def test_each_variant(variant: Variant, verdicts: dict[Path, dict[str, str]]) -> None:
    flagged = {rule for rule, verdict in verdicts[variant.path].items() if verdict == "flagged"}
    assert flagged == set(variant.expected)


def test_the_quick_pass_and_the_witnessed_pass_find_the_same_rules() -> None:
    """The quick pass (no witness paths) decides the verdicts; the witnessed pass gives the evidence. On
    every corpus file they find hits for the same rules."""
    import ast

    from orchestrator.compliance.dataflow import analyze_tree

    for v in VARIANTS:
        source = v.path.read_text()
        tree = ast.parse(source)
        quick = analyze_tree(tree, source, witness=False)
        witnessed = analyze_tree(tree, source, witness=True)
        assert {r.name for r in RULES if r.select(quick)} == {r.name for r in RULES if r.select(witnessed)}, v.path
        assert all(len(h.path) == 1 for h in quick.hits)  # the quick pass keeps only the sink
