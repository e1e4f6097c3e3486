"""``tf.math``: public names re-exported from the implementation.

The math family's names come from ``sparseflow._src.ops.math_ops``; names TensorFlow also files
under ``tf.math`` but that other families implement (segment reductions, softplus, top_k, ...)
are taken from the top-level ``tf`` and ``tf.nn`` namespaces when those families provide them.
"""

# ruff: noqa: F401, F403
from sparseflow import nn as _nn
from sparseflow._src.ops import math_ops as _math_ops
from sparseflow._src.ops import nn_ops as _nn_ops
from sparseflow._src.training.metrics.confusion_matrix import confusion_matrix

for _name in _math_ops.MATH_NAMESPACE:
    globals()[_name] = getattr(_math_ops, _name)

# Names TensorFlow also files under tf.math that the nn family implements.
_FROM_NN = [
    "bincount", "in_top_k", "l2_normalize", "log_softmax", "segment_max", "segment_mean", "segment_min",
    "segment_prod", "segment_sum", "softmax", "softplus", "softsign", "top_k", "unsorted_segment_max",
    "unsorted_segment_mean", "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sqrt_n",
    "unsorted_segment_sum", "zero_fraction",
]
for _name in _FROM_NN:
    globals()[_name] = getattr(_nn_ops, _name, None) or getattr(_nn, _name)
del _name

from sparseflow._src.ops.array_shape_ops import invert_permutation  # noqa: E402
from sparseflow._src.ops.math_special_ops import betainc, igamma, igammac, lbeta, polygamma, zeta  # noqa: E402
