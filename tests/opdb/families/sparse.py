"""Sparse tensor ops (as raw indices/values/shape triples), feature crossing and bucketizing.

Empty sparse tensors, unsorted and repeated indices, out-of-range indices, rank-1 and rank-3
shapes, int64 everywhere TensorFlow uses it.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import EDGES, OpEntry, Sample, T, empty, i32, i64, regular

_NO_INDICES = np.zeros((0, 2), np.int64)
_VALUE_TYPES = ("int32", "int64", "float32", "float64")


def _fingerprint_check(inputs, attrs, outs):
    """One uint64 per string, of the input's shape; equal strings equal, different ones different."""
    x = inputs["input"]
    if outs is None:
        return "raised"
    y = outs[0]
    if y.dtype != np.uint64 or y.shape != x.shape:
        return f"got {y.dtype} {y.shape} for {x.shape} strings"
    pairs = {}
    for s, f in zip(x.reshape(-1), y.reshape(-1)):
        pairs.setdefault(s, set()).add(int(f))
    if any(len(v) != 1 for v in pairs.values()) or len({next(iter(v)) for v in pairs.values()}) != len(pairs):
        return f"fingerprints {y.tolist()} of {x.tolist()}"
    return ""

ENTRIES = [
    OpEntry("SparseToDense", [
        Sample("matrix", {"sparse_indices": i64([[0, 1], [2, 0]]), "output_shape": i64([3, 2]),
                          "sparse_values": regular(2), "default_value": T(0)}, fd=True),
        Sample("vector_int32", {"sparse_indices": i32([1, 3]), "output_shape": i32([5]), "sparse_values": T(7),
                                "default_value": T(-1)}),
        Sample("scalar_index", {"sparse_indices": i64(2), "output_shape": i64([4]), "sparse_values": T(1),
                                "default_value": T(0)}),
        Sample("empty", {"sparse_indices": _NO_INDICES, "output_shape": i64([2, 2]), "sparse_values": empty(0),
                         "default_value": T(3)}),
        Sample("unsorted", {"sparse_indices": i64([[1, 0], [0, 1]]), "output_shape": i64([2, 2]),
                            "sparse_values": regular(2), "default_value": T(0)}),
        Sample("unsorted_unvalidated", {"sparse_indices": i64([[1, 0], [0, 1]]), "output_shape": i64([2, 2]),
                                        "sparse_values": regular(2), "default_value": T(0)},
               {"validate_indices": False}),
        Sample("repeated", {"sparse_indices": i64([[0, 0], [0, 0]]), "output_shape": i64([2, 2]),
                            "sparse_values": regular(2), "default_value": T(0)}),
        Sample("out_of_range", {"sparse_indices": i64([[2, 0]]), "output_shape": i64([2, 2]),
                                "sparse_values": regular(1), "default_value": T(0)}),
        Sample("values_mismatch", {"sparse_indices": i64([[0, 0], [1, 1]]), "output_shape": i64([2, 2]),
                                   "sparse_values": regular(3), "default_value": T(0)}),
    ], dtypes=("bool", "int32", "int64", "float32", "float64", "string")),
    OpEntry("SparseTensorDenseAdd", [
        Sample("matrix", {"a_indices": i64([[0, 1], [1, 0]]), "a_values": regular(2), "a_shape": i64([2, 2]),
                          "b": regular(2, 2, seed=1)}, fd=True),
        Sample("int32_indices", {"a_indices": i32([[1]]), "a_values": regular(1), "a_shape": i32([3]),
                                 "b": regular(3, seed=1)}),
        Sample("empty", {"a_indices": _NO_INDICES, "a_values": empty(0), "a_shape": i64([2, 2]),
                         "b": regular(2, 2)}),
        Sample("shape_mismatch", {"a_indices": i64([[0, 0]]), "a_values": regular(1), "a_shape": i64([2, 3]),
                                  "b": regular(2, 2)}),
        Sample("out_of_range", {"a_indices": i64([[2, 0]]), "a_values": regular(1), "a_shape": i64([2, 2]),
                                "b": regular(2, 2)}),
    ], dtypes=_VALUE_TYPES),
    OpEntry("SparseTensorDenseMatMul", [
        Sample("plain", {"a_indices": i64([[0, 1], [1, 0], [1, 2]]), "a_values": regular(3), "a_shape": i64([2, 3]),
                         "b": regular(3, 2, seed=1)}, fd=True),
        Sample("adjoint_a", {"a_indices": i64([[0, 1], [2, 0]]), "a_values": regular(2), "a_shape": i64([3, 2]),
                             "b": regular(3, 2, seed=1)}, {"adjoint_a": True}, fd=True),
        Sample("adjoint_b", {"a_indices": i64([[0, 1]]), "a_values": regular(1), "a_shape": i64([2, 2]),
                             "b": regular(3, 2, seed=1)}, {"adjoint_b": True}, fd=True),
        Sample("empty_a", {"a_indices": _NO_INDICES, "a_values": empty(0), "a_shape": i64([2, 3]),
                           "b": regular(3, 2)}),
        Sample("empty_b", {"a_indices": i64([[0, 0]]), "a_values": regular(1), "a_shape": i64([2, 0]),
                           "b": empty(0, 3)}),
        Sample("out_of_range", {"a_indices": i64([[0, 3]]), "a_values": regular(1), "a_shape": i64([2, 3]),
                                "b": regular(3, 2)}),
        Sample("inner_mismatch", {"a_indices": i64([[0, 0]]), "a_values": regular(1), "a_shape": i64([2, 3]),
                                  "b": regular(2, 2)}),
    ], dtypes=("int32", "int64", "float32", "float64", "complex64"),
        differs={"empty_b": "the index [0, 0] is out of range of a_shape [2, 0]: TensorFlow's kernel returns zeros "
                            "without checking the indices when b is empty (its gradient then raises); sparseflow "
                            "raises InvalidArgumentError naming the index"}),
    OpEntry("SparseAdd", [
        Sample("overlap", {"a_indices": i64([[0, 0], [1, 1]]), "a_values": regular(2), "a_shape": i64([2, 2]),
                           "b_indices": i64([[1, 0], [1, 1]]), "b_values": regular(2, seed=1), "b_shape": i64([2, 2]),
                           "thresh": T(0)}, fd=True),
        Sample("unsorted_b", {"a_indices": i64([[0, 0], [1, 1]]), "a_values": regular(2), "a_shape": i64([2, 2]),
                              "b_indices": i64([[1, 1], [1, 0]]), "b_values": regular(2, seed=1),
                              "b_shape": i64([2, 2]), "thresh": T(0)}, fd=True),
        Sample("cancel_threshold", {"a_indices": i64([[0]]), "a_values": T([1.0]), "a_shape": i64([3]),
                                    "b_indices": i64([[0], [2]]), "b_values": T([-1.0, 0.5]), "b_shape": i64([3]),
                                    "thresh": T(0.6)}),
        Sample("empty", {"a_indices": _NO_INDICES, "a_values": empty(0), "a_shape": i64([2, 2]),
                         "b_indices": _NO_INDICES, "b_values": empty(0), "b_shape": i64([2, 2]), "thresh": T(0)}),
        Sample("shape_mismatch", {"a_indices": i64([[0]]), "a_values": regular(1), "a_shape": i64([2]),
                                  "b_indices": i64([[0]]), "b_values": regular(1), "b_shape": i64([3]),
                                  "thresh": T(0)}),
    ], dtypes=_VALUE_TYPES, differs={"unsorted_b": "TensorFlow merges unsorted inputs as if sorted (its output is "
                                                   "out of order); sparseflow's output is in canonical order"}),
    OpEntry("SparseReorder", [
        Sample("unsorted", {"input_indices": i64([[1, 0], [0, 2], [0, 1]]), "input_values": regular(3),
                            "input_shape": i64([2, 3])}, fd=True),
        Sample("sorted", {"input_indices": i64([[0], [2]]), "input_values": regular(2), "input_shape": i64([3])}),
        Sample("empty", {"input_indices": _NO_INDICES, "input_values": empty(0), "input_shape": i64([2, 2])}),
        Sample("out_of_range", {"input_indices": i64([[5]]), "input_values": regular(1), "input_shape": i64([3])}),
    ], dtypes=_VALUE_TYPES + ("string",),
        differs={"out_of_range": "TensorFlow's SparseReorder does not check the indices; sparseflow's raises "
                                 "InvalidArgumentError"}),
    OpEntry("SparseReshape", [
        Sample("flatten", {"input_indices": i64([[0, 1], [1, 2]]), "input_shape": i64([2, 3]),
                           "new_shape": i64([-1])}),
        Sample("to_3d", {"input_indices": i64([[0], [5]]), "input_shape": i64([6]), "new_shape": i64([2, -1, 1])}),
        Sample("empty", {"input_indices": _NO_INDICES, "input_shape": i64([2, 2]), "new_shape": i64([4, 1])}),
        Sample("size_mismatch", {"input_indices": i64([[0]]), "input_shape": i64([6]), "new_shape": i64([4])}),
        Sample("two_unknown", {"input_indices": i64([[0]]), "input_shape": i64([6]), "new_shape": i64([-1, -1])}),
    ], dtypes=(None,)),
    OpEntry("SparseReduceSum", [
        Sample("rows", {"input_indices": i64([[0, 0], [0, 2], [1, 1]]), "input_values": regular(3),
                        "input_shape": i64([2, 3]), "reduction_axes": i32([1])}, fd=True),
        Sample("all_keep", {"input_indices": i64([[0, 0], [1, 1]]), "input_values": regular(2),
                            "input_shape": i64([2, 2]), "reduction_axes": i32([0, -1])}, {"keep_dims": True}),
        Sample("empty", {"input_indices": _NO_INDICES, "input_values": empty(0), "input_shape": i64([2, 2]),
                         "reduction_axes": i32([0])}),
        Sample("axis_out_of_range", {"input_indices": i64([[0, 0]]), "input_values": regular(1),
                                     "input_shape": i64([2, 2]), "reduction_axes": i32([2])}),
    ], dtypes=_VALUE_TYPES),
    OpEntry("SparseReduceSumSparse", [
        Sample("rows", {"input_indices": i64([[0, 0], [0, 2], [1, 1]]), "input_values": regular(3),
                        "input_shape": i64([2, 3]), "reduction_axes": i32([1])}),
        Sample("empty", {"input_indices": _NO_INDICES, "input_values": empty(0), "input_shape": i64([2, 2]),
                         "reduction_axes": i32([0])}),
    ], dtypes=_VALUE_TYPES),
    OpEntry("SparseSlice", [
        Sample("window", {"indices": i64([[0, 0], [1, 2], [2, 1]]), "values": regular(3), "shape": i64([3, 3]),
                          "start": i64([1, 1]), "size": i64([2, 2])}, fd=True),
        Sample("past_end", {"indices": i64([[0], [4]]), "values": regular(2), "shape": i64([5]),
                            "start": i64([3]), "size": i64([10])}),
        Sample("nothing_inside", {"indices": i64([[0]]), "values": regular(1), "shape": i64([5]),
                                  "start": i64([2]), "size": i64([2])}),
        Sample("empty", {"indices": _NO_INDICES, "values": empty(0), "shape": i64([2, 2]),
                         "start": i64([0, 0]), "size": i64([1, 1])}),
    ], dtypes=_VALUE_TYPES + ("string",)),
    OpEntry("SparseFillEmptyRows", [
        Sample("gaps", {"indices": i64([[1, 0], [3, 1]]), "values": regular(2), "dense_shape": i64([4, 2]),
                        "default_value": T(9)}, fd=True),
        Sample("full", {"indices": i64([[0, 0], [1, 1]]), "values": regular(2), "dense_shape": i64([2, 2]),
                        "default_value": T(9)}),
        Sample("empty", {"indices": _NO_INDICES, "values": empty(0), "dense_shape": i64([3, 2]),
                         "default_value": T(-1)}),
        Sample("no_rows", {"indices": _NO_INDICES, "values": empty(0), "dense_shape": i64([0, 2]),
                           "default_value": T(-1)}),
        Sample("out_of_range", {"indices": i64([[5, 0]]), "values": regular(1), "dense_shape": i64([3, 2]),
                                "default_value": T(0)}),
    ], dtypes=_VALUE_TYPES + ("string",)),
    OpEntry("SparseConcat", [
        Sample("rows", {"indices": [i64([[0, 0]]), i64([[0, 1], [1, 0]])], "values": [regular(1), regular(2, seed=1)],
                        "shapes": [i64([1, 2]), i64([2, 2])]}, {"concat_dim": 0}),
        Sample("cols_negative", {"indices": [i64([[0, 0]]), i64([[1, 0]])], "values": [regular(1), regular(1)],
                                 "shapes": [i64([2, 1]), i64([2, 3])]}, {"concat_dim": -1}),
        Sample("with_empty", {"indices": [_NO_INDICES, i64([[0, 0]])], "values": [empty(0), regular(1)],
                              "shapes": [i64([1, 2]), i64([1, 2])]}, {"concat_dim": 0}),
        Sample("mismatch", {"indices": [i64([[0, 0]]), i64([[0, 0]])], "values": [regular(1), regular(1)],
                            "shapes": [i64([1, 2]), i64([1, 3])]}, {"concat_dim": 0}),
    ], dtypes=_VALUE_TYPES + ("string",)),
    OpEntry("Bucketize", [
        Sample("values", {"input": T([-1.0, 0.0, 0.5, 2.0, 10.0])}, {"boundaries": [0.0, 1.0, 2.0]}),
        Sample("matrix", {"input": regular(2, 3)}, {"boundaries": [-0.5, 0.5]}),
        Sample("no_boundaries", {"input": regular(3)}, {"boundaries": []}),
        Sample("empty", {"input": empty(0)}, {"boundaries": [1.0]}),
        Sample("rank0", {"input": T(0.75)}, {"boundaries": [0.5, 1.0]}),
        Sample("edges", {"input": EDGES}, {"boundaries": [-1.0, 0.0, 1.0]}),
    ]),
    OpEntry("SparseCross", [
        Sample("two_sparse_hashed", {"indices": [i64([[0, 0], [1, 0]]), i64([[0, 0], [0, 1]])],
                                     "values": [np.array([b"a", b"b"], object), i64([7, 8])],
                                     "shapes": [i64([2, 1]), i64([2, 2])], "dense_inputs": []},
               {"hashed_output": True, "num_buckets": 100, "hash_key": 1, "out_type": "int64",
                "internal_type": "int64"}),
        Sample("int64_with_string_internal", {"indices": [i64([[0, 0]])], "values": [i64([7])], "shapes": [i64([1, 1])],
                                              "dense_inputs": []},
               {"hashed_output": True, "num_buckets": 0, "hash_key": 1, "out_type": "int64",
                "internal_type": "string"}),
        Sample("sparse_and_dense_strings", {"indices": [i64([[0, 0], [1, 0]])],
                                            "values": [np.array([b"3", b"4"], object)],
                                            "shapes": [i64([2, 1])],
                                            "dense_inputs": [np.array([[b"x"], [b"y"]], object)]},
               {"hashed_output": False, "num_buckets": 0, "hash_key": 0, "out_type": "string",
                "internal_type": "string"}),
        Sample("empty_row", {"indices": [i64([[0, 0]]), i64([[0, 0], [1, 0]])], "values": [i64([1]), i64([2, 3])],
                             "shapes": [i64([2, 1]), i64([2, 1])], "dense_inputs": []},
               {"hashed_output": True, "num_buckets": 0, "hash_key": 5, "out_type": "int64", "internal_type": "int64"}),
    ], dtypes=(None,)),
    OpEntry("StringFingerprint64", [
        Sample("strings", {"input": np.array([b"a", b"", b"a"], object)}, check=_fingerprint_check),
        Sample("rank0", {"input": np.array(b"xyz", object)}, check=_fingerprint_check),
        Sample("empty", {"input": np.zeros((0, 2), object)}, check=_fingerprint_check),
    ], dtypes=(None,),
            tf="sparseflow's own op (a 64-bit farmhash fingerprint per string, for feature hashing); TensorFlow has "
               "none by that name (its Fingerprint op returns bytes)"),
]
