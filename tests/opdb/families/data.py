"""Input pipelines through the public ``tf.data`` API: sparseflow runs a dataset on the host
(HostDataset), TensorFlow as its own dataset ops, so the programs are compared by what the
iterators return: first batches, short last batches, empty datasets (OutOfRangeError), string
handles.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import Const, OpEntry, Sample, empty, regular

_TYPES = ("int64", "float32", "string")


def _initializable(tf, x, batch=2, drop_remainder=False, skip=0):
    ds = tf.data.Dataset.from_tensor_slices(x).skip(skip).batch(batch, drop_remainder=drop_remainder)
    it = tf.data.make_initializable_iterator(ds)
    with tf.control_dependencies([it.initializer]):
        return it.get_next()


def _one_shot(tf, x, batch=2):
    it = tf.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(x).batch(batch))
    return it.get_next()


def _string_handle(tf, x):
    it = tf.data.make_initializable_iterator(tf.data.Dataset.from_tensor_slices(x))
    other = tf.data.Iterator.from_string_handle(it.string_handle(), x.dtype, x.shape[1:])
    with tf.control_dependencies([it.initializer]):
        return other.get_next()


_PIPELINE = [
    Sample("first_batch", {"x": regular(5, 2)}, grad=False),
    Sample("short_last_batch", {"x": regular(3)}, {"skip": 2}, grad=False),
    Sample("dropped_remainder", {"x": regular(3)}, {"skip": 2, "drop_remainder": True}, grad=False),
    Sample("empty", {"x": empty(0, 2)}, grad=False),
    Sample("rank0", {"x": regular()}, grad=False),
]
ENTRIES = [
    OpEntry(op, _PIPELINE, build=_initializable, dtypes=_TYPES, stateful=True)
    for op in ("HostDataset", "IteratorV2", "MakeIterator", "IteratorGetNext")
]
ENTRIES += [
    OpEntry("OneShotIterator", [
        Sample("constant", {"x": Const(np.arange(5, dtype=np.float32))}, grad=False),
        Sample("constant_rows", {"x": Const(np.arange(6, dtype=np.int64).reshape(3, 2))}, {"batch": 3}, grad=False),
        Sample("empty", {"x": Const(np.zeros((0, 2), np.float32))}, grad=False),
    ], build=_one_shot, dtypes=(None,), stateful=True),
]
for _op in ("IteratorToStringHandle", "IteratorFromStringHandleV2"):
    ENTRIES.append(OpEntry(_op, [
        Sample("rows", {"x": regular(3, 2)}, grad=False),
        Sample("empty", {"x": empty(0, 2)}, grad=False),
    ], build=_string_handle, dtypes=_TYPES, stateful=True))
