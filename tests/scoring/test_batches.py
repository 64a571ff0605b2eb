import numpy as np
import pytest

from orchestrator.scoring.batches import (
    EVAL,
    FRESH,
    MAIN,
    REPLAY,
    SINGLE,
    SMALL,
    TRAIN_SIZE_SCORED,
    TRAIN_SIZE_TRAIN,
    compare,
    compare_contexts,
    fresh_plan,
    plan_batches,
)


def _of(plan, role):
    return [b.rows for b in plan.batches if b.role == role]


@pytest.mark.parametrize(("n", "batch_rows", "check_rows"), [(3000, 1000, 512), (10, 1000, 512), (1, 1, 5), (997, 64, 0)])
def test_every_row_once_in_main_batches_and_the_sample_once_in_small_contexts(n, batch_rows, check_rows) -> None:
    plan = plan_batches(n, batch_rows=batch_rows, check_rows=check_rows, seed=3, large_contexts=False)
    main = _of(plan, MAIN)
    assert sorted(np.concatenate(main).tolist()) == list(range(n))
    assert all(len(b) <= batch_rows for b in main)
    assert len(plan.check_rows) == min(check_rows, n)
    check = _of(plan, SINGLE) + _of(plan, SMALL)
    assert sorted(np.concatenate(check).tolist() if check else []) == plan.check_rows.tolist()


def test_eval_rows_and_the_two_contexts_at_the_training_frames_size() -> None:
    plan = plan_batches(3000, batch_rows=1000, check_rows=512, seed=3, n_eval=2000, n_train=4000)
    layout = plan.layout
    assert sorted(np.concatenate(_of(plan, EVAL)).tolist()) == layout.eval_ids.tolist()
    (scored,), (train,) = _of(plan, TRAIN_SIZE_SCORED), _of(plan, TRAIN_SIZE_TRAIN)
    # fewer scored rows than training rows: the scored context is every scored row
    assert sorted(scored.tolist()) == list(range(3000))
    assert len(train) == 4000 and set(plan.check_rows) <= set(train.tolist())
    others = np.setdiff1d(train, plan.check_rows)
    assert ((others >= layout.n + layout.n_eval) & (others < layout.n + layout.n_eval + layout.n_train)).all()
    # the large contexts come last: every check row was seen before in a main, single or small batch
    assert [b.role for b in plan.batches[-2:]] == [TRAIN_SIZE_SCORED, TRAIN_SIZE_TRAIN]
    big = plan_batches(50_000, batch_rows=1000, check_rows=512, seed=3, n_train=20_000)
    (scored,) = _of(big, TRAIN_SIZE_SCORED)
    assert len(scored) == 20_000 and set(big.check_rows) <= set(scored.tolist()) and scored.max() < 50_000


def test_plan_is_seeded_and_check_batches_are_interleaved() -> None:
    a = plan_batches(5000, batch_rows=500, check_rows=512, seed=1)
    b = plan_batches(5000, batch_rows=500, check_rows=512, seed=1)
    c = plan_batches(5000, batch_rows=500, check_rows=512, seed=2)
    assert all(np.array_equal(x.rows, y.rows) for x, y in zip(a.batches, b.batches, strict=True))
    assert not all(np.array_equal(x.rows, y.rows) for x, y in zip(a.batches, c.batches, strict=False))
    roles = [x.role for x in a.batches]
    first_main, last_main = roles.index(MAIN), len(roles) - 1 - roles[::-1].index(MAIN)
    assert any(r in (SINGLE, SMALL) for r in roles[first_main:last_main]), "check batches fall between main ones"
    assert len(_of(a, SINGLE)) == 64


def test_the_fresh_plan_replays_the_first_batch_then_shows_the_check_rows_in_a_new_context() -> None:
    plan = plan_batches(30_000, batch_rows=1000, check_rows=512, seed=4, n_eval=0, n_train=20_000)
    fresh = fresh_plan(plan, seed=4)
    assert [b.role for b in fresh.batches] == [REPLAY, FRESH]
    assert np.array_equal(fresh.batches[0].rows, plan.batches[0].rows)
    context = fresh.batches[1].rows
    assert len(context) == 20_000 and set(plan.check_rows) <= set(context.tolist())
    assert not np.array_equal(context, _of(plan, TRAIN_SIZE_SCORED)[0])


def test_compare_counts_changed_rows_beyond_tolerance() -> None:
    main = np.array([0.1, 0.2, 0.3, 0.4])
    rows = np.array([0, 2, 3])
    check = compare(main, rows, np.array([0.1, 0.3 + 5e-7, 0.45]), tolerance=1e-6)
    assert (check.rows_checked, check.rows_changed) == (3, 1)
    assert check.max_abs_change == pytest.approx(0.05)
    assert check.batch_dependent
    assert not compare(main, rows, main[rows]).batch_dependent
    assert compare(main, np.array([], dtype=int), np.array([])).rows_checked == 0


def test_a_row_changed_in_any_context_counts_once() -> None:
    main = np.array([0.1, 0.2, 0.3, 0.4])
    rows = np.array([0, 2, 3])
    overall, per, changed = compare_contexts(main, rows, {
        SINGLE: {0: 0.1, 2: 0.3},
        TRAIN_SIZE_SCORED: {0: 0.15, 2: 0.3, 3: 0.4},
        TRAIN_SIZE_TRAIN: {0: 0.12, 2: 0.3, 3: 0.41},
    })
    assert (overall.rows_checked, overall.rows_changed, changed) == (3, 2, {0, 3})
    assert overall.max_abs_change == pytest.approx(0.05)
    assert (per[SINGLE].rows_checked, per[SINGLE].rows_changed) == (2, 0)
    assert per[TRAIN_SIZE_SCORED].rows_changed == 1 and per[TRAIN_SIZE_TRAIN].rows_changed == 2
