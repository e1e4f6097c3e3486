"""sparseflow's embedding-table ops of tables sharded over tasks (EmbeddingCluster*), of synchronous
training (EmbeddingTableAccumulate / ApplyAccumulated / SetSyncStep and their cluster forms) and
of checkpoint restore (EmbeddingTableRestore, into one part or two). TensorFlow has no equivalent: each program is
checked against a NumPy reference of what it must do, in every input mode.

Tables "sharded over tasks" here live on this very process's task
(``/job:localhost/replica:0/task:0``, one or two CPU devices): the cluster kernels then serve the
shards in-process, through the same routing (keys split by owning shard) as over gRPC.
"""

from __future__ import annotations

import itertools

import numpy as np

from tests.opdb.spec import OpEntry, Sample, i64

_NOT_TF = "sparseflow's own embedding-table op (the sparse parameter server); TensorFlow has no equivalent"
_IDS = itertools.count()
_DIM, _INIT, _LR = 2, 0.5, 0.25
_STALE = 9  # index of stale_pushes in EmbeddingTableStats (embedding_ops.STATS_FIELDS)
_GLOBAL_STEP, _STEPS = 3, (3, 4, 2)  # the part's sync step; local steps of the pushes (the last is stale)


def _after(tf, deps, fn):
    with tf.control_dependencies([d.op if hasattr(d, "op") else d for d in deps]):
        return fn()


def _local_table(tf):
    name = f"opdb_sync_table_{next(_IDS)}"
    return tf.raw_ops.EmbeddingHashTable(shared_name=name, dim=_DIM, optimizer="sgd", optimizer_params=[],
                                         initializer="constant", initializer_params=[_INIT])


def _pushes(keys, grads, keys2, grads2):
    """The pushes of one synchronous step: (local step, keys, grads); the last one is stale."""
    return list(zip(_STEPS, (keys, keys2, keys), (grads, grads2, grads)))


# ---------------------------------------------------------------- synchronous training, one process
def _sync_program(tf, keys, grads, keys2, grads2):
    """Rows made by pulls; sync step 3; pushes at local steps 3, 4 and 2 (stale, dropped); the
    chief's apply of 2 pushes; the rows and stats after it."""
    h = _local_table(tf)
    empty_i, empty_f = tf.zeros([0], tf.int32), tf.zeros([0])
    pulled = tf.raw_ops.EmbeddingTablePull(table_handle=h, keys=keys, counts=empty_i, dim=_DIM)
    pulled2 = _after(tf, [pulled], lambda: tf.raw_ops.EmbeddingTablePull(table_handle=h, keys=keys2,
                                                                         counts=empty_i, dim=_DIM))
    last = _after(tf, [pulled2], lambda: tf.raw_ops.EmbeddingTableSetSyncStep(
        table_handle=h, global_step=tf.constant(_GLOBAL_STEP, tf.int64)))
    for step, k, g in _pushes(keys, grads, keys2, grads2):
        last = _after(tf, [last], lambda step=step, k=k, g=g: tf.raw_ops.EmbeddingTableAccumulate(
            table_handle=h, local_step=tf.constant(step, tf.int64), keys=k, grads=g, counts=empty_f,
            clicks=empty_f))
    applied = _after(tf, [last], lambda: tf.raw_ops.EmbeddingTableApplyAccumulated(
        table_handle=h, num_required=tf.constant(2), learning_rate=tf.constant(_LR)))
    exported = _after(tf, [applied], lambda: tf.raw_ops.EmbeddingTableExport(table_handle=h, dim=_DIM,
                                                                             state_width=0))
    stats = _after(tf, [applied], lambda: tf.raw_ops.EmbeddingTableStats(table_handle=h))
    return [exported.keys, exported.values, stats]


def _valid(inputs):
    return all(np.shape(inputs[g]) == (np.size(inputs[k]), _DIM) for k, g in (("keys", "grads"), ("keys2", "grads2")))


def _want_rows(inputs):
    """{key: row} after the synchronous step: the initializer minus lr times the mean of the two
    fresh pushes (a key missing from one push gets zeros from it)."""
    rows = {}
    for k, g in (("keys", "grads"), ("keys2", "grads2")):
        for key, grad in zip(np.asarray(inputs[k]).astype(np.uint64).tolist(), np.asarray(inputs[g], np.float64)):
            rows[key] = rows.get(key, np.zeros(_DIM)) + grad
    return {key: _INIT - _LR * total / 2 for key, total in rows.items()}


def _check_sync(inputs, attrs, outs):
    if outs is None:
        return "" if not _valid(inputs) else "raised on valid input"
    if not _valid(inputs):
        return "accepted gradients whose shape is not [keys, dim]"
    keys, values, stats = outs
    want = _want_rows(inputs)
    if keys.tolist() != sorted(want):
        return f"rows of keys {keys.tolist()}, want {sorted(want)}"
    got = dict(zip(keys.tolist(), values))
    bad = [k for k in want if not np.allclose(got[k], want[k], atol=1e-6)]
    if bad:
        return f"rows after the step {[got[k].tolist() for k in bad]}, want {[want[k].tolist() for k in bad]}"
    if int(stats[_STALE]) != 1:
        return f"{int(stats[_STALE])} stale pushes counted, want 1 (local step 2 < sync step 3)"
    return ""


def _sync_samples():
    f = np.float32
    return [
        Sample("int64_keys", {"keys": i64([3, -1, 7]), "grads": np.arange(6, dtype=f).reshape(3, 2),
                              "keys2": i64([7, 11]), "grads2": np.full((2, 2), 4.0, f)}, check=_check_sync),
        Sample("uint64_extremes", {"keys": np.array([0, 2**64 - 1], np.uint64), "grads": np.ones((2, 2), f),
                                   "keys2": np.array([2**64 - 1], np.uint64), "grads2": np.ones((1, 2), f)},
               check=_check_sync),
        Sample("empty_batches", {"keys": i64([]), "grads": np.zeros((0, 2), f), "keys2": i64([]),
                                 "grads2": np.zeros((0, 2), f)}, check=_check_sync),
        Sample("grads_mismatch", {"keys": i64([1, 2]), "grads": np.ones((3, 2), f), "keys2": i64([1]),
                                  "grads2": np.ones((1, 2), f)}, check=_check_sync),
    ]


ENTRIES = [OpEntry(op, _sync_samples(), build=_sync_program, dtypes=(None,), tf=_NOT_TF, stateful=True)
           for op in ("EmbeddingTableAccumulate", "EmbeddingTableApplyAccumulated", "EmbeddingTableSetSyncStep")]


# ---------------------------------------------------------------- tables sharded over tasks
def _cluster_table(shards):
    from sparseflow import embedding as E  # sparseflow's own API (these entries never run with TensorFlow)

    devices = [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(shards)]
    return E.EmbeddingTable(f"opdb_cluster_{next(_IDS)}", _DIM, optimizer=E.SGD(_LR), initializer=_INIT,
                            devices=devices)


def _cluster_program(tf, keys, grads, keys2, grads2, shards=1):
    """EmbeddingClusterPull of ``keys``, EmbeddingClusterPush of ``grads``, and a pull of ``keys``
    again: the rows before and after the push."""
    t = _cluster_table(shards)
    before = t.pull(keys)
    push = _after(tf, [before], lambda: t.push(keys, grads, learning_rate=_LR))
    after = _after(tf, [push], lambda: t.pull(keys))
    return [before, after]


def _check_cluster(inputs, attrs, outs):
    keys, grads = np.asarray(inputs["keys"]), np.asarray(inputs["grads"], np.float64)
    valid = grads.shape == (keys.size, _DIM)
    if outs is None:
        return "" if not valid else "raised on valid input"
    if not valid:
        return "accepted gradients whose shape is not [keys, dim]"
    before, after = outs
    if not np.allclose(before, np.full((keys.size, _DIM), _INIT)):
        return f"rows before the push {before.tolist()}, want the initializer {_INIT}"
    if not np.allclose(after, _INIT - _LR * grads, atol=1e-6):
        return f"rows after the push {after.tolist()}, want {(_INIT - _LR * grads).tolist()}"
    return ""


def _cluster_sync_program(tf, keys, grads, keys2, grads2, shards=1):
    """The synchronous step of ``_sync_program`` through the cluster ops, read back by a pull."""
    from sparseflow._src.embedding import sync_ops as S

    t = _cluster_table(shards)
    empty_f = tf.zeros([0])
    pulled = t.pull(keys)
    pulled2 = _after(tf, [pulled], lambda: t.pull(keys2))
    last = _after(tf, [pulled2], lambda: S.cluster_set_sync_step([t.config], [tf.constant(_GLOBAL_STEP, tf.int64)]))
    for step, k, g in _pushes(keys, grads, keys2, grads2):
        last = _after(tf, [last], lambda step=step, k=k, g=g: S.cluster_accumulate(
            [t.config], [k], [g], [empty_f], [empty_f], [tf.constant(step, tf.int64)]))
    applied = _after(tf, [last], lambda: S.cluster_apply_accumulated([t.config], [tf.constant(2)],
                                                                     [tf.constant(_LR)]))
    return [_after(tf, [applied], lambda: t.pull(tf.concat([keys, keys2], 0), training=False))]


def _check_cluster_sync(inputs, attrs, outs):
    if outs is None:
        return "" if not _valid(inputs) else "raised on valid input"
    if not _valid(inputs):
        return "accepted gradients whose shape is not [keys, dim]"
    want = _want_rows(inputs)
    union = np.concatenate([np.asarray(inputs["keys"]), np.asarray(inputs["keys2"])]).astype(np.uint64).tolist()
    expected = np.array([want[k] for k in union]).reshape(-1, _DIM)
    if not np.allclose(outs[0], expected, atol=1e-6):
        return f"rows after the synchronous step {outs[0].tolist()}, want {expected.tolist()}"
    return ""


def _cluster_samples(check):
    out = []
    for s in _sync_samples():
        s.check = check
        out.append(s)
        if s.name == "int64_keys":
            out.append(Sample("two_shards", dict(s.args), {"shards": 2}, check=check))
    return out


ENTRIES += [OpEntry(op, _cluster_samples(_check_cluster), build=_cluster_program, dtypes=(None,), tf=_NOT_TF,
                    stateful=True, cpu_devices=2) for op in ("EmbeddingClusterPull", "EmbeddingClusterPush")]
ENTRIES += [OpEntry(op, _cluster_samples(_check_cluster_sync), build=_cluster_sync_program, dtypes=(None,),
                    tf=_NOT_TF, stateful=True, cpu_devices=2)
            for op in ("EmbeddingClusterAccumulate", "EmbeddingClusterApplyAccumulated", "EmbeddingClusterSetSyncStep")]


# ---------------------------------------------------------------- restoring a table from a checkpoint
_FIELDS = ("keys", "values", "state", "show", "click", "seen", "step")


def _restore_program(tf, keys, grads, table_name="saved", parts=1):
    """A table trained one push, written as a checkpoint bundle (SaveV2 of its export, the layout a
    Saver writes), restored into a fresh table of ``parts`` parts; the rows of every part."""
    a = _local_table(tf)
    empty_f = tf.zeros([0])
    pulled = tf.raw_ops.EmbeddingTablePull(table_handle=a, keys=keys, counts=tf.zeros([0], tf.int32), dim=_DIM)
    push = _after(tf, [pulled], lambda: tf.raw_ops.EmbeddingTablePush(
        table_handle=a, keys=keys, grads=grads, counts=empty_f, clicks=empty_f, learning_rate=tf.constant(_LR)))
    ex = _after(tf, [push], lambda: tf.raw_ops.EmbeddingTableExport(table_handle=a, dim=_DIM, state_width=0))
    prefix = tf.constant("ckpt/table")
    save = tf.raw_ops.SaveV2(prefix=prefix, tensor_names=[f"saved/{f}" for f in _FIELDS] + ["saved/optimizer"],
                             shape_and_slices=[""] * 8, tensors=list(ex) + [tf.constant("sgd")])
    outs = []
    for p in range(parts):
        b = tf.raw_ops.EmbeddingHashTable(shared_name=f"opdb_restored_{next(_IDS)}", dim=_DIM, optimizer="sgd",
                                          initializer="constant", initializer_params=[_INIT], part=p,
                                          num_parts=parts)
        restore = _after(tf, [save], lambda b=b: tf.raw_ops.EmbeddingTableRestore(table_handle=b, prefix=prefix,
                                                                                  table_name=table_name))
        rex = _after(tf, [restore], lambda b=b: tf.raw_ops.EmbeddingTableExport(table_handle=b, dim=_DIM,
                                                                                state_width=0))
        outs += [rex.keys, rex.values]
    return outs


def _check_restore(inputs, attrs, outs):
    keys, grads = np.asarray(inputs["keys"]).astype(np.uint64), np.asarray(inputs["grads"], np.float64)
    found = attrs.get("table_name", "saved") == "saved"
    if outs is None:
        return "" if not found else "raised on a valid checkpoint"
    if not found:
        return "restored a table the checkpoint does not have"
    got = {}
    for pk, pv in zip(outs[::2], outs[1::2]):
        if set(pk.tolist()) & set(got):
            return f"parts share keys {sorted(set(pk.tolist()) & set(got))}"
        got.update(zip(pk.tolist(), pv.tolist()))
    want = dict(zip(keys.tolist(), (_INIT - _LR * grads).tolist()))
    if sorted(got) != sorted(want) or not all(np.allclose(got[k], want[k], atol=1e-6) for k in want):
        return f"restored rows {got}, want the saved table's {want}"
    if len(outs) > 2 and not all(len(k) for k in outs[::2]):
        return "a part restored no rows (the keys are not split by owning part)"
    return ""


def _restore_samples():
    f = np.float32
    rows = {"keys": i64([3, -1, 7, 12, 40]), "grads": np.arange(10, dtype=f).reshape(5, 2)}
    return [
        Sample("int64_keys", rows, check=_check_restore),
        Sample("two_parts", rows, {"parts": 2}, check=_check_restore),
        Sample("uint64_extremes", {"keys": np.array([0, 2**64 - 1], np.uint64), "grads": np.ones((2, 2), f)},
               check=_check_restore),
        Sample("empty_table", {"keys": i64([]), "grads": np.zeros((0, 2), f)}, check=_check_restore),
        Sample("not_in_checkpoint", rows, {"table_name": "other"}, check=_check_restore),
    ]


ENTRIES.append(OpEntry("EmbeddingTableRestore", _restore_samples(), build=_restore_program, dtypes=(None,),
                       tf=_NOT_TF, stateful=True, workdir=True))
