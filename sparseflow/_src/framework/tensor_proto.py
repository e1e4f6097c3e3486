"""Conversions between NumPy/Python values and TensorFlow's DataType, TensorShapeProto and TensorProto.

``make_tensor_proto`` / ``make_ndarray`` are TensorFlow's functions of these names. Reading
checks every size before it allocates: content that does not match the shape, integers outside
their dtype, or a shape larger than any array are ValueErrors; a TensorProto that holds one value
for many elements becomes a read-only broadcast view (no memory for the elements), and one that
pads several values with its last expands to at most ``MAX_EXPANDED_BYTES``.

Example:
    >>> import numpy as np
    >>> p = make_tensor_proto(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> p.dtype, [d.size for d in p.tensor_shape.dim], make_ndarray(p)[1, 2]
    (1, [2, 3], np.float32(5.0))
    >>> big = make_ndarray(make_tensor_proto(0.5, shape=[2**20, 2**20]))
    >>> big.shape, big.strides, big[7, 9]
    ((1048576, 1048576), (0, 0), np.float32(0.5))
"""

from __future__ import annotations

import math

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.proto import tensor_pb2, tensor_shape_pb2
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape, unknown_shape

__all__ = ["dtype_from_enum", "shape_to_proto", "shape_from_proto", "make_tensor_proto", "tensor_content_proto",
           "make_ndarray", "MAX_EXPANDED_BYTES"]

TensorProto = tensor_pb2.TensorProto
TensorShapeProto = tensor_shape_pb2.TensorShapeProto


def _as_bytes(value) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


# ---------------------------------------------------------------------------------------- dtypes
def dtype_from_enum(enum: int) -> dtypes.DType:
    """The DType of a DataType enum value; a clear TypeError for types sparseflow cannot compute."""
    try:
        return dtypes.as_dtype(int(enum))
    except TypeError:
        from sparseflow._src.framework.proto import types_pb2

        try:
            label = types_pb2.DataType.Name(int(enum))
        except ValueError:
            label = str(int(enum))
        raise TypeError(f"DataType {label} is not supported by sparseflow.") from None


# ---------------------------------------------------------------------------------------- shapes
def shape_to_proto(shape) -> TensorShapeProto:
    """TensorShape (or shape-like) -> TensorShapeProto; unknown dims are -1."""
    shape = as_shape(shape)
    if shape.ndims is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else d) for d in shape.as_list()])


def shape_from_proto(proto: TensorShapeProto) -> TensorShape:
    if proto.unknown_rank:
        return unknown_shape()
    return TensorShape([None if d.size < 0 else d.size for d in proto.dim])


# ---------------------------------------------------------------------------------------- tensors
_SMALL_INTS = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.uint8, dtypes.uint16)
_VAL_FIELD = {dtypes.float32: "float_val", dtypes.float64: "double_val", dtypes.int64: "int64_val",
              dtypes.uint32: "uint32_val", dtypes.uint64: "uint64_val", dtypes.bool: "bool_val",
              dtypes.complex64: "scomplex_val", dtypes.complex128: "dcomplex_val",
              dtypes.string: "string_val", dtypes.float16: "half_val", dtypes.bfloat16: "half_val",
              **{d: "int_val" for d in _SMALL_INTS}}
# Arrays of these types with more than one element are written as raw bytes (TensorFlow's rule).
_CONTENT_TYPES = frozenset([dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
                            dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32,
                            dtypes.uint64])


def _bfloat16_bits(arr: np.ndarray) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns, rounding to nearest even (NaN stays NaN)."""
    u = np.ascontiguousarray(arr, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(arr), np.uint16(0x7FC0), bits)


def _bfloat16_values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False,
                      allow_broadcast=False) -> TensorProto:
    """A TensorProto holding ``values`` (TensorFlow's ``tf.make_tensor_proto``).

    Numeric arrays of more than one element are stored in ``tensor_content``; single values,
    booleans, complex numbers and strings in the typed ``*_val`` fields. With ``shape`` and a
    single value, the value is stored once and fills the shape when read.
    """
    if isinstance(values, TensorProto):
        return values
    from sparseflow._src.framework.tensor_util import to_ndarray

    dt = None if dtype is None else dtypes.as_dtype(dtype).base_dtype
    arr = to_ndarray(values, dt)
    if dt is None:
        dt = dtypes.as_dtype(arr.dtype)
    if dt in (dtypes.resource, dtypes.variant):
        raise TypeError(f"Cannot make a TensorProto of {dt.name} values.")
    if shape is None:
        shape = list(arr.shape)
    else:
        shape = [int(d) for d in (shape.as_list() if isinstance(shape, TensorShape) else shape)]
        n = math.prod(shape)
        if verify_shape and list(arr.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {tuple(arr.shape)}.")
        if arr.size > n:
            raise ValueError(f"Too many elements provided. Needed at most {n}, but received {arr.size}.")
        if arr.size < n and arr.size != 1 and allow_broadcast:
            arr = np.broadcast_to(arr, shape)
        if arr.size == n:
            arr = arr.reshape(shape)
    proto = TensorProto(dtype=dt.as_datatype_enum, tensor_shape=shape_to_proto(shape))
    n = math.prod(shape)
    if n > 1 and arr.ndim and arr.size == n and not any(arr.strides):  # one value broadcast: stored once
        arr = np.array([arr[(0,) * arr.ndim]], dtype=arr.dtype)
    if dt in _CONTENT_TYPES and arr.size == n and n > 1:
        little = np.dtype(dt.as_numpy_dtype).newbyteorder("<")
        proto.tensor_content = np.ascontiguousarray(arr, dtype=little).tobytes()
        return proto
    flat = arr.reshape(-1)
    field = getattr(proto, _VAL_FIELD[dt])
    if dt == dtypes.string:
        field.extend(_as_bytes(x) for x in flat)
    elif dt == dtypes.float16:
        field.extend(flat.astype(np.float16).view(np.uint16).tolist())
    elif dt == dtypes.bfloat16:
        field.extend(_bfloat16_bits(flat).tolist())
    elif dt.is_complex:
        field.extend(flat.astype(dt.as_numpy_dtype).view(np.float32 if dt == dtypes.complex64 else np.float64)
                     .tolist())
    else:
        field.extend(flat.astype(dt.as_numpy_dtype).tolist())
    return proto


def tensor_content_proto(arr: np.ndarray, dtype) -> TensorProto:
    """A TensorProto of ``arr`` as TensorFlow's kernels write one (``Tensor::AsProtoTensorContent``): the raw
    little-endian bytes of every element in ``tensor_content`` (strings in ``string_val``).

    Example:
        >>> tensor_content_proto(np.float32(1.5), dtypes.float32).tensor_content
        b'\\x00\\x00\\xc0?'
    """
    dt = dtypes.as_dtype(dtype).base_dtype
    shape = list(np.shape(arr))
    proto = TensorProto(dtype=dt.as_datatype_enum, tensor_shape=shape_to_proto(shape))
    if dt == dtypes.string:
        proto.string_val.extend(_as_bytes(x) for x in np.asarray(arr, dtype=object).reshape(-1))
    elif dt == dtypes.bfloat16:
        proto.tensor_content = _bfloat16_bits(np.asarray(arr, np.float32).reshape(-1)).astype("<u2").tobytes()
    else:
        little = np.dtype(dt.as_numpy_dtype).newbyteorder("<")
        proto.tensor_content = np.ascontiguousarray(arr, dtype=little).tobytes()
    return proto


MAX_EXPANDED_BYTES = 1 << 26  # a TensorProto that repeats its last value expands to at most this (64 MiB)


def _checked_ints(field, np_dt: np.dtype, wide: type) -> np.ndarray:
    """The values of a repeated int proto field as ``np_dt``; a value outside its range is a ValueError."""
    arr = np.array(field, dtype=wide)
    info = np.iinfo(np_dt)
    if arr.size and (arr.min() < info.min or arr.max() > info.max):
        bad = arr[(arr < info.min) | (arr > info.max)][0]
        raise ValueError(f"TensorProto of {np_dt.name} holds the value {int(bad)}, outside the range of "
                         f"{np_dt.name} [{info.min}, {info.max}].")
    return arr.astype(np_dt)


def make_ndarray(proto: TensorProto) -> np.ndarray:
    """The NumPy array a TensorProto holds (TensorFlow's ``tf.make_ndarray``).

    Reads ``tensor_content`` or the typed field; a typed field with fewer values than elements
    is padded with its last value (one value fills the shape, as a read-only broadcast view that
    takes no memory), an empty one gives zeros. Sizes are checked before anything is allocated:
    content that does not match the shape, values out of the dtype's range, or padding beyond
    ``MAX_EXPANDED_BYTES`` are ValueErrors.
    """
    dt = dtype_from_enum(proto.dtype)
    if dt in (dtypes.resource, dtypes.variant):
        raise TypeError(f"Cannot convert a TensorProto of {dt.name} to a NumPy array.")
    shape = shape_from_proto(proto.tensor_shape)
    if not shape.is_fully_defined():
        raise ValueError(f"A TensorProto must have a fully defined shape, got {shape}.")
    dims = shape.as_list()
    n = math.prod(dims)
    np_dt = np.dtype(dt.as_numpy_dtype)
    if n * np_dt.itemsize >= 2**63:
        raise ValueError(f"TensorProto shape {dims} of {dt.name} has {n} elements, more than any array can hold.")
    if proto.tensor_content and dt != dtypes.string:
        itemsize = 2 if dt == dtypes.bfloat16 else np_dt.itemsize
        if len(proto.tensor_content) != n * itemsize:
            raise ValueError(f"TensorProto content has {len(proto.tensor_content)} bytes, but its shape {dims} "
                             f"of {dt.name} needs {n * itemsize}.")
        if dt == dtypes.bfloat16:
            flat = _bfloat16_values(np.frombuffer(proto.tensor_content, dtype="<u2"))
        else:
            flat = np.frombuffer(proto.tensor_content, dtype=np_dt.newbyteorder("<")).astype(np_dt)
        return flat.reshape(dims)
    field = getattr(proto, _VAL_FIELD[dt])
    if len(field) > n * (2 if dt.is_complex else 1):
        raise ValueError(f"TensorProto holds {len(field)} values of {dt.name}, but its shape {dims} needs {n}.")
    if dt == dtypes.string:
        flat = np.empty(len(field), dtype=object)
        flat[:] = list(field)
    elif dt == dtypes.float16:
        flat = _checked_ints(field, np.dtype(np.uint16), np.int64).view(np.float16)
    elif dt == dtypes.bfloat16:
        flat = _bfloat16_values(_checked_ints(field, np.dtype(np.uint16), np.int64))
    elif dt.is_complex:
        parts = np.asarray(field, dtype=np.float32 if dt == dtypes.complex64 else np.float64)
        flat = parts.view(np_dt) if parts.size % 2 == 0 else parts[:-1].view(np_dt)
    elif np_dt.kind in "iu":
        flat = _checked_ints(field, np_dt, np.uint64 if np_dt == np.uint64 else np.int64)
    else:
        flat = np.array(list(field), dtype=np_dt)
    if flat.size > n:
        raise ValueError(f"TensorProto holds {flat.size} values of {dt.name}, but its shape {dims} "
                         f"needs {n}.")
    if flat.size < n:
        fill = flat[-1] if flat.size else (b"" if dt == dtypes.string else np_dt.type(0))
        if flat.size <= 1:
            one = np.empty((), dtype=np_dt)
            one[()] = fill
            return np.broadcast_to(one, dims)  # read-only, no memory for the elements
        if n * np_dt.itemsize > MAX_EXPANDED_BYTES:
            raise ValueError(f"TensorProto holds {flat.size} values of {dt.name} for shape {dims}: padded with "
                             f"its last value it would take {n * np_dt.itemsize} bytes (sparseflow expands at most "
                             f"{MAX_EXPANDED_BYTES}); store it in tensor_content.")
        padded = np.empty(n, dtype=np_dt)
        padded[: flat.size] = flat
        padded[flat.size:] = fill
        flat = padded
    return flat.reshape(dims)
