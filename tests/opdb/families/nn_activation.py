"""Activations and their gradient ops, BiasAdd, L2Loss, softmax family, cross entropies, TopK, InTopK.

Activations run on every edge value (the kinks at 0 included, with TensorFlow's choice of
derivative there), empty batches and scalars; softmax on rows of one class, empty batches and
infinite logits; cross entropies on labels out of range.
"""

from __future__ import annotations

from tests.opdb.spec import EDGES, OpEntry, Sample, T, empty, i32, i64, regular

ACTIVATIONS = [("Relu", {}), ("Relu6", {}), ("Elu", {}), ("Selu", {}), ("Softplus", {}), ("Softsign", {}),
               ("LeakyRelu", {"alpha": 0.3})]


def _activation_samples(attrs):
    return [
        Sample("matrix", {"features": regular(2, 3, lo=-8, hi=8, away_from_zero=True)}, attrs, fd=True),
        Sample("rank0", {"features": regular()}, attrs, fd=True),
        Sample("empty", {"features": empty(0, 3)}, attrs),
        Sample("edges", {"features": EDGES}, attrs),
        Sample("kinks", {"features": T([0.0, -0.0, 6.0, 1e-30, -1e-30])}, attrs),
    ]


_DIFFERS = {"Selu": {"kinks:grad": "TensorFlow's Selu computes exp(x) - 1, which is 0 for x = -1e-30, so its "
                                   "gradient takes the x > 0 branch; sparseflow's uses expm1 (-1.8e-30 < 0)"}}
def _approx_top_k(tf, input, **attrs):  # noqa: A002 - TensorFlow's argument name
    return list(tf.approx_top_k(input, **attrs))


ENTRIES = [OpEntry(op, _activation_samples(attrs), differs=_DIFFERS.get(op, {})) for op, attrs in ACTIVATIONS]

# (grad op, second input name)
for _op, _second, _attrs in [("ReluGrad", "features", {}), ("Relu6Grad", "features", {}),
                             ("EluGrad", "outputs", {}), ("SeluGrad", "outputs", {}),
                             ("SoftplusGrad", "features", {}), ("SoftsignGrad", "features", {}),
                             ("LeakyReluGrad", "features", {"alpha": 0.3})]:
    ENTRIES.append(OpEntry(_op, [
        Sample("matrix", {"gradients": regular(2, 3, seed=3), _second: regular(2, 3, lo=-3, hi=7, away_from_zero=True)},
               _attrs, fd=True),
        Sample("rank0", {"gradients": regular(seed=3), _second: regular()}, _attrs),
        Sample("empty", {"gradients": empty(0, 2), _second: empty(0, 2)}, _attrs),
        Sample("kinks", {"gradients": T([1.0, 1.0, 1.0, 1.0]), _second: T([0.0, -0.0, 6.0, -1.0])}, _attrs),
        Sample("mismatch", {"gradients": regular(3), _second: regular(2)}, _attrs),
    ]))

ENTRIES += [
    OpEntry("BiasAdd", [
        Sample("nhwc", {"value": regular(2, 3), "bias": regular(3, seed=1)}, fd=True),
        Sample("nchw", {"value": regular(2, 3, 2, 2), "bias": regular(3, seed=1)}, {"data_format": "NCHW"}, fd=True),
        Sample("empty_batch", {"value": empty(0, 3), "bias": regular(3, seed=1)}),
        Sample("empty_channels", {"value": empty(2, 0), "bias": empty(0)}),
        Sample("mismatch", {"value": regular(2, 3), "bias": regular(2)}),
        Sample("rank1", {"value": regular(3), "bias": regular(3)}),
    ]),
    OpEntry("BiasAddV1", [
        Sample("matrix", {"value": regular(2, 3), "bias": regular(3, seed=1)}, fd=True),
        Sample("empty_batch", {"value": empty(0, 3), "bias": regular(3, seed=1)}),
        Sample("mismatch", {"value": regular(2, 3), "bias": regular(2)}),
    ]),
    OpEntry("BiasAddGrad", [
        Sample("nhwc", {"out_backprop": regular(4, 3)}, fd=True),
        Sample("nchw", {"out_backprop": regular(2, 3, 2, 2)}, {"data_format": "NCHW"}, fd=True),
        Sample("empty_batch", {"out_backprop": empty(0, 3)}),
        Sample("rank1", {"out_backprop": regular(3)}),
    ]),
    OpEntry("L2Loss", [
        Sample("matrix", {"t": regular(2, 3)}, fd=True),
        Sample("rank0", {"t": regular()}, fd=True),
        Sample("empty", {"t": empty(0, 3)}),
        Sample("edges", {"t": EDGES}),
    ]),
]

for _op in ("Softmax", "LogSoftmax"):
    ENTRIES.append(OpEntry(_op, [
        Sample("rows", {"logits": regular(2, 3)}, fd=True),
        Sample("one_class", {"logits": regular(3, 1)}, fd=True),
        Sample("rank3", {"logits": regular(2, 2, 3)}, fd=True),
        Sample("empty_batch", {"logits": empty(0, 3)}),
        Sample("no_classes", {"logits": empty(2, 0)}),
        Sample("large", {"logits": T([[1000.0, 0.0, -1000.0]])}),
        Sample("infinities", {"logits": T([[float("inf"), 0.0], [float("-inf"), 0.0], [float("-inf"),
                                                                                         float("-inf")]])}),
        Sample("rank0", {"logits": regular()}),
    ], differs={"infinities": "TensorFlow's kernel gives 0 next to a NaN in a row with +inf (its constant folding "
                              "gives NaN, like sparseflow)",
                "rank0|*|rank": "TensorFlow raises AbortedError for a scalar fed at unknown rank; sparseflow "
                                "InvalidArgumentError, as for the other modes"}))

_XENT_DIFFERS = {
    "*:grad": "the backprop output (softmax - labels) depends on the labels: sparseflow's gradient includes that "
              "term, TensorFlow's leaves it out (and cannot build it for broadcast labels); compared without that "
              "output in SoftmaxCrossEntropyWithLogits_loss"}
ENTRIES += [
    OpEntry("SoftmaxCrossEntropyWithLogits", differs=_XENT_DIFFERS, samples=[
        Sample("rows", {"features": regular(2, 3), "labels": T([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]])}, fd=True),
        Sample("broadcast_labels", {"features": regular(2, 3), "labels": T([[0.0, 1.0, 0.0]])}),
        Sample("empty_batch", {"features": empty(0, 3), "labels": empty(0, 3)}),
        Sample("large", {"features": T([[1000.0, 0.0]]), "labels": T([[0.0, 1.0]])}),
        Sample("mismatch", {"features": regular(2, 3), "labels": regular(2, 2)}),
        Sample("rank1", {"features": regular(3), "labels": regular(3)}),
    ]),
    OpEntry("SoftmaxCrossEntropyWithLogits", [
        Sample("rows", {"features": regular(2, 3), "labels": T([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]])}, fd=True),
        Sample("large", {"features": T([[1000.0, 0.0]]), "labels": T([[0.0, 1.0]])}),
        Sample("empty_batch", {"features": empty(0, 3), "labels": empty(0, 3)}),
    ], name="SoftmaxCrossEntropyWithLogits_loss",
        build=lambda tf, features, labels: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=features,
                                                                                    labels=labels).loss),
    OpEntry("SparseSoftmaxCrossEntropyWithLogits", [
        Sample("rows", {"features": regular(3, 4), "labels": i32([0, 3, 1])}, fd=True),
        Sample("int64_labels", {"features": regular(2, 2), "labels": i64([1, 1])}, fd=True),
        Sample("empty_batch", {"features": empty(0, 3), "labels": i32([])}),
        Sample("label_out_of_range", {"features": regular(2, 3), "labels": i32([0, 3])}),
        Sample("negative_label", {"features": regular(2, 3), "labels": i64([-1, 0])}),
        Sample("batch_mismatch", {"features": regular(2, 3), "labels": i32([0])}),
    ]),
    OpEntry("TopKV2", [
        Sample("vector", {"input": regular(5), "k": i32(3)}, fd=True),
        Sample("rows_int64_index", {"input": regular(2, 4), "k": i32(2)}, {"index_type": "int64"}, fd=True),
        Sample("ties_first", {"input": T([1, 3, 3, 2, 3]), "k": i32(2)}),
        Sample("k0", {"input": regular(2, 3), "k": i32(0)}),
        Sample("all", {"input": regular(3), "k": i32(3)}),
        Sample("unsorted", {"input": regular(4), "k": i32(2)}, {"sorted": False}),
        Sample("empty_batch", {"input": empty(0, 3), "k": i32(2)}),
        Sample("edges", {"input": EDGES, "k": i32(4)}, grad=False),
        Sample("k_too_large", {"input": regular(3), "k": i32(4)}),
        Sample("negative_k", {"input": regular(3), "k": i32(-1)}),
        Sample("rank0", {"input": regular(), "k": i32(1)}),
    ], differs={"rows_int64_index:grad": "TensorFlow's TopK gradient fails to build with int64 indices (TypeError)",
                "unsorted": "the order of sorted=False results is undefined (TensorFlow's follows its heap)",
                "edges|float*": "NaN breaks TensorFlow's ordering (its result is not sorted); sparseflow puts NaN "
                                "first, as the largest"}),
    OpEntry("ApproxTopK", [
        Sample("rows", {"input": regular(2, 5)}, {"k": 3}, fd=True),
        Sample("ties_first", {"input": T([[1, 3, 3, 2, 3]])}, {"k": 2}),
        Sample("k0", {"input": regular(2, 3)}, {"k": 0}),
        Sample("all", {"input": regular(3)}, {"k": 3}, fd=True),
        Sample("empty_batch", {"input": empty(0, 3)}, {"k": 2}),
        Sample("rank3", {"input": regular(2, 2, 4)}, {"k": 2}, fd=True),
        Sample("k_too_large", {"input": regular(2, 3)}, {"k": 4}),
        Sample("min_k", {"input": regular(2, 5)}, {"k": 2, "is_max_k": False}, fd=True),
        Sample("first_dimension", {"input": regular(4, 3)}, {"k": 2, "reduction_dimension": 0}, fd=True),
        Sample("recall_target", {"input": regular(2, 6)}, {"k": 2, "recall_target": 0.5}),
    ], build=_approx_top_k, differs={
        "*|*|dims": "TensorFlow's shape function refuses an unknown reduction dimension (ValueError: it compares "
                    "-1 with k); sparseflow's leaves it unknown and the kernel checks it",
        "*|*|rank": "TensorFlow's shape function refuses an input of unknown rank (ValueError); sparseflow's "
                    "leaves the shape unknown"}),
    OpEntry("InTopKV2", [
        Sample("basic", {"predictions": regular(3, 4), "targets": i32([0, 3, 1]), "k": i32(2)}),
        Sample("int64", {"predictions": regular(2, 3), "targets": i64([2, 0]), "k": i64(1)}),
        Sample("ties", {"predictions": T([[1.0, 1.0, 0.0]]), "targets": i32([1]), "k": i32(1)}),
        Sample("target_out_of_range", {"predictions": regular(2, 3), "targets": i32([3, 0]), "k": i32(1)}),
        Sample("nonfinite", {"predictions": T([[float("nan"), 1.0], [float("inf"), 0.0]]), "targets": i32([0, 0]),
                             "k": i32(1)}),
        Sample("empty_batch", {"predictions": empty(0, 3), "targets": i32([]), "k": i32(1)}),
        Sample("k_larger_than_classes", {"predictions": regular(2, 3), "targets": i32([1, 2]), "k": i32(5)}),
    ], dtypes=("float32",)),
]
