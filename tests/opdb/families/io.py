"""Checkpoint I/O: SaveV2, RestoreV2 (whole tensors and slices), MergeV2Checkpoints, and the
sharded file names. Each program saves, then restores what it saved, in a fresh directory.

Rank-0, empty and string tensors; slices; names missing from the checkpoint; dtype mismatches.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, empty, i32, regular


def s(*values):
    return np.array([v.encode() for v in values], dtype=object)


def _save_restore(tf, tensor, names, slices, restore_names=None, restore_slices=None, restore_dtype=None):
    save = tf.raw_ops.SaveV2(prefix="ckpt/model", tensor_names=names, shape_and_slices=slices,
                             tensors=[tensor])
    with tf.control_dependencies([save]):
        return tf.raw_ops.RestoreV2(prefix="ckpt/model",
                                    tensor_names=names if restore_names is None else s(*restore_names),
                                    shape_and_slices=slices if restore_slices is None else s(*restore_slices),
                                    dtypes=[restore_dtype or tensor.dtype])


def _merge(tf, a, b):
    s1 = tf.raw_ops.SaveV2(prefix="part0/m", tensor_names=s("a"), shape_and_slices=s(""), tensors=[a])
    s2 = tf.raw_ops.SaveV2(prefix="part1/m", tensor_names=s("b"), shape_and_slices=s(""), tensors=[b])
    with tf.control_dependencies([s1, s2]):
        merged = tf.raw_ops.MergeV2Checkpoints(checkpoint_prefixes=s("part0/m", "part1/m"),
                                               destination_prefix="all/m")
    with tf.control_dependencies([merged]):
        return tf.raw_ops.RestoreV2(prefix="all/m", tensor_names=s("b", "a"), shape_and_slices=s("", ""),
                                    dtypes=[b.dtype, a.dtype])


_ONE = {"names": s("t"), "slices": s("")}
_SAVE = [
    Sample("matrix", {"tensor": regular(2, 3), **_ONE}, grad=False),
    Sample("rank0", {"tensor": regular(), **_ONE}, grad=False),
    Sample("empty", {"tensor": empty(0, 3), **_ONE}, grad=False),
    Sample("restore_slice", {"tensor": regular(4, 3), **_ONE}, {"restore_slices": ["4 3 1,2:-"]}, grad=False),
    Sample("missing_name", {"tensor": regular(2), **_ONE}, {"restore_names": ["nope"]}, grad=False),
    Sample("names_mismatch", {"tensor": regular(2), "names": s("a", "b"), "slices": s("", "")}, grad=False),
]
_TYPES = ("bool", "int32", "int64", "float32", "float64", "string")
ENTRIES = [
    OpEntry("SaveV2", _SAVE, build=_save_restore, dtypes=_TYPES, stateful=True, workdir=True,
            differs={"restore_slice|string": "TensorFlow cannot restore a slice of a string tensor saved whole "
                                             "(InvalidArgumentError); sparseflow can"}),
    OpEntry("RestoreV2", _SAVE + [
        Sample("dtype_mismatch", {"tensor": regular(2), **_ONE}, {"restore_dtype": "int8"}, grad=False)],
        build=_save_restore, dtypes=("int32", "float32"), stateful=True, workdir=True),
    OpEntry("MergeV2Checkpoints", [
        Sample("two", {"a": regular(2), "b": regular(3, seed=1)}, grad=False),
        Sample("empty_tensors", {"a": empty(0), "b": empty(2, 0)}, grad=False),
    ], build=_merge, dtypes=("float32", "int64"), stateful=True, workdir=True),
    OpEntry("ShardedFilename", [
        Sample("first", {"basename": np.array(b"/data/model", object), "shard": i32(0), "num_shards": i32(3)}),
        Sample("large", {"basename": np.array(b"m", object), "shard": i32(123456), "num_shards": i32(999999)}),
        Sample("vector", {"basename": s("a", "b"), "shard": i32([0, 1]), "num_shards": i32(2)}),
    ], dtypes=(None,)),
    OpEntry("ShardedFilespec", [
        Sample("three", {"basename": np.array(b"/data/model", object), "num_shards": i32(3)}),
        Sample("one", {"basename": np.array(b"", object), "num_shards": i32(1)}),
    ], dtypes=(None,)),
]
