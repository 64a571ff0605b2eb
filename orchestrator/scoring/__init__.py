"""Scoring, out of reach: step A runs the delivered train.py in a fresh scorer container and asks it for
predictions batch by batch over a socket; step B, on the host, checks them and computes the metrics.
See docs/scoring.md.

The names are loaded on first use (PEP 562): the host-side modules here (scoring.text, scoring.artifact,
scoring.options) are read by commands that never start a scorer, and must not pull the Docker SDK in with
the package (issue 23).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.scoring.options import ScoreOptions
    from orchestrator.scoring.service import REASONS, ScoreResult, score_repo

__all__ = ["REASONS", "ScoreOptions", "ScoreResult", "score_repo"]

_LAZY = {"ScoreOptions": "orchestrator.scoring.options",
         **dict.fromkeys(("REASONS", "ScoreResult", "score_repo"), "orchestrator.scoring.service")}

__getattr__ = lazy_names(__name__, _LAZY)
