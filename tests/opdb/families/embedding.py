"""sparseflow's own sparse parameter-server ops (no TensorFlow equivalent): checked against NumPy
references of what they must do, in every input mode.

A program creates a table (constant initializer, plain SGD), pulls keys, pushes gradients and
exports the table; keys are int64 (any bit pattern: negative keys are large uint64 keys) or
uint64 up to 2**64 - 1, with empty batches and mismatched gradients.
"""

from __future__ import annotations

import itertools

import numpy as np

from tests.opdb.spec import OpEntry, Sample, i32, i64

_NOT_TF = "sparseflow's own embedding-table op (the sparse parameter server); TensorFlow has no equivalent"
_TABLE_IDS = itertools.count()
_DIM, _INIT, _LR = 2, 0.5, 0.25


def _table(tf, **attrs):
    return tf.raw_ops.EmbeddingHashTable(shared_name=f"opdb_table_{next(_TABLE_IDS)}", dim=_DIM, optimizer="sgd",
                                         optimizer_params=[], initializer="constant", initializer_params=[_INIT],
                                         **attrs)


def _after(tf, dep, fn):
    with tf.control_dependencies([dep.op if hasattr(dep, "op") else dep]):
        return fn()


def _program(tf, keys, grads, training=True):
    h = _table(tf)
    pulled = tf.raw_ops.EmbeddingTablePull(table_handle=h, keys=keys, counts=tf.zeros([0], tf.int32), dim=_DIM,
                                           training=training)
    push = _after(tf, pulled, lambda: tf.raw_ops.EmbeddingTablePush(
        table_handle=h, keys=keys, grads=grads, counts=tf.zeros([0]), clicks=tf.zeros([0]),
        learning_rate=tf.constant(_LR)))
    exported = _after(tf, push, lambda: tf.raw_ops.EmbeddingTableExport(table_handle=h, dim=_DIM, state_width=0))
    stats = _after(tf, push, lambda: tf.raw_ops.EmbeddingTableStats(table_handle=h))
    evicted = _after(tf, exported.keys, lambda: tf.raw_ops.EmbeddingTableEvict(
        table_handle=h, max_age=tf.constant(-1, tf.int64), min_show=tf.constant(0.0)))
    return [pulled, exported.keys, exported.values, stats, evicted]


def _check_program(inputs, attrs, outs):
    keys = np.asarray(inputs["keys"]).astype(np.uint64)
    grads = np.asarray(inputs["grads"], np.float64)
    valid = grads.shape == (keys.size, _DIM)
    if outs is None:
        return "" if not valid else "raised on valid input"
    if not valid:
        return f"returned values for gradients of shape {list(grads.shape)} for {keys.size} keys"
    pulled, ekeys, evalues, stats, evicted = outs
    training = attrs.get("training", True)  # without training, unseen keys read zeros and get no row
    if not np.allclose(pulled, np.full((keys.size, _DIM), _INIT if training else 0.0)):
        return f"pulled rows {pulled.tolist()}, want {_INIT if training else 0.0} (training={training})"
    stored = keys if training else keys[:0]
    order = np.argsort(stored, kind="stable")
    if ekeys.tolist() != stored[order].tolist():
        return f"exported keys {ekeys.tolist()}, want the pulled keys sorted {stored[order].tolist()}"
    want = _INIT - _LR * grads[order] if stored.size else np.zeros((0, _DIM))
    if not np.allclose(evalues, want, atol=1e-6):
        return f"exported rows {evalues.tolist()}, want initializer - lr * grads {want.tolist()}"
    if int(stats[0]) != stored.size or int(evicted) != 0:
        return f"stats say {int(stats[0])} keys and {int(evicted)} evicted; want {stored.size} and 0"
    return ""


def _import_program(tf, keys, values):
    h = _table(tf)
    n = tf.size(keys)
    imported = tf.raw_ops.EmbeddingTableImport(
        table_handle=h, keys=keys, values=values, state=tf.zeros([n, 0]), show=tf.zeros([n]), click=tf.zeros([n]),
        seen=tf.zeros([n], tf.int64), step=tf.zeros([], tf.int64), optimizer="sgd")
    exported = _after(tf, imported, lambda: tf.raw_ops.EmbeddingTableExport(table_handle=h, dim=_DIM, state_width=0))
    return [exported.keys, exported.values]


def _check_import(inputs, attrs, outs):
    keys, values = np.asarray(inputs["keys"]), np.asarray(inputs["values"])
    if outs is None:
        return "" if values.shape != (keys.size, _DIM) else "raised on valid input"
    order = np.argsort(keys, kind="stable")
    if outs[0].tolist() != keys[order].tolist() or not np.allclose(outs[1], values[order]):
        return f"export after import gave {outs[0].tolist()}, {outs[1].tolist()}"
    return ""


def _check_unique(inputs, attrs, outs):
    keys = np.asarray(inputs["keys"]).reshape(-1)
    if outs is None:
        return "" if np.ndim(inputs["keys"]) != 1 else "raised on a vector"
    want_u = list(dict.fromkeys(keys.tolist()))  # first-appearance order
    want_idx = [want_u.index(k) for k in keys.tolist()]
    want_counts = [keys.tolist().count(u) for u in want_u]
    if outs[0].tolist() != want_u or outs[1].tolist() != want_idx or outs[2].tolist() != want_counts:
        return f"unique keys {outs[0].tolist()}, idx {outs[1].tolist()}, counts {outs[2].tolist()}"
    return ""


def _check_parts(inputs, attrs, outs):
    if outs is None:
        return "raised"
    parts = outs[0]
    if parts.shape != np.shape(inputs["keys"]) or ((parts < 0) | (parts >= attrs["num_parts"])).any():
        return f"parts {parts.tolist()} out of [0, {attrs['num_parts']})"
    return ""


_KEYS = [
    Sample("int64_keys", {"keys": i64([3, -1, 7]), "grads": np.arange(6, dtype=np.float32).reshape(3, 2)},
           check=_check_program),
    Sample("uint64_extremes", {"keys": np.array([0, 2**64 - 1], np.uint64), "grads": np.ones((2, 2), np.float32)},
           check=_check_program),
    Sample("empty_batch", {"keys": i64([]), "grads": np.zeros((0, 2), np.float32)}, check=_check_program),
    Sample("not_training", {"keys": i64([5]), "grads": np.ones((1, 2), np.float32)}, {"training": False},
           check=_check_program),
    Sample("grads_mismatch", {"keys": i64([1, 2]), "grads": np.ones((3, 2), np.float32)}, check=_check_program),
]
ENTRIES = [OpEntry(op, _KEYS, build=_program, dtypes=(None,), tf=_NOT_TF, stateful=True)
           for op in ("EmbeddingHashTable", "EmbeddingTablePull", "EmbeddingTablePush", "EmbeddingTableExport",
                      "EmbeddingTableStats", "EmbeddingTableEvict")]
ENTRIES += [
    OpEntry("EmbeddingTableImport", [
        Sample("rows", {"keys": np.array([9, 4], np.uint64), "values": np.array([[1, 2], [3, 4]], np.float32)},
               check=_check_import),
        Sample("empty", {"keys": np.zeros(0, np.uint64), "values": np.zeros((0, 2), np.float32)},
               check=_check_import),
        Sample("values_mismatch", {"keys": np.array([1], np.uint64), "values": np.ones((1, 3), np.float32)},
               check=_check_import),
    ], build=_import_program, dtypes=(None,), tf=_NOT_TF, stateful=True),
    OpEntry("EmbeddingUniqueKeys", [
        Sample("repeats", {"keys": np.array([5, 3, 5, 9, 3], np.int64)}, check=_check_unique),
        Sample("uint64", {"keys": np.array([2**64 - 1, 0, 2**64 - 1], np.uint64)}, check=_check_unique),
        Sample("int32", {"keys": i32([7, 7])}, check=_check_unique),
        Sample("empty", {"keys": i64([])}, check=_check_unique),
        Sample("matrix", {"keys": i64([[1, 2]])}, check=_check_unique),
    ], dtypes=(None,), tf=_NOT_TF),
    OpEntry("EmbeddingPartIndex", [
        Sample("keys", {"keys": i64([0, -1, 12345, 2**40])}, {"num_parts": 3}, check=_check_parts),
        Sample("one_part", {"keys": np.array([7], np.uint64)}, {"num_parts": 1}, check=_check_parts),
        Sample("empty", {"keys": i64([])}, {"num_parts": 4}, check=_check_parts),
    ], dtypes=(None,), tf=_NOT_TF),
]
