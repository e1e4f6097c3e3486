"""CPU kernels of ReadFile, WriteFile, MatchingFiles, DecodeRaw, DecodeCompressed, SerializeTensor and
ParseTensor. Files go through ``framework/file_io`` (local paths and ``file://``; its errors are
TensorFlow's: NotFoundError for a missing file). A serialized tensor is parsed as a TensorProto
message, never executed or unpickled.

Example:
    >>> _decode_raw_one(b"\\x01\\x00\\x00\\x00", np.dtype("<i4"), 4).tolist()
    [1]
"""

from __future__ import annotations

import glob
import gzip
import os
import zlib

import numpy as np

from sparseflow._src.framework import errors, file_io
from sparseflow._src.framework.proto.tensor_pb2 import TensorProto
from sparseflow._src.framework.tensor_proto import dtype_from_enum, make_ndarray, tensor_content_proto
from sparseflow._src.kernels.array_shape_kernels import as_output, dbg, invalid
from sparseflow._src.kernels.registry import register_kernel


def _scalar_text(value, what) -> str:
    if np.ndim(value) != 0:
        raise invalid(f"Input {what} tensor must be scalar, but had shape: {dbg(np.shape(value))}")
    value = np.asarray(value, dtype=object).item()
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _bytes(value, what="contents") -> bytes:
    if np.ndim(value) != 0:
        raise invalid(f"Input {what} tensor must be scalar, but had shape: {dbg(np.shape(value))}")
    value = np.asarray(value, dtype=object).item()
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


@register_kernel("ReadFile")
def _read_file(node):
    def compute(filename):
        path = file_io._path(_scalar_text(filename, "filename"))
        try:
            with open(path, "rb") as f:
                return np.asarray(f.read(), dtype=object)
        except OSError as e:
            raise file_io._os_error(e, path) from None

    return compute


@register_kernel("WriteFile")
def _write_file(node):
    def compute(filename, contents):
        path = file_io._path(_scalar_text(filename, "filename"))
        data = _bytes(contents)
        try:
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        except OSError as e:
            raise file_io._os_error(e, path) from None

    return compute


@register_kernel("MatchingFiles")
def _matching_files(node):
    def compute(pattern):
        patterns = np.asarray(pattern, dtype=object).reshape(-1)
        found = set()
        for p in patterns:
            p = p.decode("utf-8") if isinstance(p, bytes) else str(p)
            found.update(glob.glob(file_io._path(p)))
        out = np.empty(len(found), dtype=object)
        out[:] = [f.encode("utf-8") for f in sorted(found)]
        return out

    return compute


def _decode_raw_one(data: bytes, dtype: np.dtype, size: int) -> np.ndarray:
    return np.frombuffer(data, dtype=dtype, count=len(data) // size)


@register_kernel("DecodeRaw")
def _decode_raw(node):
    out = np.dtype(node.attrs["out_type"].as_numpy_dtype)
    order = "<" if node.attrs.get("little_endian", True) else ">"
    wire = out.newbyteorder(order) if out.itemsize > 1 and out.kind != "b" else out

    def compute(data):
        strings = np.asarray(data, dtype=object)
        flat = [s if isinstance(s, bytes) else bytes(s) for s in strings.reshape(-1)]
        length = len(flat[0]) if flat else 0
        if any(len(s) != length for s in flat):
            raise invalid(f"DecodeRaw requires input strings to all be the same size, but element 0 has size "
                          f"{length} != {next(len(s) for s in flat if len(s) != length)}")
        if length % out.itemsize:
            raise invalid(f"Input to DecodeRaw has length {length} that is not a multiple of {out.itemsize}, the "
                          f"size of {node.attrs['out_type'].name}")
        n = length // out.itemsize
        result = np.empty((len(flat), n), dtype=out)
        for i, s in enumerate(flat):
            result[i] = _decode_raw_one(s, wire, out.itemsize)
        return result.reshape(strings.shape + (n,))

    return compute


@register_kernel("DecodeCompressed")
def _decode_compressed(node):
    kind = node.attrs.get("compression_type", "")
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind not in ("", "ZLIB", "GZIP"):
        raise invalid(f"Unsupported compression type: {kind}")

    def one(s: bytes) -> bytes:
        try:
            if kind == "ZLIB":
                return zlib.decompress(s)
            if kind == "GZIP":
                return gzip.decompress(s)
        except (zlib.error, OSError, EOFError) as e:
            raise errors.DataLossError(None, None, f"DecodeCompressed: the input is not valid {kind} data ({e})") \
                from None
        return s

    def compute(data):
        strings = np.asarray(data, dtype=object)
        out = np.empty(strings.shape, dtype=object)
        out.reshape(-1)[:] = [one(s if isinstance(s, bytes) else bytes(s)) for s in strings.reshape(-1)]
        return out

    return compute


@register_kernel("SerializeTensor")
def _serialize_tensor(node):
    dtype = node.attrs["T"]

    def compute(tensor):
        return np.asarray(tensor_content_proto(np.asarray(tensor), dtype).SerializeToString(), dtype=object)

    return compute


@register_kernel("ParseTensor")
def _parse_tensor(node):
    want = node.attrs["out_type"]

    def compute(serialized):
        if np.ndim(serialized) != 0:
            raise invalid(f"Expected `serialized` to be a scalar, got shape: {dbg(np.shape(serialized))}")
        proto = TensorProto()
        try:
            proto.ParseFromString(_bytes(serialized, "serialized"))
            have = dtype_from_enum(proto.dtype)
            value = make_ndarray(proto)
        except Exception as e:  # noqa: BLE001 - any malformed message is the input's fault
            raise invalid(f"Could not parse `serialized` as TensorProto: {e}") from None
        if have != want:
            raise invalid(f"Type mismatch between parsed tensor ({have.name}) and dtype ({want.name})")
        return as_output(value)

    return compute


@register_kernel("DecodeJSONExample")
def _decode_json_example(node):
    from google.protobuf import json_format

    from sparseflow._src.framework.proto.example_pb2 import Example

    def one(text) -> bytes:
        text = text.decode("utf-8") if isinstance(text, bytes) else str(text)
        try:
            return json_format.Parse(text, Example()).SerializeToString(deterministic=True)
        except json_format.ParseError as e:
            raise invalid(f"Error while parsing JSON: {e}") from None

    def compute(json_examples):
        strings = np.asarray(json_examples, dtype=object)
        out = np.empty(strings.shape, dtype=object)
        out.reshape(-1)[:] = [one(s) for s in strings.reshape(-1)]
        return out

    return compute
