"""Compliance audits of delivered train.py files: two static data-flow traces (`eval_labels_in_fit`,
`frame_statistics`), the dynamic batch check as evidence, versioned audit records with reviewer overrides.

    from compliance import audit_source, audit_paths, is_compliant

See docs/compliance.md for the rules, the evidence format and the known limits.
"""

from __future__ import annotations

from compliance.audit import audit_file, audit_paths, audit_source
from compliance.records import AuditRecord, BatchCheck, Evidence, EvidenceStep, Override, is_compliant
from compliance.traces import RULES

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
