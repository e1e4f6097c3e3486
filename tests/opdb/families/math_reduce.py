"""Reductions, arg-reductions, cumulative ops and AddN.

Axes come as int32 and int64, negative, repeated and out of range; inputs as scalars (the
``reduce_*`` of a rank-0 value fed through a placeholder of unknown rank is the first TF1
program most users write), with size-1 and empty dimensions, and with NaN/inf/extremes.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import EDGES, FLOATS, REALS, OpEntry, Sample, T, empty, i32, i64, regular

BOOLS = ("bool",)


def _reduce_samples(smooth=True):
    fd = smooth
    return [
        Sample("rank0_no_axes", {"input": T(2.5), "axis": i32([])}, fd=fd),
        Sample("rank0_axis0", {"input": T(2.5), "axis": i32(0)}),
        Sample("vector", {"input": regular(5), "axis": i32(0)}, fd=fd),
        Sample("matrix_axis1_keep", {"input": regular(3, 4), "axis": i64(1)}, {"keep_dims": True}, fd=fd),
        Sample("matrix_neg_axis", {"input": regular(3, 4, seed=1), "axis": i32(-1)}, fd=fd),
        Sample("matrix_all_axes", {"input": regular(2, 3, seed=2), "axis": i32([-1, 0])}, fd=fd),
        Sample("matrix_all_axes_i64", {"input": regular(2, 3, seed=2), "axis": i64([-1, 0])}, fd=fd),
        Sample("cube_axes_0_2_keep", {"input": regular(2, 3, 2, seed=3), "axis": i32([0, 2])},
               {"keep_dims": True}, fd=fd),
        Sample("size1_dims", {"input": regular(1, 3, 1, seed=4), "axis": i32([0, 2])}, fd=fd),
        Sample("empty_reduced", {"input": empty(0, 3), "axis": i32(0)}),
        Sample("empty_kept", {"input": empty(0, 3), "axis": i64(1)}, {"keep_dims": True}),
        Sample("empty_all", {"input": empty(2, 0), "axis": i32([0, 1])}),
        Sample("edges", {"input": EDGES, "axis": i32(0)}, grad=False),
        Sample("edges_rows", {"input": T(lambda d: np.stack([EDGES.resolve(d)] * 2)), "axis": i32(1)},
               grad=False),
        Sample("axis_out_of_range", {"input": regular(2, 3), "axis": i32(2)}),
        Sample("axis_below_range", {"input": regular(2, 3), "axis": i64(-3)}),
        Sample("duplicate_axes", {"input": regular(2, 3), "axis": i32([1, 1])}),
    ]


def _wrapper(fn_name):
    def build(tf, input):  # noqa: A002 - TF's argument name
        return getattr(tf, fn_name)(input)

    return build


def _wrapper_samples():
    """The public ``reduce_*(x)`` with no axis: a rank the graph may not know (axes via Rank/Range)."""
    return [
        Sample("rank0", {"input": T(2.5)}, fd=True),
        Sample("matrix", {"input": regular(2, 3)}, fd=True),
        Sample("empty", {"input": empty(0, 2)}),
    ]


# TensorFlow's gradient of a reduction over several int64 axes fails to build (a TypeError mixing
# int32 and int64 in its reduced_shape); sparseflow's works and is checked by finite differences.
_I64_AXES = {"matrix_all_axes_i64:grad": "TensorFlow's gradient raises TypeError for several int64 axes"}

ENTRIES = []
for _op, _fn, _smooth in [("Sum", "reduce_sum", True), ("Mean", "reduce_mean", True),
                          ("Max", "reduce_max", False), ("Min", "reduce_min", False),
                          ("Prod", "reduce_prod", True), ("EuclideanNorm", "reduce_euclidean_norm", True)]:
    _differs = dict(_I64_AXES)
    if _op == "EuclideanNorm":
        _differs["*|complex*:grad"] = ("a complex norm is real-valued, so only the real part of its upstream "
                                       "gradient u moves it: sparseflow's gradient is Re(u) x / |x|, TensorFlow's "
                                       "u x / |x| (checked by finite differences)")
    if _op == "Mean":
        _differs["edges_rows|complex128"] = ("TensorFlow's vectorized complex128 mean along the inner axis "
                                             "turns inf+nan*j into nan+nan*j; sparseflow divides each part")
    ENTRIES.append(OpEntry(_op, _reduce_samples(_smooth), differs=_differs))
    if _op != "EuclideanNorm":
        ENTRIES.append(OpEntry(_op, _wrapper_samples(), build=_wrapper(_fn), name=f"{_op}_wrapper_no_axis"))

for _op, _fn in [("All", "reduce_all"), ("Any", "reduce_any")]:
    _bool_samples = [
        Sample("rank0", {"input": np.bool_(True), "axis": i32([])}),
        Sample("vector", {"input": np.array([True, False, True]), "axis": i32(0)}),
        Sample("matrix_keep", {"input": np.array([[True, True], [False, True]]), "axis": i64(-1)},
               {"keep_dims": True}),
        Sample("empty", {"input": np.zeros((0, 2), bool), "axis": i32(0)}),
        Sample("axis_out_of_range", {"input": np.array([True]), "axis": i32(1)}),
    ]
    ENTRIES.append(OpEntry(_op, _bool_samples, dtypes=(None,)))
    ENTRIES.append(OpEntry(_op, [Sample("rank0", {"input": np.bool_(False)}),
                                 Sample("matrix", {"input": np.array([[True, False]])})],
                           build=_wrapper(_fn), name=f"{_op}_wrapper_no_axis", dtypes=(None,)))


def _arg_samples():
    return [
        Sample("vector", {"input": regular(5), "dimension": i32(0)}),
        Sample("matrix_axis1", {"input": regular(3, 4), "dimension": i64(1)}),
        Sample("matrix_neg_axis_i32_out", {"input": regular(3, 4, seed=1), "dimension": i32(-2)},
               {"output_type": np.int32}),
        Sample("ties_first_index", {"input": T([[1, 3, 3], [2, 2, 0]]), "dimension": i32(1)}),
        Sample("edges", {"input": EDGES, "dimension": i32(0)}),
        Sample("size1", {"input": regular(1, 3), "dimension": i32(0)}),
        Sample("empty_kept_dim", {"input": empty(0, 3), "dimension": i32(1)}),
        Sample("empty_reduced_dim", {"input": empty(0, 3), "dimension": i32(0)}),
        Sample("rank0", {"input": T(1.5), "dimension": i32(0)}),
        Sample("axis_out_of_range", {"input": regular(2, 3), "dimension": i32(2)}),
    ]


for _op in ("ArgMax", "ArgMin"):
    ENTRIES.append(OpEntry(_op, _arg_samples()))


def _cum_samples(kinds=None):
    return [
        Sample("vector", {"x": regular(5), "axis": i32(0)}, kinds=kinds, fd=True),
        Sample("matrix_axis1_exclusive", {"x": regular(3, 4), "axis": i64(1)}, {"exclusive": True},
               kinds=kinds, fd=True),
        Sample("matrix_reverse_neg_axis", {"x": regular(3, 4, seed=1), "axis": i32(-2)}, {"reverse": True},
               kinds=kinds, fd=True),
        Sample("exclusive_reverse", {"x": regular(2, 3, seed=2), "axis": i32(1)},
               {"exclusive": True, "reverse": True}, kinds=kinds, fd=True),
        Sample("size1", {"x": regular(1, 3), "axis": i32(0)}, kinds=kinds),
        Sample("empty", {"x": empty(0, 3), "axis": i32(0)}, kinds=kinds),
        Sample("empty_other_axis", {"x": empty(0, 3), "axis": i32(1)}, {"exclusive": True}, kinds=kinds),
        Sample("edges", {"x": EDGES, "axis": i32(0)}, kinds=kinds, grad=False),
        Sample("rank0", {"x": T(1.5), "axis": i32(0)}, kinds=kinds),
        Sample("axis_out_of_range", {"x": regular(2, 3), "axis": i32(2)}, kinds=kinds),
    ]


ENTRIES += [OpEntry("Cumsum", _cum_samples()),
            OpEntry("Cumprod", _cum_samples(), differs={
                "*|complex*:grad": "TensorFlow's complex gradient leaves out the conjugation: cumsum(prod u) / x, "
                                   "not cumsum(conj(prod) u) / conj(x) (sparseflow's; checked by finite differences)"}),
            OpEntry("CumulativeLogsumexp", _cum_samples(FLOATS))]

ENTRIES.append(OpEntry("AddN", [
    Sample("one", {"inputs": [regular(2, 3)]}, fd=True),
    Sample("three", {"inputs": [regular(2, 3), regular(2, 3, seed=1), regular(2, 3, seed=2)]}, fd=True),
    Sample("rank0", {"inputs": [T(1.5), T(-2.0)]}, fd=True),
    Sample("empty", {"inputs": [empty(0, 3), empty(0, 3)]}),
    Sample("edges", {"inputs": [EDGES, EDGES]}, grad=False),
    Sample("shape_mismatch", {"inputs": [regular(2, 3), regular(3, 2)]}, kinds=REALS),
]))
