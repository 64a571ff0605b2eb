"""How well and how fast `compliance` audits real agent-written train.py files, against a study's verdicts.

The development set is `shared/corpus/real-train-py/` next to the repository (48 files that real agents
delivered in a public study, with that study's final, hand-reviewed verdicts in `labels.json`). It is not
part of the repository: this script looks for it in the repository's parent folder and the folders above
(`../shared/...` for a checkout next to `shared/`), or takes `--corpus PATH`. When it is not there the
script says so and exits 0.

    python benchmarks/bench_audit_real.py [--corpus PATH] [--repeat 3] [--cpu 0] [--quiet]

Prints, per rule the labels cover, the confusion counts, precision and recall; every disagreement with the
audit's evidence (and the study's own evidence and review note); what the rules without labels flagged;
and the audit rate in files per second on one core after start-up (imports and a warm-up file), as CPU
time (the fairer figure on a shared machine) and wall time, best of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS_NAME = Path("shared") / "corpus" / "real-train-py"
#: the targets of issue 14 on the development set
TARGET_PRECISION, TARGET_RECALL, TARGET_RATE = 0.95, 1.0, 50.0


def find_corpus(explicit: Path | None = None) -> Path | None:
    """The development set: `explicit`, else `shared/corpus/real-train-py` in the repository's parent or a
    folder above it (a worktree may sit deeper than the main checkout)."""
    if explicit is not None:
        return explicit if (explicit / "labels.json").is_file() else None
    for folder in REPO.parents:
        candidate = folder / CORPUS_NAME
        if (candidate / "labels.json").is_file():
            return candidate
    return None


def score(
    labels: dict[str, dict[str, str]], verdicts: dict[str, dict[str, str]], rule: str
) -> dict[str, float]:
    tp = fp = fn = tn = 0
    for name, label in labels.items():
        predicted = verdicts[name].get(rule) == "flagged"
        actual = label[rule] == "flagged"
        tp += predicted and actual
        fp += predicted and not actual
        fn += actual and not predicted
        tn += not predicted and not actual
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None, help="the folder with the files and labels.json")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (the best is reported)")
    parser.add_argument("--cpu", type=int, default=None, help="pin to this CPU (default: the first allowed)")
    parser.add_argument("--quiet", action="store_true", help="do not print the evidence of disagreements")
    args = parser.parse_args(argv)
    corpus = find_corpus(args.corpus)
    if corpus is None:
        where = args.corpus if args.corpus is not None else f"{CORPUS_NAME} above {REPO}"
        print(f"bench_audit_real: no development set at {where} (labels.json missing); nothing to measure")
        return 0
    if hasattr(os, "sched_setaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {args.cpu if args.cpu is not None else allowed[0]})
    sys.path.insert(0, str(REPO))
    from orchestrator.compliance.audit import audit_file
    from orchestrator.compliance.traces import RULES_BY_NAME

    labels: dict[str, dict[str, str]] = json.loads((corpus / "labels.json").read_text())
    files = [corpus / name for name in sorted(labels)]
    lines = sum(len(f.read_text().splitlines()) for f in files)
    audit_file(files[0])  # warm-up: imports and first-call costs are start-up, not audit time

    best_cpu = best_wall = float("inf")
    records = {}
    for _ in range(max(1, args.repeat)):
        wall, cpu = time.perf_counter(), time.process_time()
        records = {f.name: audit_file(f) for f in files}
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    verdicts = {name: {r.rule: r.verdict for r in rs} for name, rs in records.items()}

    labelled = [rule for rule in RULES_BY_NAME if all(rule in label for label in labels.values())]
    print(f"development set: {corpus} ({len(files)} files, {lines} lines)")
    print(
        f"{'rule':<22} {'version':>7} {'tp':>3} {'fp':>3} {'fn':>3} {'tn':>3} {'precision':>9} {'recall':>7}"
    )
    scores = {}
    for rule in labelled:
        s = scores[rule] = score(labels, verdicts, rule)
        print(
            f"{rule:<22} {RULES_BY_NAME[rule].version:>7} {s['tp']:>3.0f} {s['fp']:>3.0f} {s['fn']:>3.0f} "
            f"{s['tn']:>3.0f} {s['precision']:>9.1%} {s['recall']:>7.1%}"
        )
    for rule in RULES_BY_NAME:
        if rule in labelled:
            continue
        flagged = sorted(n for n, v in verdicts.items() if v.get(rule) == "flagged")
        print(
            f"{rule:<22} {RULES_BY_NAME[rule].version:>7} (no labels) flagged {len(flagged)}: {', '.join(flagged)}"
        )
    errors = sorted(n for n, v in verdicts.items() if "error" in v.values())
    if errors:
        print(f"errors (not clear, not flagged): {', '.join(errors)}")

    print("\ndisagreements with the study's verdicts:")
    disagreements = 0
    for rule in labelled:
        for name in sorted(labels):
            predicted = verdicts[name].get(rule)
            actual = labels[name][rule]
            if (predicted == "flagged") == (actual == "flagged"):
                continue
            disagreements += 1
            kind = "false positive" if predicted == "flagged" else "false negative"
            print(f"- {name} {rule}: audit {predicted}, study {actual} ({kind})")
            if not args.quiet:
                _print_evidence(records[name], rule, labels[name])
    if not disagreements:
        print("- none")

    rate_cpu, rate_wall = len(files) / best_cpu, len(files) / best_wall
    print(
        f"\nspeed on one core, after start-up, best of {max(1, args.repeat)}: {len(files)} files in "
        f"{best_cpu:.2f} s of CPU time -> {rate_cpu:.0f} files/s ({rate_cpu / TARGET_RATE:.1f}x the target of "
        f"{TARGET_RATE:.0f}); wall {best_wall:.2f} s -> {rate_wall:.0f} files/s"
    )
    met = all(s["precision"] >= TARGET_PRECISION and s["recall"] >= TARGET_RECALL for s in scores.values())
    print(
        f"targets (precision >= {TARGET_PRECISION:.0%}, recall {TARGET_RECALL:.0%}): {'met' if met else 'NOT met'}"
    )
    return 0


def _print_evidence(records: list, rule: str, label: dict[str, str]) -> None:
    for record in records:
        if record.rule != rule:
            continue
        for evidence in record.evidence:
            print(f"    audit: {evidence.summary}")
            for step in evidence.steps:
                note = f"  [{step.note}]" if step.note else ""
                scope = f"{step.scope}: " if step.scope else ""
                print(f"      {step.line:>4} {scope}{step.code[:110]}{note}")
        for note in record.notes:
            print(f"    note: {note}")
    print(f"    study: {label.get('study_evidence', '')[:300]}")
    if label.get("study_hand_review"):
        print(f"    review: {label['study_hand_review'][:300]}")


if __name__ == "__main__":
    sys.exit(main())
