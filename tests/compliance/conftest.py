"""Fixtures shared by the compliance tests."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from orchestrator.compliance.audit import audit_source


def _flagged(source: str) -> set[str]:
    records = audit_source(textwrap.dedent(source), "snippet.py")
    errors = [r for r in records if r.verdict == "error"]
    assert not errors, errors
    return {r.rule for r in records if r.verdict == "flagged"}


@pytest.fixture
def flagged() -> Callable[[str], set[str]]:
    """The rules a snippet breaks (the snippet is dedented first, so tests can indent it)."""
    return _flagged
