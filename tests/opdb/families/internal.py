"""Ops the runtime inserts (no user builds them): _Feed and _Fetch (every Session.run), _Send and
_Recv (a graph split over two CPU devices), _FusedElementwise (chains of element-wise ops the fuse
pass compiles), _FusedMatMul and _FusedReluGradBiasAddGrad (a dense layer and its gradient, the
remap pass), _SlicedMatMul (a slice of a product, as a concat's gradient ends; the remap pass),
_GroupedApply (one optimizer step of several variables, the group_updates pass).
Each entry runs a program that makes the runtime use the op (``test_opdb.py`` checks that the
optimized graph has it), compared with TensorFlow's result of the same program."""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, empty, regular

_F = ("float32", "float64")


def _feed_fetch(tf, x):
    return tf.identity(x)


def _two_devices(tf, x):
    with tf.device("/cpu:0"):
        a = x * 2.0
    with tf.device("/cpu:1"):
        b = tf.reduce_sum(a, axis=-1) + 1.0
    with tf.device("/cpu:0"):
        return [b, a + 0.5]


def _chain(tf, x, y):
    return tf.tanh(x * 2.0 + y) * tf.exp(-tf.abs(y)) - tf.square(x)


_SAMPLES = [
    Sample("matrix", {"x": regular(3, 4)}, fd=True),
    Sample("rank0", {"x": regular()}),
    Sample("empty", {"x": empty(0, 3)}),
]
ENTRIES = [
    OpEntry(op, _SAMPLES, build=_feed_fetch, dtypes=_F, runtime_op=True) for op in ("_Feed", "_Fetch")
]
ENTRIES += [
    OpEntry(op, [
        Sample("matrix", {"x": regular(3, 4)}, fd=True),
        Sample("vector", {"x": regular(5)}, fd=True),
        Sample("empty", {"x": empty(0, 3)}),
    ], build=_two_devices, dtypes=_F, runtime_op=True, cpu_devices=2) for op in ("_Send", "_Recv")
]
ENTRIES.append(OpEntry("_FusedElementwise", [
    Sample("matrix", {"x": regular(64, 8), "y": regular(64, 8, seed=1)}, fd=True),
    Sample("broadcast", {"x": regular(32, 1), "y": regular(1, 16, seed=1)}, fd=True),
    Sample("rank0", {"x": regular(), "y": regular(seed=1)}),
    Sample("empty", {"x": empty(0, 8), "y": empty(0, 8)}),
], build=_chain, dtypes=_F, runtime_op=True, rtol={"float32": 1e-5}))


def _dense_layer(tf, x, w, b, add="bias_add", relu=True, transpose_b=False):
    """``relu(x @ w + b)``: the remap pass makes it one _FusedMatMul and its gradient one
    _FusedReluGradBiasAddGrad (with ``tf.nn.bias_add``)."""
    m = tf.matmul(x, w, transpose_b=transpose_b)
    y = tf.nn.bias_add(m, b) if add == "bias_add" else m + b
    return tf.nn.relu(y) if relu else y


_DENSE = [
    Sample("relu", {"x": regular(4, 3), "w": regular(3, 2, seed=1), "b": regular(2, seed=2)}, fd=True),
    Sample("no_relu", {"x": regular(4, 3), "w": regular(3, 2, seed=1), "b": regular(2, seed=2)}, {"relu": False},
           fd=True),
    Sample("add_operator", {"x": regular(4, 3), "w": regular(3, 2, seed=1), "b": regular(2, seed=2)},
           {"add": "add"}, fd=True),
    Sample("transpose_b", {"x": regular(4, 3), "w": regular(2, 3, seed=1), "b": regular(2, seed=2)},
           {"transpose_b": True}, fd=True),
    Sample("empty_batch", {"x": empty(0, 3), "w": regular(3, 2, seed=1), "b": regular(2, seed=2)}),
    Sample("empty_inner", {"x": empty(4, 0), "w": empty(0, 2), "b": regular(2, seed=2)}),
    Sample("bias_mismatch", {"x": regular(4, 3), "w": regular(3, 2, seed=1), "b": regular(3, seed=2)}),
]
ENTRIES += [OpEntry(op, _DENSE, build=_dense_layer, dtypes=_F, runtime_op=True)
            for op in ("_FusedMatMul", "_FusedReluGradBiasAddGrad")]


def _sliced_product(tf, x, w, begin=(1, 0), size=(-1, 2), transpose_b=False, concat=False):
    """``slice(x @ w)``, or ``concat([x, tanh(x)], 1) @ w`` (whose gradient slices ``g @ w^T``): the
    remap pass computes only the slice's part of the product (_SlicedMatMul)."""
    if concat:
        return tf.matmul(tf.concat([x, tf.tanh(x)], 1), w, transpose_b=transpose_b)
    return tf.slice(tf.matmul(x, w, transpose_b=transpose_b), list(begin), list(size))


ENTRIES.append(OpEntry("_SlicedMatMul", [
    Sample("rows_and_columns", {"x": regular(4, 3), "w": regular(3, 3, seed=1)}, fd=True),
    Sample("transpose_b", {"x": regular(4, 3), "w": regular(3, 3, seed=1)}, {"begin": (0, 1), "size": (3, -1),
                                                                            "transpose_b": True}, fd=True),
    Sample("concat_gradient", {"x": regular(4, 3), "w": regular(6, 2, seed=1)}, {"concat": True}, fd=True),
    Sample("concat_gradient_transpose_b", {"x": regular(4, 3), "w": regular(2, 6, seed=1)},
           {"concat": True, "transpose_b": True}, fd=True),
    Sample("empty_slice", {"x": regular(4, 3), "w": regular(3, 3, seed=1)}, {"begin": (4, 0), "size": (0, -1)}),
    Sample("out_of_range", {"x": regular(4, 3), "w": regular(3, 3, seed=1)}, {"begin": (0, 2), "size": (-1, 2)}),
], build=_sliced_product, dtypes=_F, runtime_op=True))


def _train_step(tf, x, y, optimizer):
    """One step of a two-layer regression; the updates of its four variables share their scalars,
    so the group_updates pass makes them one _GroupedApply. Returns the loss and the variables after
    the step."""
    d = x.dtype.base_dtype
    init = [np.linspace(-1.0, 1.0, n).reshape(shape) for n, shape in ((6, (3, 2)), (2, (2,)), (2, (2, 1)), (1, (1,)))]
    w1, b1, w2, b2 = (tf.Variable(tf.constant(v, dtype=d)) for v in init)
    pred = tf.matmul(tf.tanh(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.square(pred - y))
    opt = {"sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
           "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
           "adam": lambda: tf.train.AdamOptimizer(0.01),
           "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
           "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5)}[optimizer]()
    train = opt.minimize(loss)
    with tf.control_dependencies([train]):
        return [tf.identity(loss)] + [tf.identity(v) for v in (w1, b1, w2, b2)]


ENTRIES.append(OpEntry("_GroupedApply", [
    Sample(f"{opt}_{what}", {"x": x, "y": y}, {"optimizer": opt}, grad=False)
    for opt in ("sgd", "momentum", "adam", "adagrad", "rmsprop")
    for what, x, y in (("batch", regular(5, 3), regular(5, 1, seed=1)), ("empty_batch", empty(0, 3), empty(0, 1)))
], build=_train_step, dtypes=_F, runtime_op=True, stateful=True))
