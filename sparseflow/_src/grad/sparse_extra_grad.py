"""Gradients of SparseSoftmax (the softmax Jacobian within each row) and SparseMatMul (products
of the other operand, as for MatMul); the other ops of ``sparse_extra_ops`` reorganize or serialize
values, or take maxima TensorFlow does not differentiate: NotDifferentiable.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     v = tf.constant([1.0, 1.0])
    ...     out = tf.sparse_softmax(tf.SparseTensor([[0, 0], [0, 1]], v, [1, 2])).values
    ...     print(sess.run(tf.gradients(out[0], v)[0]).tolist())
    [0.25, -0.25]
"""

from __future__ import annotations

from sparseflow._src.grad.math_grad_util import dense
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops
from sparseflow._src.ops.math_reduction import cumprod
from sparseflow._src.ops.nn_segment_ops import unsorted_segment_sum
from sparseflow._src.ops.sparse_extra_ops import sparse_matmul

__all__: list[str] = []


@RegisterGradient("SparseSoftmax")
def _sparse_softmax_grad(op, grad):
    indices, _, shape = op.inputs
    out = op.outputs[0]
    grad = dense(grad)
    dims = shape[:-1]
    strides = cumprod(dims, exclusive=True, reverse=True)
    rows = math_ops.reduce_sum(indices[:, :-1] * strides, axis=1)
    sums = unsorted_segment_sum(out * grad, rows, math_ops.reduce_prod(dims))
    return [None, out * (grad - array_ops.gather(sums, rows)), None]


@RegisterGradient("SparseMatMul")
def _sparse_matmul_grad(op, grad):
    a, b = op.inputs
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    g = dense(grad)
    if not ta and not tb:
        return [sparse_matmul(g, b, transpose_b=True), sparse_matmul(a, g, transpose_a=True)]
    if not ta and tb:
        return [sparse_matmul(g, b), sparse_matmul(g, a, transpose_a=True)]
    if ta and not tb:
        return [sparse_matmul(b, g, transpose_b=True), sparse_matmul(a, g)]
    return [sparse_matmul(b, g, transpose_a=True, transpose_b=True),
            sparse_matmul(g, a, transpose_a=True, transpose_b=True)]


for _op_type in ("SparseSparseMaximum", "SparseSparseMinimum", "SparseReduceMax", "SparseReduceMaxSparse",
                 "SparseSplit", "SerializeSparse", "SerializeManySparse", "DeserializeSparse", "DeserializeManySparse"):
    NotDifferentiable(_op_type)
