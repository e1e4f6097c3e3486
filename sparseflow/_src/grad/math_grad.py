"""Gradient functions of the math ops: importing this module registers all of them.

Every op type defined in ``sparseflow/_src/ops/math_*.py`` has a gradient function or an explicit
NotDifferentiable entry, split by family:

- ``math_grad_cwise``: element-wise unary and binary ops (tables, one row per op type);
- ``math_grad_reduce``: reductions, scans, AddN, Cast, Select/SelectV2/ClipByValue, complex ops;
- ``math_grad_einsum``: Einsum (and no gradient for LowerBound/UpperBound).
- ``math_grad_linalg``: MatMul, BatchMatMul*, determinants, inverse, SVD, band part, diagonals.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([0.5, 2.0])
    ...     print(sess.run(tf.gradients(tf.reduce_sum(tf.square(x) * tf.log(x)), x)[0]))
    [-0.19314718  4.7725887 ]
"""

from __future__ import annotations

from sparseflow._src.grad import (  # noqa: F401 - imported to register gradient functions
    math_grad_cwise,
    math_grad_einsum,
    math_grad_linalg,
    math_grad_reduce,
)
