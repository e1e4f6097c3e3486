"""What crosses a process: tensors as raw bytes, partitions as self-contained GraphDefs.

Tensors: a numeric or bool array travels as a TensorProto whose ``tensor_content`` is its
little-endian bytes (one copy; decoding is a zero-copy read-only view); strings use
``string_val``. Nothing is pickled; a malformed tensor (size that does not match its shape, an
unknown dtype) is an ``InvalidArgumentError`` naming it.

Partitions: a task's nodes become a GraphDef in the step's global order, each node carrying its
output shapes (``_output_shapes``) and the user's creation site (``_sparseflow_site``: file,
line, function) so that errors on the remote task name the user's line; library functions
travel as FunctionDefs.

Example:
    >>> import numpy as np
    >>> p = tensor_to_proto(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> len(p.tensor_content), tensor_from_proto(p).tolist()
    (24, [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.graph_io import graph_def_to_ir, ir_to_graph_def, make_ndarray, make_tensor_proto
from sparseflow._src.framework.ir import GraphIR
from sparseflow._src.framework.proto.tensor_pb2 import TensorProto
from sparseflow._src.framework.proto.tensor_shape_pb2 import TensorShapeProto
from sparseflow._src.framework.user_frames import CreationSite

# Tensors larger than this cross in chunks of this size (RecvTensorChunk), so no gRPC or protobuf
# message limit (2 GiB) is ever reached.
CHUNK_BYTES = 64 << 20

SITE_ATTR = "_sparseflow_site"
SHAPES_ATTR = "_output_shapes"

_RAW_KINDS = "biuf"  # bool, signed, unsigned, float: raw bytes
_ENUM_OF: dict = {}
_DTYPE_OF: dict = {}


def _enum(np_dtype: np.dtype) -> int:
    e = _ENUM_OF.get(np_dtype)
    if e is None:
        e = _ENUM_OF[np_dtype] = dtypes.as_dtype(np_dtype).as_datatype_enum
    return e


def _np_dtype(enum: int) -> np.dtype:
    d = _DTYPE_OF.get(enum)
    if d is None:
        try:
            d = np.dtype(dtypes.as_dtype(enum).as_numpy_dtype).newbyteorder("<")
        except (TypeError, ValueError, KeyError):
            raise errors.InvalidArgumentError(None, None, f"Tensor with unknown dtype enum {enum}.") from None
        _DTYPE_OF[enum] = d
    return d


def tensor_to_proto(value, out: TensorProto | None = None) -> TensorProto:
    """``value`` as a TensorProto (into ``out`` when given)."""
    proto = TensorProto() if out is None else out
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    if arr.dtype.kind in _RAW_KINDS and arr.dtype.itemsize <= 8:
        if arr.dtype.byteorder == ">":  # (its dtype enum is the little-endian one's)
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        proto.dtype = _enum(arr.dtype)
        shape = proto.tensor_shape
        for d in arr.shape:
            shape.dim.add(size=d)
        proto.tensor_content = arr.tobytes()
        return proto
    proto.CopyFrom(make_tensor_proto(arr))
    return proto


def is_chunkable(value) -> bool:
    """True for a numeric array larger than one chunk (it crosses with RecvTensorChunk)."""
    return isinstance(value, np.ndarray) and value.dtype.kind in _RAW_KINDS and value.nbytes > CHUNK_BYTES


def tensor_header(value, out: TensorProto) -> memoryview:
    """Writes dtype and shape of ``value`` into ``out``; returns its raw little-endian bytes."""
    out.dtype = _enum(value.dtype)
    for d in value.shape:
        out.tensor_shape.dim.add(size=d)
    arr = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
    return memoryview(arr.reshape(-1).view(np.uint8))


def empty_from_header(proto: TensorProto, total_bytes: int, what: str = "tensor") -> np.ndarray:
    """A writable array for the chunks of a tensor announced by ``proto`` (dtype, shape)."""
    dt = _np_dtype(proto.dtype)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    n = 1
    for d in shape:
        n *= d
    if any(d < 0 for d in shape) or n * dt.itemsize != total_bytes:
        raise errors.InvalidArgumentError(None, None, f"Malformed {what}: {total_bytes} bytes announced for shape "
                                                      f"{shape} of {dt}.")
    return np.empty(shape, dt)


def tensor_from_proto(proto: TensorProto, what: str = "tensor") -> np.ndarray:
    """The array a TensorProto holds; numeric content is a read-only view of the message bytes."""
    content = proto.tensor_content
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    if content and proto.dtype != dtypes.string.as_datatype_enum:
        dt = _np_dtype(proto.dtype)
        n = 1
        for d in shape:
            n *= d
        if any(d < 0 for d in shape) or n * dt.itemsize != len(content):
            raise errors.InvalidArgumentError(None, None, f"Malformed {what}: {len(content)} bytes for shape {shape} "
                                                          f"of {dt}.")
        arr = np.frombuffer(content, dtype=dt)
        return arr.reshape(shape)
    try:
        return make_ndarray(proto)
    except (TypeError, ValueError, KeyError) as e:
        raise errors.InvalidArgumentError(None, None, f"Malformed {what}: {e}") from None


# ------------------------------------------------------------------------------------- partitions
def partition_to_graph_def(nodes, library, versions=None):
    """A GraphDef of one task's nodes (in order), with output shapes, creation sites and functions."""
    tagged = []
    for n in nodes:
        attrs = dict(n.attrs)
        if n.out_shapes:
            attrs[SHAPES_ATTR] = [_shape_proto(s) for s in n.out_shapes]
        if n.site is not None:
            attrs[SITE_ATTR] = [str(n.site.filename).encode(), str(n.site.lineno).encode(),
                                str(n.site.function).encode()]
        tagged.append(n.copy(attrs=attrs))
    return ir_to_graph_def(GraphIR(tagged, library, versions))


def partition_from_graph_def(graph_def) -> GraphIR:
    """The GraphIR of a registered partition (sites restored; node order kept)."""
    try:
        ir = graph_def_to_ir(graph_def)
    except (ValueError, TypeError, KeyError) as e:
        raise errors.InvalidArgumentError(None, None, f"Malformed partition GraphDef: {e}") from None
    out = []
    for n in ir.nodes:
        site = n.attrs.pop(SITE_ATTR, None)
        if site is not None and len(site) == 3:
            f, line, fn = (x.decode() if isinstance(x, bytes) else str(x) for x in site)
            n.site = CreationSite(f, int(line) if line.isdigit() else 0, fn)
        out.append(n)
    return GraphIR(out, ir.library, ir.versions)


def _shape_proto(shape) -> TensorShapeProto:
    from sparseflow._src.framework.graph_io import shape_to_proto

    return shape_to_proto(shape)
