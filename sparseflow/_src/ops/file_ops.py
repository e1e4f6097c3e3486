"""Whole files and raw bytes as tensors: ReadFile, WriteFile, MatchingFiles, DecodeRaw,
DecodeCompressed, SerializeTensor and ParseTensor, with ``tf.read_file``, ``tf.write_file``,
``tf.matching_files``, ``tf.decode_raw``, ``tf.decode_compressed``, ``tf.serialize_tensor`` and
``tf.parse_tensor`` (also under ``tf.io``). Serialized tensors are TensorProto messages, the bytes
TensorFlow writes and reads.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     raw = tf.serialize_tensor(tf.constant([1.5, 2.0]))
    ...     words = tf.decode_raw(b"\\x01\\x00\\x02\\x00", tf.int16)
    ...     print(sess.run(tf.parse_tensor(raw, tf.float32)), sess.run(words))
    [1.5 2. ] [1 2]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape

__all__ = ["read_file", "write_file", "matching_files", "decode_raw", "decode_compressed", "serialize_tensor",
           "parse_tensor"]


def _read_file_shape(op):
    op.inputs[0].shape.with_rank(0)
    return [TensorShape([])]


def _write_file_shape(op):
    op.inputs[0].shape.with_rank(0)
    op.inputs[1].shape.with_rank(0)
    return []


def _matching_files_shape(op):
    op.inputs[0].shape.with_rank_at_most(1)
    return [TensorShape([None])]


def _decode_raw_shape(op):
    s = op.inputs[0].shape
    return [unknown_shape() if s.ndims is None else s.concatenate([None])]


register_op("ReadFile", inputs=["filename: string"], outputs=["contents: string"], shape_fn=_read_file_shape)
register_op("WriteFile", inputs=["filename: string", "contents: string"], shape_fn=_write_file_shape,
            is_stateful=True)
register_op("MatchingFiles", inputs=["pattern: string"], outputs=["filenames: string"],
            shape_fn=_matching_files_shape)
register_op("DecodeRaw", inputs=["bytes: string"], outputs=["output: out_type"],
            attrs=["out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, complex64, complex128, "
                   "bool, bfloat16}", "little_endian: bool = true"], shape_fn=_decode_raw_shape)
register_op("DecodeCompressed", inputs=["bytes: string"], outputs=["output: string"],
            attrs=["compression_type: string = ''"], shape_fn=lambda op: [op.inputs[0].shape])
register_op("SerializeTensor", inputs=["tensor: T"], outputs=["serialized: string"], attrs=["T: type"],
            shape_fn=lambda op: [TensorShape([])])
register_op("ParseTensor", inputs=["serialized: string"], outputs=["output: out_type"], attrs=["out_type: type"],
            shape_fn=lambda op: [unknown_shape()])


def read_file(filename, name=None):
    """The contents of the file ``filename`` as a string scalar (NotFoundError if it does not exist)."""
    return apply_op("ReadFile", [filename], name=name).outputs[0]


def write_file(filename, contents, name=None):
    """An op writing the string ``contents`` to ``filename``, creating missing directories."""
    return apply_op("WriteFile", [filename, contents], name=name)


def matching_files(pattern, name=None):
    """The sorted names of the files matching the glob ``pattern`` (one pattern or a vector)."""
    return apply_op("MatchingFiles", [pattern], name=name).outputs[0]


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """Each string of ``input_bytes`` read as a vector of ``out_type`` (all strings one length).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.decode_raw([b"\\x00\\x01"], tf.uint16, little_endian=False)).tolist())
        [[1]]
    """
    if input_bytes is None:
        input_bytes = bytes
    if input_bytes is None or out_type is None:
        raise TypeError("decode_raw needs input_bytes and out_type")
    attrs = {"out_type": dtypes.as_dtype(out_type), "little_endian": little_endian}
    return apply_op("DecodeRaw", [input_bytes], attrs, name=name).outputs[0]


def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002 - TensorFlow's argument name
    """Each string decompressed: ``compression_type`` is '' (unchanged), 'ZLIB' or 'GZIP'.

    Example:
        >>> import gzip
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.decode_compressed([gzip.compress(b"hi")], "GZIP")).tolist())
        [b'hi']
    """
    return apply_op("DecodeCompressed", [bytes], {"compression_type": compression_type}, name=name).outputs[0]


def serialize_tensor(tensor, name=None):
    """``tensor`` as the bytes of a TensorProto (a string scalar)."""
    return apply_op("SerializeTensor", [tensor], name=name).outputs[0]


def parse_tensor(serialized, out_type, name=None):
    """The tensor a serialized TensorProto holds; it must be of dtype ``out_type``."""
    return apply_op("ParseTensor", [serialized], {"out_type": dtypes.as_dtype(out_type)}, name=name).outputs[0]
