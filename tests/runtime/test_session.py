"""Session.run: fetch structures, feeds, errors, callables, caching, devices, executors."""

import collections
import types

import numpy as np
import pytest

import sparseflow as tf


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    scale = tf.placeholder_with_default(tf.constant(1.0), [], name="scale")
    y = tf.multiply(x, scale, name="y")
    total = tf.reduce_sum(y, name="total")
    return x, scale, y, total


DATA = np.array([[1, 2, 3], [4, 5, 6]], np.float32)


def test_nested_fetch_structures():
    x, _, y, total = _model()
    Pair = collections.namedtuple("Pair", ["a", "b"])
    with tf.Session() as sess:
        out = sess.run({"p": Pair(total, [y, (total,)]), "t": total}, {x: DATA})
    assert isinstance(out["p"], Pair)
    assert out["p"].a == pytest.approx(21.0)
    assert isinstance(out["p"].b, list) and isinstance(out["p"].b[1], tuple)
    np.testing.assert_array_equal(out["p"].b[0], DATA)
    assert out["t"] == pytest.approx(21.0)


def test_empty_fetch_structures_run_nothing_and_come_back_empty():
    x, _, _, _ = _model()
    with tf.Session() as sess:  # as TensorFlow: tf.gradients of a NotDifferentiable op gives [None] -> fetch []
        assert sess.run([]) == [] and sess.run([[]], {x: DATA}) == [[]] and sess.run({}) == {}
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key"):
            sess.run([], {"nope:0": 1.0})


def test_fetch_by_name_and_op_targets():
    x, _, y, total = _model()
    with tf.Session() as sess:
        got = sess.run(["total:0", total.op], {"x:0": DATA})
    assert got[0] == pytest.approx(21.0)
    assert got[1] is None


def test_scalar_fetch_is_numpy_scalar():
    with tf.Session() as sess:
        v = sess.run(tf.constant(2.5))
    assert isinstance(v, np.float32) and v == 2.5


def test_feed_placeholder_with_default_and_intermediate():
    x, scale, y, total = _model()
    with tf.Session() as sess:
        assert sess.run(total, {x: DATA, scale: 2.0}) == pytest.approx(42.0)
        assert sess.run(total, {y: np.ones([4, 3], np.float32)}) == pytest.approx(12.0)
        # A tensor both fed and fetched gives the fed value.
        np.testing.assert_array_equal(sess.run(y, {y: DATA}), DATA)


def test_unneeded_placeholder_need_not_be_fed():
    x = tf.placeholder(tf.float32, name="unused")
    c = tf.constant(3.0) * 2.0
    with tf.Session() as sess:
        assert sess.run(c) == 6.0
    del x


def test_missing_feed_names_placeholder_and_user_line():
    x, _, _, total = _model()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as ei:
            sess.run(total)
    msg = str(ei.value)
    assert "placeholder tensor 'x'" in msg
    assert "type Placeholder" in msg and "device /job:localhost" in msg
    assert "test_session.py" in msg


def test_wrong_feed_shape_is_value_error():
    x, _, _, total = _model()
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 4\)"):
            sess.run(total, {x: np.zeros([2, 4], np.float32)})
        with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
            sess.run(total, {x: tf.constant(DATA)})


def test_unknown_fetch_and_bad_fetch_type():
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="nope:0"):
            sess.run("nope:0")
        with pytest.raises(TypeError):
            sess.run(3)


def test_make_callable_and_plan_cache():
    x, scale, y, total = _model()
    with tf.Session() as sess:
        f = sess.make_callable([total, y], feed_list=[x, scale])
        t, yy = f(DATA, 0.5)
        assert t == pytest.approx(10.5)
        np.testing.assert_allclose(yy, DATA * 0.5)
        sess.run(total, {x: DATA})
        n = len(sess._cache)
        sess.run(total, {x: DATA * 2})
        assert len(sess._cache) == n


def test_closed_session_refuses_to_run():
    sess = tf.Session()
    c = tf.constant(1.0)
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(c)


def test_eval_and_run_with_default_session():
    c = tf.constant([1.0, 2.0]) * 3.0
    with tf.Session() as sess:
        np.testing.assert_allclose(c.eval(), [3.0, 6.0])
        tf.no_op().run()
        assert tf.get_default_session() is sess
    with pytest.raises(ValueError, match="No default session"):
        c.eval()


def test_interactive_session_is_default():
    c = tf.constant(4.0)
    s = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is s
        assert c.eval() == 4.0
    finally:
        s.close()
    assert tf.get_default_session() is not s


def test_thread_pool_executor_gives_same_results():
    x, _, y, total = _model()
    many = [tf.reduce_sum(y * float(i)) for i in range(20)]
    cfg = types.SimpleNamespace(device_count={"CPU": 1}, inter_op_parallelism_threads=2)
    with tf.Session(config=cfg) as sess:
        got = sess.run(many, {x: DATA})
    assert got == pytest.approx([21.0 * i for i in range(20)])


def test_explain_shows_passes_and_partitions():
    x, _, _, total = _model()
    with tf.Session() as sess:
        text = sess.explain(total, {x: DATA})
    assert text.startswith("# passes: prune")
    assert "# partition /job:localhost/replica:0/task:0/device:CPU:0" in text
    assert "%total = Sum" in text


def test_sessions_do_not_share_variables_state():
    v = tf.Variable(1.0, name="v")
    inc = tf.assign_add(v, 1.0)
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(v.initializer)
        s2.run(v.initializer)
        s1.run(inc)
        assert s1.run(v) == 2.0 and s2.run(v) == 1.0
