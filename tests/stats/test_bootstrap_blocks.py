"""The bootstrap drawn a block of rows at a time gives the dense matrix's figures to the last bit.

The blocked code must give, bit for bit, what one block holding the whole n_resamples x n count matrix
(the dense implementation before blocks came in) gives on the same machine, at the default block size and
at block sizes small enough to split every input into many blocks (down to the smallest, four rows).

`best_of_k_golden.json` holds `best_of_k_table` and `pooled_best_of_k` rows recorded with the dense
implementation on the machine that wrote it. Those are matched to 1e-12 relative, not to the bit: the
means and spreads go through OpenBLAS dot products whose kernel (and so the order of the sum) follows the
CPU, and an AMD EPYC with AVX-512 gave the same figures up to 121 ulp (under 1e-13 relative) away from
the recording machine's.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from orchestrator.stats import bootstrap
from orchestrator.stats.bootstrap import resample_count_blocks, resample_counts
from orchestrator.stats.keep_best import best_of_k_table
from orchestrator.stats.pooled_keep_best import pooled_best_of_k

GOLDEN = json.loads((Path(__file__).parent / "data" / "best_of_k_golden.json").read_text())


def _dense_counts(n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The implementation before blocks, kept verbatim as the reference."""
    idx = rng.integers(0, n, size=(n_resamples, n)) + (np.arange(n_resamples) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=n_resamples * n).reshape(n_resamples, n)


def _study(n: int, seed: int, bad: float = 0.2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # the recording script's inputs: rounded eval scores, so ties on the rank score occur
    rng = np.random.default_rng(seed)
    h = rng.normal(0.74, 0.01, size=n)
    e = np.round(h + rng.normal(0.0, 0.006, size=n), 3)
    return e, h, rng.random(n) >= bad


def _array(rows: list) -> np.ndarray:
    return np.array([dataclasses.astuple(r) if dataclasses.is_dataclass(r) else r for r in rows], dtype=np.float64)


def _same(got: list, want: list) -> None:
    got_arr, want_arr = _array(got), _array(want)
    # bit for bit, NaN equal to NaN
    assert got_arr.shape == want_arr.shape
    assert got_arr.tobytes() == want_arr.tobytes(), np.argwhere(~((got_arr == want_arr) | np.isnan(want_arr)))


def _recorded(got: list, want: list) -> None:
    """The figures recorded before blocks, to within a CPU's summation order (module docstring)."""
    np.testing.assert_allclose(_array(got), _array(want), rtol=1e-12, atol=0.0, equal_nan=True)


#: one block holds the whole count matrix of every study below: the dense implementation
_ONE_BLOCK = 10**12


@pytest.mark.parametrize(("n", "rows", "n_resamples"), [(7, 1, 10), (50, 3, 100), (1000, 7, 40), (5, 64, 33)])
def test_blocks_draw_the_dense_matrix(n: int, rows: int, n_resamples: int) -> None:
    rng_a, rng_b = np.random.default_rng(11), np.random.default_rng(11)
    dense = _dense_counts(n, n_resamples, rng_a)
    blocks = list(resample_count_blocks(n, n_resamples, rng_b, rows=rows))
    assert np.array_equal(np.concatenate([b for _, _, b in blocks]), dense)
    assert [(a, b) for a, b, _ in blocks][-1][1] == n_resamples
    assert all(b.shape[0] < 2 * rows + 4 for _, _, b in blocks)
    # the generator is left where the dense draw leaves it
    assert rng_a.integers(0, 2**62) == rng_b.integers(0, 2**62)
    assert np.array_equal(resample_counts(n, n_resamples, np.random.default_rng(11)), dense)


@pytest.mark.parametrize("cells", [None, 20_000, 3_000, 1])
@pytest.mark.parametrize("key", list(GOLDEN["table"]))
def test_best_of_k_table_matches_the_dense_figures(key: str, cells: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if cells is not None:
        monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", cells)
    n, seed, n_resamples = map(int, key.split("-"))
    rows = best_of_k_table(*_study(n, seed), n_resamples=n_resamples, seed=seed + 1)
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", _ONE_BLOCK)
    _same(rows, best_of_k_table(*_study(n, seed), n_resamples=n_resamples, seed=seed + 1))
    _recorded(rows, GOLDEN["table"][key])


@pytest.mark.parametrize("cells", [None, 20_000, 3_000, 1])
@pytest.mark.parametrize("key", list(GOLDEN["pooled"]))
def test_pooled_best_of_k_matches_the_dense_figures(key: str, cells: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if cells is not None:
        monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", cells)
    *sizes, seed, n_resamples = map(int, key.split("-"))
    groups = [_study(n, seed + i, bad) for i, (n, bad) in enumerate(zip(sizes, (0.3, 0.05, 0.5), strict=True))]
    rows = pooled_best_of_k(groups, n_resamples=n_resamples, seed=seed + 1)
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", _ONE_BLOCK)
    _same(rows, pooled_best_of_k(groups, n_resamples=n_resamples, seed=seed + 1))
    _recorded(rows, GOLDEN["pooled"][key])


def test_pooled_leaves_a_passed_generator_where_the_dense_draws_leave_it() -> None:
    groups = [_study(n, i) for i, n in enumerate((40, 25, 60))]
    rng, ref = np.random.default_rng(5), np.random.default_rng(5)
    pooled_best_of_k(groups, ks=(1, 3), n_resamples=50, seed=rng)
    for n in (40, 25, 60):
        _dense_counts(n, 50, ref)
    assert rng.integers(0, 2**62) == ref.integers(0, 2**62)


@pytest.mark.parametrize("which", ["table", "pooled"])
def test_no_resamples_by_attempts_matrix_is_held(which: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Peak memory follows the block, not n_resamples x n: 400 resamples of 5,000 attempts would be a
    2-million-cell count matrix (16 MB as int64, several float copies after); blocks of 40,000 cells
    keep the peak a few MB (numpy's buffers are traced by tracemalloc; in one block the same calls peak
    at 136 MB and 91 MB)."""
    import tracemalloc

    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", 40_000)
    e, h, c = _study(5_000, 9)
    pooled_best_of_k([_study(10, 0)], n_resamples=4, seed=0)  # imports (scipy's included) before tracing
    tracemalloc.start()
    try:
        if which == "table":
            best_of_k_table(e, h, c, n_resamples=400, seed=1)
        else:
            pooled_best_of_k([(e[:2500], h[:2500], c[:2500]), (e[2500:], h[2500:], c[2500:])], n_resamples=400, seed=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * 2**20, peak  # the dense count matrix alone is 16 MB
