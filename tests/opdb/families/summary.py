"""Summary ops: each returns a serialized ``Summary`` proto, compared byte for byte with TensorFlow's.

Scalar tags and values, vectors of them, rank-0 and empty tensors, infinities and NaN, integer
types; histograms of edge values; images of 1, 3 and 4 channels in uint8 and float (NaN as the bad
color), an empty batch, more images than max_images; audio clips of one and two channels; tensor
summaries of any type; merged summaries and their duplicate tags.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from tests.opdb.spec import EDGES, OpEntry, Sample, T, empty, regular


def s(*values):
    return np.array([v.encode() for v in values], dtype=object)


def tag(value="t"):
    return np.array(value.encode(), dtype=object)


def _fields(buf: bytes):
    """(field number, value) of a serialized protobuf message: varints as ints, length-delimited as bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        else:
            size = {1: 8, 5: 4}[wire]
            value, pos = buf[pos:pos + size], pos + size
        yield number, value


def _varint(buf: bytes, pos: int):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, pos


def _png_pixels(png: bytes) -> bytes:
    """The 8-bit pixels of a PNG: its IDAT stream inflated and its row filters undone."""
    pos, idat, width, channels = 8, b"", 0, 1
    while pos < len(png):
        n = struct.unpack(">I", png[pos:pos + 4])[0]
        kind, body = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, channels = struct.unpack(">I", body[:4])[0], {0: 1, 2: 3, 4: 2, 6: 4}[body[9]]
        elif kind == b"IDAT":
            idat += body
    raw, stride, ch = zlib.decompress(idat), width * channels, channels
    out, prev = bytearray(), [0] * stride
    for r in range(len(raw) // (stride + 1)):
        kind, line, cur = raw[r * (stride + 1)], raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)], []
        for i in range(stride):
            a, up, c = (cur[i - ch] if i >= ch else 0), prev[i], (prev[i - ch] if i >= ch else 0)
            p = a + up - c
            pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
            paeth = a if pa <= pb and pa <= pc else up if pb <= pc else c
            cur.append((line[i] + (0, a, up, (a + up) // 2, paeth)[kind]) & 255)
        out += bytes(cur)
        prev = cur
    return bytes(out)


def decoded_images(values: np.ndarray) -> np.ndarray:
    """Serialized image summaries with each PNG replaced by its pixels: PNG bytes depend on the encoder's
    zlib settings and row filters (TensorFlow's libpng picks per-row filters and a small window), so the
    op database compares tags, sizes, colorspaces and pixels."""
    def one(summary: bytes) -> bytes:
        parts = []
        for number, value in _fields(bytes(summary)):
            fields = dict(_fields(value)) if number == 1 else {}
            image = dict(_fields(fields[4])) if 4 in fields else {}
            parts.append(repr((number, fields.get(1), image.get(1), image.get(2), image.get(3),
                               _png_pixels(image[4]) if 4 in image else value)).encode())
        return b"|".join(parts)

    return np.array([one(v) for v in values.reshape(-1)], dtype=object).reshape(values.shape)


def _merge(tf, a, b, tags):
    first = tf.raw_ops.ScalarSummary(tags=tag(tags[0]), values=a)
    second = tf.raw_ops.HistogramSummary(tag=tag(tags[1]), values=b)
    return tf.raw_ops.MergeSummary(inputs=[first, second])


def positive_image(*shape):
    """Pixels in [0, 1] for floats, [0, 255] for uint8."""
    def make(dtype):
        u = np.mod((np.arange(int(np.prod(shape))) + 1) * 0.6180339887498949, 1.0).reshape(shape)
        return (np.round(u * 255) if dtype == "uint8" else u).astype(dtype)

    return T(make)


_SUMMARY_TYPES = ("int8", "int32", "int64", "uint8", "float16", "float32", "float64")
_METADATA = np.array(b"\n\x0b\n\tmy_plugin", dtype=object)  # SummaryMetadata{plugin_data{plugin_name}}

ENTRIES = [
    OpEntry("ScalarSummary", [
        Sample("rank0", {"tags": tag("loss"), "values": regular()}, grad=False),
        Sample("vector", {"tags": s("a", "b/c", "d"), "values": regular(3)}, grad=False),
        Sample("edges", {"tags": T(lambda d: np.array([b"e%d" % i for i in range(len(EDGES.resolve(d)))],
                                                     dtype=object)), "values": EDGES}, grad=False),
        Sample("empty", {"tags": np.zeros((0, 2), object), "values": empty(0, 2)}, grad=False),
        Sample("shape_mismatch", {"tags": s("a", "b"), "values": regular(3)}, grad=False),
    ], dtypes=_SUMMARY_TYPES),
    OpEntry("HistogramSummary", [
        Sample("vector", {"tag": tag("h"), "values": regular(10)}, grad=False),
        Sample("matrix", {"tag": tag("h"), "values": regular(3, 4, lo=-100, hi=1000)}, grad=False),
        Sample("rank0", {"tag": tag("h"), "values": regular()}, grad=False),
        Sample("constant", {"tag": tag("h"), "values": T(np.full(5, 3))}, grad=False),
        Sample("empty", {"tag": tag("h"), "values": empty(0, 3)}, grad=False),
        Sample("infinities", {"tag": tag("h"), "values": T([1.0, np.inf, -np.inf, 0.0])}, grad=False,
               kinds=frozenset({"float"})),
        Sample("nan", {"tag": tag("h"), "values": T([1.0, np.nan])}, grad=False, kinds=frozenset({"float"})),
        Sample("tag_not_scalar", {"tag": s("a", "b"), "values": regular(2)}, grad=False),
    ], dtypes=_SUMMARY_TYPES),
    OpEntry("ImageSummary", [
        Sample("gray", {"tag": tag("img"), "tensor": positive_image(2, 3, 4, 1)}, grad=False),
        Sample("rgb", {"tag": tag("img"), "tensor": positive_image(1, 2, 2, 3)}, grad=False),
        Sample("rgba", {"tag": tag("img"), "tensor": positive_image(1, 2, 3, 4)}, grad=False),
        Sample("signed_floats", {"tag": tag("img"), "tensor": regular(1, 2, 2, 1)}, grad=False,
               kinds=frozenset({"float"})),
        Sample("nan_is_bad_color", {"tag": tag("img"), "tensor": T(np.array([np.nan, 0.5, 1.0, 0.0]).reshape(
            1, 2, 2, 1))}, grad=False, kinds=frozenset({"float"})),
        Sample("max_images", {"tag": tag("img"), "tensor": positive_image(4, 1, 1, 1)}, {"max_images": 2},
               grad=False),
        Sample("empty_batch", {"tag": tag("img"), "tensor": empty(0, 2, 2, 3)}, grad=False),
        Sample("two_channels", {"tag": tag("img"), "tensor": positive_image(1, 2, 2, 2)}, grad=False),
        Sample("rank3", {"tag": tag("img"), "tensor": positive_image(2, 2, 1)}, grad=False),
    ], dtypes=("uint8", "float16", "float32", "float64"), canonical=decoded_images),
    OpEntry("AudioSummaryV2", [
        Sample("mono", {"tag": tag("a"), "tensor": regular(2, 6, lo=-1, hi=1), "sample_rate": np.float32(8000)},
               grad=False),
        Sample("stereo", {"tag": tag("a"), "tensor": regular(1, 4, 2, lo=-1, hi=1),
                          "sample_rate": np.float32(44100)}, grad=False),
        Sample("clipped", {"tag": tag("a"), "tensor": T([[2.0, -3.0, 0.5]]), "sample_rate": np.float32(100)},
               grad=False),
        Sample("max_outputs", {"tag": tag("a"), "tensor": regular(3, 2), "sample_rate": np.float32(10)},
               {"max_outputs": 1}, grad=False),
        Sample("empty_batch", {"tag": tag("a"), "tensor": empty(0, 4), "sample_rate": np.float32(10)}, grad=False),
        Sample("no_frames", {"tag": tag("a"), "tensor": empty(1, 0), "sample_rate": np.float32(10)}, grad=False),
        Sample("rate_not_scalar", {"tag": tag("a"), "tensor": regular(1, 2),
                                   "sample_rate": np.float32([10, 20])}, grad=False),
    ], dtypes=("float32",)),
    OpEntry("TensorSummaryV2", [
        Sample("matrix", {"tag": tag("t"), "tensor": regular(2, 3), "serialized_summary_metadata": _METADATA},
               grad=False),
        Sample("rank0", {"tag": tag("t"), "tensor": regular(), "serialized_summary_metadata": tag("")},
               grad=False),
        Sample("empty", {"tag": tag("t"), "tensor": empty(0, 3), "serialized_summary_metadata": _METADATA},
               grad=False),
        Sample("bad_metadata", {"tag": tag("t"), "tensor": regular(2), "serialized_summary_metadata": tag("\xff")},
               grad=False),
    ], dtypes=("bool", "int32", "int64", "float32", "float64", "string"), differs={
        "bad_metadata": "metadata that does not parse: TensorFlow ignores the error and writes what it read; "
                        "sparseflow raises InvalidArgumentError naming the tag"}),
    OpEntry("MergeSummary", [
        Sample("two", {"a": regular(), "b": regular(4, seed=1)}, {"tags": ["x", "y"]}, grad=False),
        Sample("empty_histogram", {"a": regular(), "b": empty(0)}, {"tags": ["x", "y"]}, grad=False),
        Sample("duplicate_tag", {"a": regular(), "b": regular(2)}, {"tags": ["x", "x"]}, grad=False),
    ], build=_merge, dtypes=("float32", "float64")),
]
