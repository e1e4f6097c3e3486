"""Gradients of Roll, the TensorScatter* family and Cross; the index, bit and hashing ops of
``array_manip_ops`` / ``math_misc_ops`` and the set operations are NotDifferentiable (as in
TensorFlow, which has no gradient for them).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([1.0, 2.0, 3.0])
    ...     y = tf.tensor_scatter_nd_update(x, [[0]], [5.0]) * [1.0, 2.0, 3.0]
    ...     print(sess.run(tf.gradients(y, x)[0]).tolist())
    [0.0, 2.0, 3.0]
"""

from __future__ import annotations

from sparseflow._src.grad.array_grad import dense
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, core_ops, math_ops
from sparseflow._src.ops.array_manip_ops import roll, tensor_scatter_nd_update
from sparseflow._src.ops.math_misc_ops import cross

__all__: list[str] = []


@RegisterGradient("Roll")
def _roll_grad(op, grad):
    return [roll(dense(grad), -op.inputs[1], op.inputs[2]), None, None]


@RegisterGradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(op, grad):
    grad = dense(grad)
    indices = op.inputs[1]
    cleared = tensor_scatter_nd_update(core_ops.identity(grad), indices,
                                       array_ops.zeros_like(op.inputs[2], dtype=grad.dtype))
    return [cleared, None, array_ops.gather_nd(grad, indices)]


@RegisterGradient("TensorScatterAdd")
def _tensor_scatter_add_grad(op, grad):
    grad = dense(grad)
    return [grad, None, array_ops.gather_nd(grad, op.inputs[1])]


@RegisterGradient("TensorScatterSub")
def _tensor_scatter_sub_grad(op, grad):
    grad = dense(grad)
    return [grad, None, -array_ops.gather_nd(grad, op.inputs[1])]


def _tensor_scatter_min_max_grad(op, grad):
    """The gradient goes to the elements equal to the result, shared equally among ties."""
    grad = dense(grad)
    x, indices, y = op.inputs
    out = op.outputs[0]
    x_hits = math_ops.cast(math_ops.equal(x, out), grad.dtype)
    y_hits = math_ops.cast(math_ops.equal(y, array_ops.gather_nd(out, indices)), grad.dtype)
    hits = x_hits + array_ops.scatter_nd(indices, y_hits, array_ops.shape(x, out_type=indices.dtype))
    return [grad * x_hits / hits, None, array_ops.gather_nd(grad / hits, indices) * y_hits]


RegisterGradient("TensorScatterMin")(_tensor_scatter_min_max_grad)
RegisterGradient("TensorScatterMax")(_tensor_scatter_min_max_grad)


@RegisterGradient("Cross")
def _cross_grad(op, grad):
    u, v = op.inputs
    grad = dense(grad)
    return [cross(v, grad), cross(grad, u)]


for _op_type in ("UnravelIndex", "Bitcast", "GuaranteeConst", "ParallelConcat", "HistogramFixedWidth",
                 "Fingerprint", "Timestamp", "EditDistance", "LeftShift", "RightShift"):
    NotDifferentiable(_op_type)

# Set operations (sets_ops) produce and count values: nothing to differentiate.
for _op_type in ("SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation", "SparseToSparseSetOperation"):
    NotDifferentiable(_op_type)

# File and byte ops (file_ops): strings in or out.
for _op_type in ("ReadFile", "WriteFile", "MatchingFiles", "DecodeRaw", "DecodeCompressed", "SerializeTensor",
                 "ParseTensor", "DecodeJSONExample"):
    NotDifferentiable(_op_type)

# Readers (reader_ops) produce strings from files.
for _op_type in ("TextLineReaderV2", "TFRecordReaderV2", "WholeFileReaderV2", "IdentityReaderV2",
                 "FixedLengthRecordReaderV2", "ReaderReadV2", "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
                 "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2"):
    NotDifferentiable(_op_type)
