"""``tf.audio``: WAV decoding and encoding."""

from sparseflow._src.ops.audio_ops import decode_wav, encode_wav

__all__ = ["decode_wav", "encode_wav"]
