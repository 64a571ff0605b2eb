import numpy as np
import pytest

from orchestrator.scoring.batches import compare, plan_batches


@pytest.mark.parametrize(("n", "batch_rows", "check_rows"), [(3000, 1000, 512), (10, 1000, 512), (1, 1, 5), (997, 64, 0)])
def test_every_row_once_in_main_batches_and_the_sample_once_in_check_batches(n, batch_rows, check_rows) -> None:
    plan = plan_batches(n, batch_rows=batch_rows, check_rows=check_rows, seed=3)
    main = [b for b, c in zip(plan.batches, plan.is_check, strict=True) if not c]
    check = [b for b, c in zip(plan.batches, plan.is_check, strict=True) if c]
    assert sorted(np.concatenate(main).tolist()) == list(range(n))
    assert all(len(b) <= batch_rows for b in main)
    assert len(plan.check_rows) == min(check_rows, n)
    assert sorted(np.concatenate(check).tolist() if check else []) == plan.check_rows.tolist()


def test_plan_is_seeded_and_check_batches_are_interleaved() -> None:
    a = plan_batches(5000, batch_rows=500, check_rows=512, seed=1)
    b = plan_batches(5000, batch_rows=500, check_rows=512, seed=1)
    c = plan_batches(5000, batch_rows=500, check_rows=512, seed=2)
    assert all(np.array_equal(x, y) for x, y in zip(a.batches, b.batches, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a.batches, c.batches, strict=False))
    first_main = a.is_check.index(False)
    last_main = len(a.is_check) - 1 - a.is_check[::-1].index(False)
    assert any(a.is_check[first_main:last_main]), "check batches should fall between main batches"
    singles = [b for b, chk in zip(a.batches, a.is_check, strict=True) if chk and len(b) == 1]
    assert len(singles) == 64


def test_compare_counts_changed_rows_beyond_tolerance() -> None:
    main = np.array([0.1, 0.2, 0.3, 0.4])
    rows = np.array([0, 2, 3])
    check = compare(main, rows, np.array([0.1, 0.3 + 5e-7, 0.45]), tolerance=1e-6)
    assert (check.rows_checked, check.rows_changed) == (3, 1)
    assert check.max_abs_change == pytest.approx(0.05)
    assert check.batch_dependent
    assert not compare(main, rows, main[rows]).batch_dependent
    assert compare(main, np.array([], dtype=int), np.array([])).rows_checked == 0
