"""Igamma, Igammac, IgammaGradA, Zeta, Polygamma, Betainc, RandomGammaGrad, RandomGamma and
RandomPoissonV2.

Small and large arguments (either side of ``x = a + 1``, where the incomplete gamma functions
switch method), zeros, negative and NaN arguments, infinities, broadcasting, empty inputs. Gamma
and Poisson samples are not TensorFlow's stream (see ``ops/random_gamma_ops``): their entries
check shapes, support and moments instead.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, empty, i32, positive

_A = T([0.5, 1.0, 2.0, 5.0, 10.0, 3.0, 0.2, 50.0])
_X = T([0.3, 1.0, 2.0, 1.0, 30.0, 0.0, 4.0, 45.0])
_BAD_A = T([0.0, -1.0, np.nan, 1.0, 1.0, np.inf])
_BAD_X = T([1.0, 1.0, 1.0, -1.0, np.nan, 1.0])


def _pair(first, second, names=("a", "x")):
    def samples(grad_fd=True):
        return [
            Sample("values", {names[0]: first, names[1]: second}, fd=grad_fd),
            Sample("broadcast", {names[0]: T([[1.5], [4.0]]), names[1]: T([0.5, 2.0, 7.0])}, fd=grad_fd),
            Sample("empty", {names[0]: empty(0), names[1]: empty(0)}),
            Sample("mismatch", {names[0]: T([1.0, 2.0]), names[1]: T([1.0, 2.0, 3.0])}),
        ]
    return samples


def _moments_check(mean_of, low):
    """A check of samples [n, k]: finite, >= ``low``, column means near ``mean_of(parameter)``."""

    def check(inputs, attrs, outs):
        if outs is None:
            return "raised"
        x = np.asarray(outs[0], np.float64)
        param = np.broadcast_to(np.asarray(inputs.get("alpha", inputs.get("rate")), np.float64), x.shape[1:])
        if x.shape[0] == 0:
            return ""
        if not np.isfinite(x).all() or (x < low).any():
            return f"samples outside the support: {x.min()}"
        means, want = x.mean(axis=0), mean_of(param)
        tol = 6 * np.sqrt(np.maximum(want, 1e-3) / x.shape[0]) * np.maximum(1.0, np.sqrt(want))
        return "" if (np.abs(means - want) <= tol).all() else f"means {means} far from {want}"

    return check


_GAMMA_CHECK = _moments_check(lambda a: a, 0.0)
_POISSON_CHECK = _moments_check(lambda r: r, 0.0)
_NOT_TF = ("sparseflow draws from its own Philox-keyed NumPy stream, not TensorFlow's (see ops/random_gamma_ops): "
           "checked for shape, support and means")

ENTRIES = [
    OpEntry("Igamma", _pair(_A, _X)() + [Sample("bad_arguments", {"a": _BAD_A, "x": _BAD_X}, grad=False)],
            dtypes=("float16", "float32", "float64"), rtol={"float32": 1e-5}, grad_rtol=1e-4),
    OpEntry("Igammac", _pair(_A, _X)() + [Sample("bad_arguments", {"a": _BAD_A, "x": _BAD_X}, grad=False)],
            dtypes=("float16", "float32", "float64"), rtol={"float32": 1e-5}, grad_rtol=1e-4),
    OpEntry("IgammaGradA", _pair(_A, _X)(False) + [Sample("bad_arguments", {"a": _BAD_A, "x": _BAD_X})],
            rtol={"float32": 1e-5, "float64": 1e-9}),
    OpEntry("Zeta", [
        Sample("values", {"x": T([2.0, 3.0, 1.5, 4.0]), "q": T([1.0, 0.5, 2.0, 10.0])}, fd=True),
        Sample("broadcast", {"x": T([[2.0], [3.0]]), "q": T([1.0, 2.0, 5.0])}, fd=True),
        Sample("edges", {"x": T([1.0, 0.5, 2.0, 2.0]), "q": T([1.0, 1.0, 0.0, -1.5])}, grad=False),
        Sample("empty", {"x": empty(0), "q": empty(0)}),
    ], rtol={"float32": 1e-5}, grad_rtol=1e-4),
    OpEntry("Polygamma", [
        Sample("values", {"a": T([0.0, 1.0, 2.0, 3.0]), "x": T([0.5, 1.0, 2.5, 10.0])}, fd=True),
        Sample("broadcast", {"a": T([[1.0], [2.0]]), "x": T([1.0, 2.0, 5.0])}, fd=True),
        Sample("edges", {"a": T([1.5, -1.0, 1.0, 1.0]), "x": T([1.0, 1.0, 0.0, -2.0])}, grad=False),
        Sample("empty", {"a": empty(0), "x": empty(0)}),
    ], rtol={"float32": 1e-5}, grad_rtol=1e-4),
    OpEntry("Betainc", [
        Sample("values", {"a": T([0.5, 2.0, 5.0]), "b": T([1.0, 3.0, 0.5]), "x": T([0.2, 0.5, 0.9])}, fd=True),
        Sample("scalars", {"a": T(2.0), "b": T([1.0, 3.0]), "x": T(0.5)}, fd=True),
        Sample("edges", {"a": T([0.0, -1.0, 1.0, 1.0, 2.0]), "b": T([1.0, 1.0, 1.0, 1.0, 2.0]),
                         "x": T([0.5, 0.5, -0.1, 1.5, 1.0])}, grad=False),
        Sample("empty", {"a": empty(0), "b": empty(0), "x": empty(0)}),
        Sample("mismatch", {"a": T([1.0, 2.0]), "b": T([1.0, 2.0, 3.0]), "x": T(0.5)}),
    ], rtol={"float32": 1e-5}, grad_rtol=1e-4,
        differs={"scalars:grad": "TensorFlow's gradient fails when x is a scalar and a or b is not (it reshapes "
                                 "the summed gradient wrongly); sparseflow's sums it to x's shape"}),
    OpEntry("RandomGammaGrad", [
        Sample("values", {"alpha": T([0.5, 2.0, 10.0]), "sample": T([0.3, 2.0, 12.0])}),
        Sample("broadcast", {"alpha": T([[1.0], [3.0]]), "sample": T([0.5, 2.0])}),
        Sample("empty", {"alpha": empty(0), "sample": empty(0)}),
    ], rtol={"float32": 1e-5, "float64": 1e-9}),
    OpEntry("RandomGamma", [
        Sample("alphas", {"shape": i32([4000]), "alpha": positive(3, lo=0.5, hi=6.0)}, {"seed": 3, "seed2": 4},
               check=_GAMMA_CHECK, grad=False),
        Sample("empty", {"shape": i32([0]), "alpha": positive(2)}, {"seed": 3, "seed2": 4}, check=_GAMMA_CHECK),
    ], dtypes=("float32", "float64"), stateful=True, tf=_NOT_TF),
    OpEntry("RandomPoissonV2", [
        Sample("rates", {"shape": i32([4000]), "rate": T([0.5, 3.0, 40.0])}, {"seed": 3, "seed2": 4},
               check=_POISSON_CHECK),
        Sample("empty", {"shape": i32([0, 2]), "rate": T([1.0])}, {"seed": 1, "seed2": 1}, check=_POISSON_CHECK),
    ], dtypes=("float32", "float64"), type_attr="R", stateful=True, tf=_NOT_TF),
]
