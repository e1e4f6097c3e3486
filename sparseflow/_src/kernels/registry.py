"""Kernels per (op type, device type).

A kernel is registered as a *factory*: it receives the node being compiled (``KernelNode``:
name, attrs, dtypes, device, resource manager) once, when a plan is built, and returns the
compute function that runs on every step. Attr handling therefore costs nothing per step::

    @register_kernel("Cast")
    def _cast(node):
        dst = node.attrs["DstT"].as_numpy_dtype
        return lambda x: np.asarray(x).astype(dst)

The compute function takes the input values (NumPy arrays or scalars) and returns the single
output, a tuple/list of outputs for multi-output ops, or None for ops without outputs. With
``needs_context=True`` it is called as ``compute(ctx, *inputs)`` with the step context
(rendezvous, step id, cancellation, deadline, frame). Kernels never modify their inputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from sparseflow._src.framework.registry import Registry


@dataclasses.dataclass(frozen=True)
class KernelDef:
    op_type: str
    device_type: str
    factory: Callable
    needs_context: bool = False
    # Stateful kernels (variables, random generators, tables) are built once per session and node.
    stateful: bool = False
    # Kernels that call back into the client's Python objects (tf.py_func): the master refuses to
    # place them on another task's process.
    client_only: bool = False


@dataclasses.dataclass
class KernelNode:
    """What a kernel factory sees of the node it compiles."""

    name: str
    op_type: str
    attrs: dict
    input_dtypes: list
    output_dtypes: list
    device: str
    resources: object = None  # ResourceMgr of the device
    session: object = None  # per-session state shared by stateful kernels (e.g. seeds)
    site: object = None  # user's creation site
    input_shapes: list = dataclasses.field(default_factory=list)
    output_shapes: list = dataclasses.field(default_factory=list)
    # Compiles a library function (If/While bodies) by name: runner(name)(ctx, *args) -> outputs.
    function_runner: object = None

    @property
    def num_outputs(self) -> int:
        return len(self.output_dtypes)


_KERNELS = Registry("kernel")


def register_kernel(op_type: str, device: str = "CPU", needs_context: bool = False, stateful: bool = False,
                    client_only: bool = False):
    """Decorator registering a kernel factory for ``(op_type, device)``."""

    def deco(factory):
        import traceback

        frame = traceback.extract_stack(limit=2)[0]
        _KERNELS.register((op_type, device), KernelDef(op_type, device, factory, needs_context, stateful, client_only),
                          f"{frame.filename}:{frame.lineno}")
        return factory

    return deco


def register_simple_kernel(op_type: str, fn: Callable, device: str = "CPU"):
    """Registers a kernel whose compute function ignores attrs (``fn`` is called per step)."""
    import traceback

    frame = traceback.extract_stack(limit=2)[0]
    _KERNELS.register((op_type, device), KernelDef(op_type, device, lambda node: fn),
                      f"{frame.filename}:{frame.lineno}")


def list_output(values):
    """The result of a kernel whose outputs are one list argument (Split, Unpack, IdentityN, ...): a
    tuple, except that a list of one is a single-output op and returns that value itself."""
    values = tuple(values)
    return values[0] if len(values) == 1 else values


def get_kernel(op_type: str, device_type: str = "CPU") -> KernelDef | None:
    return _KERNELS.lookup((op_type, device_type), None)


def has_kernel(op_type: str, device_type: str = "CPU") -> bool:
    return (op_type, device_type) in _KERNELS


def is_client_only(op_type: str) -> bool:
    """Whether ``op_type`` runs only in the client's process (its kernel calls the client's Python)."""
    return any(k.client_only for (op, _), k in _KERNELS.items() if op == op_type)


def kernel_registry() -> Registry:
    return _KERNELS
