"""Scoring, out of reach: step A runs the delivered train.py in a fresh scorer container and asks it for
predictions batch by batch over a socket; step B, on the host, checks them and computes the metrics.
See docs/scoring.md."""

from orchestrator.scoring.options import ScoreOptions
from orchestrator.scoring.service import REASONS, ScoreResult, score_repo

__all__ = ["REASONS", "ScoreOptions", "ScoreResult", "score_repo"]
