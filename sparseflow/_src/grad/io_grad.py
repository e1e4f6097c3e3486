"""Explicit "no gradient" entries for the checkpoint I/O ops (they read or write files) and the record
parsing ops (``ParseExampleV2``, ``ParseSequenceExampleV2``, ``DecodeCSV``) and WAV codecs (``DecodeWav``,
``EncodeWav``, as in TensorFlow): their outputs are not functions of differentiable inputs.

Example:
    >>> from sparseflow._src.grad.registry import get_gradient_function, NOT_DIFFERENTIABLE
    >>> get_gradient_function("RestoreV2") is NOT_DIFFERENTIABLE
    True
"""

from __future__ import annotations

from sparseflow._src.grad.registry import NotDifferentiable
from sparseflow._src.ops import io_ops  # noqa: F401 - the op definitions must exist first
from sparseflow._src.ops.audio_ops import AUDIO_OP_TYPES
from sparseflow._src.ops.parsing_ops import PARSING_OP_TYPES
from sparseflow._src.ops.sequence_parsing_ops import SEQUENCE_PARSING_OP_TYPES

__all__: list[str] = []

IO_OPS = ("SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename", "ShardedFilespec")

for _op_type in IO_OPS + PARSING_OP_TYPES + SEQUENCE_PARSING_OP_TYPES + AUDIO_OP_TYPES:
    NotDifferentiable(_op_type)
