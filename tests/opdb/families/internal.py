"""Ops the runtime inserts (no user builds them): _Feed and _Fetch (every Session.run), _Send and
_Recv (a graph split over two CPU devices), _FusedElementwise (chains of element-wise ops the fuse
pass compiles). Each entry runs a program that makes the runtime use the op, compared with
TensorFlow's result of the same program."""

from __future__ import annotations

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
