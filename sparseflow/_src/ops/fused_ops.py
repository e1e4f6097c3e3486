"""Runtime-only ops made by graph passes: ``_FusedElementwise`` (the ``fuse`` pass), ``_FusedMatMul``,
``_FusedReluGradBiasAddGrad`` and ``_SlicedMatMul`` (the ``remap`` pass).

``_FusedMatMul`` is TensorFlow's op of the same rewrite: ``a @ b`` then ``fused_ops`` in order
(``BiasAdd`` with ``args[0]``, optionally ``Relu``). ``_FusedReluGradBiasAddGrad(gradients,
features)`` gives ``gradients * (features > 0)`` and its sums over the rows (BiasAddGrad).
``_SlicedMatMul(a, b, begin, size)`` is ``Slice(MatMul(a, b), begin, size)``, computing only the slice.

Never built by users (nothing is exported); it appears in optimized graphs, ``Session.explain``
and partition GraphDefs. Its attrs are the region's program as plain data (see
``passes/fuse.py``): ``program`` (one instruction string per op), inlined ``consts`` (a float64
tensor, lossless for float32 and float64 values) with their ``const_dtypes``, ``scalar_inputs``
(inputs that broadcast), ``output_values`` (instruction per output), ``shape`` (the static shape
of every output) and ``fused_nodes`` (original op names).

Example:
    >>> from sparseflow._src.framework.op_def import get_op_def
    >>> get_op_def("_FusedElementwise").output_args[0].type_list_attr
    'Tout'
"""

from __future__ import annotations

from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape

__all__: list[str] = []


def _fused_shape(op):
    shape = op.get_attr("shape")
    return [shape] * len(op.get_attr("Tout"))


register_op("_FusedElementwise", inputs=["inputs: Tin"], outputs=["outputs: Tout"],
            attrs=["Tin: list(type)", "Tout: list(type)", "program: list(string)",
                   "consts: tensor", "const_dtypes: list(type) = []",
                   "scalar_inputs: list(int) = []", "output_values: list(int)", "shape: shape",
                   "fused_nodes: list(string) = []"],
            shape_fn=_fused_shape)


def _fused_matmul_shape(op):
    a = op.inputs[0].shape.with_rank(2).as_list()
    b = op.inputs[1].shape.with_rank(2).as_list()
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    return [TensorShape([a[1] if ta else a[0], b[0] if tb else b[1]])]


def _relu_grad_bias_grad_shape(op):
    g = op.inputs[0].shape.merge_with(op.inputs[1].shape)
    if g.ndims is None:
        return [g, unknown_shape(1)]
    return [g, TensorShape([g.dims[-1]])]


register_op("_FusedMatMul", inputs=["a: T", "b: T", "args: num_args * T"], outputs=["product: T"],
            attrs=["transpose_a: bool = false", "transpose_b: bool = false", "T: {float, double}",
                   "num_args: int >= 0", "fused_ops: list(string) = []", "epsilon: float = 0.0001",
                   "leakyrelu_alpha: float = 0.2"],
            shape_fn=_fused_matmul_shape)
register_op("_SlicedMatMul", inputs=["a: T", "b: T", "begin: Index", "size: Index"], outputs=["product: T"],
            attrs=["transpose_a: bool = false", "transpose_b: bool = false", "T: {float, double}",
                   "Index: {int32, int64}"],
            shape_fn=lambda op: [unknown_shape(2)])
register_op("_FusedReluGradBiasAddGrad", inputs=["gradients: T", "features: T"],
            outputs=["backprops: T", "bias_backprop: T"], attrs=["T: {float, double}"],
            shape_fn=_relu_grad_bias_grad_shape)


# ``_GroupedApply``: the dense ``Apply<base>`` updates of N variables that share their scalar inputs
# (learning rate, beta powers, ...), as one node of the group_updates pass: ``refs`` are each
# variable's refs in turn (``R`` per variable: the variable and its slots), ``grads`` their gradients,
# ``scalars`` the shared inputs in the op's order.
register_op("_GroupedApply", inputs=["refs: Ref(NR * T)", "grads: N * T", "scalars: S * T"], outputs=[],
            attrs=["base: string", "N: int >= 1", "R: int >= 1", "NR: int >= 1", "S: int >= 0",
                   "T: {half, bfloat16, float, double}", "use_locking: bool = false", "use_nesterov: bool = false",
                   "update_slots: bool = true", "multiply_linear_by_lr: bool = false", "members: list(string) = []"],
            shape_fn=lambda op: [])
