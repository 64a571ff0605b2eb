"""Audit a delivered repo, not one file: train.py with every delivered module it imports, and the evaluation
data recognised by content (issue 11).

`audit_repo(files, ...)` takes the delivered code as the scorer gets it (path -> bytes: the `.py` files of
`orchestrator.scoring.artifact.select_code`) and, optionally, a `ContentScan` of the whole delivered
workspace (`compliance.content`):

- train.py and the modules it imports by name are interpreted as one program (`compliance.bundle`); every
  evidence step names its own file and line, and a helper module's names read as `features.add_day_load`;
- every file the scan found holding evaluation rows is evaluation data for the traces: its name joins the
  layout's evaluation file names, so reading it is reading the evaluation file (its rows' labels with it);
- a file holding evaluation rows that the scorer itself gets (a `.py` or text file of the delivered code)
  flags `eval_labels_in_fit` (rows with labels) or `eval_features_in_fit` (without) with `content` evidence:
  the delivered code carries them into every retraining;
- when train.py loads modules by computed names (`importlib`, `runpy`, `exec`), the delivered modules the
  bundle does not hold are audited on their own too, and their findings join the records (with a note).

One record per rule, with `file` = the entry (train.py). A file that does not parse, or is nested too deep
to parse, gives `error` records naming it: never `clear`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence

from orchestrator.compliance.audit import MAX_TRACES, _error_records, audit_source, audit_tree
from orchestrator.compliance.bundle import Bundle, build_bundle
from orchestrator.compliance.content import ContentScan
from orchestrator.compliance.records import AuditRecord, Evidence, EvidenceStep
from orchestrator.compliance.strings import TaskLayout
from orchestrator.compliance.traces import RULES_BY_NAME, eval_features_in_fit, eval_labels_in_fit

_LINE = re.compile(r"\bline (\d+)\b")


def layout_with_copies(layout: TaskLayout, scan: ContentScan | None) -> TaskLayout:
    """The layout, with every file the scan found holding evaluation rows taken as the evaluation file."""
    if scan is None or not scan.copies:
        return layout
    names = tuple(dict.fromkeys([*layout.eval_names, *(c.path.rsplit("/", 1)[-1] for c in scan.copies)]))
    data = tuple(dict.fromkeys([*layout.data_files, *(c.path for c in scan.copies)]))
    return dataclasses.replace(layout, eval_names=names, data_files=data)


def audit_repo(files: Mapping[str, bytes], *, entry: str = "train.py", run_id: str | None = None,
               layout: TaskLayout | None = None, scan: ContentScan | None = None) -> list[AuditRecord]:
    """Audit `entry` with the delivered modules it imports (see the module docstring)."""
    layout = layout_with_copies(layout or TaskLayout(), scan)
    texts: dict[str, str] = {}
    for rel, data in files.items():
        if rel.endswith(".py"):
            try:
                texts[rel] = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                if rel == entry:
                    return _error_records(entry, run_id, f"is not UTF-8 text: {exc.reason} at byte {exc.start}", 0, "")
    if entry not in texts:
        return _error_records(entry, run_id, "is not in the delivered code", 0, "")
    try:
        bundle = build_bundle(texts, entry)
    except SyntaxError as exc:
        where = exc.filename or entry
        return _error_records(entry, run_id, f"{where} does not parse: {exc.msg}", exc.lineno or 0, "")
    except (RecursionError, MemoryError, ValueError) as exc:
        return _error_records(entry, run_id, f"{entry} or a module it imports is nested too deeply to parse "
                                             f"({type(exc).__name__})", 0, "")
    if len(bundle.pieces) == 1:
        records = audit_source(texts[entry], entry, run_id=run_id, layout=layout)
    else:
        records = [_mapped(r, bundle) for r in audit_tree(bundle.tree, bundle.source, entry, run_id=run_id,
                                                          layout=layout)]
        records = [_note(r, f"audited with the modules train.py imports: {', '.join(bundle.files[:-1])}")
                   for r in records]
    if bundle.dynamic:
        others = [rel for rel in sorted(texts) if rel not in bundle.files]
        note = (f"train.py loads modules by computed names ({', '.join(bundle.dynamic[:3])}): "
                f"{len(others)} other delivered modules were audited on their own")
        alone = [audit_source(texts[rel], rel, run_id=run_id, layout=layout) for rel in others]
        records = [_note(r, note) for r in _merge(records, alone)]
    if scan is not None:
        records = [_with_content(r, scan, files) for r in records]
    return records


def _readable_line(text: str, bundle: Bundle, entry: str) -> str:
    def repl(m: re.Match[str]) -> str:
        file, line = bundle.locate(int(m.group(1)))
        return f"line {line}" if file == entry else f"{file} line {line}"

    return bundle.readable(_LINE.sub(repl, text))


def _mapped(record: AuditRecord, bundle: Bundle) -> AuditRecord:
    """A record of the bundle with every step, summary and note in the files' own terms."""
    entry = bundle.pieces[-1].file
    evidence = []
    for ev in record.evidence:
        steps = []
        for step in ev.steps:
            file, line = bundle.locate(step.line) if step.line else (step.file, 0)
            steps.append(step.model_copy(update={
                "file": file, "line": line, "names": [bundle.readable(n) for n in step.names],
                "note": _readable_line(step.note, bundle, entry), "scope": bundle.readable(step.scope)}))
        evidence.append(ev.model_copy(update={"summary": _readable_line(ev.summary, bundle, entry), "steps": steps}))
    notes = [_readable_line(n, bundle, entry) for n in record.notes]
    return record.model_copy(update={"evidence": evidence, "notes": notes})


def _note(record: AuditRecord, note: str) -> AuditRecord:
    return record.model_copy(update={"notes": [*record.notes, note]})


def _merge(first: list[AuditRecord], others: Iterable[Sequence[AuditRecord]]) -> list[AuditRecord]:
    """Per rule: flagged when any is (their evidence together), else error when any is, else unanalysable
    when any is, else clear."""
    out = []
    extra = [r for rs in others for r in rs]
    for record in first:
        same = [r for r in extra if r.rule == record.rule]
        verdicts = [record.verdict, *(r.verdict for r in same)]
        verdict = next((v for v in ("flagged", "error", "unanalysable") if v in verdicts), "clear")
        evidence = [*record.evidence, *(e for r in same if r.verdict == verdict for e in r.evidence)]
        notes = list(dict.fromkeys([*record.notes, *(n for r in same for n in r.notes)]))
        out.append(record.model_copy(update={"verdict": verdict, "evidence": evidence[:MAX_TRACES], "notes": notes}))
    return out


def _with_content(record: AuditRecord, scan: ContentScan, files: Mapping[str, bytes]) -> AuditRecord:
    """The scan's findings on an evaluation rule's record: notes for every copy, and a flag with `content`
    evidence for copies inside the delivered code itself (the scorer gets those)."""
    if record.rule not in (eval_labels_in_fit.RULE, eval_features_in_fit.RULE):
        return record
    notes = [*record.notes, *scan.notes()]
    carried = [c for c in scan.copies if c.path in files
               and (c.labels if record.rule == eval_labels_in_fit.RULE else not c.labels)]
    if not carried:
        return record.model_copy(update={"notes": notes})
    evidence = [Evidence(kind="content", summary=f"{c.sentence()}, and the scorer gets it with the delivered code",
                         steps=[EvidenceStep(file=c.path, line=0, code="", note="evaluation rows found by content")])
                for c in carried]
    verdict = "flagged" if record.verdict != "flagged" else record.verdict
    return record.model_copy(update={"verdict": verdict, "evidence": [*evidence, *record.evidence][:MAX_TRACES],
                                     "notes": notes})


__all__ = ["RULES_BY_NAME", "audit_repo", "layout_with_copies"]
