"""Einsum, and the sorted searches LowerBound / UpperBound (``tf.searchsorted``).

Einsum: matrix products, batches, ellipses broadcast against size-1 dimensions, diagonals, sums to
a scalar, outer products, scalars, contracted and kept empty dimensions, mismatched sizes and
malformed equations. The searches: duplicates, infinities, values outside the sorted range, empty
rows and an empty sequence, int64 results, rank and batch mismatches.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample, T, empty, regular


def _einsum(tf, equation, inputs):
    return tf.raw_ops.Einsum(inputs=inputs, equation=equation)


def _e(name, equation, *inputs, fd=False):
    return Sample(name, {"inputs": list(inputs)}, {"equation": equation}, fd=fd)


_EINSUM = [
    _e("matmul", "ij,jk->ik", regular(2, 3), regular(3, 4, seed=1), fd=True),
    _e("batch_matmul", "bij,bjk->bik", regular(2, 2, 3), regular(2, 3, 2, seed=1), fd=True),
    _e("ellipsis_broadcast", "...ij,...jk->...ik", regular(1, 2, 3), regular(3, 3, 2, seed=1), fd=True),
    _e("implicit_output", "ij,jk", regular(2, 3), regular(3, 2, seed=1)),
    _e("diagonal", "ii->i", regular(3, 3)),
    _e("trace", "ii->", regular(3, 3)),
    _e("sum_all", "ij->", regular(2, 3), fd=True),
    _e("transpose", "ij->ji", regular(2, 3)),
    _e("outer", "i,j->ij", regular(3), regular(2, seed=1), fd=True),
    _e("scalars", ",->", regular(), regular(seed=1)),
    _e("scalar_times_matrix", ",ij->ij", regular(), regular(2, 2, seed=1)),
    _e("empty_contracted", "ij,jk->ik", empty(2, 0), empty(0, 3)),
    _e("empty_kept", "ij,jk->ik", empty(0, 3), regular(3, 2, seed=1)),
    _e("size_mismatch", "ij,jk->ik", regular(2, 3), regular(4, 2, seed=1)),
    _e("too_few_subscripts", "ij->i", regular(2, 3, 4)),
    _e("unknown_output_label", "ij->k", regular(2, 3)),
]
_SORTED = T([[-np.inf, -1, 0, 0, 2, 5, np.inf], [1, 1, 1, 3, 3, 4, 9]])
_SEARCH = [
    Sample("rows", {"sorted_inputs": T([[0, 1, 3, 3, 7], [-2, 0, 0, 4, 4]]),
                    "values": T([[3, -1, 9, 0], [0, 4, 5, -3]])}),
    Sample("infinities", {"sorted_inputs": _SORTED, "values": T([[-np.inf, 0, 3, np.inf], [0, 1, 3, 10]])},
           kinds=frozenset({"float"})),
    Sample("int64_out", {"sorted_inputs": T([[1, 2, 2, 3]]), "values": T([[2, 0, 5]])}, {"out_type": "int64"}),
    Sample("empty_values", {"sorted_inputs": T([[1, 2], [3, 4]]), "values": empty(2, 0)}),
    Sample("empty_sequence", {"sorted_inputs": empty(2, 0), "values": T([[1, 2], [3, 4]])}),
    Sample("empty_batch", {"sorted_inputs": empty(0, 3), "values": empty(0, 2)}),
    Sample("rank1", {"sorted_inputs": T([1, 2, 3]), "values": T([2])}),
    Sample("batch_mismatch", {"sorted_inputs": T([[1, 2, 3]]), "values": T([[2], [3]])}),
]
_EINSUM_TYPES = ("float16", "float32", "float64", "int32", "int64", "complex64", "complex128")
_SEARCH_TYPES = ("int8", "int32", "int64", "uint8", "float16", "float32", "float64")

ENTRIES = [
    OpEntry("Einsum", _EINSUM, build=_einsum, dtypes=_EINSUM_TYPES, rtol={"float16": 1e-2}),
    OpEntry("LowerBound", _SEARCH, dtypes=_SEARCH_TYPES),
    OpEntry("UpperBound", _SEARCH, dtypes=_SEARCH_TYPES),
]
