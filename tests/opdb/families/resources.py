"""Resource ops: hash tables, queues, gradient accumulators and session handles, each driven through a
small program whose steps are ordered by control dependencies and whose last step is fetched.

Empty keys and batches, missing keys, closed queues, stale gradients. No sample may block: every
dequeue or take asks for at most what was put in, or runs after the queue is closed.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, empty, i32, i64, regular

_S = ("int64", "float32", "string")


def _after(tf, ops, fn):
    with tf.control_dependencies([o.op if hasattr(o, "op") else o for o in ops]):
        return fn()


# ---------------------------------------------------------------- hash tables
def _table(tf, keys, values):
    h = tf.raw_ops.HashTableV2(key_dtype=keys.dtype, value_dtype=values.dtype)
    return h, tf.raw_ops.InitializeTableV2(table_handle=h, keys=keys, values=values)


def _find(tf, keys, values, query, default_value):
    h, init = _table(tf, keys, values)
    return _after(tf, [init], lambda: [
        tf.raw_ops.LookupTableFindV2(table_handle=h, keys=query, default_value=default_value),
        tf.raw_ops.LookupTableSizeV2(table_handle=h)])


def _export(tf, keys, values):
    h, init = _table(tf, keys, values)
    out = _after(tf, [init], lambda: tf.raw_ops.LookupTableExportV2(table_handle=h, Tkeys=keys.dtype,
                                                                    Tvalues=values.dtype))
    return [tf.reduce_sum(out.keys), tf.reduce_sum(out.values), tf.size(out.keys)]  # export order is the hash's


def _import(tf, keys, values, query):
    h = tf.raw_ops.HashTableV2(key_dtype=keys.dtype, value_dtype=values.dtype)
    imp = tf.raw_ops.LookupTableImportV2(table_handle=h, keys=keys, values=values)
    return _after(tf, [imp], lambda: [tf.raw_ops.LookupTableFindV2(table_handle=h, keys=query,
                                                                   default_value=tf.zeros([], values.dtype)),
                                      tf.raw_ops.LookupTableSizeV2(table_handle=h)])


def _from_text_file(tf, query, key_index, value_index, delimiter=" "):
    with open("vocab.txt", "w") as f:  # the entry runs in a fresh directory
        f.write("apple 3\nbanana 7\n\ncherry 11\n")
    h = tf.raw_ops.HashTableV2(key_dtype=tf.string if key_index == -2 else tf.int64,
                               value_dtype=tf.int64 if value_index in (-1, 1) else tf.string)
    init = tf.raw_ops.InitializeTableFromTextFileV2(table_handle=h, filename="vocab.txt", key_index=key_index,
                                                    value_index=value_index, delimiter=delimiter)
    default = tf.constant(-1, tf.int64) if value_index in (-1, 1) else tf.constant(b"?")
    return _after(tf, [init], lambda: tf.raw_ops.LookupTableFindV2(table_handle=h, keys=query, default_value=default))


_KV = {"keys": np.array([b"a", b"b", b"c"], object), "values": i64([10, 20, 30])}
ENTRIES = [
    OpEntry("LookupTableFindV2", [
        Sample("hits_and_misses", {**_KV, "query": np.array([b"b", b"z", b"a"], object), "default_value": i64(-1)}),
        Sample("matrix_query", {**_KV, "query": np.array([[b"c"], [b"q"]], object), "default_value": i64(0)}),
        Sample("rank0_query", {**_KV, "query": np.array(b"a", object), "default_value": i64(0)}),
        Sample("empty_query", {**_KV, "query": np.zeros(0, object), "default_value": i64(0)}),
        Sample("int64_keys", {"keys": i64([5, -1]), "values": np.array([0.5, 1.5], np.float32),
                              "query": i64([-1, 9]), "default_value": np.float32(9.0)}),
        Sample("default_not_scalar", {**_KV, "query": np.array([b"a"], object), "default_value": i64([0, 1])}),
    ], build=_find, dtypes=(None,), stateful=True),
    OpEntry("HashTableV2", [Sample("basic", {**_KV, "query": np.array([b"c"], object), "default_value": i64(0)})],
            build=_find, dtypes=(None,), stateful=True),
    OpEntry("InitializeTableV2", [
        Sample("basic", {**_KV, "query": np.array([b"c"], object), "default_value": i64(0)}),
        Sample("empty", {"keys": np.zeros(0, object), "values": i64([]), "query": np.array([b"c"], object),
                         "default_value": i64(0)}),
        Sample("size_mismatch", {"keys": np.array([b"a"], object), "values": i64([1, 2]),
                                 "query": np.array([b"a"], object), "default_value": i64(0)}),
    ], build=_find, dtypes=(None,), stateful=True),
    OpEntry("LookupTableSizeV2", [
        Sample("three", {**_KV, "query": np.zeros(0, object), "default_value": i64(0)}),
        Sample("duplicate_keys", {"keys": np.array([b"a", b"a"], object), "values": i64([1, 1]),
                                  "query": np.zeros(0, object), "default_value": i64(0)}),
    ], build=_find, dtypes=(None,), stateful=True),
    OpEntry("LookupTableExportV2", [
        Sample("ints", {"keys": i64([3, 1, 2]), "values": i64([30, 10, 20])}),
        Sample("empty", {"keys": i64([]), "values": i64([])}),
    ], build=_export, dtypes=(None,), stateful=True),
    OpEntry("LookupTableImportV2", [
        Sample("ints", {"keys": i64([3, 1]), "values": T([0.5, 2.5]), "query": i64([1, 2])}),
        Sample("empty", {"keys": i64([]), "values": empty(0), "query": i64([1])}),
        Sample("mismatch", {"keys": i64([1, 2]), "values": T([0.5]), "query": i64([1])}),
    ], build=_import, dtypes=("float32", "int64"), stateful=True),
    OpEntry("InitializeTableFromTextFileV2", [
        Sample("word_to_line", {"query": np.array([b"banana", b"zzz", b"cherry"], object)},
               {"key_index": -2, "value_index": -1}),
        Sample("word_to_column", {"query": np.array([b"apple", b"cherry"], object)},
               {"key_index": -2, "value_index": 1}),
        Sample("missing_column", {"query": np.array([b"apple"], object)}, {"key_index": -2, "value_index": 5}),
    ], build=_from_text_file, dtypes=(None,), stateful=True, workdir=True),
]


# ---------------------------------------------------------------- queues
def _fifo_program(tf, x, n, close=False, queue=None):
    q = queue or tf.raw_ops.FIFOQueueV2(component_types=[x.dtype], capacity=16)
    enq = tf.raw_ops.QueueEnqueueManyV2(handle=q, components=[x])
    steps = [enq]
    if close:
        steps = [_after(tf, steps, lambda: tf.raw_ops.QueueCloseV2(handle=q))]
    out = _after(tf, steps, lambda: tf.raw_ops.QueueDequeueUpToV2(handle=q, n=n, component_types=[x.dtype])
                 if close else tf.raw_ops.QueueDequeueManyV2(handle=q, n=n, component_types=[x.dtype]))
    rest = _after(tf, out, lambda: [tf.raw_ops.QueueSizeV2(handle=q), tf.raw_ops.QueueIsClosedV2(handle=q)])
    return list(out) + rest


def _fifo(op):
    def build(tf, x, n, **kw):
        return _fifo_program(tf, x, n, **kw)

    build.__name__ = op
    return build


def _one_by_one(tf, x):
    q = tf.raw_ops.FIFOQueueV2(component_types=[x.dtype, tf.int32], capacity=4)
    enq = tf.raw_ops.QueueEnqueueV2(handle=q, components=[x, tf.size(x)])
    return _after(tf, [enq], lambda: tf.raw_ops.QueueDequeueV2(handle=q, component_types=[x.dtype, tf.int32]))


def _padding(tf, x, y, n):
    q = tf.raw_ops.PaddingFIFOQueueV2(component_types=[x.dtype], shapes=[[None]], capacity=4)
    e1 = tf.raw_ops.QueueEnqueueV2(handle=q, components=[x])
    e2 = _after(tf, [e1], lambda: tf.raw_ops.QueueEnqueueV2(handle=q, components=[y]))
    return _after(tf, [e2], lambda: tf.raw_ops.QueueDequeueManyV2(handle=q, n=n, component_types=[x.dtype]))


def _priority(tf, priorities, x):
    q = tf.raw_ops.PriorityQueueV2(component_types=[x.dtype], shapes=[[], []], capacity=8)
    enq = tf.raw_ops.QueueEnqueueManyV2(handle=q, components=[priorities, x])
    n = tf.size(priorities)
    return _after(tf, [enq], lambda: tf.raw_ops.QueueDequeueManyV2(handle=q, n=n, component_types=[tf.int64, x.dtype]))


def _shuffle(tf, x):
    q = tf.raw_ops.RandomShuffleQueueV2(component_types=[x.dtype], shapes=[[]], capacity=16, seed=3, seed2=4)
    enq = tf.raw_ops.QueueEnqueueManyV2(handle=q, components=[x])
    return _after(tf, [enq], lambda: tf.raw_ops.QueueDequeueManyV2(handle=q, n=tf.size(x), component_types=[x.dtype]))


_QUEUE_SAMPLES = [
    Sample("all", {"x": regular(4), "n": i32(4)}),
    Sample("some", {"x": regular(5), "n": i32(2)}),
    Sample("none", {"x": empty(0), "n": i32(0)}),
    Sample("closed_up_to", {"x": regular(3), "n": i32(5)}, {"close": True}),
    Sample("closed_empty", {"x": empty(0), "n": i32(2)}, {"close": True}),
]
for _op in ("FIFOQueueV2", "QueueEnqueueManyV2", "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueSizeV2",
            "QueueCloseV2", "QueueIsClosedV2"):
    ENTRIES.append(OpEntry(_op, _QUEUE_SAMPLES, build=_fifo(_op), dtypes=_S, stateful=True))

ENTRIES += [
    OpEntry("QueueEnqueueV2", [Sample("matrix", {"x": regular(2, 3)}), Sample("rank0", {"x": regular()}),
                               Sample("empty", {"x": empty(0, 2)})], build=_one_by_one, dtypes=_S, stateful=True),
    OpEntry("QueueDequeueV2", [Sample("matrix", {"x": regular(2, 3)}), Sample("empty", {"x": empty(0, 2)})],
            build=_one_by_one, dtypes=_S, stateful=True),
    OpEntry("PaddingFIFOQueueV2", [
        Sample("pads", {"x": regular(3), "y": regular(1, seed=1), "n": i32(2)}),
        Sample("empty_element", {"x": empty(0), "y": regular(2), "n": i32(2)}),
    ], build=_padding, dtypes=_S, stateful=True),
    OpEntry("PriorityQueueV2", [
        Sample("ordered", {"priorities": i64([5, -1, 3]), "x": regular(3)}),
        Sample("empty", {"priorities": i64([]), "x": empty(0)}),
    ], build=_priority, dtypes=_S, stateful=True),
    OpEntry("RandomShuffleQueueV2", [Sample("six", {"x": regular(6)}), Sample("empty", {"x": empty(0)})],
            build=_shuffle, dtypes=("int64", "float32"), stateful=True),
]


# ---------------------------------------------------------------- gradient accumulators
def _accumulate(kind):
    resource = kind == "resource"
    prefix = "Resource" if resource else ""

    def build(tf, g1, g2, step1, step2, global_step, reduction_type="MEAN"):
        make = tf.raw_ops.ResourceConditionalAccumulator if resource else tf.raw_ops.ConditionalAccumulator
        h = make(dtype=g1.dtype, shape=None, reduction_type=reduction_type)
        ops = getattr(tf.raw_ops, f"{prefix}AccumulatorSetGlobalStep")(handle=h, new_global_step=global_step)
        for g, step in ((g1, step1), (g2, step2)):
            ops = _after(tf, [ops], lambda g=g, step=step: getattr(tf.raw_ops, f"{prefix}AccumulatorApplyGradient")(
                handle=h, local_step=step, gradient=g))
        count = _after(tf, [ops], lambda: getattr(tf.raw_ops, f"{prefix}AccumulatorNumAccumulated")(handle=h))
        took = _after(tf, [count], lambda: getattr(tf.raw_ops, f"{prefix}AccumulatorTakeGradient")(
            handle=h, num_required=1, dtype=g1.dtype))
        return [count, took]

    return build


_ACC_SAMPLES = [
    Sample("two", {"g1": regular(2, 3), "g2": regular(2, 3, seed=1), "step1": i64(0), "step2": i64(1),
                   "global_step": i64(0)}, grad=False),
    Sample("sum", {"g1": regular(2), "g2": regular(2, seed=1), "step1": i64(0), "step2": i64(0),
                   "global_step": i64(0)}, {"reduction_type": "SUM"}, grad=False),
    Sample("one_stale", {"g1": regular(2), "g2": regular(2, seed=1), "step1": i64(1), "step2": i64(3),
                         "global_step": i64(2)}, grad=False),
    Sample("rank0", {"g1": regular(), "g2": regular(seed=1), "step1": i64(0), "step2": i64(0),
                     "global_step": i64(0)}, grad=False),
    Sample("shape_mismatch", {"g1": regular(2), "g2": regular(3), "step1": i64(0), "step2": i64(0),
                              "global_step": i64(0)}, grad=False),
]
_ACC_TYPES = ("float32", "float64")
for _kind, _ops in (("ref", ("ConditionalAccumulator", "AccumulatorApplyGradient", "AccumulatorNumAccumulated",
                             "AccumulatorSetGlobalStep", "AccumulatorTakeGradient")),
                    ("resource", ("ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient",
                                  "ResourceAccumulatorNumAccumulated", "ResourceAccumulatorSetGlobalStep",
                                  "ResourceAccumulatorTakeGradient"))):
    for _op in _ops:
        ENTRIES.append(OpEntry(_op, _ACC_SAMPLES, build=_accumulate(_kind), dtypes=_ACC_TYPES, stateful=True))


def _sparse_accumulate(tf, i1, v1, i2, v2, dense_shape, has_known_shape=True):
    h = tf.raw_ops.SparseConditionalAccumulator(dtype=v1.dtype, shape=None, reduction_type="MEAN")
    a1 = tf.raw_ops.SparseAccumulatorApplyGradient(handle=h, local_step=0, gradient_indices=i1, gradient_values=v1,
                                                   gradient_shape=dense_shape, has_known_shape=has_known_shape)
    a2 = _after(tf, [a1], lambda: tf.raw_ops.SparseAccumulatorApplyGradient(
        handle=h, local_step=0, gradient_indices=i2, gradient_values=v2, gradient_shape=dense_shape,
        has_known_shape=has_known_shape))
    took = _after(tf, [a2], lambda: tf.raw_ops.SparseAccumulatorTakeGradient(handle=h, num_required=2,
                                                                             dtype=v1.dtype))
    return list(took)


_SPARSE_ACC = [
    Sample("overlap", {"i1": i64([0, 2]), "v1": regular(2, 2), "i2": i64([2, 3]), "v2": regular(2, 2, seed=1),
                       "dense_shape": i64([4, 2])}, grad=False),
    Sample("empty_second", {"i1": i64([1]), "v1": regular(1, 2), "i2": i64([]), "v2": empty(0, 2),
                            "dense_shape": i64([4, 2])}, grad=False),
    Sample("row_shape_mismatch", {"i1": i64([1]), "v1": regular(1, 2), "i2": i64([0]), "v2": regular(1, 3),
                                  "dense_shape": i64([4, 2])}, grad=False),
]
for _op in ("SparseConditionalAccumulator", "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient"):
    ENTRIES.append(OpEntry(_op, _SPARSE_ACC, build=_sparse_accumulate, dtypes=_ACC_TYPES, stateful=True))


# ---------------------------------------------------------------- session handles
# One program is one run, and a value kept by a run is readable from the next run on only (as in
# TensorFlow): the entries check the handle's device part, and that reading or deleting it in the
# run that keeps it fails. tests/ops/test_session_ops.py follows handles across runs.
def _session_handle(tf, x):
    h = tf.raw_ops.GetSessionHandle(value=x)
    return [tf.identity(x), tf.strings.regex_replace(h, "^[^;]*;[0-9]+;", "")]


def _same_run(tf, x, delete=False):
    h = tf.raw_ops.GetSessionHandle(value=x)
    if delete:
        return _after(tf, [tf.raw_ops.DeleteSessionTensor(handle=h)], lambda: tf.identity(x))
    return tf.raw_ops.GetSessionTensor(handle=h, dtype=x.dtype)


_HANDLE_SAMPLES = [Sample("matrix", {"x": regular(2, 3)}), Sample("rank0", {"x": regular()}),
                   Sample("empty", {"x": empty(0, 2)})]
ENTRIES += [
    OpEntry("GetSessionHandle", _HANDLE_SAMPLES, build=_session_handle, dtypes=_S, stateful=True),
    OpEntry("GetSessionTensor", _HANDLE_SAMPLES[:1], build=_same_run, dtypes=_S, stateful=True),
    OpEntry("DeleteSessionTensor", [Sample("same_run", {"x": regular(2)}, {"delete": True})], build=_same_run,
            dtypes=("float32",), stateful=True),
]
