"""The fused update kernels (ApplyAdam, SparseApplyFtrl, ...): raw-op numerics, the private-buffer
protocol (readers never see an array change), duplicate indices, dtypes and errors."""

import threading

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.kernels import training_kernels
from sparseflow._src.kernels import training_update_fns as fns
from sparseflow._src.kernels.registry import KernelNode, get_kernel
from sparseflow._src.kernels.resources import VariableRef
from sparseflow._src.ops import training_ops
from tests.training import reference_updates as R


def _kernel(op_type, dtype=dtypes.float32, **attrs):
    attrs = {"T": dtype, "use_locking": False, **attrs}
    return get_kernel(op_type).factory(KernelNode("k", op_type, attrs, [], [], "/device:CPU:0"))


def _ref(name, value):
    ref = VariableRef(name)
    value = np.array(value, dtype=np.float32)
    value.flags.writeable = False
    ref.value = value
    return ref


def test_readers_never_see_a_stored_array_change():
    compute = _kernel("ApplyMomentum", use_nesterov=False)
    var, acc = _ref("w", [1.0, 2.0]), _ref("acc", [0.0, 0.0])
    held_var, held_acc = var.value, acc.value  # a reader holding both arrays
    for _ in range(4):
        compute(var, acc, np.float32(0.5), np.array([1.0, 1.0], np.float32), np.float32(0.5))
    assert held_var.tolist() == [1.0, 2.0] and held_acc.tolist() == [0.0, 0.0]
    assert var.value.tolist() == pytest.approx([1.0 - 0.5 * (1 + 1.5 + 1.75 + 1.875), 2.0 - 3.0625])
    assert not var.value.flags.writeable


def test_a_dense_update_writes_in_place_an_array_nobody_holds():
    compute = _kernel("ApplyMomentum", use_nesterov=False)
    var, acc = _ref("w", np.zeros(1000)), _ref("acc", np.zeros(1000))
    ids = {id(var.value), id(acc.value)}
    for _ in range(3):
        compute(var, acc, np.float32(1.0), np.ones(1000, np.float32), np.float32(0.5))
    assert {id(var.value), id(acc.value)} == ids  # no buffer: the arrays themselves were updated
    assert var.value[0] == -(1 + 1.5 + 1.75) and acc.value[0] == 1.75
    assert not var.value.flags.writeable and not acc.value.flags.writeable and not var.updating


def test_a_zero_dimensional_variable_is_updated_and_stays_a_scalar():
    compute = _kernel("ApplyMomentum", use_nesterov=False)
    var, acc = VariableRef("w"), VariableRef("acc")
    var.value, acc.value = np.array(1.0, np.float32), np.array(0.0, np.float32)  # 0-d arrays nobody else holds
    for _ in range(3):
        compute(var, acc, np.float32(0.5), np.array(1.0, np.float32), np.float32(0.5))
    assert np.ndim(var.value) == 0 and float(var.value) == 1.0 - 0.5 * (1 + 1.5 + 1.75) and not var.updating


def test_an_array_a_reader_views_is_never_written_in_place():
    compute = _kernel("ApplyGradientDescent")
    var = _ref("w", np.zeros(1000))
    for step in range(4):
        view = var.value[:1]  # a reader's view holds the array during the update
        compute(var, np.float32(1.0), np.ones(1000, np.float32))
        assert view[0] == -step and var.value[0] == -step - 1 and var.value.base is None
        del view
    compute(var, np.float32(1.0), np.ones(1000, np.float32))  # no reader now: in place again
    assert var.value[0] == -5.0 and not var.value.flags.writeable


def test_readers_never_see_a_half_written_in_place_update():
    compute = _kernel("ApplyGradientDescent")
    var = _ref("w", np.zeros(1 << 21))
    ones = np.ones(1 << 21, np.float32)
    stop, torn, reads = threading.Event(), [], [0]

    def reader():
        while not stop.is_set():
            v = var.read()
            if v[0] != v[-1]:  # an update in place runs from the first element to the last
                torn.append((float(v[0]), float(v[-1])))
            reads[0] += 1
            del v

    t = threading.Thread(target=reader)
    t.start()
    try:
        for _ in range(200):
            compute(var, np.float32(1.0), ones)
    finally:
        stop.set()
        t.join()
    assert not torn and reads[0] > 0
    assert var.value[0] == var.value[-1] == -200.0


def test_sparse_buffers_stay_exact_when_rows_change_between_updates():
    compute = _kernel("SparseApplyAdagrad", Tindices=dtypes.int32, update_slots=True)
    rng = np.random.RandomState(0)
    v0 = rng.randn(8, 2)
    var, acc = _ref("w", v0), _ref("acc", np.full((8, 2), 0.1))
    ref, slots = v0.copy(), {"accumulator": np.full((8, 2), 0.1)}
    for step in range(12):
        idx = rng.randint(0, 8, size=3)
        g = rng.randn(3, 2).astype(np.float32)
        compute(var, acc, np.float32(0.3), g, idx.astype(np.int32))
        ref = R.sparse_reference(lambda v, s, gg: R.adagrad(v, s, gg, 0.3), ref, slots, g.astype(np.float64), idx)
        if step == 5:  # someone else assigns the variable: the kernel must not trust its buffer
            new = np.array(var.value) + 1.0
            new.flags.writeable = False
            var.value = new
            ref = ref + 1.0
        np.testing.assert_allclose(var.value, ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(acc.value, slots["accumulator"], rtol=1e-5)


def test_concurrent_updates_are_serialized_by_the_variable_lock():
    compute = _kernel("SparseApplyMomentum", Tindices=dtypes.int64, use_nesterov=False)
    var, acc = _ref("w", np.zeros((4, 3))), _ref("acc", np.zeros((4, 3)))
    g = np.ones((2, 3), np.float32)

    def worker():
        for _ in range(50):
            compute(var, acc, np.float32(1.0), g, np.array([0, 2]), np.float32(0.0))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert var.value[[0, 2]].tolist() == [[-200.0] * 3] * 2 and var.value[[1, 3]].sum() == 0.0


def _run(update, variables, feed=None, steps=1):
    with tf.Session() as sess:
        sess.run(tf.variables_initializer(variables))
        for _ in range(steps):
            sess.run(update, feed)
        return [sess.run(v) for v in variables]


def test_raw_sparse_op_sums_duplicate_indices_first():
    var = tf.Variable(np.ones((4, 2), np.float32), name="var")
    accum = tf.Variable(np.full((4, 2), 0.5, np.float32), name="accum")
    up = training_ops.sparse_apply_adagrad(var, accum, 1.0, tf.constant([[1.0, 2.0], [3.0, 4.0], [1.0, 1.0]]),
                                           tf.constant([2, 2, 0], tf.int64))
    got_var, got_acc = _run(up, [var, accum])
    summed = np.array([[1.0, 1.0], [4.0, 6.0]])  # row 0, row 2 = [1,2] + [3,4]
    np.testing.assert_allclose(got_acc[[0, 2]], 0.5 + summed ** 2)
    np.testing.assert_allclose(got_var[[0, 2]], 1.0 - summed / np.sqrt(0.5 + summed ** 2), rtol=1e-6, atol=1e-7)
    assert got_var[[1, 3]].tolist() == [[1.0, 1.0]] * 2 and got_acc[[1, 3]].tolist() == [[0.5, 0.5]] * 2


@pytest.mark.parametrize("multiply_linear_by_lr", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_raw_ftrl_v2_with_shrinkage_and_multiply_linear_by_lr(multiply_linear_by_lr, sparse):
    rng = np.random.RandomState(2)
    v0, g = rng.randn(3, 2).astype(np.float32), rng.randn(3, 2).astype(np.float32)
    var, accum = tf.Variable(v0, name="var"), tf.Variable(np.full((3, 2), 0.3, np.float32), name="accum")
    linear = tf.Variable(rng.randn(3, 2).astype(np.float32), name="linear")
    hyper = dict(lr=0.4, l1=0.05, l2=0.1, l2_shrinkage=0.2, lr_power=-0.7, multiply_linear_by_lr=multiply_linear_by_lr)
    if sparse:
        up = training_ops.sparse_apply_ftrl_v2(var, accum, linear, g, [0, 1, 2], **hyper)
    else:
        up = training_ops.apply_ftrl_v2(var, accum, linear, g, **hyper)
    with tf.Session() as sess:
        sess.run(tf.variables_initializer([var, accum, linear]))
        slots = {"accum": np.full((3, 2), 0.3), "linear": sess.run(linear).astype(np.float64)}
        sess.run(up)
        got = sess.run([var, accum, linear])
    want = R.ftrl(v0.astype(np.float64), slots, g.astype(np.float64), 0.4, 0.05, 0.1, lr_power=-0.7, shrinkage=0.2,
                  multiply_linear_by_lr=multiply_linear_by_lr)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], slots["accum"], rtol=1e-6)
    np.testing.assert_allclose(got[2], slots["linear"], rtol=1e-5, atol=1e-6)


def test_raw_adam_with_nesterov_and_adagrad_without_slot_update():
    rng = np.random.RandomState(3)
    g = rng.randn(5).astype(np.float32)
    var, m, v = (tf.Variable(np.full(5, x, np.float32), name=n) for x, n in ((1.0, "var"), (0.1, "m"), (0.2, "v")))
    up = training_ops.apply_adam(var, m, v, 0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-7, g, use_nesterov=True)
    got = _run(up, [var, m, v])
    slots = {"m": np.full(5, 0.1), "v": np.full(5, 0.2)}
    want = R.adam(np.ones(5), slots, g.astype(np.float64), 0.01, 0.9, 0.999, 1e-7, t=3, nesterov=True)
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    np.testing.assert_allclose(got[1], slots["m"], rtol=1e-6)
    with tf.Graph().as_default():
        var, acc = tf.Variable([1.0, 1.0], name="var"), tf.Variable([4.0, 16.0], name="acc")
        got = _run(training_ops.apply_adagrad(var, acc, 1.0, [2.0, 2.0], update_slots=False), [var, acc])
        assert got[0].tolist() == [0.0, 0.5] and got[1].tolist() == [4.0, 16.0]


def test_half_precision_variables_update_in_float32():
    var = tf.Variable(np.array([1.0, 2.0], np.float16), name="var")
    mom = tf.Variable(np.zeros(2, np.float16), name="mom")
    up = training_ops.apply_momentum(var, mom, np.float16(0.5), np.array([1.0, -1.0], np.float16), np.float16(0.5))
    got = _run(up, [var, mom], steps=2)
    assert got[0].dtype == np.float16 and got[0].tolist() == [-0.25, 3.25] and got[1].tolist() == [1.5, -1.5]


def test_integer_variables_are_refused_with_a_clear_error():
    var = tf.Variable([1, 2], name="var")
    up = training_ops.apply_gradient_descent(var, 1, [1, 1])
    with tf.Session() as sess:
        sess.run(var.initializer)
        with pytest.raises(tf.errors.UnimplementedError, match="half, bfloat16, float and double"):
            sess.run(up)


def test_shape_functions():
    var = tf.Variable(np.zeros((4, 3), np.float32), name="var")
    acc = tf.Variable(np.zeros((4, 3), np.float32), name="acc")
    assert training_ops.apply_momentum(var, acc, 0.1, tf.zeros([4, 3]), 0.9).shape.as_list() == [4, 3]
    assert training_ops.sparse_apply_momentum(var, acc, 0.1, tf.zeros([2, 3]), [0, 1], 0.9).shape.as_list() == [4, 3]
    with pytest.raises(ValueError):
        training_ops.apply_momentum(var, acc, 0.1, tf.zeros([4, 2]), 0.9)
    with pytest.raises(ValueError, match="rank 0"):
        training_ops.apply_momentum(var, acc, [0.1, 0.2], tf.zeros([4, 3]), 0.9)
    with pytest.raises(ValueError):
        training_ops.sparse_apply_momentum(var, acc, 0.1, tf.zeros([2, 2]), [0, 1], 0.9)
    other = tf.Variable(np.zeros((2, 3), np.float32), name="other")
    with pytest.raises(ValueError):
        training_ops.apply_momentum(var, other, 0.1, tf.zeros([4, 3]), 0.9)
    up = training_ops.apply_rms_prop(var, acc, acc, 0.1, 0.9, 0.0, 1e-7, tf.zeros([4, 3]))
    assert [t.name.split(":")[0] for t in up.op.inputs][:3] == ["var", "acc", "acc"]


def test_run_time_errors_name_the_problem():
    var = tf.Variable(np.zeros((4, 2), np.float32), name="var")
    acc = tf.Variable(np.zeros((4, 2), np.float32), name="acc")
    values = tf.placeholder(tf.float32, [None, None])
    idx = tf.placeholder(tf.int32, [None])
    up = training_ops.sparse_apply_adagrad(var, acc, 0.1, values, idx)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            sess.run(up, {values: np.ones((1, 2)), idx: [0]})
        sess.run(tf.variables_initializer([var, acc]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Index 7 at offset 1 in indices is out of range"):
            sess.run(up, {values: np.ones((2, 2)), idx: [0, 7]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="match in dimension 1"):
            sess.run(up, {values: np.ones((1, 3)), idx: [0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="same size as indices"):
            sess.run(up, {values: np.ones((2, 2)), idx: [0]})
        sess.run(up, {values: np.zeros((0, 2)), idx: []})  # no rows: nothing to do
        assert sess.run(var).sum() == 0.0


# scalar inputs per optimizer (the _OPS order): beta powers, rates, decays, epsilons, l1/l2, lr_power
_SCALARS = {"GradientDescent": (0.1,), "ProximalGradientDescent": (0.1, 0.01, 0.02), "Momentum": (0.1, 0.9),
            "Adagrad": (0.1,), "Adam": (0.9, 0.999, 0.01, 0.9, 0.999, 1e-7), "Ftrl": (0.1, 0.01, 0.02, -0.5),
            "FtrlV2": (0.1, 0.01, 0.02, 0.03, -0.7), "RMSProp": (0.01, 0.9, 0.5, 1e-7),
            "CenteredRMSProp": (0.01, 0.9, 0.5, 1e-7), "Adadelta": (1.0, 0.95, 1e-6)}


@pytest.mark.parametrize("base", sorted(_SCALARS))
@pytest.mark.parametrize("flag", [False, True])  # use_nesterov, update_slots, multiply_linear_by_lr
def test_the_in_place_loop_of_each_dense_update_gives_the_same_bits(base, flag):
    refs, _, dense, _, hyper = training_kernels._OPS[base]
    rng = np.random.default_rng(len(base))
    n = 1000
    olds = [rng.standard_normal(n).astype(np.float32)] + [rng.random(n).astype(np.float32) + 0.1 for _ in refs]
    g = rng.standard_normal(n).astype(np.float32)
    attrs = {"use_nesterov": flag, "update_slots": flag, "multiply_linear_by_lr": flag}
    hp = hyper(np.float32, _SCALARS[base], attrs)
    outs = [np.empty_like(x) for x in olds]
    dense(*olds, g, *outs, *hp)
    run, before, after = training_kernels._dense_loop(dense, olds, olds)  # each output is its input
    assert run is fns.IN_PLACE[dense] and after == []
    run(*before, g, *after, *hp)
    for want, got in zip(outs, olds):
        np.testing.assert_array_equal(got, want)
    assert training_kernels._dense_loop(dense, olds, outs)[0] is dense  # apart: the two-array loop
