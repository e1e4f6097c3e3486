"""get_variable and variable_scope: naming, reuse (True, AUTO_REUSE, scope objects), errors,
default initializers, regularizers, custom getters, collections."""

import numpy as np
import pytest

import sparseflow as tf


def init_and_run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


def test_variable_names_follow_the_variable_scope_not_the_name_scope():
    with tf.name_scope("ops"):
        with tf.variable_scope("vs"):
            v = tf.get_variable("v", [2])
            t = tf.identity(v, name="ident")
        w = tf.get_variable("w", [1])
    assert (v.name, t.name, w.name) == ("vs/v:0", "ops/vs/ident:0", "w:0")
    assert v.initializer.name == "vs/v/Assign"


def test_reentering_a_scope_name_opens_a_unique_name_scope():
    with tf.variable_scope("layer") as scope:
        a = tf.identity(tf.get_variable("w", [2]), name="out")
    with tf.variable_scope("layer", reuse=True):
        b = tf.identity(tf.get_variable("w"), name="out")
    with tf.variable_scope(scope, reuse=True) as again:
        c = tf.identity(tf.get_variable("w"), name="out")
    assert (a.name, b.name, c.name) == ("layer/out:0", "layer_1/out:0", "layer_2/out:0")
    assert scope.name == "layer" and scope.original_name_scope == "layer/"
    assert again.name == "layer" and again.original_name_scope == "layer/"


def test_duplicate_and_missing_variables_raise_tensorflows_errors():
    with tf.variable_scope("x"):
        tf.get_variable("w", [1])
    with pytest.raises(ValueError) as err:
        with tf.variable_scope("x"):
            tf.get_variable("w", [1])
    msg = str(err.value)
    assert msg.startswith("Variable x/w already exists, disallowed. Did you mean to set reuse=True or "
                          "reuse=tf.AUTO_REUSE in VarScope? Originally defined at:")
    assert "test_variable_scope.py" in msg
    with pytest.raises(ValueError, match=r"^Variable x/never does not exist, or was not created with "
                                         r"tf.get_variable\(\). Did you mean to set reuse=tf.AUTO_REUSE in "
                                         r"VarScope\?$"):
        with tf.variable_scope("x", reuse=True):
            tf.get_variable("never", [1])


def test_sharing_checks_shape_and_dtype():
    with tf.variable_scope("s"):
        tf.get_variable("w", [2, 3])
    with tf.variable_scope("s", reuse=True):
        assert tf.get_variable("w", [2, None]).shape.as_list() == [2, 3]
        with pytest.raises(ValueError, match="Trying to share variable s/w, but specified shape"):
            tf.get_variable("w", [3, 2])
        with pytest.raises(ValueError, match="specified dtype int32 and found dtype float32_ref"):
            tf.get_variable("w", [2, 3], dtype=tf.int32)


def test_auto_reuse_creates_once_then_returns_the_same_variable():
    def build():
        with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
            return tf.get_variable("v", [3], initializer=tf.constant_initializer([1.5, -2.0, 0.25]))

    v1, v2 = build(), build()
    assert v1 is v2 and len(tf.global_variables()) == 1
    assert init_and_run(v1)[0].tolist() == [1.5, -2.0, 0.25]


def test_reuse_is_inherited_and_cannot_be_switched_off():
    with tf.variable_scope("outer"):
        with tf.variable_scope("inner"):
            v = tf.get_variable("v", [1])
    with tf.variable_scope("outer", reuse=True):
        with tf.variable_scope("inner", reuse=False) as inner:
            assert inner.reuse is True
            assert tf.get_variable("v") is v
    with tf.variable_scope("outer") as scope:
        scope.reuse_variables()
        with tf.variable_scope("inner"):
            assert tf.get_variable("v") is v
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="d", reuse=True):
            pass
    with pytest.raises(ValueError, match="The reuse parameter must be True or False or None"):
        tf.variable_scope("bad", reuse="yes")


def test_default_name_scopes_are_unique_and_counters_reset_on_reentry():
    with tf.variable_scope("foo") as vs:
        with tf.variable_scope(None, default_name="bar"):
            a = tf.get_variable("a", [1])
        with tf.variable_scope(None, default_name="bar"):
            b = tf.get_variable("b", [1])
    with tf.variable_scope(vs):
        with tf.variable_scope(None, default_name="bar"):
            c = tf.get_variable("c", [1])
    assert (a.name, b.name, c.name) == ("foo/bar/a:0", "foo/bar_1/b:0", "foo/bar/c:0")
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is required"):
        tf.variable_scope(None)


def test_default_initializers_by_dtype():
    w = tf.get_variable("w", [4, 6])
    n = tf.get_variable("n", [3], dtype=tf.int32)
    b = tf.get_variable("b", [2], dtype=tf.bool)
    assert w.initial_value.op.name == "w/Initializer/random_uniform"
    wv, nv, bv = init_and_run(w, n, b)
    assert np.abs(wv).max() <= np.sqrt(6.0 / 10) and wv.std() > 0.1
    assert nv.tolist() == [0, 0, 0] and nv.dtype == np.int32 and bv.tolist() == [False, False]
    with pytest.raises(ValueError, match="An initializer for variable c of <dtype: 'complex64'> is required"):
        tf.get_variable("c", [2], dtype=tf.complex64)


def test_value_tensor_and_class_initializers():
    from_np = tf.get_variable("from_np", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
    from_int = tf.get_variable("from_int", initializer=np.array([1, 2], dtype=np.int64))
    from_tensor = tf.get_variable("from_tensor", initializer=tf.fill([2], 5.0))
    from_class = tf.get_variable("from_class", [2], initializer=tf.ones_initializer)
    from_fn = tf.get_variable("from_fn", initializer=lambda: tf.constant([7.0, 8.0]))
    assert from_np.shape.as_list() == [2, 3] and from_int.dtype.base_dtype == tf.int64
    values = init_and_run(from_np, from_int, from_tensor, from_class, from_fn)
    assert [v.tolist() for v in values[1:]] == [[1, 2], [5.0, 5.0], [1.0, 1.0], [7.0, 8.0]]
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape."):
        tf.get_variable("bad", [2], initializer=np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="Initializer type '<dtype: 'float64'>' and explicit dtype"):
        tf.get_variable("bad2", dtype=tf.float32, initializer=np.zeros(2))
    with pytest.raises(ValueError, match="The initializer passed is not valid"):
        tf.get_variable("bad3", initializer=tf.glorot_uniform_initializer())


def test_scope_defaults_initializer_dtype_and_regularizer():
    reg = lambda v: tf.reduce_sum(v) * 0.5  # noqa: E731
    with tf.variable_scope("s", initializer=tf.constant_initializer(2.0), dtype=tf.float64, regularizer=reg):
        a = tf.get_variable("a", [3])
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer(), regularizer=tf.no_regularizer)
        with tf.variable_scope("inner"):
            c = tf.get_variable("c", [1])
    assert a.dtype.base_dtype == tf.float64 and c.dtype.base_dtype == tf.float64
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [t.op.name for t in losses] == ["s/a/Regularizer/mul", "s/inner/c/Regularizer/mul"]
    av, bv, cv, lv = init_and_run(a, b, c, losses)
    assert av.tolist() == [2.0] * 3 and bv.tolist() == [0.0, 0.0] and cv.tolist() == [2.0]
    assert lv == [3.0, 1.0]


def test_trainable_collections_and_local_variables():
    t = tf.get_variable("t", [1])
    frozen = tf.get_variable("frozen", [1], trainable=False)
    mine = tf.get_variable("mine", [1], collections=["mine", tf.GraphKeys.GLOBAL_VARIABLES])
    local = tf.get_local_variable("local", [2], initializer=tf.zeros_initializer())
    assert tf.trainable_variables() == [t, mine]
    assert tf.global_variables() == [t, frozen, mine]
    assert tf.local_variables() == [local] and tf.get_collection("mine") == [mine]
    with tf.variable_scope("sc") as sc:
        inner = tf.get_variable("v", [1])
    assert sc.global_variables() == [inner] and sc.trainable_variables() == [inner]


def test_custom_getters_compose_outer_to_inner():
    calls = []

    def outer(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name, *args, **kwargs)

    def inner(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        kwargs["trainable"] = False
        return getter(name, *args, **kwargs)

    with tf.variable_scope("a", custom_getter=outer):
        with tf.variable_scope("b", custom_getter=inner):
            v = tf.get_variable("v", [1])
    assert calls == [("inner", "a/b/v"), ("outer", "a/b/v")]
    assert v.name == "a/b/v:0" and v not in tf.trainable_variables()
    with pytest.raises(ValueError, match="Passed a custom_getter which is not callable"):
        tf.variable_scope("c", custom_getter=3)


def test_variable_creator_scope_sees_get_variable():
    seen = []

    def creator(next_creator, **kwargs):
        seen.append(kwargs["name"])
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        with tf.variable_scope("m"):
            tf.get_variable("k", [2])
    tf.get_variable("after", [1])
    assert seen == ["m/k"]


def test_scope_partitioner_applies_to_get_variable_but_not_to_scalars():
    with tf.variable_scope("s", partitioner=lambda shape, dtype: [2, 1]):
        p = tf.get_variable("p", [10, 2])
        scalar = tf.get_variable("scalar", [])
    assert isinstance(p, tf.PartitionedVariable)
    assert [v.op.name for v in p] == ["s/p/part_0", "s/p/part_1"]
    assert isinstance(scalar, tf.Variable)


def test_get_variable_scope_and_auxiliary_name_scope():
    assert tf.get_variable_scope().name == "" and tf.get_variable_scope().reuse is False
    with tf.variable_scope("top") as top:
        assert tf.get_variable_scope() is top
    with tf.name_scope("ns"):
        with tf.variable_scope(top, auxiliary_name_scope=False):
            v = tf.get_variable("v", [1])
            c = tf.constant(1.0, name="c")
    assert v.name == "top/v:0" and c.name == "ns/c:0"


def test_variable_scope_enters_the_graph_of_its_values():
    other = tf.Graph()
    with other.as_default():
        x = tf.constant(1.0)
    with tf.variable_scope("g", values=[x]):
        v = tf.get_variable("v", [1])
        assert tf.get_default_graph() is other
    assert v.graph is other and tf.get_default_graph() is not other
    assert tf.global_variables() == []


def test_shared_layer_computes_the_same_values():
    inp = tf.placeholder(tf.float32, [None, 5])

    def affine(scope, reuse=None):
        with tf.variable_scope(scope, reuse=reuse):
            w = tf.get_variable("kernel", [5, 3], initializer=tf.glorot_uniform_initializer())
            b = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
            return tf.nn.xw_plus_b(inp, w, b, name="out")

    a, b = affine("shared"), affine("shared", reuse=True)
    assert (a.name, b.name) == ("shared/out:0", "shared_1/out:0")
    x = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        va, vb = sess.run([a, b], {inp: x})
    np.testing.assert_array_equal(va, vb)
