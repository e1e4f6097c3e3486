"""The collective ops are not differentiable, as in TensorFlow: a strategy all-reduces gradients
that autodiff already computed, it never differentiates through an all-reduce."""

from sparseflow._src.grad.registry import NotDifferentiable
from sparseflow._src.ops.collective_ops import COLLECTIVE_OP_TYPES

for _op_type in COLLECTIVE_OP_TYPES:
    NotDifferentiable(_op_type)
