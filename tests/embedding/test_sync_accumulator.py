"""The accumulator of synchronous table training (kernels/embedding_sync.py) and a task's shards'
accumulate / apply / set-step (kernels/embedding_service.py), without a graph: averages over the
pushes, summed counters, staleness, waits that end on cancellation and deadlines."""

import threading

import numpy as np
import pytest

from sparseflow._src.framework import errors
from sparseflow._src.framework.proto.embedding_table_pb2 import EmbeddingTableConfig
from sparseflow._src.kernels.embedding_service import AccumulateItem, ApplyItem, PullItem, SyncStepItem, TableShards
from sparseflow._src.kernels.embedding_sync import accumulator_of, apply_accumulated
from sparseflow._src.kernels.embedding_table import EmbeddingTableResource, TableSpec
from sparseflow._src.runtime.devices import DeviceMgr


def _table(optimizer="sgd", params=()):
    t = EmbeddingTableResource("t", TableSpec(dim=2, optimizer=optimizer, optimizer_params=params,
                                              initializer="constant", initializer_params=(0.0,)))
    t.pull(np.array([1, 2, 3], np.uint64))
    return t


class _Ctx:
    def __init__(self, deadline_in=None):
        self.cancelled = threading.Event()
        self._deadline_in = deadline_in

    def remaining(self):
        return self._deadline_in


def _row(t, k):
    return t.pull(np.array([k], np.uint64), training=False)[0].tolist()


def test_the_average_is_over_the_pushes_and_counters_add_up():
    t = _table()
    acc = accumulator_of(t)
    assert accumulator_of(t) is acc
    acc.accumulate(0, np.array([1, 2], np.uint64), [[2.0, 2.0], [4.0, 4.0]], counts=[1.0, 3.0], clicks=[1.0, 0.0])
    acc.accumulate(0, np.array([2, 3], np.int64), [[6.0, 6.0], [8.0, 8.0]])  # no counters: 1 show, 0 clicks each
    acc.accumulate(0, np.array([1], np.uint64), [[1.0, 1.0]], counts=[2.0])
    assert apply_accumulated(t, None, 3, learning_rate=1.0) == (3, 0)
    assert [_row(t, k)[0] for k in (1, 2, 3)] == pytest.approx([-1.0, -10.0 / 3, -8.0 / 3])
    e = t.export()
    assert e["show"].tolist() == [3.0, 4.0, 1.0] and e["click"].tolist() == [1.0, 0.0, 0.0] and e["step"] == 1
    assert (acc.global_step, acc.num_accumulated, acc.stale) == (1, 0, 0)


def test_stale_pushes_are_dropped_counted_and_reported_in_the_stats():
    t = _table()
    acc = accumulator_of(t)
    acc.set_global_step(4)
    assert not acc.accumulate(3, np.array([1], np.uint64), [[9.0, 9.0]])
    assert acc.accumulate(5, np.array([1], np.uint64), [[1.0, 1.0]])  # a later step is not stale
    assert (acc.num_accumulated, t.stats()["stale_pushes"]) == (1, 1)


def test_bad_pushes_are_refused_naming_the_table():
    acc = accumulator_of(_table())
    with pytest.raises(errors.InvalidArgumentError, match=r"table 't': gradients of shape \[1, 3\] for 1 keys of "
                                                          r"dim 2"):
        acc.accumulate(0, np.array([1], np.uint64), np.ones((1, 3)))
    with pytest.raises(errors.InvalidArgumentError, match=r"table 't': 2 counts for 1 keys"):
        acc.accumulate(0, np.array([1], np.uint64), np.ones((1, 2)), counts=[1.0, 2.0])
    with pytest.raises(errors.InvalidArgumentError, match="num_required must be positive, got 0"):
        acc.take(None, 0)
    assert acc.num_accumulated == 0


@pytest.mark.parametrize("how", ["cancelled", "deadline"])
def test_a_waiting_apply_ends_on_cancellation_and_on_the_deadline(how):
    t = _table()
    acc = accumulator_of(t)
    acc.accumulate(0, np.array([1], np.uint64), [[1.0, 1.0]])
    ctx = _Ctx(deadline_in=0.0 if how == "deadline" else None)
    out = []
    waiter = threading.Thread(target=lambda: out.append(_error_of(lambda: apply_accumulated(t, ctx, 2, 1.0))))
    waiter.start()
    if how == "cancelled":
        while acc.waiting == 0 and waiter.is_alive():
            waiter.join(0.01)
        ctx.cancelled.set()
    waiter.join(30)
    assert not waiter.is_alive()
    want = errors.CancelledError if how == "cancelled" else errors.DeadlineExceededError
    assert isinstance(out[0], want) and "waiting for 2 pushes to embedding table 't' (it has 1" in out[0].message
    assert (acc.waiting, acc.num_accumulated, acc.global_step, _row(t, 1)) == (0, 1, 0, [0.0, 0.0])


def _error_of(fn):
    try:
        fn()
    except errors.OpError as e:
        return e
    return None


def _config(name="s"):
    return EmbeddingTableConfig(name=name, dim=2, optimizer="adagrad", optimizer_params=[0.1, 0.0],
                                initializer="constant", initializer_params=[0.5], min_count=1, show_decay=1.0,
                                num_shards=1, evict_max_age=-1,
                                shard_devices=["/job:ps/replica:0/task:0/device:CPU:0"]).SerializeToString()


def test_a_tasks_shards_accumulate_one_push_per_request_and_apply_once():
    shards = TableShards(DeviceMgr.local(1, job="ps", task=0))
    cfg = _config()
    shards.set_sync_step([SyncStepItem(cfg, 0, 7)])  # creates the shard
    keys = np.array([1, 2], np.uint64)
    shards.pull([PullItem(cfg, 0, keys)])
    # two items of one shard in one request: one worker's push (keys concatenated), counted once
    assert shards.accumulate([AccumulateItem(cfg, 0, keys[:1], np.ones((1, 2), np.float32), local_step=7),
                              AccumulateItem(cfg, 0, keys, np.ones((2, 2), np.float32),
                                             np.array([2.0, 2.0], np.float32), local_step=7)]) == [True, True]
    assert shards.accumulate([AccumulateItem(cfg, 0, keys[:1], np.ones((1, 2), np.float32), local_step=6)]) == [False]
    shard = shards.shard(cfg, 0, create=False)
    assert accumulator_of(shard).num_accumulated == 1
    assert shards.apply_accumulated([ApplyItem(cfg, 0, 1, 0.5)]) == [(1, 0)]
    g = np.array([2.0, 1.0])  # key 1 twice in the push, key 2 once; adagrad: a = 0.1 + g^2
    np.testing.assert_allclose(shards.pull([PullItem(cfg, 0, keys, training=False)])[0][:, 0],
                               0.5 - 0.5 * g / np.sqrt(0.1 + g * g), rtol=1e-5)
    assert shard.export()["show"].tolist() == [3.0, 2.0]  # 1 (no counts given) + 2, and 2
    assert (accumulator_of(shard).global_step, shard.stats()["stale_pushes"]) == (8, 1)
