"""Gradients of the logging and Python-function ops: summaries, tf.print and py_func have none;
``Print`` passes its input's gradient through.

Example:
    >>> from sparseflow._src.grad.registry import get_gradient_function, NOT_DIFFERENTIABLE
    >>> get_gradient_function("MergeSummary") is NOT_DIFFERENTIABLE
    True
"""

from __future__ import annotations

from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import logging_ops, script_ops, summary_ops  # noqa: F401 - the op definitions first

__all__: list[str] = []

NOT_DIFFERENTIABLE_OPS = ("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2",
                          "TensorSummaryV2", "MergeSummary", "StringFormat", "PrintV2", "PyFunc", "PyFuncStateless")

for _op_type in NOT_DIFFERENTIABLE_OPS:
    NotDifferentiable(_op_type)


@RegisterGradient("Print")
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)
