"""The collective executor and ring algorithms with members in one process (in-process links):
values, dtypes, merge and final ops, sizes smaller than the ring and not divisible by it, many
pieces, all-gather with uneven dim 0, broadcast from every root, disagreeing members, group size
mismatch, and the deadline naming the member that does not take part."""

import threading

import numpy as np
import pytest

from sparseflow._src.framework import errors
from sparseflow._src.kernels.collective_executor import CollectiveExecutor, member_order


def dev(i):
    return f"/job:worker/replica:0/task:0/device:CPU:{i}"


def run_members(n, fn, timeout=60.0):
    """Runs fn(rank) in n threads; returns results (or raised errors) by rank."""
    out = [None] * n

    def body(r):
        try:
            out[r] = fn(r)
        except BaseException as e:  # noqa: BLE001 - returned to the test
            out[r] = e

    ts = [threading.Thread(target=body, args=(r,)) for r in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
        assert not t.is_alive(), "a member hung"
    return out


@pytest.fixture
def ex():
    e = CollectiveExecutor()
    e.piece_bytes = 64  # many pieces per segment: the pipeline is exercised
    yield e
    e.close()


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("size", [0, 1, 2, 5, 1001])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_all_reduce_sum_is_identical_on_every_member(ex, n, size, dtype):
    rng = np.random.default_rng(size)
    xs = [(rng.standard_normal(size) * 10).astype(dtype) for _ in range(n)]
    outs = run_members(n, lambda r: ex.all_reduce(xs[r], device=dev(r), group_size=n, group_key=n, instance_key=size))
    want = sum(x.astype(np.float64) for x in xs)
    for o in outs:
        assert o.dtype == np.dtype(dtype) and o.shape == (size,)
        np.testing.assert_allclose(o, want.astype(dtype), rtol=1e-5, atol=1e-4)
        assert o.tobytes() == outs[0].tobytes()  # bit-identical (each segment merged once)


def test_merge_and_final_ops(ex):
    xs = [np.array([[1.0, -2.0], [3.0, 5.0]]) * (r + 1) for r in range(3)]

    def run(r, merge, final, x=None):
        return ex.all_reduce(xs[r] if x is None else x[r], device=dev(r), group_size=3, group_key=1,
                             instance_key=hash((merge, final)) % 1000, merge_op=merge, final_op=final)

    assert np.array_equal(run_members(3, lambda r: run(r, "Add", "Div"))[1], xs[0] * 2)
    assert np.array_equal(run_members(3, lambda r: run(r, "Mul", "Id"))[0], xs[0] ** 3 * 6)
    assert np.array_equal(run_members(3, lambda r: run(r, "Max", "Id"))[2], np.array([[3.0, -2.0], [9.0, 15.0]]))
    assert np.array_equal(run_members(3, lambda r: run(r, "Min", "Id"))[2], np.array([[1.0, -6.0], [3.0, 5.0]]))
    ints = [np.array([5, -5], np.int32)] * 3
    got = run_members(3, lambda r: ex.all_reduce(ints[r], device=dev(r), group_size=3, group_key=1, instance_key=9,
                                                 final_op="Div"))
    assert got[0].dtype == np.int32 and got[0].tolist() == [5, -5]
    twos = [np.array([1, -1], np.int64) * (r + 1) for r in range(2)]  # 3 / 2 and -3 / 2 truncate toward zero
    got = run_members(2, lambda r: ex.all_reduce(twos[r], device=dev(r), group_size=2, group_key=2, instance_key=1,
                                                 final_op="Div"))
    assert got[1].tolist() == [1, -1]


def test_runs_of_one_instance_pair_up_in_order(ex):
    def member(r):
        return [ex.all_reduce(np.array([float(step + r)]), device=dev(r), group_size=2, group_key=3,
                              instance_key=1)[0] for step in range(5)]

    outs = run_members(2, member)
    assert outs[0] == outs[1] == [2.0 * s + 1 for s in range(5)]


def test_all_gather_uneven_rows_and_broadcast_from_every_root(ex):
    parts = [np.arange((r + 1) * 6, dtype=np.float32).reshape(r + 1, 2, 3) + 100 * r for r in range(3)]
    outs = run_members(3, lambda r: ex.all_gather(parts[r], device=dev(r), group_size=3, group_key=4, instance_key=1))
    for o in outs:
        assert np.array_equal(o, np.concatenate(parts))
    empty = [np.zeros((0, 2), np.int64), np.ones((1, 2), np.int64)]
    outs = run_members(2, lambda r: ex.all_gather(empty[r], device=dev(r), group_size=2, group_key=5, instance_key=1))
    assert outs[0].tolist() == [[1, 1]]
    for root in range(3):
        value = np.arange(50, dtype=np.float64).reshape(5, 10) * (root + 1)
        def member(r, root=root, value=value):
            return ex.broadcast(value if r == root else None, device=dev(r), group_size=3, group_key=4,
                                instance_key=2, root=r == root, shape=(5, 10), dtype=np.float64)

        outs = run_members(3, member)
        for o in outs:
            assert np.array_equal(o, value)


def test_members_that_disagree_get_an_error_naming_the_other(ex):
    outs = run_members(2, lambda r: ex.all_reduce(np.zeros(4 + r, np.float32), device=dev(r), group_size=2,
                                                  group_key=6, instance_key=1, timeout=20))
    assert all(isinstance(o, errors.OpError) for o in outs), outs
    invalid = [o for o in outs if isinstance(o, errors.InvalidArgumentError)]
    assert invalid and "called it with all-reduce of" in invalid[0].message
    assert "CPU:0" in invalid[0].message and "CPU:1" in invalid[0].message
    # the failure broke the group's generation: the members join again and go on
    outs = run_members(2, lambda r: ex.all_reduce(np.ones(3), device=dev(r), group_size=2, group_key=6,
                                                  instance_key=1))
    assert outs[0].tolist() == [2.0, 2.0, 2.0]


def test_group_size_must_agree(ex):
    outs = run_members(2, lambda r: ex.all_reduce(np.ones(2), device=dev(r), group_size=2 + r, group_key=7,
                                                  instance_key=1, timeout=5))
    assert any(isinstance(o, errors.InvalidArgumentError) and "group_size" in o.message for o in outs), outs


def test_a_member_that_does_not_come_is_named_at_the_deadline(ex):
    run_members(2, lambda r: ex.all_reduce(np.ones(2), device=dev(r), group_size=2, group_key=8, instance_key=1))
    with pytest.raises(errors.DeadlineExceededError, match="no data from .*CPU:1"):
        ex.all_reduce(np.ones(2), device=dev(0), group_size=2, group_key=8, instance_key=1, timeout=0.5)
    with pytest.raises(errors.DeadlineExceededError, match="1 of its 2 members.*joined: .*CPU:0"):
        ex.all_reduce(np.ones(2), device=dev(0), group_size=2, group_key=11, instance_key=1, timeout=0.5)


def test_cancellation_ends_a_wait():
    ex = CollectiveExecutor()
    stop = threading.Event()

    def check():
        if stop.is_set():
            raise errors.CancelledError(None, None, "Step was cancelled.")

    threading.Timer(0.2, stop.set).start()
    with pytest.raises(errors.CancelledError):
        ex.all_reduce(np.ones(2), device=dev(0), group_size=2, group_key=1, instance_key=1, check=check)
    ex.close()


def test_rank_order_compares_numbers_as_numbers():
    devices = ["/job:worker/replica:0/task:10/device:CPU:0", "/job:worker/replica:0/task:2/device:CPU:1",
               "/job:worker/replica:0/task:2/device:CPU:0", "/job:chief/replica:0/task:0/device:CPU:0"]
    assert sorted(devices, key=member_order) == [devices[3], devices[2], devices[1], devices[0]]
