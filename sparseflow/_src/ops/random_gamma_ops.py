"""Gamma and Poisson samples: RandomGamma and RandomPoissonV2, with ``tf.random_gamma`` and
``tf.random_poisson`` (also ``tf.random.gamma`` / ``tf.random.poisson``).

The draws are seeded by the op's ``(seed, seed2)`` (the graph and op seeds, as every random op) and
reproducible run after run in a new Session, but they are not TensorFlow's stream: TensorFlow's
rejection samplers consume its Philox stream in their own order, which sparseflow does not
reproduce. Gamma samples are differentiable in ``alpha`` (implicit reparameterization).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     g = tf.random_gamma([1000], alpha=[1.0, 4.0], seed=1)
    ...     p = tf.random_poisson(3.0, [2000], seed=1)
    ...     print(sess.run(g).shape, abs(sess.run(tf.reduce_mean(p)) - 3.0) < 0.2)
    (1000, 2) True
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops.array_util import constant_value_as_shape
from sparseflow._src.ops.math_cwise import op_scope
from sparseflow._src.ops.random_ops import _seed_attrs, _shape_tensor

__all__ = ["random_gamma", "random_poisson"]


def _sample_shape(op):
    return [constant_value_as_shape(op.inputs[0]).concatenate(op.inputs[1].shape)]


_SEEDS = ["seed: int = 0", "seed2: int = 0"]
register_op("RandomGamma", inputs=["shape: S", "alpha: T"], outputs=["output: T"],
            attrs=_SEEDS + ["S: {int32, int64}", "T: {half, float, double}"], shape_fn=_sample_shape,
            is_stateful=True)
register_op("RandomPoissonV2", inputs=["shape: S", "rate: R"], outputs=["output: dtype"],
            attrs=_SEEDS + ["S: {int32, int64}", "R: {half, float, double, int32, int64} = DT_DOUBLE",
                            "dtype: {half, float, double, int32, int64} = DT_INT64"], shape_fn=_sample_shape,
            is_stateful=True)


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Samples of Gamma(``alpha``, rate ``beta``): shape ``shape + broadcast(alpha, beta).shape``,
    at least the smallest positive normal number of ``dtype``.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random.gamma([3], 2.0, seed=7)).shape)
        (3,)
    """
    from sparseflow._src.ops import array_ops
    from sparseflow._src.ops.math_cwise import WRAPPERS

    dtype = dtypes.as_dtype(dtype)
    with op_scope(name, "random_gamma", [shape, alpha, beta]):
        shape = convert_to_tensor(shape, name="shape", dtype=dtypes.int32)
        alpha = convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        both = array_ops.broadcast_dynamic_shape(array_ops.shape(alpha), array_ops.shape(beta))
        alpha_b = array_ops.broadcast_to(alpha, both)
        sample = apply_op("RandomGamma", [shape, alpha_b], _seed_attrs(seed)).outputs[0]
        return WRAPPERS["maximum"](np.finfo(dtype.as_numpy_dtype).tiny, sample / beta)


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """Samples of Poisson(``lam``) of ``dtype``: shape ``shape + lam.shape`` (TF1's argument order).

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.random_poisson([1.0, 9.0], [4], seed=3)).shape)
        (4, 2)
    """
    with op_scope(name, "random_poisson", [lam, shape]):
        shape = _shape_tensor(shape)
        return apply_op("RandomPoissonV2", [shape, lam], {"dtype": dtypes.as_dtype(dtype), **_seed_attrs(seed)}
                        ).outputs[0]
