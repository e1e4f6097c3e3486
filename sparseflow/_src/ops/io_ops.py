"""Checkpoint I/O ops: SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename, ShardedFilespec.

They have TensorFlow's names, inputs and attrs, so a Saver's graph (and its MetaGraphDef) has the
shape TF1 users know: ``save/SaveV2`` takes the prefix, the tensor names, the slice specs and the
tensors; ``save/RestoreV2`` returns the tensors, which ``save/Assign*`` ops store in the
variables. Their kernels read and write sparseflow's tensor bundles (training/checkpoint/bundle.py).

Example:
    >>> import sparseflow as tf
    >>> from sparseflow._src.ops import io_ops
    >>> with tf.Graph().as_default():
    ...     op = io_ops.save_v2("/tmp/ckpt", ["a"], [""], [tf.constant(1.0)])
    ...     (t,) = io_ops.restore_v2("/tmp/ckpt", ["a"], [""], [tf.float32])
    >>> op.type, t.op.type, t.dtype.name
    ('SaveV2', 'RestoreV2', 'float32')
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape

__all__: list[str] = []


def _slice_shape(spec):
    """Shape of the slice a TensorFlow slice spec selects; None for "" (the whole, unknown tensor)."""
    spec = (spec.decode("utf-8") if isinstance(spec, bytes) else str(spec)).strip()
    if not spec:
        return None
    parts = spec.split(" ")
    full = [int(p) for p in parts[:-1]]
    exts = parts[-1].split(":") if parts[-1] else []
    return [d if e == "-" else int(e.split(",")[1]) for d, e in zip(full, exts)]


def _check_names(op, n):
    """prefix a scalar; tensor_names and shape_and_slices vectors of ``n`` strings (TensorFlow checks these)."""
    op.inputs[0].shape.with_rank(0)
    for t in op.inputs[1:3]:
        t.shape.with_rank(1).merge_with(TensorShape([n]))


def _save_shape(op):
    _check_names(op, len(op._attrs["dtypes"]))
    return []


def _scalars_shape(op):
    for t in op.inputs:
        t.shape.with_rank(0)
    return [TensorShape([])]


def _restore_shapes(op):
    """Static shapes of RestoreV2 outputs: known when the slice specs are constant and non-empty."""
    from sparseflow._src.framework import tensor_util

    n = len(op._attrs["dtypes"])
    _check_names(op, n)
    specs = tensor_util.constant_value(op.inputs[2])
    if specs is None or getattr(specs, "size", n) != n:
        return [unknown_shape()] * n
    try:
        shapes = [_slice_shape(s) for s in specs.ravel().tolist()]
    except (ValueError, IndexError):
        return [unknown_shape()] * n
    return [unknown_shape() if s is None else s for s in shapes]


register_op("SaveV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string",
                              "tensors: dtypes"],
            attrs=["dtypes: list(type)"], shape_fn=_save_shape, is_stateful=True)
register_op("RestoreV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string"],
            outputs=["tensors: dtypes"], attrs=["dtypes: list(type)"], shape_fn=_restore_shapes,
            is_stateful=True)
register_op("MergeV2Checkpoints", inputs=["checkpoint_prefixes: string", "destination_prefix: string"],
            attrs=["delete_old_dirs: bool = true", "allow_missing_files: bool = false"],
            shape_fn=lambda op: [], is_stateful=True)
register_op("ShardedFilename", inputs=["basename: string", "shard: int32", "num_shards: int32"],
            outputs=["filename: string"], shape_fn=_scalars_shape)
register_op("ShardedFilespec", inputs=["basename: string", "num_shards: int32"], outputs=["filename: string"],
            shape_fn=_scalars_shape)


def _strings(values):
    if isinstance(values, (list, tuple)):
        return [v if isinstance(v, (str, bytes)) else str(v) for v in values]
    return values


def save_v2(prefix, tensor_names, shape_and_slices, tensors, name=None):
    """Saves ``tensors`` under ``tensor_names`` (slices per ``shape_and_slices``) to the bundle ``prefix``."""
    tensors = list(tensors)
    from sparseflow._src.framework.tensor_conversion import convert_to_tensor

    tensors = [convert_to_tensor(t) for t in tensors]
    attrs = {"dtypes": [t.dtype.base_dtype for t in tensors]}
    return apply_op("SaveV2", [prefix, _strings(tensor_names), _strings(shape_and_slices), tensors], attrs,
                    name=name or "SaveV2")


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes_, name=None):
    """The tensors ``tensor_names`` (of types ``dtypes_``) read from the bundle ``prefix``."""
    attrs = {"dtypes": [dtypes.as_dtype(d).base_dtype for d in dtypes_]}
    return list(apply_op("RestoreV2", [prefix, _strings(tensor_names), _strings(shape_and_slices)], attrs,
                         name=name or "RestoreV2").outputs)


def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, delete_old_dirs=True, name=None):
    """Merges the bundles ``checkpoint_prefixes`` into ``destination_prefix`` (sharded saves)."""
    return apply_op("MergeV2Checkpoints", [checkpoint_prefixes, destination_prefix],
                    {"delete_old_dirs": bool(delete_old_dirs)}, name=name or "MergeV2Checkpoints")


def sharded_filename(basename, shard, num_shards, name=None):
    """``"<basename>-<shard:05d>-of-<num_shards:05d>"``."""
    return apply_op("ShardedFilename", [basename, shard, num_shards], name=name or "ShardedFilename").outputs[0]


def sharded_filespec(basename, num_shards, name=None):
    """``"<basename>-?????-of-<num_shards:05d>"``."""
    return apply_op("ShardedFilespec", [basename, num_shards], name=name or "ShardedFilespec").outputs[0]
