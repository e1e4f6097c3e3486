"""ReadFile, WriteFile, MatchingFiles, DecodeRaw, DecodeCompressed, SerializeTensor and ParseTensor.

Files are written and read back in a fresh working directory (relative names, so both processes see
the same ones), including a missing file and a pattern that matches nothing; raw bytes in both byte
orders, of unequal lengths and of lengths that are not a multiple of the type's size; compressed
strings (ZLIB, GZIP, none, corrupt); serialized tensors of every kind of dtype, parsed back, parsed
as the wrong dtype and parsed from bytes that are no TensorProto.
"""

from __future__ import annotations

import gzip
import zlib

import numpy as np

from tests.opdb.spec import ANY_TYPE, OpEntry, Sample, T, empty, regular


def _s(*values):
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def _scalar(value):
    return np.array(value, dtype=object)


def _write_then_read(tf, filename, contents):
    write = tf.raw_ops.WriteFile(filename=filename, contents=contents)
    with tf.control_dependencies([write]):
        return [tf.raw_ops.ReadFile(filename=filename)]


def _read(tf, filename):
    return [tf.raw_ops.ReadFile(filename=filename)]


def _match(tf, pattern):
    writes = [tf.raw_ops.WriteFile(filename=name, contents="x") for name in ("m/a.txt", "m/b.txt", "m/c.csv")]
    with tf.control_dependencies(writes):
        return [tf.raw_ops.MatchingFiles(pattern=pattern)]


def _round_trip(tf, tensor):
    serialized = tf.raw_ops.SerializeTensor(tensor=tensor)
    return [serialized, tf.raw_ops.ParseTensor(serialized=serialized, out_type=tensor.dtype)]


def _parse_as(tf, tensor, out_type):
    return [tf.raw_ops.ParseTensor(serialized=tf.raw_ops.SerializeTensor(tensor=tensor), out_type=out_type)]


_FOUR = _s(b"\x01\x00\x02\x00", b"\xff\xff\x00\x80")
ENTRIES = [
    OpEntry("WriteFile", [
        Sample("text", {"filename": _scalar(b"out/a.txt"), "contents": _scalar(b"hello\nworld")}),
        Sample("empty", {"filename": _scalar(b"b.bin"), "contents": _scalar(b"")}),
        Sample("not_scalar", {"filename": _s(b"c.txt"), "contents": _scalar(b"x")}),
    ], dtypes=(None,), build=_write_then_read, workdir=True),
    OpEntry("ReadFile", [
        Sample("missing", {"filename": _scalar(b"no_such_file.txt")}),
        Sample("directory", {"filename": _scalar(b".")}),
    ], dtypes=(None,), build=_read, workdir=True),
    OpEntry("MatchingFiles", [
        Sample("glob", {"pattern": _scalar(b"m/*.txt")}),
        Sample("patterns", {"pattern": _s(b"m/*.csv", b"m/a.*")}),
        Sample("nothing", {"pattern": _scalar(b"m/*.json")}),
    ], dtypes=(None,), build=_match, workdir=True),
    OpEntry("DecodeRaw", [
        Sample("int16", {"bytes": _FOUR}, {"out_type": "int16"}),
        Sample("uint16_big_endian", {"bytes": _FOUR}, {"out_type": "uint16", "little_endian": False}),
        Sample("float32", {"bytes": _FOUR}, {"out_type": "float32"}),
        Sample("uint8_matrix", {"bytes": _s(b"ab", b"cd").reshape(1, 2)}, {"out_type": "uint8"}),
        Sample("bool", {"bytes": _s(b"\x00\x01")}, {"out_type": "bool"}),
        Sample("float64_big_endian", {"bytes": _s(b"\x3f\xf0\x00\x00\x00\x00\x00\x00")},
               {"out_type": "float64", "little_endian": False}),
        Sample("empty_strings", {"bytes": _s(b"", b"")}, {"out_type": "int32"}),
        Sample("no_strings", {"bytes": _s()}, {"out_type": "int32"}),
        Sample("unequal_lengths", {"bytes": _s(b"\x01\x00", b"\x01\x00\x02\x00")}, {"out_type": "int16"}),
        Sample("not_a_multiple", {"bytes": _s(b"\x01\x00\x02")}, {"out_type": "int16"}),
    ], dtypes=(None,)),
    OpEntry("DecodeCompressed", [
        Sample("zlib", {"bytes": _s(zlib.compress(b"abc"), zlib.compress(b""))}, {"compression_type": "ZLIB"}),
        Sample("gzip", {"bytes": _s(gzip.compress(b"xyz" * 5, mtime=0))}, {"compression_type": "GZIP"}),
        Sample("none", {"bytes": _s(b"as is")}),
        Sample("corrupt", {"bytes": _s(b"not zlib")}, {"compression_type": "ZLIB"}),
    ], dtypes=(None,)),
    OpEntry("SerializeTensor", [
        Sample("matrix", {"tensor": regular(2, 3)}, grad=False),
        Sample("scalar", {"tensor": regular()}, grad=False),
        Sample("empty", {"tensor": empty(0, 2)}, grad=False),
    ], dtypes=ANY_TYPE, build=_round_trip),
    OpEntry("ParseTensor", [
        Sample("wrong_dtype", {"tensor": T([1, 2])}, {"out_type": "int64"}, grad=False),
        Sample("same_dtype", {"tensor": T([1, 2])}, {"out_type": "int32"}, grad=False),
    ], dtypes=("int32",), build=_parse_as),
    OpEntry("ParseTensor", [
        Sample("garbage", {"serialized": _scalar(b"\xff\xff\xff")}, {"out_type": "float32"}),
        Sample("not_scalar", {"serialized": _s(b"")}, {"out_type": "float32"}),
    ], dtypes=(None,), name="ParseTensor_raw"),
]

def decoded_examples(values: np.ndarray) -> np.ndarray:
    """Serialized Examples as their content: a repeated number may be written packed (as sparseflow's
    protobuf writes it) or one field per value (as TensorFlow's JSON converter does); both parse to
    the same message, which is compared re-serialized."""
    from sparseflow._src.framework.proto.example_pb2 import Example

    def one(blob: bytes) -> bytes:
        message = Example()
        message.ParseFromString(bytes(blob))
        return message.SerializeToString(deterministic=True)

    return np.array([one(v) for v in values.reshape(-1)], dtype=object).reshape(values.shape)


_JSON = '{"features": {"feature": {"a": {"int64List": {"value": ["1", "-2"]}}, "b": {"floatList": {"value": [0.5]}}}}}'
ENTRIES += [
    OpEntry("DecodeJSONExample", [
        Sample("examples", {"json_examples": _s(_JSON.encode(), b"{}")}),
        Sample("matrix", {"json_examples": _s(b"{}", b"{}").reshape(2, 1)}),
        Sample("bytes_feature", {"json_examples": _s(b'{"features": {"feature": {"s": {"bytesList": {"value": '
                                                     b'["aGk="]}}}}}')}),
        Sample("bad_json", {"json_examples": _s(b"{not json")}),
        Sample("unknown_field", {"json_examples": _s(b'{"nope": 1}')}),
    ], dtypes=(None,), canonical=decoded_examples),
]
