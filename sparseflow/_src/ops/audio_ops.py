"""``tf.audio``: 16-bit PCM WAV files to float samples and back (ops ``DecodeWav``, ``EncodeWav``).

Samples are float32 ``[frames, channels]`` in [-1, 1): a 16-bit sample ``s`` is ``s / 32768``;
encoding rounds ``x * 32768`` half away from zero and clips to [-32768, 32767].

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     wav = tf.audio.encode_wav([[0.5], [-0.25]], 8000)
    ...     audio, rate = sess.run(tf.audio.decode_wav(wav))
    ...     print(audio.tolist(), rate)
    [[0.5], [-0.25]] 8000
"""

from __future__ import annotations

import collections

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape

__all__ = ["decode_wav", "encode_wav"]

AUDIO_OP_TYPES = ("DecodeWav", "EncodeWav")


def _rank_error(op, index, rank):
    shape = op.inputs[index].shape
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}")


def _decode_shapes(op):
    _rank_error(op, 0, 0)
    samples, channels = op._attrs.get("desired_samples", -1), op._attrs.get("desired_channels", -1)
    return [TensorShape([samples if samples >= 0 else None, channels if channels > 0 else None]), TensorShape([])]


def _encode_shapes(op):
    _rank_error(op, 0, 2)
    _rank_error(op, 1, 0)
    return [TensorShape([])]


register_op("DecodeWav", inputs=["contents: string"], outputs=["audio: float", "sample_rate: int32"],
            attrs=["desired_channels: int = -1", "desired_samples: int = -1"], shape_fn=_decode_shapes)
register_op("EncodeWav", inputs=["audio: float", "sample_rate: int32"], outputs=["contents: string"],
            shape_fn=_encode_shapes)

DecodeWav = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """``(audio, sample_rate)`` of a 16-bit PCM WAV file: ``audio`` float32 ``[frames, channels]``.

    ``desired_channels`` keeps the first channels or repeats the last one; ``desired_samples``
    truncates or pads with zeros (-1: as in the file).
    """
    contents = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    op = apply_op("DecodeWav", [contents], {"desired_channels": int(desired_channels),
                                           "desired_samples": int(desired_samples)}, name=name or "DecodeWav")
    return DecodeWav(*op.outputs)


def encode_wav(audio, sample_rate, name=None):
    """A 16-bit PCM WAV file (scalar string) of float32 ``audio`` ``[frames, channels]`` at ``sample_rate``."""
    audio = convert_to_tensor(audio, dtype=dtypes.float32, name="audio")
    sample_rate = convert_to_tensor(sample_rate, dtype=dtypes.int32, name="sample_rate")
    return apply_op("EncodeWav", [audio, sample_rate], name=name or "EncodeWav").outputs[0]
