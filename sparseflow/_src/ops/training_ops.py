"""The fused optimizer update ops (TensorFlow's ``training_ops``): ``ApplyAdam``, ``SparseApplyFtrl``, ...

Each op updates a variable and its slot variables in one kernel. Inputs are the variable and its
slots (``Ref(T)``), then the hyper-parameters as scalars of the variable's type and the gradient;
sparse variants take the gradient rows and their ``indices`` (duplicates are summed before the
update). Every op returns the variable's ref.

Example:
    >>> import sparseflow as tf
    >>> from sparseflow._src.ops import training_ops
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0], name="w")
    ...     up = training_ops.apply_gradient_descent(w, 0.5, [2.0, 2.0])
    ...     with tf.Session() as sess:
    ...         _ = sess.run(w.initializer)
    ...         print(sess.run(up), up.op.type)
    [0. 1.] ApplyGradientDescent
"""

from __future__ import annotations

from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.ops.state_ops import merge_shapes

__all__: list[str] = []  # raw ops: used by tf.train optimizers, not re-exported

_NUMBER = ("{float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, complex128, half, "
           "uint32, uint64}")

# op type -> (ref inputs, scalar inputs in order, extra attrs). The gradient (and, for the sparse
# variants, indices) sit where TensorFlow puts them: see _ORDER.
_DENSE = {
    "ApplyGradientDescent": ((), ("alpha",), ()),
    "ApplyProximalGradientDescent": ((), ("alpha", "l1", "l2"), ()),
    "ApplyMomentum": (("accum",), ("lr", "momentum"), ("use_nesterov: bool = false",)),
    "ApplyAdagrad": (("accum",), ("lr",), ("update_slots: bool = true",)),
    "ApplyAdam": (("m", "v"), ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"),
                  ("use_nesterov: bool = false",)),
    "ApplyFtrl": (("accum", "linear"), ("lr", "l1", "l2", "lr_power"),
                  ("multiply_linear_by_lr: bool = false",)),
    "ApplyFtrlV2": (("accum", "linear"), ("lr", "l1", "l2", "l2_shrinkage", "lr_power"),
                    ("multiply_linear_by_lr: bool = false",)),
    "ApplyRMSProp": (("ms", "mom"), ("lr", "rho", "momentum", "epsilon"), ()),
    "ApplyCenteredRMSProp": (("mg", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"), ()),
    "ApplyAdadelta": (("accum", "accum_update"), ("lr", "rho", "epsilon"), ()),
}

# Where TensorFlow puts the gradient (and indices) among the non-ref inputs:
# "first" = before the scalars, "after:<name>" = after that scalar, "last" = after all scalars.
_ORDER = {
    "GradientDescent": "last", "ProximalGradientDescent": "last", "Momentum": "after:lr", "Adagrad": "last",
    "Adam": "last", "Ftrl": "first", "FtrlV2": "first", "RMSProp": "last", "CenteredRMSProp": "last",
    "Adadelta": "last",
}
_SPARSE = ("ProximalGradientDescent", "Momentum", "Adagrad", "Ftrl", "FtrlV2", "RMSProp", "CenteredRMSProp",
           "Adadelta")


def _parse(op_type: str) -> tuple[bool, str]:
    """(is sparse, base name): ``SparseApplyFtrl`` -> (True, "Ftrl")."""
    sparse = op_type.startswith("Sparse")
    return sparse, op_type[len("SparseApply"):] if sparse else op_type[len("Apply"):]


def num_refs(op_type: str) -> int:
    """How many leading ``Ref(T)`` inputs (the variable and its slots) a training op takes."""
    return 1 + len(_DENSE["Apply" + _parse(op_type)[1]][0])


def input_names(op_type: str) -> list[str]:
    """The input names of a training op, in order (e.g. ``var, accum, lr, grad, momentum``)."""
    sparse, base = _parse(op_type)
    refs, scalars, _ = _DENSE["Apply" + base]
    if sparse:
        grad = ["grad", "indices"]
    else:
        grad = ["delta"] if base in ("GradientDescent", "ProximalGradientDescent") else ["grad"]
    order = _ORDER[base]
    rest = list(scalars)
    if order == "first":
        rest = grad + rest
    elif order == "last":
        rest = rest + grad
    else:
        at = rest.index(order.split(":")[1]) + 1
        rest = rest[:at] + grad + rest[at:]
    return ["var", *refs, *rest]


def _scalar(shape: TensorShape, name: str) -> None:
    if shape.ndims is not None and shape.ndims != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {shape.ndims} for '{name}'")


def _shape_fn(op_type: str):
    names = input_names(op_type)
    nrefs = num_refs(op_type)
    sparse = _parse(op_type)[0]

    def shape_fn(op):
        shapes = [t.shape for t in op.inputs]
        var = shapes[0]
        for i in range(1, nrefs):
            var = merge_shapes(var, shapes[i])
        by_name = dict(zip(names, shapes))
        for i in range(nrefs, len(names)):
            if names[i] not in ("grad", "delta", "indices"):
                _scalar(shapes[i], names[i])
        grad = by_name.get("grad", by_name.get("delta"))
        if not sparse:
            return [merge_shapes(var, grad)]
        indices = by_name["indices"]
        if indices.ndims is not None and indices.ndims != 1:
            raise ValueError(f"Shape must be rank 1 but is rank {indices.ndims} for 'indices'")
        if var.ndims is not None and var.ndims < 1:
            raise ValueError("var must be at least 1 dimensional")
        if grad.ndims is not None and var.ndims is not None:
            if grad.ndims != var.ndims:
                raise ValueError(f"Shapes must be equal rank, but are {grad.ndims} and {var.ndims} "
                                 f"(grad and var)")
            inner = merge_shapes(grad[1:], var[1:])
            merge_shapes(grad[:1], indices if indices.ndims is not None else unknown_shape(1))
            var = var[:1].concatenate(inner)
        elif grad.ndims is not None and grad.ndims >= 1:  # the rows of an unknown var look like grad's
            var = unknown_shape(1).concatenate(grad[1:])
        return [var]

    return shape_fn


def _register(op_type: str):
    sparse, base = _parse(op_type)
    extra = _DENSE["Apply" + base][2]
    refs = num_refs(op_type)
    inputs = []
    for i, name in enumerate(input_names(op_type)):
        kind = "Ref(T)" if i < refs else ("Tindices" if name == "indices" else "T")
        inputs.append(f"{name}: {kind}")
    attrs = [f"T: {_NUMBER}"] + (["Tindices: {int32, int64}"] if sparse else []) + \
        ["use_locking: bool = false", *extra]
    register_op(op_type, inputs=inputs, outputs=["out: Ref(T)"], attrs=attrs, shape_fn=_shape_fn(op_type))


for _op in _DENSE:
    _register(_op)
for _base in _SPARSE:
    _register("SparseApply" + _base)

DENSE_OPS = tuple(_DENSE)
SPARSE_OPS = tuple("SparseApply" + b for b in _SPARSE)


def _apply(op_type, args: dict, attrs: dict, name):
    inputs = [args[n] for n in input_names(op_type)]
    attrs = {k: v for k, v in attrs.items() if v is not None}
    return apply_op(op_type, inputs, attrs, name=name or op_type).outputs[0]


# ---------------------------------------------------------------------- wrappers (TensorFlow's signatures)
def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """``var -= alpha * delta``."""
    return _apply("ApplyGradientDescent", locals(), {"use_locking": use_locking}, name)


def apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False, name=None):
    """``prox_v = var - alpha * delta; var = sign(prox_v) * max(|prox_v| - alpha*l1, 0) / (1 + alpha*l2)``."""
    return _apply("ApplyProximalGradientDescent", locals(), {"use_locking": use_locking}, name)


def sparse_apply_proximal_gradient_descent(var, alpha, l1, l2, grad, indices, use_locking=False, name=None):
    return _apply("SparseApplyProximalGradientDescent", locals(), {"use_locking": use_locking}, name)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False, name=None):
    """``accum = accum * momentum + grad; var -= lr * accum`` (Nesterov: ``var -= lr * (grad + momentum * accum)``)."""
    return _apply("ApplyMomentum", locals(), {"use_locking": use_locking, "use_nesterov": use_nesterov}, name)


def sparse_apply_momentum(var, accum, lr, grad, indices, momentum, use_locking=False, use_nesterov=False,
                          name=None):
    return _apply("SparseApplyMomentum", locals(), {"use_locking": use_locking, "use_nesterov": use_nesterov},
                  name)


def apply_adagrad(var, accum, lr, grad, use_locking=False, update_slots=True, name=None):
    """``accum += grad ** 2; var -= lr * grad / sqrt(accum)``."""
    return _apply("ApplyAdagrad", locals(), {"use_locking": use_locking, "update_slots": update_slots}, name)


def sparse_apply_adagrad(var, accum, lr, grad, indices, use_locking=False, update_slots=True, name=None):
    return _apply("SparseApplyAdagrad", locals(), {"use_locking": use_locking, "update_slots": update_slots},
                  name)


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, use_locking=False,
               use_nesterov=False, name=None):
    """Adam with bias correction ``lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)``."""
    return _apply("ApplyAdam", locals(), {"use_locking": use_locking, "use_nesterov": use_nesterov}, name)


def apply_ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, use_locking=False, multiply_linear_by_lr=False,
               name=None):
    """FTRL-Proximal (McMahan et al.), as TensorFlow's ``ApplyFtrl``."""
    return _apply("ApplyFtrl", locals(), {"use_locking": use_locking,
                                          "multiply_linear_by_lr": multiply_linear_by_lr}, name)


def sparse_apply_ftrl(var, accum, linear, grad, indices, lr, l1, l2, lr_power, use_locking=False,
                      multiply_linear_by_lr=False, name=None):
    return _apply("SparseApplyFtrl", locals(), {"use_locking": use_locking,
                                                "multiply_linear_by_lr": multiply_linear_by_lr}, name)


def apply_ftrl_v2(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power, use_locking=False,
                  multiply_linear_by_lr=False, name=None):
    """FTRL with shrinkage-type L2 (``grad + 2 * l2_shrinkage * var`` enters the linear term)."""
    return _apply("ApplyFtrlV2", locals(), {"use_locking": use_locking,
                                            "multiply_linear_by_lr": multiply_linear_by_lr}, name)


def sparse_apply_ftrl_v2(var, accum, linear, grad, indices, lr, l1, l2, l2_shrinkage, lr_power,
                         use_locking=False, multiply_linear_by_lr=False, name=None):
    return _apply("SparseApplyFtrlV2", locals(), {"use_locking": use_locking,
                                                  "multiply_linear_by_lr": multiply_linear_by_lr}, name)


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False, name=None):
    """``ms += (grad**2 - ms) * (1 - rho); mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom``."""
    return _apply("ApplyRMSProp", locals(), {"use_locking": use_locking}, name)


def sparse_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, indices, use_locking=False, name=None):
    return _apply("SparseApplyRMSProp", locals(), {"use_locking": use_locking}, name)


def apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False, name=None):
    """RMSProp normalized by the centered second moment ``ms - mg**2``."""
    return _apply("ApplyCenteredRMSProp", locals(), {"use_locking": use_locking}, name)


def sparse_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                                   use_locking=False, name=None):
    return _apply("SparseApplyCenteredRMSProp", locals(), {"use_locking": use_locking}, name)


def apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False, name=None):
    """Adadelta (Zeiler 2012) with TensorFlow's extra learning rate ``lr``."""
    return _apply("ApplyAdadelta", locals(), {"use_locking": use_locking}, name)


def sparse_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, indices, use_locking=False,
                          name=None):
    return _apply("SparseApplyAdadelta", locals(), {"use_locking": use_locking}, name)
