"""Parsing of records: ``parse_example`` / ``parse_single_example`` of ``tf.train.Example`` protos
(op ``ParseExampleV2``) with TensorFlow's feature specs, and ``decode_csv`` (op ``DecodeCSV``).

Feature specs, as TensorFlow's:
- ``FixedLenFeature(shape, dtype, default_value=None)``: a dense tensor of ``shape`` per example;
  without a default the feature is required.
- ``VarLenFeature(dtype)``: a ``SparseTensor`` of each example's values (``[batch, max count]``).
- ``FixedLenSequenceFeature(shape, dtype, allow_missing=True, default_value=None)``: a dense
  ``[batch, steps, *shape]``, padded with ``default_value`` (or 0 / b"") to the longest example.
- ``SparseFeature(index_key, value_key, dtype, size, already_sorted=False)``: a ``SparseTensor``
  ``[batch, size]`` whose indices come from the ``index_key`` feature(s) and values from ``value_key``.

Example:
    >>> import sparseflow as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, 2.0])),
    ...     "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[7, 8, 9]))}))
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     out = sess.run(tf.parse_example([ex.SerializeToString()], {
    ...         "x": tf.FixedLenFeature([2], tf.float32), "ids": tf.VarLenFeature(tf.int64)}))
    >>> out["x"].tolist(), out["ids"].values.tolist(), out["ids"].dense_shape.tolist()
    ([[1.5, 2.0]], [7, 8, 9], [1, 3])
"""

from __future__ import annotations

import collections

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape
from sparseflow._src.ops import array_ops, constant_op, sparse_ops

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "VarLenFeature", "decode_csv",
           "parse_example", "parse_single_example"]

PARSING_OP_TYPES = ("ParseExampleV2", "DecodeCSV")

# ---------------------------------------------------------------------------------------- feature specs
FixedLenFeature = collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])
FixedLenFeature.__new__.__defaults__ = (None,)
FixedLenFeature.__doc__ = "A dense feature of a fixed ``shape`` (required unless ``default_value`` is given)."
VarLenFeature = collections.namedtuple("VarLenFeature", ["dtype"])
VarLenFeature.__doc__ = "A feature of any number of values, parsed into a SparseTensor."
FixedLenSequenceFeature = collections.namedtuple("FixedLenSequenceFeature",
                                                 ["shape", "dtype", "allow_missing", "default_value"])
FixedLenSequenceFeature.__new__.__defaults__ = (False, None)
FixedLenSequenceFeature.__doc__ = "Steps of a fixed ``shape`` each, padded to the longest example of the batch."
SparseFeature = collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])
SparseFeature.__new__.__defaults__ = (False,)
SparseFeature.__doc__ = "A SparseTensor of the ``value_key`` values at the ``index_key`` indices (dense size ``size``)."

_PARSE_TYPES = (dtypes.float32, dtypes.int64, dtypes.string)


# ---------------------------------------------------------------------------------------- op definitions
def _parse_example_shapes(op):
    a = op._attrs
    batch = op.inputs[0].shape
    rank = batch.ndims
    n = a["num_sparse"]
    sparse_rank = None if rank is None else rank + 1
    out = [TensorShape([None, sparse_rank]) for _ in range(n)] + [TensorShape([None])] * n
    out += [TensorShape([sparse_rank]) for _ in range(n)]
    for shape in a["dense_shapes"]:
        shape = as_shape(shape)
        out.append(batch.concatenate(shape) if rank is not None else TensorShape(None))
    n_ragged = len(a.get("ragged_value_types") or [])
    out += [TensorShape([None])] * (2 * n_ragged)
    return out


register_op("ParseExampleV2",
            inputs=["serialized: string", "names: string", "sparse_keys: string", "dense_keys: string",
                    "ragged_keys: string", "dense_defaults: Tdense"],
            outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
                     "sparse_shapes: num_sparse * int64", "dense_values: Tdense",
                     "ragged_values: ragged_value_types", "ragged_row_splits: ragged_split_types"],
            attrs=["Tdense: list({float, int64, string}) >= 0", "num_sparse: int >= 0",
                   "sparse_types: list({float, int64, string}) >= 0",
                   "ragged_value_types: list({float, int64, string}) >= 0",
                   "ragged_split_types: list({int32, int64}) >= 0", "dense_shapes: list(shape) >= 0"],
            shape_fn=_parse_example_shapes)


def _decode_csv_shapes(op):
    return [op.inputs[0].shape] * len(op._attrs["OUT_TYPE"])


register_op("DecodeCSV", inputs=["records: string", "record_defaults: OUT_TYPE"], outputs=["output: OUT_TYPE"],
            attrs=["OUT_TYPE: list({float, double, int32, int64, string})", "field_delim: string = ','",
                   "use_quote_delim: bool = true", "na_value: string = ''", "select_cols: list(int) = []"],
            shape_fn=_decode_csv_shapes)


# ---------------------------------------------------------------------------------------- parse_example
def _check_dtype(key, dtype):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in _PARSE_TYPES:
        raise ValueError(f"Unsupported dtype {dtype.name} for feature {key!r}: use tf.float32, tf.int64 or tf.string.")
    return dtype


def _split_features(features):
    """``(sparse {key: dtype}, dense {key: (dtype, shape with -1 first for sequences, default)})``."""
    if not features:
        raise ValueError(f"Missing: features was {features!r}.")
    sparse, dense = {}, {}

    def add_sparse(key, dtype):
        if key in dense or sparse.get(key, dtype) != dtype:
            raise ValueError(f"Feature {key!r} is given twice with different specs.")
        sparse[key] = dtype

    for key in sorted(features):
        spec = features[key]
        if isinstance(spec, VarLenFeature):
            add_sparse(key, _check_dtype(key, spec.dtype))
        elif isinstance(spec, SparseFeature):
            for index_key in ([spec.index_key] if isinstance(spec.index_key, str) else list(spec.index_key)):
                add_sparse(index_key, dtypes.int64)
            add_sparse(spec.value_key, _check_dtype(spec.value_key, spec.dtype))
        elif isinstance(spec, FixedLenFeature):
            shape = as_shape(spec.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known but received "
                                 f"{shape}.")
            dense[key] = (_check_dtype(key, spec.dtype), shape.as_list(), spec.default_value, False)
        elif isinstance(spec, FixedLenSequenceFeature):
            if not spec.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
            shape = as_shape(spec.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known but received "
                                 f"{shape}.")
            dense[key] = (_check_dtype(key, spec.dtype), [-1] + shape.as_list(), spec.default_value, True)
        else:
            raise ValueError(f"Unsupported feature spec for {key!r}: {spec!r} (use FixedLenFeature, VarLenFeature, "
                             f"FixedLenSequenceFeature or SparseFeature).")
    return sparse, dense


def _dense_default(key, dtype, shape, default, sequence):
    np_type = object if dtype == dtypes.string else dtype.as_numpy_dtype
    if default is None:
        return constant_op.constant(np.zeros(0, np_type), dtype=dtype, name=f"key_{key}")
    value = np.asarray(default, dtype=np_type)
    if sequence:
        if value.size != 1:
            raise ValueError(f"The default_value of FixedLenSequenceFeature {key!r} must be a scalar (the padding).")
        return constant_op.constant(value.reshape(()), dtype=dtype, name=f"key_{key}")
    if value.size != int(np.prod(shape)):
        raise ValueError(f"Cannot reshape a tensor with {value.size} elements to shape {shape} (the default_value "
                         f"of feature {key!r}).")
    return constant_op.constant(value.reshape(shape), dtype=dtype, name=f"key_{key}")


def _merge_sparse_feature(spec, parsed):
    """TensorFlow's SparseFeature: the index features give the indices, the value feature the values."""
    index_keys = [spec.index_key] if isinstance(spec.index_key, str) else list(spec.index_key)
    sizes = [spec.size] if isinstance(spec.size, int) else list(spec.size)
    ids = [parsed[k] for k in index_keys]
    values = parsed[spec.value_key]
    leading = ids[0].indices[:, :-1]
    indices = array_ops.concat([leading] + [array_ops.expand_dims(i.values, 1) for i in ids], 1)
    shape = array_ops.concat([ids[0].dense_shape[:-1], constant_op.constant(sizes, dtype=dtypes.int64)], 0)
    merged = SparseTensor(indices, values.values, shape)
    if spec.already_sorted:
        return merged
    ordered = sparse_ops.sparse_reorder(merged)
    return SparseTensor(ordered.indices, ordered.values, shape)


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized ``tf.train.Example`` protos into a dict of tensors (see the specs above)."""
    sparse, dense = _split_features(features)
    with name_scope(name, "ParseExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        names = convert_to_tensor(np.zeros(0, object) if example_names is None else example_names,
                                  dtype=dtypes.string, name="names")
        sparse_keys, dense_keys = sorted(sparse), sorted(dense)
        defaults = [_dense_default(k, *dense[k]) for k in dense_keys]
        key_tensor = lambda keys, n: constant_op.constant(np.array(keys, dtype=object).reshape(-1),  # noqa: E731
                                                          dtype=dtypes.string, name=n)
        op = apply_op("ParseExampleV2",
                      [serialized, names, key_tensor(sparse_keys, "sparse_keys"), key_tensor(dense_keys, "dense_keys"),
                       key_tensor([], "ragged_keys"), defaults],
                      {"Tdense": [dense[k][0] for k in dense_keys], "num_sparse": len(sparse_keys),
                       "sparse_types": [sparse[k] for k in sparse_keys], "ragged_value_types": [],
                       "ragged_split_types": [], "dense_shapes": [TensorShape([None if d == -1 else d for d in
                                                                               dense[k][1]]) for k in dense_keys]},
                      name="ParseExampleV2")
        outs = op.outputs
        n = len(sparse_keys)
        parsed = {k: SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i, k in enumerate(sparse_keys)}
        parsed.update({k: outs[3 * n + i] for i, k in enumerate(dense_keys)})
        result = {}
        for key, spec in features.items():
            result[key] = _merge_sparse_feature(spec, parsed) if isinstance(spec, SparseFeature) else parsed[key]
        return result


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized ``tf.train.Example`` (a scalar string): ``parse_example`` without the batch
    dimension."""
    if not features:
        raise ValueError("Invalid argument: features cannot be None.")
    with name_scope(name, "ParseSingleExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 0:
            raise ValueError(f"Input serialized must be a scalar, got shape {serialized.shape}.")
        if example_names is not None:
            example_names = convert_to_tensor(example_names, dtype=dtypes.string, name="example_names")
        return parse_example(serialized, features, None, example_names)


# ---------------------------------------------------------------------------------------- decode_csv
def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """Splits CSV ``records`` (strings) into one tensor per column, of the type of its record default.

    ``record_defaults``: per column a one-element default (``[0]``, ``[0.0]``, ``[""]``) or an empty
    one (``[]``, or e.g. ``tf.constant([], tf.int64)``: the column is required). Empty fields and
    ``na_value`` take the default. ``select_cols`` (increasing indices) picks the columns parsed.
    """
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if any(b <= a for a, b in zip(select_cols, select_cols[1:])):
            raise ValueError("select_cols is not strictly increasing.")
        if select_cols and select_cols[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    if len(str(field_delim)) != 1:
        raise ValueError(f"field_delim must be one character, got {field_delim!r}.")
    with name_scope(name, "DecodeCSV"):
        records = convert_to_tensor(records, dtype=dtypes.string, name="records")
        defaults = []
        for i, d in enumerate(record_defaults):
            t = d if hasattr(d, "dtype") and hasattr(d, "op") else convert_to_tensor(
                d, dtype=dtypes.float32 if isinstance(d, (list, tuple)) and not d else None, name=f"record_default_{i}")
            if t.shape.ndims is not None and t.shape.ndims > 1:
                raise ValueError(f"Each record default should be at most rank 1, record default {i} has shape "
                                 f"{t.shape}.")
            defaults.append(t)
        op = apply_op("DecodeCSV", [records, defaults],
                      {"OUT_TYPE": [t.dtype.base_dtype for t in defaults], "field_delim": str(field_delim),
                       "use_quote_delim": bool(use_quote_delim), "na_value": str(na_value),
                       "select_cols": select_cols or []}, name="DecodeCSV")
        return list(op.outputs)
