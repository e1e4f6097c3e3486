"""CPU kernels of ``ParseExampleV2`` (``tf.train.Example`` protos, decoded by protobuf's C parser,
values gathered per feature with NumPy) and ``DecodeCSV`` (fields split by ``bytes.split`` /
``bytes.find``, columns converted with NumPy), with TensorFlow's results and error messages.

Example:
    >>> from sparseflow._src.kernels.parsing_kernels import split_csv_record
    >>> split_csv_record(b'1,"a ""q"" b",x', b",", True, 0)
    [b'1', b'a "q" b', b'x']
"""

from __future__ import annotations

import itertools

import numpy as np
from google.protobuf.message import DecodeError

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.proto import example_pb2
from sparseflow._src.kernels.registry import register_kernel

_KIND = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_KIND_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _bad(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _texts(arr) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else str(v) for v in np.asarray(arr, dtype=object).reshape(-1).tolist()]


# ---------------------------------------------------------------------------------------- ParseExampleV2
class _Batch:
    """The examples of one call, decoded, with their names for error messages."""

    def __init__(self, serialized, names):
        flat = np.asarray(serialized, dtype=object).reshape(-1).tolist()
        self.names = _texts(names) if np.size(names) else []
        self.maps = []
        parse = example_pb2.Example.FromString
        for i, s in enumerate(flat):
            try:
                self.maps.append(parse(s).features.feature)
            except (DecodeError, TypeError):
                shown = s[:64] if isinstance(s, bytes) else s
                raise _bad(f"Could not parse example input, value: {shown!r} ({self.name(i)}, index {i} of the "
                           f"batch)") from None
        self.size = len(flat)

    @classmethod
    def of_maps(cls, maps, names) -> _Batch:
        """A batch of already decoded feature maps (the contexts of SequenceExamples)."""
        batch = cls.__new__(cls)
        batch.names, batch.maps, batch.size = names, list(maps), len(maps)
        return batch

    def name(self, i) -> str:
        return f"Name: {self.names[i] if i < len(self.names) else '<unknown>'}"

    def values(self, key: str, dtype):
        """(per-example counts, present mask, all values in order) of feature ``key``."""
        kind = _KIND[dtype]
        counts = np.zeros(self.size, np.int64)
        present = np.zeros(self.size, bool)
        parts = []
        for i, m in enumerate(self.maps):
            f = m.get(key)
            if f is None:
                continue
            got = f.WhichOneof("kind")
            if got is None:
                present[i] = True
                continue
            if got != kind:
                raise _bad(f"{self.name(i)}, Key: {key}, Index: {i}.  Data types don't match. Data type: "
                           f"{_KIND_NAME[got]} but expected type: {_KIND_NAME[kind]}")
            vals = getattr(f, kind).value
            counts[i] = len(vals)
            present[i] = True
            parts.append(vals)
        total = int(counts.sum())
        if dtype == dtypes.string:
            flat = np.empty(total, object)
            flat[:] = list(itertools.chain.from_iterable(parts))
        else:
            flat = np.fromiter(itertools.chain.from_iterable(parts), dtype=dtype.as_numpy_dtype, count=total)
        return counts, present, flat


def _positions(counts):
    """(row, position within the row) of every value of a flattened ragged batch."""
    rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    counts = np.asarray(counts, dtype=np.int64)
    starts = np.cumsum(counts) - counts  # an empty batch has no rows
    return rows, np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)


def _sparse(batch, key, dtype, scalar):
    counts, _, flat = batch.values(key, dtype)
    rows, pos = _positions(counts)
    width = int(counts.max()) if len(counts) else 0
    if scalar:
        return pos.reshape(-1, 1), flat, np.array([width], np.int64)
    return np.stack([rows, pos], axis=1), flat, np.array([batch.size, width], np.int64)


def _dense(batch, key, dtype, shape, default, scalar):
    np_type = object if dtype == dtypes.string else dtype.as_numpy_dtype
    counts, present, flat = batch.values(key, dtype)
    default = np.asarray(default, dtype=np_type)
    if shape and shape[0] == -1:  # FixedLenSequenceFeature: steps padded to the longest example
        stride = int(np.prod(shape[1:]))
        for i in np.nonzero(counts % stride if stride else counts)[0][:1].tolist():
            raise _bad(f"{batch.name(i)}, Key: {key}, Index: {i}.  Number of {_KIND_NAME[_KIND[dtype]]} values is not "
                       f"a multiple of stride length. Saw {counts[i]} values but output shape is: "
                       f"[?,{','.join(str(d) for d in shape[1:])}]")
        steps = counts // stride if stride else counts * 0
        longest = int(steps.max()) if len(steps) else 0
        pad = default.reshape(-1)[0] if default.size else (b"" if dtype == dtypes.string else 0)
        out = np.full((batch.size, longest * stride), pad, dtype=np_type)
        rows, pos = _positions(counts)
        out[rows, pos] = flat
        out = out.reshape([batch.size, longest] + list(shape[1:]))
        return out[0] if scalar else out
    size = int(np.prod(shape))
    out = np.empty((batch.size, size), dtype=np_type)
    has = counts > 0 if size else present
    missing = ~has
    if missing.any():
        if default.size == 0 and size:
            raise _bad(f"{batch.name(int(np.argmax(missing)))}, Feature: {key} (data type: "
                       f"{_KIND_NAME[_KIND[dtype]]}) is required but could not be found.")
        out[missing] = default.reshape(-1)
    wrong = np.nonzero(has & (counts != size))[0]
    if len(wrong):
        i = int(wrong[0])
        raise _bad(f"{batch.name(i)}, Key: {key}, Index: {i}.  Number of {_KIND_NAME[_KIND[dtype]]} values != "
                   f"expected.  Values size: {counts[i]} but output shape: [{','.join(str(d) for d in shape)}]")
    out[has] = flat.reshape(-1, size) if size else flat.reshape(-1, 0)
    out = out.reshape([batch.size] + list(shape))
    return out[0] if scalar else out


@register_kernel("ParseExampleV2")
def _parse_example(node):
    a = node.attrs
    n_sparse = a["num_sparse"]
    sparse_types = [dtypes.as_dtype(t) for t in a.get("sparse_types") or []]
    dense_types = [dtypes.as_dtype(t) for t in a.get("Tdense") or []]
    dense_shapes = [list(s) if not hasattr(s, "as_list") else [-1 if d is None else d for d in s.as_list()]
                    for s in a.get("dense_shapes") or []]
    if a.get("ragged_value_types"):
        raise _bad("ParseExampleV2: ragged features are not supported (use VarLenFeature).")

    def compute(serialized, names, sparse_keys, dense_keys, ragged_keys, *defaults):
        serialized = np.asarray(serialized, dtype=object)
        if serialized.ndim > 1:
            raise _bad(f"Expected serialized to be a scalar or vector, got shape {list(serialized.shape)}.")
        scalar = serialized.ndim == 0
        batch = _Batch(serialized, names)
        skeys, dkeys = _texts(sparse_keys), _texts(dense_keys)
        if len(skeys) != n_sparse or len(dkeys) != len(dense_types):
            raise _bad(f"Expected {n_sparse} sparse and {len(dense_types)} dense keys, got {len(skeys)} and "
                       f"{len(dkeys)}.")
        sparse = [_sparse(batch, k, t, scalar) for k, t in zip(skeys, sparse_types)]
        dense = [_dense(batch, k, t, s, d, scalar) for k, t, s, d in zip(dkeys, dense_types, dense_shapes, defaults)]
        out = [s[0] for s in sparse] + [s[1] for s in sparse] + [s[2] for s in sparse] + dense
        return out[0] if len(out) == 1 else tuple(out)

    return compute


# ---------------------------------------------------------------------------------------- DecodeCSV
def split_csv_record(record: bytes, delim: bytes, quoted: bool, index: int) -> list:
    """The fields of one CSV record, TensorFlow's rules: a field starting with a quote runs to the
    closing quote (``""`` is a quote) that ends the record or precedes the delimiter."""
    if not record:
        return []
    if not quoted or b'"' not in record:
        return record.split(delim)
    fields, pos, n = [], 0, len(record)
    while True:
        if pos < n and record[pos:pos + 1] == b'"':
            parts, p = [], pos + 1
            while True:
                q = record.find(b'"', p)
                if q < 0:
                    raise _bad(f"Quoted field has to end with quote followed by delim or end (record {index}: "
                               f"{record!r})")
                parts.append(record[p:q])
                if record[q + 1:q + 2] == b'"':
                    parts.append(b'"')
                    p = q + 2
                    continue
                break
            fields.append(b"".join(parts))
            end = q + 1
            if end >= n:
                return fields
            if record[end:end + 1] != delim:
                raise _bad(f"Quote inside a string has to be escaped by another quote (record {index}: {record!r})")
            pos = end + 1
            continue
        d = record.find(delim, pos)
        field = record[pos:] if d < 0 else record[pos:d]
        if b'"' in field:
            raise _bad(f"Unquoted fields cannot have quotes/CRLFs inside (record {index}: {record!r})")
        fields.append(field)
        if d < 0:
            return fields
        pos = d + 1


_CSV_TYPE_NAMES = {np.float32: "float", np.float64: "double", np.int32: "int32", np.int64: "int64"}


def _convert_column(col: list, dtype, default, column: int, na: bytes):
    np_type = object if dtype == dtypes.string else dtype.as_numpy_dtype
    arr = np.empty(len(col), object)
    arr[:] = col
    missing = np.fromiter((f == b"" or f == na for f in col), bool, count=len(col)) if na else \
        np.fromiter((not f for f in col), bool, count=len(col))
    out = np.empty(len(col), dtype=np_type)
    if missing.any():
        if default.size == 0:
            raise _bad(f"Field {column} is required but missing in record {int(np.argmax(missing))}!")
        out[missing] = default.reshape(-1)[0]
    keep = ~missing
    if dtype == dtypes.string:
        out[keep] = arr[keep]
        return out
    texts = arr[keep]
    target = np.int64 if dtype.is_integer else np_type
    try:
        if any(b"_" in t for t in texts.tolist()):  # Python's digit separators are not numbers in TensorFlow
            raise ValueError
        values = texts.astype(bytes).astype(target) if len(texts) else np.zeros(0, target)
    except (ValueError, OverflowError):  # numpy refused a field: convert one by one, naming the bad one
        values = np.array([_parse_field(t, dtype, np_type, column, r) for r, t in
                           zip(np.nonzero(keep)[0].tolist(), texts.tolist())], dtype=target)
    if dtype == dtypes.int32 and len(values) and (values.min() < -2**31 or values.max() >= 2**31):
        r = int(np.nonzero(keep)[0][np.argmax((values < -2**31) | (values >= 2**31))])
        raise _bad(f"Field {column} in record {r} is not a valid int32: {col[r].decode(errors='replace')}")
    out[keep] = values
    return out


def _parse_field(text: bytes, dtype, np_type, column: int, record: int):
    try:
        if b"_" in text:
            raise ValueError
        return int(text) if dtype.is_integer else float(text)
    except ValueError:
        raise _bad(f"Field {column} in record {record} is not a valid {_CSV_TYPE_NAMES[np_type]}: "
                   f"{text.decode(errors='replace')}") from None


@register_kernel("DecodeCSV")
def _decode_csv(node):
    a = node.attrs
    types = [dtypes.as_dtype(t) for t in a["OUT_TYPE"]]
    delim = a.get("field_delim", ",").encode()
    quoted = bool(a.get("use_quote_delim", True))
    na = a.get("na_value", "").encode()
    select = list(a.get("select_cols") or [])
    if select and len(select) != len(types):
        raise _bad(f"DecodeCSV: {len(select)} select_cols for {len(types)} record defaults.")

    def compute(records, *defaults):
        records = np.asarray(records, dtype=object)
        defaults = [np.asarray(d) for d in defaults]
        for i, d in enumerate(defaults):
            if d.size > 1:
                raise _bad(f"Record default {i} must have at most one element, got {d.size}.")
        flat = records.reshape(-1).tolist()
        cols = select or list(range(len(types)))
        need = cols[-1] + 1 if cols else 0
        rows = []
        for i, rec in enumerate(flat):
            fields = split_csv_record(rec, delim, quoted, i)
            if (len(fields) != len(types) and not select) or len(fields) < need:
                have = len(fields) if not select else sum(c < len(fields) for c in select)
                raise _bad(f"Expect {len(types)} fields but have {have} in record {i}")
            rows.append(fields)
        out = []
        for j, (c, t) in enumerate(zip(cols, types)):
            column = [r[c] for r in rows]
            out.append(_convert_column(column, t, defaults[j], c, na).reshape(records.shape))
        return out[0] if len(out) == 1 else tuple(out)

    return compute
