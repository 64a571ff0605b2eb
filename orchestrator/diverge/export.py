"""A divergence analysis as plain JSON values: for `sbx diverge --json` and the ledger's stored analyses.

Dataclasses become objects (with their public properties: a table's McNemar p, a pair's `identical`),
enums their values, sets sorted lists, pydantic models their JSON dump, and
numbers that are not finite (an undefined statistic) become null, so the document is strict JSON.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from enum import Enum
from typing import Any

from pydantic import BaseModel

from orchestrator.diverge.analysis import DivergenceAnalysis


def plain(value: Any) -> Any:
    """`value` as JSON-ready plain values (see the module docstring)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Enum):
        return plain(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, BaseModel):  # its canonical form where it has one (definitions: sorted sets)
        canonical = getattr(value, "canonical", None)
        return plain(canonical() if callable(canonical) else value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name, attribute in vars(type(value)).items():  # derived numbers (a McNemar p, a rate) too
            if isinstance(attribute, property) and not name.startswith("_"):
                try:
                    out[name] = plain(getattr(value, name))
                except (ArithmeticError, ValueError):
                    out[name] = None
        return out
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v) for v in value), key=str)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):  # a numpy scalar or array
        return plain(value.tolist())
    raise TypeError(f"cannot turn a {type(value).__name__} into JSON")


def analysis_json(analysis: DivergenceAnalysis) -> dict[str, Any]:
    """The whole analysis as one JSON object, in the order the report shows it."""
    out = plain(analysis)
    assert isinstance(out, dict)
    return out
