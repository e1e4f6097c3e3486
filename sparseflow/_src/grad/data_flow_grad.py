"""Queues, gradient accumulators and session handles have no gradient (their outputs are state, not functions
of inputs)."""

from sparseflow._src.grad.registry import NotDifferentiable
from sparseflow._src.ops.accumulator_ops import ACCUMULATOR_OP_TYPES
from sparseflow._src.ops.queue_ops import QUEUE_OP_TYPES
from sparseflow._src.ops.session_ops import SESSION_HANDLE_OP_TYPES

for _op_type in QUEUE_OP_TYPES + ACCUMULATOR_OP_TYPES + SESSION_HANDLE_OP_TYPES:
    NotDifferentiable(_op_type)
