"""LeftShift, RightShift, HistogramFixedWidth, Cross, Fingerprint, Timestamp and EditDistance.

Shifts by 0, by the width minus one, past the width and by negative amounts, of negative values;
values below, at and above a histogram's range, an empty range, no bins; cross products of
batches, of the wrong width; fingerprints of numbers and strings, of rows of one or many elements;
edit distances with empty hypotheses or truths, normalized or not, of different dense shapes.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import ANY_TYPE, OpEntry, Sample, T, empty, i32, i64, regular

_INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _shift_samples():
    def amounts(d):
        bits = np.dtype(d).itemsize * 8
        last = -1 if np.dtype(d).kind == "i" else bits + 10
        return np.array([0, 1, 3, bits - 1, bits, bits + 5, last], dtype=d)

    def values(d):
        info = np.iinfo(np.dtype(d))
        return np.array([1, 5, int(info.max), int(info.min), 7, -3 if info.min < 0 else 3, 100], dtype=d)

    return [
        Sample("amounts", {"x": T(values), "y": T(amounts)}),
        Sample("broadcast", {"x": T([[1], [6]]), "y": T([0, 1, 2])}),
        Sample("empty", {"x": empty(0, 2), "y": T([1, 2])}),
        Sample("mismatch", {"x": T([1, 2, 3]), "y": T([1, 2])}),
    ]


def _hist(name, values, value_range, nbins, **attrs):
    return Sample(name, {"values": values, "value_range": value_range, "nbins": i32(nbins)}, attrs)


def _timestamp(tf):
    """Whether the time is a float64 scalar after 2017 and before 5000 (the time itself changes)."""
    ts = tf.raw_ops.Timestamp()
    return [tf.logical_and(ts > 1.5e9, ts < 1e11), tf.shape(ts)]


def _timestamp_check(inputs, attrs, outs):
    if outs is None:
        return "raised"
    return "" if bool(outs[0]) and list(outs[1]) == [] else f"got {outs!r}"


def _edit(name, hyp, truth, **attrs):
    (hi, hv, hs), (ti, tv, ts) = hyp, truth
    return Sample(name, {"hypothesis_indices": i64(hi), "hypothesis_values": T(hv), "hypothesis_shape": i64(hs),
                         "truth_indices": i64(ti), "truth_values": T(tv), "truth_shape": i64(ts)}, attrs)


_NONE = (np.zeros((0, 2), np.int64), [], [2, 2])

ENTRIES = [
    OpEntry("LeftShift", _shift_samples(), dtypes=_INTEGERS),
    OpEntry("RightShift", _shift_samples(), dtypes=_INTEGERS),
    OpEntry("HistogramFixedWidth", [
        _hist("basic", T([-1, 0, 1, 2, 3, 4, 5, 9]), T([0, 5]), 5),
        _hist("int64_counts", T([0.5, 1.5, 1.5]), T([0, 3]), 3, dtype="int64"),
        _hist("matrix", regular(3, 4), T([-2, 2]), 4),
        _hist("one_bin", T([1, 2, 3]), T([0, 10]), 1),
        _hist("empty", empty(0), T([0, 1]), 3),
        _hist("no_bins", T([1, 2]), T([0, 5]), 0),
        _hist("empty_range", T([1, 2]), T([5, 5]), 3),
        _hist("reversed_range", T([1, 2]), T([5, 0]), 3),
    ], dtypes=("int32", "int64", "float32", "float64"),
        build=lambda tf, values, value_range, nbins, dtype="int32": tf.raw_ops.HistogramFixedWidth(
            values=values, value_range=value_range, nbins=nbins, dtype=dtype)),
    OpEntry("Cross", [
        Sample("vectors", {"a": regular(3), "b": regular(3, seed=1)}, fd=True),
        Sample("batch", {"a": regular(2, 4, 3), "b": regular(2, 4, 3, seed=1)}, fd=True),
        Sample("empty", {"a": empty(0, 3), "b": empty(0, 3)}),
        Sample("width_2", {"a": regular(2), "b": regular(2, seed=1)}),
        Sample("mismatch", {"a": regular(2, 3), "b": regular(3, seed=1)}),
    ], dtypes=("int8", "int32", "int64", "uint8", "float16", "float32", "float64")),
    OpEntry("Fingerprint", [
        Sample("vector", {"data": regular(3), "method": np.array(b"farmhash64", object)}),
        Sample("rows", {"data": regular(2, 3), "method": np.array(b"farmhash64", object)}),
        Sample("rank3", {"data": regular(2, 2, 2), "method": np.array(b"farmhash64", object)}),
        # (TensorFlow's fingerprints of rows of zero strings read uninitialized memory: numbers only)
        Sample("empty_rows", {"data": empty(2, 0), "method": np.array(b"farmhash64", object)},
               kinds=frozenset({"bool", "int", "uint", "float", "complex"})),
        Sample("no_rows", {"data": empty(0, 3), "method": np.array(b"farmhash64", object)}),
        Sample("rank0", {"data": regular(), "method": np.array(b"farmhash64", object)}),
        Sample("bad_method", {"data": regular(2), "method": np.array(b"md5", object)}),
    ], dtypes=ANY_TYPE),
    OpEntry("Timestamp", [Sample("now", {}, check=_timestamp_check)], dtypes=(None,), stateful=True, build=_timestamp,
            tf="the time differs from run to run: checked to be a scalar of seconds since the epoch"),
    OpEntry("EditDistance", [
        _edit("one_substitution", ([[0, 0], [0, 1]], [1, 2], [1, 2]), ([[0, 0], [0, 1]], [1, 3], [1, 2])),
        _edit("rows", ([[0, 0], [0, 1], [1, 0]], [1, 2, 4], [2, 3]), ([[0, 0], [1, 0], [1, 1], [1, 2]], [1, 4, 5, 6],
                                                                      [2, 3])),
        _edit("unnormalized", ([[0, 0], [0, 1]], [1, 2], [1, 2]), ([[0, 0], [0, 1], [0, 2]], [2, 1, 2], [1, 3]),
              normalize=False),
        _edit("empty_truth_row", ([[0, 0], [1, 0]], [1, 2], [2, 2]), ([[0, 0]], [1], [2, 2])),
        _edit("empty_truth_row_unnormalized", ([[0, 0], [1, 0]], [1, 2], [2, 2]), ([[0, 0]], [1], [2, 2]),
              normalize=False),
        _edit("empty_hypothesis_row", ([[0, 0]], [1], [2, 2]), ([[0, 0], [1, 0], [1, 1]], [1, 2, 3], [2, 2])),
        _edit("nothing", _NONE, _NONE),
        _edit("different_shapes", ([[0, 0]], [1], [1, 3]), ([[2, 0]], [1], [3, 1])),
        _edit("rank3", ([[0, 1, 0], [0, 1, 1]], [1, 2], [1, 2, 2]), ([[0, 1, 0]], [2], [1, 2, 2])),
        _edit("rank_mismatch", ([[0, 0]], [1], [1, 2]), ([[0, 0, 0]], [1], [1, 2, 2])),
        _edit("index_out_of_shape", ([[0, 5]], [1], [1, 2]), ([[0, 0]], [1], [1, 2])),
    ], dtypes=("int32", "int64", "string")),
]
