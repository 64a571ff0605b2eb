"""Input checks shared by the statistics modules: arrays in, clear ValueErrors out."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Seed = int | np.random.Generator


def rng_from(seed: Seed) -> np.random.Generator:
    """Which generator do we draw from? An int seeds a fresh PCG64; a Generator is used as is."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int or a numpy Generator, got {seed!r}")  # noqa: TRY004
    return np.random.default_rng(int(seed))


def float_array(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """One-dimensional float array; NaN marks a missing result. Infinite values are rejected."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values")
    return arr


def bool_array(values: ArrayLike, name: str) -> NDArray[np.bool_]:
    """One-dimensional boolean array (0/1 or True/False; no missing values)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return arr
    try:
        as_float = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold booleans or 0/1") from None
    if not np.isin(as_float, (0.0, 1.0)).all():
        raise ValueError(f"{name} must hold booleans or 0/1 only (missing values are not allowed here)")
    return as_float.astype(bool)


def int_array(values: ArrayLike, name: str, *, minimum: int = 0) -> NDArray[np.int64]:
    """One-dimensional integer array with every entry at least `minimum`."""
    arr = np.atleast_1d(np.asarray(values))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        as_float = arr.astype(np.float64)
        if not np.all(np.isfinite(as_float)) or not np.all(as_float == np.round(as_float)):
            raise ValueError(f"{name} must hold whole numbers")
        arr = as_float
    out = arr.astype(np.int64)
    if out.size and out.min() < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {out.min()}")
    return out


def same_length(**arrays: np.ndarray) -> int:
    """The common length of the named arrays, or a ValueError naming the lengths."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            "arrays must have the same length: " + ", ".join(f"{k}={v}" for k, v in lengths.items())
        )
    return next(iter(lengths.values()), 0)


def check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(confidence)


def check_resamples(n_resamples: int, minimum: int = 1) -> int:
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, (int, np.integer))
        or n_resamples < minimum
    ):
        raise ValueError(f"n_resamples must be an int >= {minimum}, got {n_resamples!r}")
    return int(n_resamples)


def percentile_interval(draws: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """Percentile interval of bootstrap draws (NaN draws already removed by the caller)."""
    alpha = 1.0 - confidence
    if draws.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)
