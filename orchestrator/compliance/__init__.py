"""Compliance audits of delivered train.py files: two static data-flow traces (`eval_labels_in_fit`,
`frame_statistics`), the dynamic batch check as evidence, versioned audit records with reviewer overrides.

    from orchestrator.compliance import audit_source, audit_paths, is_compliant

See docs/compliance.md for the rules, the evidence format and the known limits.

The names are loaded on first use (PEP 562): the records and rules are read by every command that shows a
run, and must not pull the data-flow analysis (compliance.audit, seconds of imports) in with the package
(issue 23).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.compliance.audit import audit_file, audit_paths, audit_source
    from orchestrator.compliance.records import (
        AuditRecord,
        BatchCheck,
        Evidence,
        EvidenceStep,
        Override,
        is_compliant,
    )
    from orchestrator.compliance.traces import RULES

__all__ = [
    "RULES",
    "AuditRecord",
    "BatchCheck",
    "Evidence",
    "EvidenceStep",
    "Override",
    "audit_file",
    "audit_paths",
    "audit_source",
    "is_compliant",
]

_LAZY = {
    **dict.fromkeys(("audit_file", "audit_paths", "audit_source"), "orchestrator.compliance.audit"),
    **dict.fromkeys(("AuditRecord", "BatchCheck", "Evidence", "EvidenceStep", "Override", "is_compliant"),
                    "orchestrator.compliance.records"),
    "RULES": "orchestrator.compliance.traces",
}

__getattr__ = lazy_names(__name__, _LAZY)
