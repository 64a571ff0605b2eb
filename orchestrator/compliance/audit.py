"""Audit Python source against every rule: one `AuditRecord` per (file, rule).

A folder given to `audit_paths` means every `*.py` file under it, recursively, in sorted order: variant
corpora and artifact stores name their files freely (`train.py`, `v3_target_encoding.py`,
`runs/<id>/train.py`), so picking by name would silently skip some. Hidden folders, `__pycache__` and
virtual environments are skipped. A file named explicitly is audited whatever its name.
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from orchestrator.compliance.dataflow import (
    Analysis,
    NodeCaches,
    SinkHit,
    TaskLayout,
    analyze_tree,
    witnessed_after_body,
)
from orchestrator.compliance.opaque import Opaque, find_opaque
from orchestrator.compliance.records import AuditRecord, Evidence, EvidenceStep
from orchestrator.compliance.traces import RULES, Rule
from orchestrator.failures import DataError
from orchestrator.log import get_logger

log = get_logger(__name__)

#: traces kept per record; more hits than this are counted in the summary of the last one
MAX_TRACES = 10
_SKIP_DIRS = frozenset({"__pycache__", ".venv", "venv", "node_modules", "site-packages"})


def audit_source(
    source: str, filename: str, *, run_id: str | None = None, layout: TaskLayout | None = None
) -> list[AuditRecord]:
    """Audit one file's source text. A file that does not parse gets `error` records, never `clear`."""
    # parsing makes a great many nodes and no cycles (a third of its time went to gc). The tree is dropped
    # before the collector is back on: the collection that follows then no longer walks all of it
    with collector_paused():
        return _parse_and_audit(source, filename, run_id, layout)


def _parse_and_audit(
    source: str, filename: str, run_id: str | None, layout: TaskLayout | None
) -> list[AuditRecord]:
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 0
        message = getattr(exc, "msg", None) or str(exc)
        return _error_records(filename, run_id, f"does not parse: {message}", line, _line(source, line))
    except (RecursionError, MemoryError) as exc:
        return _error_records(filename, run_id, f"is nested too deeply to parse ({type(exc).__name__})", 0, "")
    return audit_tree(tree, source, filename, run_id=run_id, layout=layout)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The garbage collector off for the block (the audit makes many small objects and few cycles:
    collecting them mid-way costs time), back on after it if it was on; nested blocks are fine."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def audit_tree(
    tree: ast.Module, source: str, filename: str, *, run_id: str | None = None, layout: TaskLayout | None = None
) -> list[AuditRecord]:
    """Audit a parsed module whose lines are `source` (compliance.bundle makes such modules of several
    files). An analysis that breaks (an analyser bug, a tree too deep to walk) gives `error` records."""
    try:
        quick, witnessed = _analyze(tree, source, layout)
    except RecursionError:
        return _error_records(filename, run_id, "is nested too deeply to analyse (RecursionError)", 0, "")
    except Exception as exc:  # noqa: BLE001 - an analyser bug must neither pass a file nor stop the rest
        log.error("audit.internal_error", file=filename, error=repr(exc)[:500])
        return _error_records(filename, run_id, f"could not be analysed (internal error: {exc!r})"[:2000], 0, "")
    opaque = find_opaque(tree, source)
    records = [_record(rule, quick, witnessed, filename, run_id, opaque) for rule in RULES]
    log.debug("audit.file", file=filename, verdicts={r.rule: r.verdict for r in records})
    return records


def _analyze(tree: ast.Module, source: str, layout: TaskLayout | None) -> tuple[Analysis, Analysis | None]:
    """The file's analyses: first without witness paths (fast; it decides the verdicts), then, only when
    some rule has hits, again with them, for evidence that shows every step."""
    with collector_paused():
        caches = NodeCaches()
        quick = analyze_tree(tree, source, layout, witness=False, caches=caches)
        flagged = [rule for rule in RULES if rule.select(quick)]
        if not quick.complete or not flagged:
            return quick, None
        kinds = frozenset().union(*(rule.witness_kinds for rule in flagged))
        # only the scorer's call starts frame_statistics' taints: its evidence pass can skip the module body
        resumed = witnessed_after_body(tree, source, quick, kinds, layout, caches=caches)
        if resumed is not None:
            return quick, resumed
        return quick, analyze_tree(tree, source, layout, witness=True, caches=caches, witness_kinds=kinds)


def audit_file(
    path: Path, *, run_id: str | None = None, layout: TaskLayout | None = None
) -> list[AuditRecord]:
    """Audit one file from disk. A file that is not UTF-8 text gets `error` records."""
    name = str(path)
    try:
        source = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error_records(name, run_id, f"is not UTF-8 text: {exc.reason} at byte {exc.start}", 0, "")
    except OSError as exc:
        return _error_records(name, run_id, f"cannot be read: {exc.strerror or exc}", 0, "")
    return audit_source(source, name, run_id=run_id, layout=layout)


def audit_paths(paths: Iterable[str | Path], *, layout: TaskLayout | None = None) -> list[AuditRecord]:
    """Audit files and folders (see the module docstring for what a folder contributes)."""
    records: list[AuditRecord] = []
    for path in python_files(paths):
        records.extend(audit_file(path, layout=layout))
    return records


def python_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files `audit_paths` audits, in order. A path that does not exist is an error."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(_walk(path)))
        elif path.is_file():
            out.append(path)
        else:
            raise DataError(f"{path}: no such file or folder")
    return out


def _walk(folder: Path) -> Iterator[Path]:
    for child in folder.iterdir():
        if child.is_dir():
            if child.name.startswith(".") or child.name in _SKIP_DIRS:
                continue
            yield from _walk(child)
        elif child.suffix == ".py" and child.is_file():
            yield child


def _record(
    rule: Rule, quick: Analysis, witnessed: Analysis | None, filename: str, run_id: str | None,
    opaque: Sequence[Opaque] = (),
) -> AuditRecord:
    """The rule's record. The quick analysis decides; the witnessed one, when the rule has hits there too,
    gives the evidence (the two interpret the same code, and the quick one can only be as precise or more:
    values that differ in their witness paths alone compare equal in it). Found nothing in code the trace
    cannot see through (compliance/opaque.py): `unanalysable`, never `clear`."""
    analysis = quick
    hits = rule.select(quick)
    if hits and witnessed is not None:
        traced = rule.select(witnessed)
        if traced:
            analysis, hits = witnessed, traced
    notes = list(analysis.notes) + rule.notes(analysis)
    if hits:
        evidence = [_evidence(rule, hit, filename) for hit in hits[:MAX_TRACES]]
        if len(hits) > MAX_TRACES:
            notes.append(f"{len(hits) - MAX_TRACES} more traces not shown")
        return AuditRecord(
            run_id=run_id,
            file=filename,
            rule=rule.name,
            rule_version=rule.version,
            verdict="flagged",
            evidence=evidence,
            notes=notes,
        )
    if not analysis.complete:
        incomplete = Evidence(kind="incomplete", summary="; ".join(analysis.notes) or "analysis incomplete")
        return AuditRecord(
            run_id=run_id,
            file=filename,
            rule=rule.name,
            rule_version=rule.version,
            verdict="error",
            evidence=[incomplete],
            notes=notes,
        )
    if opaque:
        return AuditRecord(
            run_id=run_id,
            file=filename,
            rule=rule.name,
            rule_version=rule.version,
            verdict="unanalysable",
            evidence=[unanalysable_evidence(opaque, filename)],
            notes=notes,
        )
    return AuditRecord(
        run_id=run_id, file=filename, rule=rule.name, rule_version=rule.version, verdict="clear", notes=notes
    )


def unanalysable_evidence(opaque: Sequence[Opaque], filename: str) -> Evidence:
    """Each construct the trace cannot see through, one step per construct (the first MAX_TRACES)."""
    shown = opaque[:MAX_TRACES]
    where = ", ".join(f"{o.construct} at line {o.line}" for o in shown[:3])
    more = f" and {len(opaque) - 3} more" if len(opaque) > 3 else ""
    steps = [EvidenceStep(file=filename, line=o.line, code=o.code, note=o.construct) for o in shown]
    return Evidence(kind="unanalysable", summary=f"nothing found, but the data flow can pass where the trace cannot "
                    f"see: {where}{more}", steps=steps)


def _evidence(rule: Rule, hit: SinkHit, filename: str) -> Evidence:
    steps = [
        EvidenceStep(file=filename, line=s.line, code=s.code, names=list(s.names), note=s.note, scope=s.scope)
        for s in hit.path
    ]
    return Evidence(kind="static_trace", summary=rule.summarize(hit), steps=steps)


def _error_records(
    filename: str, run_id: str | None, problem: str, line: int, code: str
) -> list[AuditRecord]:
    step = EvidenceStep(file=filename, line=line, code=code, note=problem)
    evidence = Evidence(kind="parse_error", summary=f"{filename} {problem}", steps=[step])
    return [
        AuditRecord(
            run_id=run_id,
            file=filename,
            rule=rule.name,
            rule_version=rule.version,
            verdict="error",
            evidence=[evidence],
        )
        for rule in RULES
    ]


def _line(source: str, line: int) -> str:
    lines = source.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""
