"""Optimizer update ops (Apply* and SparseApply*): one step on variables, checked with every slot
read after it.

Dense steps on matrices, scalars and empty variables; sparse steps with int32 and int64 indices,
repeated indices, no indices and out-of-range indices; Nesterov, centered and V2 variants.
"""

from __future__ import annotations

from tests.opdb.families.state import with_variables
from tests.opdb.spec import OpEntry, Sample, T, empty, i32, i64, positive, regular

# op type -> (ref inputs, scalar hyperparameters and their values)
DENSE = {
    "ApplyGradientDescent": (["var"], {"alpha": 0.1}, "delta"),
    "ApplyProximalGradientDescent": (["var"], {"alpha": 0.1, "l1": 0.05, "l2": 0.01}, "delta"),
    "ApplyAdagrad": (["var", "accum"], {"lr": 0.1}, "grad"),
    "ApplyMomentum": (["var", "accum"], {"lr": 0.1, "momentum": 0.9}, "grad"),
    "ApplyAdam": (["var", "m", "v"], {"beta1_power": 0.9, "beta2_power": 0.999, "lr": 0.01, "beta1": 0.9,
                                      "beta2": 0.999, "epsilon": 1e-7}, "grad"),
    "ApplyRMSProp": (["var", "ms", "mom"], {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-7}, "grad"),
    "ApplyCenteredRMSProp": (["var", "mg", "ms", "mom"], {"lr": 0.01, "rho": 0.9, "momentum": 0.5,
                                                          "epsilon": 1e-7}, "grad"),
    "ApplyAdadelta": (["var", "accum", "accum_update"], {"lr": 1.0, "rho": 0.95, "epsilon": 1e-6}, "grad"),
    "ApplyFtrl": (["var", "accum", "linear"], {"lr": 0.1, "l1": 0.01, "l2": 0.02, "lr_power": -0.5}, "grad"),
    "ApplyFtrlV2": (["var", "accum", "linear"], {"lr": 0.1, "l1": 0.01, "l2": 0.02, "l2_shrinkage": 0.05,
                                                 "lr_power": -0.5}, "grad"),
}
SPARSE = {
    "SparseApplyProximalGradientDescent": "ApplyProximalGradientDescent",
    "SparseApplyAdagrad": "ApplyAdagrad", "SparseApplyMomentum": "ApplyMomentum",
    "SparseApplyRMSProp": "ApplyRMSProp", "SparseApplyCenteredRMSProp": "ApplyCenteredRMSProp",
    "SparseApplyAdadelta": "ApplyAdadelta", "SparseApplyFtrl": "ApplyFtrl", "SparseApplyFtrlV2": "ApplyFtrlV2",
}
_REPEATED = ("a repeated index: TensorFlow's kernel updates the row once per occurrence, in turn; sparseflow's sums "
             "the gradient rows first and updates once (its optimizers then skip the deduplication ops TensorFlow's "
             "optimizers add, so training gives the same result)")
_SLOT_POSITIVE = {"accum", "v", "ms", "accum_update"}  # slots that must stay > 0 (square roots of them)


def _slots(refs, *shape, seed=0):
    return {r: (positive(*shape, lo=0.1, hi=1.0, seed=seed + i) if r in _SLOT_POSITIVE else
                regular(*shape, seed=seed + i)) for i, r in enumerate(refs)}


def _hyper(hyper):
    return {k: T(v) for k, v in hyper.items()}


def _dense_samples(refs, hyper, grad_name, extra=None):
    extra = extra or {}
    return [
        Sample("matrix", {**_slots(refs, 2, 3), **_hyper(hyper), grad_name: regular(2, 3, seed=9)}, extra, grad=False),
        Sample("rank0", {**_slots(refs), **_hyper(hyper), grad_name: regular(seed=9)}, extra, grad=False),
        Sample("empty", {**{r: empty(0, 2) for r in refs}, **_hyper(hyper), grad_name: empty(0, 2)}, extra,
               grad=False),
        Sample("grad_mismatch", {**_slots(refs, 2, 3), **_hyper(hyper), grad_name: regular(3, 2)}, extra,
               grad=False),
        Sample("hyper_not_scalar", {**_slots(refs, 2), **_hyper(hyper), list(hyper)[0]: T([0.1, 0.2]),
                                    grad_name: regular(2)}, extra, grad=False),
    ]


ENTRIES = []
for _op, (_refs, _hyper_values, _grad) in DENSE.items():
    ENTRIES.append(OpEntry(_op, _dense_samples(_refs, _hyper_values, _grad), build=with_variables(_op, _refs),
                           stateful=True, dtypes=("float32", "float64"), rtol={"float32": 1e-5}))
    if _op in ("ApplyAdam", "ApplyMomentum"):
        ENTRIES.append(OpEntry(_op, _dense_samples(_refs, _hyper_values, _grad, {"use_nesterov": True}),
                               build=with_variables(_op, _refs), stateful=True, name=f"{_op}_nesterov",
                               dtypes=("float32", "float64"), rtol={"float32": 1e-5}))


def _sparse_samples(refs, hyper):
    return [
        Sample("rows", {**_slots(refs, 4, 2), **_hyper(hyper), "grad": regular(2, 2, seed=9),
                        "indices": i32([3, 0])}, grad=False),
        Sample("repeated_int64", {**_slots(refs, 3), **_hyper(hyper), "grad": regular(3, seed=9),
                                  "indices": i64([1, 1, 2])}, grad=False),
        Sample("no_indices", {**_slots(refs, 3, 2), **_hyper(hyper), "grad": empty(0, 2), "indices": i32([])},
               grad=False),
        Sample("out_of_range", {**_slots(refs, 3), **_hyper(hyper), "grad": regular(1, seed=9), "indices": i64([3])},
               grad=False),
        Sample("grad_mismatch", {**_slots(refs, 3, 2), **_hyper(hyper), "grad": regular(2, 3, seed=9),
                                 "indices": i32([0, 1])}, grad=False),
    ]


for _op, _dense in SPARSE.items():
    _refs, _hyper_values, _ = DENSE[_dense]
    ENTRIES.append(OpEntry(_op, _sparse_samples(_refs, _hyper_values), build=with_variables(_op, _refs),
                           stateful=True, dtypes=("float32", "float64"), rtol={"float32": 1e-5},
                           differs={"repeated_int64": _REPEATED}))
