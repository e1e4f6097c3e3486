"""The registries are complete: every op type has a shape function and a CPU kernel."""

import sparseflow  # noqa: F401 - registers every op and kernel
from sparseflow._src.framework.op_def import get_op_def, registered_ops
from sparseflow._src.kernels.registry import has_kernel, kernel_registry

# Rewritten by the plan compiler into slots (feeds in, fetches out); they never run as kernels.
PLAN_ONLY_OPS = {"_Feed", "_Fetch"}


def test_every_op_has_a_shape_function():
    missing = [op for op in registered_ops() if get_op_def(op).shape_fn is None]
    assert not missing, f"ops without a shape function: {missing}"


def test_every_op_has_a_cpu_kernel():
    missing = [op for op in registered_ops() if op not in PLAN_ONLY_OPS and not has_kernel(op, "CPU")]
    assert not missing, f"ops without a CPU kernel: {missing}"


def test_every_kernel_belongs_to_a_registered_op():
    registered = set(registered_ops())
    orphans = [k for k, _ in kernel_registry().items() if k[0] not in registered]
    assert not orphans, f"kernels for unknown op types: {orphans}"


def test_registry_refuses_duplicates_naming_both_sites():
    import pytest

    from sparseflow._src.framework.op_def import register_op

    with pytest.raises(KeyError, match="first at .*again at"):
        register_op("Identity", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"])


# Inserted by the runtime after the graph is built; autodiff never sees them.
RUNTIME_ONLY_OPS = {"_Feed", "_Fetch", "_Send", "_Recv", "_FusedElementwise", "_FusedMatMul",
                    "_FusedReluGradBiasAddGrad", "_GroupedApply", "_SlicedMatMul"}


def test_every_op_has_a_gradient_or_is_declared_not_differentiable():
    from sparseflow._src.grad.registry import get_gradient_function

    missing = [op for op in registered_ops()
               if op not in RUNTIME_ONLY_OPS and get_gradient_function(op) is None]
    assert not missing, f"ops with neither a gradient nor NotDifferentiable: {missing}"
