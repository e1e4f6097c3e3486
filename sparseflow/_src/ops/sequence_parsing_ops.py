"""Parsing of ``tf.train.SequenceExample`` protos (op ``ParseSequenceExampleV2``):
``tf.io.parse_sequence_example`` (a batch) and ``tf.parse_single_sequence_example`` (one proto).

A SequenceExample holds ``context`` features (parsed as an Example's, with ``FixedLenFeature`` /
``VarLenFeature``) and ``feature_lists``, one Feature per step: ``FixedLenSequenceFeature(shape)``
gives a dense ``[steps, *shape]`` (``[batch, longest, *shape]`` padded with 0 / b"" for a batch);
``VarLenFeature`` a SparseTensor ``[steps, longest step]`` (``[batch, steps, longest]``).

Example:
    >>> import sparseflow as tf
    >>> f = lambda v: tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    >>> se = tf.train.SequenceExample(
    ...     context=tf.train.Features(feature={"len": f([2])}),
    ...     feature_lists=tf.train.FeatureLists(feature_list={
    ...         "tok": tf.train.FeatureList(feature=[f([4]), f([5])])}))
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     ctx, seq = tf.parse_single_sequence_example(
    ...         se.SerializeToString(), {"len": tf.FixedLenFeature([], tf.int64)},
    ...         {"tok": tf.FixedLenSequenceFeature([], tf.int64)})
    ...     print(sess.run(ctx["len"]), sess.run(seq["tok"]).tolist())
    2 [4, 5]
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape
from sparseflow._src.ops import constant_op
from sparseflow._src.ops.parsing_ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    _check_dtype,
    _dense_default,
)

__all__ = ["parse_sequence_example", "parse_single_sequence_example"]

SEQUENCE_PARSING_OP_TYPES = ("ParseSequenceExampleV2",)
_TYPES = "list({float, int64, string}) >= 0"


def _sequence_shapes(op):
    a = op._attrs
    batch = op.inputs[0].shape
    rank = batch.ndims
    known = rank is not None

    def sparse(n, extra):
        r = rank + extra if known else None
        return [TensorShape([None, r]) for _ in range(n)], [TensorShape([None])] * n, [TensorShape([r])] * n

    ci, cv, cs = sparse(a["Ncontext_sparse"], 1)
    cd = [batch.concatenate(as_shape(s)) if known else TensorShape(None) for s in a["context_dense_shapes"]]
    fi, fv, fs = sparse(a["Nfeature_list_sparse"], 2)
    fd = [batch.concatenate([None]).concatenate(as_shape(s)) if known else TensorShape(None)
          for s in a["feature_list_dense_shapes"]]
    lengths = [batch if known else TensorShape(None)] * a["Nfeature_list_dense"]
    ragged_c = [TensorShape([None])] * (2 * len(a.get("context_ragged_value_types") or []))
    ragged_f = [TensorShape([None])] * (3 * len(a.get("feature_list_ragged_value_types") or []))
    return ci + cv + cs + cd + ragged_c + fi + fv + fs + fd + lengths + ragged_f


register_op("ParseSequenceExampleV2",
            inputs=["serialized: string", "debug_name: string", "context_sparse_keys: string",
                    "context_dense_keys: string", "context_ragged_keys: string", "feature_list_sparse_keys: string",
                    "feature_list_dense_keys: string", "feature_list_ragged_keys: string",
                    "feature_list_dense_missing_assumed_empty: bool", "context_dense_defaults: Tcontext_dense"],
            outputs=["context_sparse_indices: Ncontext_sparse * int64", "context_sparse_values: context_sparse_types",
                     "context_sparse_shapes: Ncontext_sparse * int64", "context_dense_values: Tcontext_dense",
                     "context_ragged_values: context_ragged_value_types",
                     "context_ragged_row_splits: context_ragged_split_types",
                     "feature_list_sparse_indices: Nfeature_list_sparse * int64",
                     "feature_list_sparse_values: feature_list_sparse_types",
                     "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
                     "feature_list_dense_values: feature_list_dense_types",
                     "feature_list_dense_lengths: Nfeature_list_dense * int64",
                     "feature_list_ragged_values: feature_list_ragged_value_types",
                     "feature_list_ragged_outer_splits: feature_list_ragged_split_types",
                     "feature_list_ragged_inner_splits: feature_list_ragged_split_types"],
            attrs=["Ncontext_sparse: int >= 0 = 0", f"Tcontext_dense: {_TYPES} = []",
                   f"context_sparse_types: {_TYPES} = []", f"context_ragged_value_types: {_TYPES} = []",
                   "context_ragged_split_types: list({int32, int64}) >= 0 = []",
                   "context_dense_shapes: list(shape) >= 0 = []", "Nfeature_list_sparse: int >= 0 = 0",
                   "Nfeature_list_dense: int >= 0 = 0", f"feature_list_dense_types: {_TYPES} = []",
                   f"feature_list_sparse_types: {_TYPES} = []", f"feature_list_ragged_value_types: {_TYPES} = []",
                   "feature_list_ragged_split_types: list({int32, int64}) >= 0 = []",
                   "feature_list_dense_shapes: list(shape) >= 0 = []"],
            shape_fn=_sequence_shapes)


def _split_context(features):
    sparse, dense = {}, {}
    for key in sorted(features or {}):
        spec = features[key]
        if isinstance(spec, VarLenFeature):
            sparse[key] = _check_dtype(key, spec.dtype)
        elif isinstance(spec, FixedLenFeature):
            shape = as_shape(spec.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known but received {shape}.")
            dense[key] = (_check_dtype(key, spec.dtype), shape.as_list(), spec.default_value, False)
        else:
            raise ValueError(f"Unsupported context feature spec {spec!r} for key {key!r} (use FixedLenFeature or "
                             f"VarLenFeature).")
    return sparse, dense


def _split_sequence(features):
    sparse, dense = {}, {}
    for key in sorted(features or {}):
        spec = features[key]
        if isinstance(spec, VarLenFeature):
            sparse[key] = _check_dtype(key, spec.dtype)
        elif isinstance(spec, FixedLenSequenceFeature):
            if spec.default_value is not None:
                raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
            shape = as_shape(spec.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known but received {shape}.")
            dense[key] = (_check_dtype(key, spec.dtype), shape.as_list(), bool(spec.allow_missing))
        else:
            raise ValueError(f"Unsupported {type(spec).__name__} {spec!r} for key {key!r} (sequence features are "
                             f"FixedLenSequenceFeature or VarLenFeature).")
    return sparse, dense


def _strings(keys, name):
    return constant_op.constant(np.array(keys, dtype=object).reshape(-1), dtype=dtypes.string, name=name)


def _parse(serialized, context_features, sequence_features, names):
    """The three dicts (context, feature lists, dense lengths) of ``ParseSequenceExampleV2``."""
    if not context_features and not sequence_features:
        raise ValueError("Both context_features and sequence_features are None, but at least one should have values.")
    c_sparse, c_dense = _split_context(context_features)
    f_sparse, f_dense = _split_sequence(sequence_features)
    with name_scope(None, "ParseSequenceExample"):
        names = convert_to_tensor(np.zeros(0, object) if names is None else names, dtype=dtypes.string,
                                  name="debug_name")
        cs_keys, cd_keys, fs_keys, fd_keys = sorted(c_sparse), sorted(c_dense), sorted(f_sparse), sorted(f_dense)
        defaults = [_dense_default(k, *c_dense[k]) for k in cd_keys]
        assumed_empty = [k for k in fd_keys if f_dense[k][2]]
        inputs = [serialized, names, _strings(cs_keys, "context_sparse_keys"), _strings(cd_keys, "context_dense_keys"),
                  _strings([], "context_ragged_keys"), _strings(fs_keys, "feature_list_sparse_keys"),
                  _strings(fd_keys, "feature_list_dense_keys"), _strings([], "feature_list_ragged_keys"),
                  constant_op.constant(np.array([k in assumed_empty for k in fd_keys], dtype=bool),
                                       name="feature_list_dense_missing_assumed_empty"),
                  defaults]
        attrs = {"Ncontext_sparse": len(cs_keys), "context_sparse_types": [c_sparse[k] for k in cs_keys],
                 "Tcontext_dense": [c_dense[k][0] for k in cd_keys],
                 "context_dense_shapes": [TensorShape(c_dense[k][1]) for k in cd_keys],
                 "Nfeature_list_sparse": len(fs_keys), "feature_list_sparse_types": [f_sparse[k] for k in fs_keys],
                 "Nfeature_list_dense": len(fd_keys), "feature_list_dense_types": [f_dense[k][0] for k in fd_keys],
                 "feature_list_dense_shapes": [TensorShape(f_dense[k][1]) for k in fd_keys]}
        outs = apply_op("ParseSequenceExampleV2", inputs, attrs, name="ParseSequenceExampleV2").outputs
    n, m = len(cs_keys), len(cd_keys)
    context = {k: SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i, k in enumerate(cs_keys)}
    context.update({k: outs[3 * n + i] for i, k in enumerate(cd_keys)})
    base = 3 * n + m
    p, q = len(fs_keys), len(fd_keys)
    lists = {k: SparseTensor(outs[base + i], outs[base + p + i], outs[base + 2 * p + i]) for i, k in enumerate(fs_keys)}
    lists.update({k: outs[base + 3 * p + i] for i, k in enumerate(fd_keys)})
    lengths = {k: outs[base + 3 * p + q + i] for i, k in enumerate(fd_keys)}
    return context, lists, lengths


def parse_sequence_example(serialized, context_features=None, sequence_features=None, example_names=None,
                           name=None):
    """Parses a batch of serialized ``tf.train.SequenceExample`` protos: ``(context, feature_lists,
    lengths)`` dicts, ``lengths`` holding each dense feature list's number of steps per example."""
    with name_scope(name, "ParseSequenceExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 1:
            raise ValueError(f"Input serialized must be a vector, got shape {serialized.shape}.")
        return _parse(serialized, context_features, sequence_features, example_names)


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None, example_name=None,
                                  name=None):
    """Parses one serialized ``tf.train.SequenceExample`` (a scalar string): ``(context, feature_lists)``.

    Example:
        >>> import sparseflow as tf
        >>> f = lambda v: tf.train.Feature(float_list=tf.train.FloatList(value=v))
        >>> se = tf.train.SequenceExample(feature_lists=tf.train.FeatureLists(feature_list={
        ...     "x": tf.train.FeatureList(feature=[f([1.0, 2.0]), f([3.0])])}))
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     _, seq = tf.parse_single_sequence_example(se.SerializeToString(),
        ...                                               sequence_features={"x": tf.VarLenFeature(tf.float32)})
        ...     print(sess.run(seq["x"]).dense_shape.tolist())
        [2, 2]
    """
    with name_scope(name, "ParseSingleSequenceExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 0:
            raise ValueError(f"Input serialized must be a scalar, got shape {serialized.shape}.")
        context, lists, _ = _parse(serialized, context_features, sequence_features, example_name)
        return context, lists
