"""Queue-based input pipelines: producers (epochs, shuffling), batching (padding, smaller final batch,
dicts, joins, shuffling), the end of input as OutOfRangeError, and what is refused."""

import numpy as np
import pytest

import sparseflow as tf


def _drain(fetch):
    """Every value of ``fetch`` until the input ends, run in a MonitoredSession (which starts the runners)."""
    out = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            out.append(sess.run(fetch))
    return out


def test_slice_input_producer_and_batch_in_order_for_a_number_of_epochs():
    x, y = tf.train.slice_input_producer([[1, 2, 3, 4, 5], [10, 20, 30, 40, 50]], num_epochs=2, shuffle=False)
    xb, yb = tf.train.batch([x, y], batch_size=4, allow_smaller_final_batch=True)
    assert xb.shape.as_list() == [None] and xb.op.type == "QueueDequeueUpToV2" and xb.op.name == "batch"
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 2
    batches = _drain([xb, yb])
    assert [b[0].tolist() for b in batches] == [[1, 2, 3, 4], [5, 1, 2, 3], [4, 5]]
    assert all((b[1] == 10 * b[0]).all() for b in batches)


def test_full_batches_only_drop_the_remainder():
    (x,) = tf.train.slice_input_producer([np.arange(7)], num_epochs=1, shuffle=False)
    xb = tf.train.batch([x], batch_size=3)
    assert xb.shape.as_list() == [3]
    assert [b.tolist() for b in _drain(xb)] == [[0, 1, 2], [3, 4, 5]]


def test_shuffled_epochs_are_permutations():
    i = tf.train.range_input_producer(6, num_epochs=3, shuffle=True, seed=4).dequeue()
    seen = [int(v) for v in _drain(i)]
    assert len(seen) == 18
    assert all(sorted(seen[k:k + 6]) == list(range(6)) for k in (0, 6, 12))
    assert seen[:6] != list(range(6)) or seen[6:12] != list(range(6))


def test_limit_epochs_and_string_input_producer():
    t = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=2)
    assert t.op.name == "limit_epochs"
    assert [v.tolist() for v in _drain(t)] == [[1, 2], [1, 2]]
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(tf.constant(1), num_epochs=0)
    with pytest.raises(ValueError, match="requires a non-null input tensor"):
        tf.train.string_input_producer([])
    with tf.Graph().as_default():  # a monitored session's default init ops cover the variables it saw
        names = tf.train.string_input_producer(["a", "b"], num_epochs=1, shuffle=False)
        assert [v for v in _drain(names.dequeue())] == [b"a", b"b"]


def test_dynamic_pad_and_dict_inputs():
    q = tf.FIFOQueue(5, tf.string, shapes=[[]])
    line = q.dequeue()
    seq = tf.string_to_number(tf.string_split([line]).values, out_type=tf.int32)
    out = tf.train.batch({"seq": seq, "len": tf.shape(seq)[0]}, batch_size=2, dynamic_pad=True)
    assert set(out) == {"seq", "len"} and out["seq"].shape.as_list() == [2, None]
    fill = q.enqueue_many([["1 2 3", "4", "5 6"]])
    with tf.Session() as sess:
        sess.run(fill)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = sess.run(out)
        coord.request_stop()
        sess.run(q.close(cancel_pending_enqueues=True))
        coord.join(threads)
    assert got["seq"].tolist() == [[1, 2, 3], [4, 0, 0]] and got["len"].tolist() == [3, 1]
    with pytest.raises(ValueError, match="fully defined"):
        tf.train.batch([seq], batch_size=2)


def test_shuffle_batch_mixes_but_keeps_every_example():
    i = tf.train.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
    ib, sq = tf.train.shuffle_batch([i, i * i], batch_size=6, capacity=10, min_after_dequeue=4, seed=1,
                                    allow_smaller_final_batch=True)
    batches = _drain([ib, sq])
    values = [v for b in batches for v in b[0].tolist()]
    assert sorted(values) == list(range(20)) and values != list(range(20))
    assert all((b[1] == b[0] ** 2).all() for b in batches)
    with pytest.raises(ValueError, match="capacity 4 must be bigger than min_after_dequeue 4"):
        tf.train.shuffle_batch([i], batch_size=2, capacity=4, min_after_dequeue=4)


def test_batch_join_and_shuffle_batch_join_read_every_source():
    a = tf.train.limit_epochs(tf.constant([1, 2, 3]), num_epochs=1)
    b = tf.train.limit_epochs(tf.constant([10, 20]), num_epochs=1)
    joined = tf.train.batch_join([[a], [b]], batch_size=2, enqueue_many=True, allow_smaller_final_batch=True)
    assert sorted(v for batch in _drain(joined) for v in batch.tolist()) == [1, 2, 3, 10, 20]
    with tf.Graph().as_default():
        c = tf.train.limit_epochs(tf.constant([4, 5]), num_epochs=2)
        d = tf.train.limit_epochs(tf.constant([6]), num_epochs=2)
        mixed = tf.train.shuffle_batch_join([[c], [d]], batch_size=3, capacity=8, min_after_dequeue=2,
                                            enqueue_many=True, allow_smaller_final_batch=True)
        assert sorted(v for batch in _drain(mixed) for v in batch.tolist()) == [4, 4, 5, 5, 6, 6]
        with pytest.raises(TypeError, match="Expected types to be consistent"):
            tf.train.batch_join([[c], [tf.constant([1.0])]], batch_size=1, enqueue_many=True)


def test_what_is_not_supported_says_so():
    st = tf.SparseTensor([[0, 0]], [1.0], [1, 1])
    with pytest.raises(NotImplementedError, match="SparseTensor inputs are not supported"):
        tf.train.batch([st], batch_size=1)
