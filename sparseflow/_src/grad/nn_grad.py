"""Gradient functions of the nn ops: activations and their *Grad ops, softmax and cross-entropies,
BiasAdd, L2Loss and top-k. Convolutions, pooling and normalisation are in ``nn_grad_conv``, segment
reductions in ``nn_grad_segment`` (both imported here, so importing this module registers them all).

The rules follow TensorFlow's ``nn_grad.py``: an activation's gradient is its *Grad op, and the
*Grad ops have gradients of their own so second derivatives work.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([-1.0, 2.0])
    ...     print(sess.run(tf.gradients(tf.nn.relu(x), x)[0]))
    [0. 1.]
"""

from __future__ import annotations

from sparseflow._src.framework.api_graph import control_dependencies
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.grad import nn_grad_segment  # noqa: F401 - registers the segment gradients
from sparseflow._src.grad.grad_util import unbroadcast
from sparseflow._src.grad.nn_grad_conv import op_attrs  # also registers the conv/pool/norm gradients
from sparseflow._src.grad.registry import NotDifferentiable, RegisterGradient
from sparseflow._src.ops import array_ops, math_ops

__all__: list[str] = []


def is_zero_grad(g):
    """True when no gradient flows: None, or a tensor marked as an all-zeros placeholder gradient."""
    if g is None or getattr(g, "_is_zeros_tensor", False):
        return True
    return getattr(getattr(g, "op", None), "type", None) == "ZerosLike"  # tf.gradients' filler for a
    # differentiable output that nothing downstream uses


# ---------------------------------------------------------------- activations


def _grad_op(op_type, grad, x, attrs=None):
    return apply_op(op_type, [grad, x], attrs).outputs[0]


@RegisterGradient("Relu")
def _relu_grad(op, grad):
    return [_grad_op("ReluGrad", grad, op.outputs[0])]


@RegisterGradient("Relu6")
def _relu6_grad(op, grad):
    return [_grad_op("Relu6Grad", grad, op.outputs[0])]


@RegisterGradient("Elu")
def _elu_grad(op, grad):
    return [_grad_op("EluGrad", grad, op.outputs[0])]


@RegisterGradient("Selu")
def _selu_grad(op, grad):
    return [_grad_op("SeluGrad", grad, op.outputs[0])]


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return [_grad_op("LeakyReluGrad", grad, op.inputs[0], op_attrs(op, ["alpha"]))]


@RegisterGradient("Softplus")
def _softplus_grad(op, grad):
    return [grad * math_ops.sigmoid(op.inputs[0])]


@RegisterGradient("Softsign")
def _softsign_grad(op, grad):
    return [_grad_op("SoftsignGrad", grad, op.inputs[0])]


# The *Grad ops are linear in their incoming gradient; the piecewise-constant masks (Relu, Relu6,
# LeakyRelu) give the forward-tensor input a zero gradient.
def _masked_grad_grad(op_type, attr_names=()):
    def grad_fn(op, grad):
        x = op.inputs[1]
        return [_grad_op(op_type, grad, x, op_attrs(op, attr_names)), array_ops.zeros_like(x)]

    return grad_fn


RegisterGradient("ReluGrad")(_masked_grad_grad("ReluGrad"))
RegisterGradient("Relu6Grad")(_masked_grad_grad("Relu6Grad"))
RegisterGradient("LeakyReluGrad")(_masked_grad_grad("LeakyReluGrad", ["alpha"]))


@RegisterGradient("EluGrad")
def _elu_grad_grad(op, grad):
    # EluGrad(dy, y) = dy * (y + 1) where y < 0, else dy.
    y = op.inputs[1]
    return [_grad_op("EluGrad", grad, y),
            math_ops.where(y < 0, grad * op.inputs[0], array_ops.zeros_like(y))]


@RegisterGradient("SeluGrad")
def _selu_grad_grad(op, grad):
    # SeluGrad(dy, y) = dy * (y + scale * alpha) where y < 0, else dy * scale.
    y = op.inputs[1]
    return [_grad_op("SeluGrad", grad, y),
            math_ops.where(y < 0.0, grad * op.inputs[0], array_ops.zeros_like(y))]


@RegisterGradient("SoftplusGrad")
def _softplus_grad_grad(op, grad):
    # SoftplusGrad(dy, x) = dy * sigmoid(x); d sigmoid(x)/dx = 1 / (exp(-x) + 2 + exp(x)).
    dy, x = op.inputs
    with control_dependencies([grad]):
        ddy = _grad_op("SoftplusGrad", grad, x)
        d2x = grad * dy / (math_ops.exp(-x) + 2.0 + math_ops.exp(x))
        return [ddy, d2x]


@RegisterGradient("SoftsignGrad")
def _softsign_grad_grad(op, grad):
    # SoftsignGrad(dy, x) = dy / (1 + |x|)^2. TensorFlow registers no gradient for it; this is the
    # exact one: d/dx = -2 * dy * sign(x) / (1 + |x|)^3.
    dy, x = op.inputs
    denom = 1.0 + math_ops.abs(x)
    return [_grad_op("SoftsignGrad", grad, x),
            -2.0 * grad * dy * math_ops.sign(x) / (denom * denom * denom)]


# ---------------------------------------------------------------- softmax and cross-entropies


@RegisterGradient("Softmax")
def _softmax_grad(op, grad):
    softmax = op.outputs[0]
    sum_channels = math_ops.reduce_sum(grad * softmax, -1, keepdims=True)
    return [(grad - sum_channels) * softmax]


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    softmax = math_ops.exp(op.outputs[0])
    return [grad - math_ops.reduce_sum(grad, -1, keepdims=True) * softmax]


def _broadcast_mul(vec, mat):
    """``vec[:, None] * mat``: scales each row of ``mat`` by one element of the vector ``vec``."""
    return array_ops.expand_dims(vec, -1) * mat


def _xent_logits_grad(op, grad_loss, grad_grad):
    """The logits gradient of a (sparse) softmax cross-entropy from both of its outputs.

    The op's second output is d loss / d logits (softmax - labels), whose own derivative with
    respect to the logits is the softmax Jacobian.
    """
    logits = op.inputs[0]
    grad = None
    if not is_zero_grad(grad_loss):
        grad = _broadcast_mul(grad_loss, op.outputs[1])
    if not is_zero_grad(grad_grad):
        softmax = apply_op("Softmax", [logits]).outputs[0]
        inner = math_ops.reduce_sum(grad_grad * softmax, -1, keepdims=True)
        second = (grad_grad - inner) * softmax
        grad = second if grad is None else grad + second
    return grad


def _same_static_shape(a, b):
    """Whether ``a`` and ``b`` are known to have one shape (unknown dimensions may differ at run time)."""
    return a.shape.is_fully_defined() and a.shape.as_list() == b.shape.as_list()


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad_loss, grad_grad):
    logits, labels = op.inputs
    grad = _xent_logits_grad(op, grad_loss, grad_grad)
    labels_grad = None
    if not is_zero_grad(grad_loss):
        log_softmax = apply_op("LogSoftmax", [logits]).outputs[0]
        labels_grad = _broadcast_mul(grad_loss, -log_softmax)
    if not is_zero_grad(grad_grad):
        # backprop = softmax(logits) - labels. TensorFlow drops this term (so its second derivatives
        # w.r.t. labels miss it); it is exact and costs nothing when the backprop output is unused.
        labels_grad = -grad_grad if labels_grad is None else labels_grad - grad_grad
    if not _same_static_shape(logits, labels):  # one was broadcast against the other: sum it back
        grad = None if grad is None else unbroadcast(grad, logits)
        labels_grad = None if labels_grad is None else unbroadcast(labels_grad, labels)
    return [grad, labels_grad]


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, grad_loss, grad_grad):
    return [_xent_logits_grad(op, grad_loss, grad_grad), None]


# ---------------------------------------------------------------- BiasAdd, L2Loss


@RegisterGradient("BiasAdd")
def _bias_add_grad(op, grad):
    bias_grad = apply_op("BiasAddGrad", [grad], op_attrs(op, ["data_format"])).outputs[0]
    return [grad, bias_grad]


@RegisterGradient("BiasAddV1")
def _bias_add_v1_grad(op, grad):
    axes = array_ops.range(array_ops.rank(grad) - 1)
    return [grad, math_ops.reduce_sum(grad, axes)]


@RegisterGradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    # BiasAddGrad sums over every axis but the channel axis: its gradient tiles ``grad`` back.
    shape = array_ops.shape(op.inputs[0])
    bias_shape = array_ops.shape(grad)
    if op_attrs(op, ["data_format"])["data_format"] == "NCHW":
        expanded = array_ops.concat([array_ops.ones_like(shape[:1]), bias_shape,
                                     array_ops.ones_like(shape[2:])], 0)
        multiples = array_ops.concat([shape[:1], [1], shape[2:]], 0)
    else:
        expanded = array_ops.concat([array_ops.ones_like(shape[:-1]), bias_shape], 0)
        multiples = array_ops.concat([shape[:-1], [1]], 0)
    return [array_ops.tile(array_ops.reshape(grad, expanded), multiples)]


@RegisterGradient("L2Loss")
def _l2_loss_grad(op, grad):
    return [op.inputs[0] * grad]


# ---------------------------------------------------------------- top-k


@RegisterGradient("TopKV2")
def _top_k_grad(op, grad, _indices_grad):
    """Scatters the gradient of the values into the positions they came from (zeros elsewhere)."""
    return [_scatter_last(op.inputs[0], op.outputs[1], grad), None]


@RegisterGradient("ApproxTopK")
def _approx_top_k_grad(op, grad, _indices_grad):
    """TopKV2's gradient along ``reduction_dimension`` (moved last and back)."""
    x, indices = op.inputs[0], op.outputs[1]
    dim = op.get_attr("reduction_dimension")
    rank = x.shape.ndims
    if dim in (-1, None) or (rank is not None and dim == rank - 1):
        return [_scatter_last(x, indices, grad)]
    if rank is None:
        raise ValueError(f"The gradient of ApproxTopK {op.name!r} along reduction_dimension {dim} needs the rank "
                         f"of its input.")
    dim %= rank
    perm = [d for d in range(rank) if d != dim] + [dim]
    back = [perm.index(d) for d in range(rank)]
    moved = _scatter_last(array_ops.transpose(x, perm), array_ops.transpose(indices, perm),
                          array_ops.transpose(grad, perm))
    return [array_ops.transpose(moved, back)]


def _scatter_last(x, indices, grad):
    """``grad`` (of the top-k values along the last axis) scattered to the positions ``indices`` of ``x``."""
    in_shape = array_ops.shape(x)
    idx_dtype = indices.dtype.base_dtype
    k = array_ops.shape(indices, out_type=idx_dtype)[-1]
    flat = array_ops.reshape(indices, array_ops.stack([-1, k]))
    in_last = math_ops.cast(in_shape[-1], idx_dtype)
    rows = array_ops.shape(flat, out_type=idx_dtype)[0]
    offsets = array_ops.expand_dims(array_ops.range(0, rows * in_last, in_last), -1)
    positions = array_ops.reshape(flat + offsets, [-1, 1])
    total = math_ops.cast(math_ops.reduce_prod(in_shape), idx_dtype)
    scattered = array_ops.scatter_nd(positions, array_ops.reshape(grad, [-1]), array_ops.reshape(total, [1]))
    return array_ops.reshape(scattered, in_shape)


NotDifferentiable("InTopKV2")
