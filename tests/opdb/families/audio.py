"""tf.audio: EncodeWav (16-bit PCM bytes: rounding, clipping, mono/stereo, no frames) and DecodeWav
(desired channels and samples, files with extra chunks, unsupported formats, truncated files).
"""

from __future__ import annotations

import struct

import numpy as np

from tests.opdb.spec import OpEntry, Sample

_NO_TYPE = (None,)


def _encode(tf, audio, sample_rate):
    return tf.audio.encode_wav(audio, sample_rate)


def _decode(tf, contents, desired_channels=-1, desired_samples=-1):
    return list(tf.audio.decode_wav(contents, desired_channels, desired_samples))


def wav(samples, rate=16000, channels=None, bits=16, audio_format=1, extra_chunks=b"", fmt_extra=b""):
    """A WAV file by hand: int16 ``samples`` [frames, channels] with the given header fields."""
    samples = np.asarray(samples, "<i2")
    channels = samples.shape[1] if channels is None else channels
    fmt = struct.pack("<HHIIHH", audio_format, channels, rate, rate * channels * bits // 8, channels * bits // 8,
                      bits) + fmt_extra
    data = samples.tobytes()
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + extra_chunks + b"data" + \
        struct.pack("<I", len(data)) + data
    return np.array(b"RIFF" + struct.pack("<I", len(body)) + body, dtype=object)


_F = np.float32
_STEREO = np.array([[0.0, 1.0], [-1.0, 0.5], [0.25, -0.3333], [2.0, -2.0], [1 / 32768, -1 / 65536],
                    [3 / 65536, -3 / 65536]], _F)
_PCM = [[0, 32767], [-32768, 16384], [8192, -10922], [1, -1]]

_ENCODE = [
    Sample("stereo", {"audio": _STEREO, "sample_rate": np.int32(16000)}),
    Sample("mono", {"audio": np.linspace(-1, 1, 9, dtype=_F).reshape(9, 1), "sample_rate": np.int32(8000)}),
    Sample("no_frames", {"audio": np.zeros((0, 2), _F), "sample_rate": np.int32(44100)}),
    Sample("rank1", {"audio": np.zeros(3, _F), "sample_rate": np.int32(100)}),
    Sample("rate_vector", {"audio": _STEREO, "sample_rate": np.array([1, 2], np.int32)}),
]
_DECODE = [
    Sample("stereo", {"contents": wav(_PCM)}),
    Sample("one_channel", {"contents": wav(_PCM)}, {"desired_channels": 1}),
    Sample("three_channels", {"contents": wav(_PCM)}, {"desired_channels": 3}),
    Sample("fewer_samples", {"contents": wav(_PCM)}, {"desired_samples": 2}),
    Sample("more_samples", {"contents": wav(_PCM)}, {"desired_channels": 2, "desired_samples": 6}),
    Sample("no_samples", {"contents": wav(_PCM)}, {"desired_samples": 0}),
    Sample("mono_to_stereo", {"contents": wav([[5], [-7], [32767]], rate=22050)}, {"desired_channels": 2}),
    Sample("list_chunk", {"contents": wav(_PCM, extra_chunks=b"LIST" + struct.pack("<I", 4) + b"INFO")}),
    Sample("fmt_18", {"contents": wav(_PCM, fmt_extra=b"\x00\x00")}),
    Sample("empty_data", {"contents": wav(np.zeros((0, 2)))}),
    Sample("eight_bit", {"contents": wav(_PCM, bits=8)}),
    Sample("float_format", {"contents": wav(_PCM, audio_format=3)}),
    Sample("truncated", {"contents": np.array(wav(_PCM)[()][:50], dtype=object)}),
    Sample("not_riff", {"contents": np.array(b"RIFF1234", dtype=object)}),
    Sample("not_wave", {"contents": np.array(wav(_PCM)[()][:8] + b"WAVX" + wav(_PCM)[()][12:], dtype=object)}),
]

ENTRIES = [
    OpEntry("EncodeWav", _ENCODE, build=_encode, dtypes=_NO_TYPE),
    OpEntry("DecodeWav", _DECODE, build=_decode, dtypes=_NO_TYPE),
]
