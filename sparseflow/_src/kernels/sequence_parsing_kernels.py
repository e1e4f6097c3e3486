"""CPU kernel of ``ParseSequenceExampleV2``: ``tf.train.SequenceExample`` protos decoded by protobuf,
the context parsed as an Example's features (``parsing_kernels``), the feature lists step by step.

Example:
    >>> from sparseflow._src.kernels.sequence_parsing_kernels import step_positions
    >>> step_positions([[2, 0, 1], [1]])[0].tolist()  # (example, step, position) of each value
    [[0, 0, 0], [0, 0, 1], [0, 2, 0], [1, 0, 0]]
"""

from __future__ import annotations

import itertools

import numpy as np
from google.protobuf.message import DecodeError

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.proto import example_pb2
from sparseflow._src.kernels.parsing_kernels import _KIND, _KIND_NAME, _bad, _Batch, _dense, _sparse, _texts
from sparseflow._src.kernels.registry import register_kernel


def _decode(serialized, names):
    flat = np.asarray(serialized, dtype=object).reshape(-1).tolist()
    names = _texts(names) if np.size(names) else []
    protos = []
    parse = example_pb2.SequenceExample.FromString
    for i, s in enumerate(flat):
        try:
            protos.append(parse(s))
        except (DecodeError, TypeError):
            shown = s[:64] if isinstance(s, bytes) else s
            name = names[i] if i < len(names) else "<unknown>"
            raise _bad(f"Could not parse example input, value: {shown!r} (Name: {name}, index {i} of the "
                       f"batch)") from None
    return protos, names


def _step_values(batch, protos, key, dtype, stride):
    """Per example the value counts of each step of feature list ``key`` (None: no such list), and all
    values in order. ``stride``: the values a dense step must hold (None: any number)."""
    kind = _KIND[dtype]
    counts, parts = [], []
    for i, proto in enumerate(protos):
        lists = proto.feature_lists.feature_list
        if key not in lists:
            counts.append(None)
            continue
        steps = []
        for f in lists[key].feature:
            got = f.WhichOneof("kind")
            if got is not None and got != kind:
                raise _bad(f"{batch.name(i)}, Feature list: {key}, Index: {len(steps)}.  Data types don't match. "
                           f"Expected type: {_KIND_NAME[kind]}, Actual type: {_KIND_NAME[got]}")
            vals = getattr(f, kind).value if got else ()
            if stride is not None and len(vals) != stride:
                raise _bad(f"{batch.name(i)}, Key: {key}, Index: {len(steps)}.  Number of {_KIND_NAME[kind]} values "
                           f"!= expected.  values size: {len(vals)} but output shape: [{stride}]")
            steps.append(len(vals))
            parts.append(vals)
        counts.append(steps)
    total = sum(sum(c) for c in counts if c)
    if dtype == dtypes.string:
        flat = np.empty(total, object)
        flat[:] = list(itertools.chain.from_iterable(parts))
    else:
        flat = np.fromiter(itertools.chain.from_iterable(parts), dtype=dtype.as_numpy_dtype, count=total)
    return counts, flat


def step_positions(counts):
    """``(example, step, position)`` of every value, and the longest number of steps and of values."""
    rows = [(b, s, p) for b, steps in enumerate(counts) for s, c in enumerate(steps or ()) for p in range(c)]
    longest_steps = max((len(c) for c in counts if c), default=0)
    longest_step = max((max(c) for c in counts if c), default=0)
    return np.array(rows, np.int64).reshape(-1, 3), longest_steps, longest_step


def _list_sparse(batch, protos, key, dtype, scalar):
    counts, flat = _step_values(batch, protos, key, dtype, None)
    where, steps, width = step_positions(counts)
    if scalar:
        return where[:, 1:], flat, np.array([steps, width], np.int64)
    return where, flat, np.array([len(protos), steps, width], np.int64)


def _list_dense(batch, protos, key, dtype, shape, assumed_empty, scalar):
    stride = int(np.prod(shape))
    counts, flat = _step_values(batch, protos, key, dtype, stride)
    for i, c in enumerate(counts):
        if c is None and not assumed_empty:
            raise _bad(f"{batch.name(i)}, Feature list '{key}' is required but could not be found.  Did you mean to "
                       f"include it in feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?")
    lengths = np.array([len(c) if c else 0 for c in counts], np.int64)
    longest = int(lengths.max()) if len(lengths) else 0
    np_type = object if dtype == dtypes.string else dtype.as_numpy_dtype
    out = np.full((len(protos), longest * stride), b"" if dtype == dtypes.string else 0, dtype=np_type)
    row_values = lengths * stride
    rows = np.repeat(np.arange(len(protos)), row_values)
    starts = np.cumsum(row_values) - row_values
    out[rows, np.arange(int(row_values.sum())) - np.repeat(starts, row_values)] = flat
    out = out.reshape([len(protos), longest] + list(shape))
    return (out[0], lengths[0]) if scalar else (out, lengths)


def _shape_list(s):
    return list(s) if not hasattr(s, "as_list") else list(s.as_list())


@register_kernel("ParseSequenceExampleV2")
def _parse_sequence_example(node):
    a = node.attrs
    if a.get("context_ragged_value_types") or a.get("feature_list_ragged_value_types"):
        raise _bad("ParseSequenceExampleV2: ragged features are not supported (use VarLenFeature).")
    c_sparse = [dtypes.as_dtype(t) for t in a.get("context_sparse_types") or []]
    c_dense = [dtypes.as_dtype(t) for t in a.get("Tcontext_dense") or []]
    c_shapes = [_shape_list(s) for s in a.get("context_dense_shapes") or []]
    f_sparse = [dtypes.as_dtype(t) for t in a.get("feature_list_sparse_types") or []]
    f_dense = [dtypes.as_dtype(t) for t in a.get("feature_list_dense_types") or []]
    f_shapes = [_shape_list(s) for s in a.get("feature_list_dense_shapes") or []]

    def compute(serialized, names, cs_keys, cd_keys, cr_keys, fs_keys, fd_keys, fr_keys, assumed_empty, *defaults):
        serialized = np.asarray(serialized, dtype=object)
        if serialized.ndim > 1:
            raise _bad(f"Expected serialized to be a scalar or vector, got shape {list(serialized.shape)}.")
        scalar = serialized.ndim == 0
        protos, name_list = _decode(serialized, names)
        keys = [_texts(k) for k in (cs_keys, cd_keys, fs_keys, fd_keys)]
        expected = [len(c_sparse), len(c_dense), len(f_sparse), len(f_dense)]
        if [len(k) for k in keys] != expected:
            raise _bad(f"Expected {expected} keys (context sparse, context dense, feature list sparse, feature list "
                       f"dense), got {[len(k) for k in keys]}.")
        assumed_empty = np.asarray(assumed_empty, dtype=bool).reshape(-1)
        if assumed_empty.size != len(f_dense):
            raise _bad(f"Expected feature_list_dense_missing_assumed_empty of {len(f_dense)} flags, got "
                       f"{assumed_empty.size}.")
        context = _Batch.of_maps([p.context.feature for p in protos], name_list)
        cs = [_sparse(context, k, t, scalar) for k, t in zip(keys[0], c_sparse)]
        cd = [_dense(context, k, t, s, d, scalar) for k, t, s, d in zip(keys[1], c_dense, c_shapes, defaults)]
        fs = [_list_sparse(context, protos, k, t, scalar) for k, t in zip(keys[2], f_sparse)]
        fd = [_list_dense(context, protos, k, t, s, bool(e), scalar)
              for k, t, s, e in zip(keys[3], f_dense, f_shapes, assumed_empty.tolist())]
        out = [s[0] for s in cs] + [s[1] for s in cs] + [s[2] for s in cs] + cd
        out += [s[0] for s in fs] + [s[1] for s in fs] + [s[2] for s in fs] + [d[0] for d in fd] + [d[1] for d in fd]
        return out[0] if len(out) == 1 else tuple(out)

    return compute
