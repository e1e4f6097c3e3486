"""CPU kernels of ``DecodeWav`` / ``EncodeWav``: RIFF/WAVE files of 16-bit little-endian PCM, read
with ``struct`` and NumPy (chunks other than ``fmt `` and ``data`` are skipped).

Example:
    >>> wav = wav_bytes(np.array([[0.5, -1.0]], np.float32), 16000)
    >>> wav[:4], len(wav)
    (b'RIFF', 48)
"""

from __future__ import annotations

import struct

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel

_PCM, _EXTENSIBLE = 1, 0xFFFE


def _bad(msg):
    return errors.InvalidArgumentError(None, None, msg)


def wav_bytes(audio: np.ndarray, sample_rate: int) -> bytes:
    """The WAV file of float ``audio`` ``[frames, channels]``: samples rounded half away from zero."""
    frames, channels = audio.shape
    scaled = audio.astype(np.float32) * np.float32(32768.0)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))
    pcm = np.clip(np.nan_to_num(rounded), -32768, 32767).astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", _PCM, channels, sample_rate, sample_rate * channels * 2, channels * 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _read(data: bytes, offset: int, fmt: str, what: str):
    size = struct.calcsize(fmt)
    if offset + size > len(data):
        raise _bad(f"Data too short when trying to read {what} (offset {offset}, {len(data)} bytes in the file).")
    return struct.unpack_from(fmt, data, offset), offset + size


def parse_wav(data: bytes):
    """``(int16 samples [frames, channels], sample_rate)`` of a 16-bit PCM WAV file."""
    (riff, _, wave), pos = _read(data, 0, "<4sI4s", "the RIFF header")
    if riff != b"RIFF" or wave != b"WAVE":
        raise _bad(f"Header mismatch: expected 'RIFF....WAVE' but found {data[:12]!r}.")
    fmt = None
    while True:
        (chunk, size), pos = _read(data, pos, "<4sI", "a chunk header")
        if chunk == b"fmt ":
            if size < 16:
                raise _bad(f"Bad format chunk size for WAV: expected at least 16, but got {size}.")
            (audio_format, channels, rate, _, _, bits), _ = _read(data, pos, "<HHIIHH", "the format chunk")
            if audio_format not in (_PCM, _EXTENSIBLE):
                raise _bad(f"Bad audio format for WAV: expected 1 (PCM), or 0xFFFE (Extensible), but got "
                           f"{audio_format}.")
            if channels < 1:
                raise _bad("Bad number of channels for WAV file: 0.")
            if bits != 16:
                raise _bad(f"Can only read 16-bit WAV files, but received {bits}.")
            fmt = (channels, rate)
        elif chunk == b"data":
            if fmt is None:
                raise _bad("The WAV file has a 'data' chunk before its 'fmt ' chunk.")
            if pos + size > len(data):
                raise _bad(f"Data too short: the 'data' chunk claims {size} bytes, {len(data) - pos} are left.")
            channels, rate = fmt
            frames = size // (2 * channels)
            samples = np.frombuffer(data, "<i2", count=frames * channels, offset=pos).reshape(frames, channels)
            return samples, rate
        pos += size + (size & 1)


@register_kernel("DecodeWav")
def _decode_wav(node):
    want_channels = int(node.attrs.get("desired_channels", -1))
    want_samples = int(node.attrs.get("desired_samples", -1))

    def compute(contents):
        value = np.asarray(contents, dtype=object)
        if value.ndim != 0:
            raise _bad(f"contents must be a scalar string (one WAV file), got shape {list(value.shape)}.")
        samples, rate = parse_wav(bytes(value[()]))
        if rate > 2**31 - 1:
            raise _bad(f"The WAV file's sample rate {rate} does not fit in int32.")
        audio = samples.astype(np.float32) / np.float32(32768.0)
        channels = audio.shape[1] if want_channels <= 0 else want_channels
        pick = np.minimum(np.arange(channels), audio.shape[1] - 1)  # extra channels repeat the last one
        audio = audio[:, pick]
        if want_samples >= 0:
            out = np.zeros((want_samples, channels), np.float32)
            n = min(want_samples, audio.shape[0])
            out[:n] = audio[:n]
            audio = out
        return np.ascontiguousarray(audio), np.int32(rate)

    return compute


@register_kernel("EncodeWav")
def _encode_wav(node):
    def compute(audio, sample_rate):
        audio = np.asarray(audio, dtype=np.float32)
        rate = np.asarray(sample_rate)
        if audio.ndim != 2:
            raise _bad(f"audio must be 2-dimensional (frames x channels), got shape {list(audio.shape)}.")
        if rate.ndim != 0:
            raise _bad(f"Input sample_rate should be a scalar tensor, got shape {list(rate.shape)}.")
        if audio.shape[1] == 0 and audio.shape[0] > 0:
            raise _bad("audio has frames but no channels.")
        if int(rate) < 0:
            raise _bad(f"sample_rate must be non-negative, got {int(rate)}.")
        if audio.shape[1] > 0xFFFF or audio.size * 2 > 2**32 - 45:
            raise _bad(f"audio of shape {list(audio.shape)} does not fit in a WAV file.")
        return np.array(wav_bytes(audio, int(rate)), dtype=object)

    return compute
