"""Gradients of the logging ops: summaries have none; ``Print`` passes its input's gradient through.

Example:
    >>> from sparseflow._src.grad.registry import get_gradient_function, NOT_DIFFERENTIABLE
    >>> get_gradient_function("MergeSummary") is NOT_DIFFERENTIABLE
    True
"""

from __future__ import annotations

from sparseflow._src.grad.registry import NotDifferentiable
from sparseflow._src.ops import summary_ops  # noqa: F401 - the op definitions must exist first

__all__: list[str] = []

SUMMARY_OPS = ("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2", "TensorSummaryV2",
               "MergeSummary")

for _op_type in SUMMARY_OPS:
    NotDifferentiable(_op_type)
