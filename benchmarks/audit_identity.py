"""Dump every audit record of the benchmark inputs as JSON, to check that a speed change changes no record.

The inputs: the development set's 48 real files (`bench_audit_real.find_corpus`), the own corpus
(`tests/compliance/corpus`) and `bench_audit`'s perturbed variants of it. Each record is dumped whole
(verdict, evidence with every step, notes), keyed by input, with the file name made relative so the dump
does not depend on where the files sit.

    python benchmarks/audit_identity.py dump OUT.json [--variants 500]
    python benchmarks/audit_identity.py check BASELINE.json [--variants 500]

`check` exits 1 and names the first differing inputs when any record differs from the baseline.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_audit import CORPUS, perturbed_sources  # noqa: E402
from bench_audit_real import find_corpus  # noqa: E402


def audit_dump(n_variants: int) -> dict[str, list[dict[str, object]]]:
    """Every input's records, in a JSON-ready form, keyed by "<set>/<name>"."""
    from orchestrator.compliance.audit import audit_source

    inputs: dict[str, str] = {}
    corpus = find_corpus()
    if corpus is not None:
        for name in sorted(json.loads((corpus / "labels.json").read_text())):
            inputs[f"real/{name}"] = (corpus / name).read_text()
    for path in sorted(CORPUS.rglob("*.py")):
        inputs[f"own/{path.relative_to(CORPUS)}"] = path.read_text()
    for i, source in enumerate(perturbed_sources(n_variants)):
        inputs[f"variant/{i:04d}.py"] = source
    return {
        key: [r.model_dump(mode="json") for r in audit_source(source, key)] for key, source in inputs.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("dump", "check"))
    parser.add_argument("file", type=Path)
    parser.add_argument("--variants", type=int, default=500)
    args = parser.parse_args(argv)
    dump = audit_dump(args.variants)
    if args.action == "dump":
        args.file.write_text(json.dumps(dump, indent=1, sort_keys=True))
        flagged = sum(r["verdict"] == "flagged" for rs in dump.values() for r in rs)
        print(f"dumped {len(dump)} inputs ({flagged} flagged records) to {args.file}")
        return 0
    baseline = json.loads(args.file.read_text())
    differing = [k for k in sorted(set(baseline) | set(dump)) if baseline.get(k) != dump.get(k)]
    if differing:
        print(f"{len(differing)} of {len(baseline)} inputs differ: {', '.join(differing[:10])}")
        return 1
    print(f"identical: {len(dump)} inputs, every record byte-for-byte as in {args.file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
