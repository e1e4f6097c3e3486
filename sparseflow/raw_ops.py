"""``tf.raw_ops``: every registered op type as a keyword-only function (``tf.raw_ops.Sum(input=x, axis=0)``)."""

# ruff: noqa: F401
from sparseflow._src.ops.raw_ops import __dir__, __getattr__, raw_op
