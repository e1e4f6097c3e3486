"""What summary kernels put in a Summary: TensorFlow's default histogram, PNG images, WAV audio.

- :func:`histogram_proto`: TensorFlow's buckets (limits growing by 10% from 1e-12 to 1e20, mirrored
  for negatives, 0 between, the largest double last), runs of empty buckets collapsed into one,
  sums accumulated in order in float64 (so the bytes equal TensorFlow's).
- :func:`encode_png`: 8-bit grayscale, gray+alpha, RGB or RGBA, unfiltered rows, zlib level 6.
- :func:`encode_wav`: 16-bit PCM, samples ``round(x * 32768)`` clamped to [-32768, 32767].

Example:
    >>> import numpy as np
    >>> h = histogram_proto(np.array([1.0, 2.0, 2.0]))
    >>> h.num, h.sum, list(h.bucket)[:4]
    (3.0, 5.0, [0.0, 1.0, 0.0, 2.0])
"""

from __future__ import annotations

import struct
import sys
import zlib

import numpy as np

from sparseflow._src.framework.proto import summary_pb2

__all__ = ["histogram_proto", "encode_png", "encode_wav", "DEFAULT_BUCKET_LIMITS"]


def _default_limits() -> np.ndarray:
    pos = []
    v = 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    pos.append(sys.float_info.max)
    return np.array([-x for x in reversed(pos)] + [0.0] + pos, np.float64)


DEFAULT_BUCKET_LIMITS = _default_limits()


def histogram_proto(values: np.ndarray) -> summary_pb2.HistogramProto:
    """TensorFlow's HistogramProto of the finite float64 ``values``."""
    x = np.asarray(values, np.float64).ravel()
    limits = DEFAULT_BUCKET_LIMITS
    proto = summary_pb2.HistogramProto()
    if x.size:
        proto.min, proto.max, proto.num = float(x.min()), float(x.max()), float(x.size)
        proto.sum = float(np.cumsum(x)[-1])  # in order, as TensorFlow adds them
        proto.sum_squares = float(np.cumsum(x * x)[-1])
        index = np.minimum(np.searchsorted(limits, x, side="right"), limits.size - 1)
        counts = np.bincount(index, minlength=limits.size).astype(np.float64)
    else:
        proto.min, proto.max = sys.float_info.max, -sys.float_info.max
        counts = np.zeros(limits.size)
    # Emit each non-empty bucket; a run of empty buckets becomes one entry at the run's last limit.
    nonzero = counts > 0
    keep = nonzero | np.append(nonzero[1:], True)
    proto.bucket_limit.extend(limits[keep].tolist())
    proto.bucket.extend(counts[keep].tolist())
    return proto


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


_PNG_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of a uint8 ``[height, width, channels]`` image (1 to 4 channels)."""
    h, w, c = image.shape
    rows = np.concatenate([np.zeros((h, 1), np.uint8), np.ascontiguousarray(image, np.uint8).reshape(h, w * c)],
                          axis=1)
    header = struct.pack(">IIBBBBB", w, h, 8, _PNG_COLOR_TYPE[c], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + _png_chunk(b"IEND", b""))


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV bytes of float ``samples`` ``[frames, channels]`` in [-1, 1]."""
    frames, channels = samples.shape
    pcm = np.clip(np.round(samples.astype(np.float32) * np.float32(32768.0)), -32768, 32767).astype("<i2")
    data = pcm.tobytes()
    fmt = struct.pack("<HHIIHH", 1, channels, sample_rate, sample_rate * channels * 2, channels * 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
            + b"data" + struct.pack("<I", len(data)) + data)
