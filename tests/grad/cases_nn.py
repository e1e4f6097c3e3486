"""Finite-difference cases for the gradients of the nn ops (sparseflow/_src/grad/nn_grad*.py).

Inputs avoid the kinks of the piecewise ops (ReLU at 0, Relu6 at 0 and 6, ties in max pooling,
top-k and segment max/min). FusedBatchNormV3 and LRN exist only for float32 (as in TensorFlow):
their cases cast the float64 points to float32 and use a larger step and tolerance.
"""

from __future__ import annotations

import numpy as np

import sparseflow as tf
from sparseflow._src.framework.op_def_library import apply_op
from tests.grad.grad_case import GradCase, positive, rand


def away_from_zero(*shape, margin=0.2, seed=None):
    """Values in [-1 - margin, -margin] U [margin, 1 + margin]."""
    x = rand(*shape, seed=seed)
    return np.where(x < 0, x - margin, x + margin)


def distinct(*shape, seed=0):
    """A permutation of well separated values (no ties for max pooling, top-k, segment max)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float64) / n - 0.5).reshape(shape) * 2.0


def op(op_type, inputs, attrs=None, outputs=(0,)):
    o = apply_op(op_type, inputs, attrs)
    return [o.outputs[i] for i in outputs] if len(outputs) > 1 else o.outputs[outputs[0]]


def as_f32(fn):
    """Runs a float32-only op on float64 points: casts in and out."""
    def wrapped(*xs):
        out = fn(*[tf.cast(x, tf.float32) for x in xs])
        if isinstance(out, (list, tuple)):
            return [tf.cast(o, tf.float64) for o in out]
        return tf.cast(out, tf.float64)
    return wrapped


F32 = {"delta": 1e-3, "rtol": 2e-2, "atol": 2e-3}

# ---------------------------------------------------------------- activations
_act = [
    GradCase("Relu", tf.nn.relu, [away_from_zero(3, 4)]),
    GradCase("Relu6", tf.nn.relu6, [np.array([-2.0, -0.5, 0.5, 3.0, 5.5, 6.5, 9.0])]),
    GradCase("Elu", tf.nn.elu, [away_from_zero(3, 4)]),
    GradCase("Selu", tf.nn.selu, [away_from_zero(3, 4)]),
    GradCase("LeakyRelu", lambda x: tf.nn.leaky_relu(x, alpha=0.3), [away_from_zero(3, 4)]),
    GradCase("Softplus", tf.nn.softplus, [rand(3, 4, low=-3, high=3)]),
    GradCase("Softsign", tf.nn.softsign, [away_from_zero(3, 4)]),
    GradCase("ReluGrad", lambda g, f: op("ReluGrad", [g, f]), [rand(3, 4), away_from_zero(3, 4)]),
    GradCase("Relu6Grad", lambda g, f: op("Relu6Grad", [g, f]),
             [rand(7), np.array([-2.0, -0.5, 0.5, 3.0, 5.5, 6.5, 9.0])]),
    GradCase("LeakyReluGrad", lambda g, f: op("LeakyReluGrad", [g, f], {"alpha": 0.3}),
             [rand(3, 4), away_from_zero(3, 4)]),
    GradCase("EluGrad", lambda g, y: op("EluGrad", [g, y]), [rand(3, 4), away_from_zero(3, 4) * 0.8]),
    GradCase("SeluGrad", lambda g, y: op("SeluGrad", [g, y]), [rand(3, 4), away_from_zero(3, 4)]),
    GradCase("SoftplusGrad", lambda g, x: op("SoftplusGrad", [g, x]), [rand(3, 4), rand(3, 4, low=-3, high=3)]),
    GradCase("SoftsignGrad", lambda g, x: op("SoftsignGrad", [g, x]), [rand(3, 4), away_from_zero(3, 4)]),
    # second derivatives through tf.gradients: the activation's *Grad op is differentiated again
    GradCase("EluGrad", lambda x: tf.gradients(tf.reduce_sum(tf.nn.elu(x) ** 2), x)[0],
             [away_from_zero(2, 3)], name="Elu_second_derivative"),
]

# ---------------------------------------------------------------- softmax and cross-entropies
_labels = positive(4, 5)
_labels = _labels / _labels.sum(axis=1, keepdims=True)  # the op's backprop output assumes rows summing to 1
_xent = [
    GradCase("Softmax", tf.nn.softmax, [rand(3, 5)]),
    GradCase("Softmax", lambda x: tf.nn.softmax(x, axis=0), [rand(3, 4)], name="Softmax_axis0"),
    GradCase("LogSoftmax", tf.nn.log_softmax, [rand(3, 5)]),
    GradCase("SoftmaxCrossEntropyWithLogits",
             lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
             [rand(4, 5), _labels]),
    GradCase("SoftmaxCrossEntropyWithLogits",
             lambda logits, labels: op("SoftmaxCrossEntropyWithLogits", [logits, labels], outputs=(0, 1)),
             [rand(4, 5), _labels], name="SoftmaxCrossEntropyWithLogits_both_outputs"),
    GradCase("SoftmaxCrossEntropyWithLogits",
             lambda logits, labels: op("SoftmaxCrossEntropyWithLogits", [logits, labels], outputs=(0, 1)),
             [rand(4, 5), _labels[:1]], name="SoftmaxCrossEntropyWithLogits_broadcast_labels"),
    GradCase("SparseSoftmaxCrossEntropyWithLogits",
             lambda logits: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 0, 4, 2], logits=logits),
             [rand(4, 5)]),
    GradCase("SparseSoftmaxCrossEntropyWithLogits",
             lambda logits: op("SparseSoftmaxCrossEntropyWithLogits",
                               [logits, tf.constant([3, 0, 2], tf.int64)], outputs=(0, 1)),
             [rand(3, 4)], name="SparseSoftmaxCrossEntropyWithLogits_both_outputs"),
]

# ---------------------------------------------------------------- BiasAdd, L2Loss, TopK
_misc = [
    GradCase("BiasAdd", tf.nn.bias_add, [rand(2, 3, 4), rand(4)]),
    GradCase("BiasAdd", lambda v, b: tf.nn.bias_add(v, b, data_format="NCHW"), [rand(2, 3, 2, 2), rand(3)],
             name="BiasAdd_NCHW"),
    GradCase("BiasAddV1", lambda v, b: op("BiasAddV1", [v, b]), [rand(3, 4), rand(4)]),
    GradCase("BiasAddGrad", lambda g: op("BiasAddGrad", [g]), [rand(2, 3, 4)]),
    GradCase("BiasAddGrad", lambda g: op("BiasAddGrad", [g], {"data_format": "NCHW"}), [rand(2, 3, 2, 2)],
             name="BiasAddGrad_NCHW"),
    GradCase("L2Loss", tf.nn.l2_loss, [rand(3, 4)]),
    GradCase("TopKV2", lambda x: tf.nn.top_k(x, k=3).values, [distinct(2, 3, 5)]),
    GradCase("TopKV2", lambda x: tf.nn.top_k(x, k=2, index_type=tf.int64).values, [distinct(6)],
             name="TopKV2_int64_indices"),
    GradCase("ApproxTopK", as_f32(lambda x: tf.approx_top_k(x, 2).values), [distinct(2, 5)], **F32),
    GradCase("ApproxTopK", as_f32(lambda x: tf.approx_top_k(x, 2, reduction_dimension=0, is_max_k=False).values),
             [distinct(4, 3)], name="ApproxTopK_min_first_dimension", **F32),
]

# ---------------------------------------------------------------- convolutions


def _conv_attrs(strides=(1, 1, 1, 1), padding="SAME", data_format="NHWC", dilations=(1, 1, 1, 1)):
    return {"strides": list(strides), "padding": padding, "data_format": data_format,
            "dilations": list(dilations)}


_CONV_VARIANTS = [  # (name, input shape, attrs)
    ("SAME", (2, 5, 5, 2), _conv_attrs()),
    ("VALID_stride2", (1, 6, 5, 2), _conv_attrs((1, 2, 2, 1), "VALID")),
    ("SAME_stride2_NCHW", (1, 2, 5, 4), _conv_attrs((1, 1, 2, 2), "SAME", "NCHW")),
    ("dilated", (1, 6, 6, 2), _conv_attrs(padding="VALID", dilations=(1, 2, 2, 1))),
]


def _out_shape(kind, x_shape, f_shape, attrs):
    with tf.Graph().as_default():
        x = tf.zeros(x_shape, tf.float64)
        return apply_op(kind, [x, tf.zeros(f_shape, tf.float64)], attrs).outputs[0].shape.as_list()


def _conv_cases(kind, filter_shape):
    cases = []
    for variant, x_shape, attrs in _CONV_VARIANTS:
        y_shape = _out_shape(kind, x_shape, filter_shape, attrs)
        cases += [
            GradCase(kind, lambda x, f, a=attrs: op(kind, [x, f], a), [rand(*x_shape), rand(*filter_shape)],
                     name=f"{kind}_{variant}"),
            GradCase(f"{kind}BackpropInput",
                     lambda f, dy, a=attrs, s=x_shape: op(f"{kind}BackpropInput", [list(s), f, dy], a),
                     [rand(*filter_shape), rand(*y_shape)], name=f"{kind}BackpropInput_{variant}"),
            GradCase(f"{kind}BackpropFilter",
                     lambda x, dy, a=attrs: op(f"{kind}BackpropFilter", [x, list(filter_shape), dy], a),
                     [rand(*x_shape), rand(*y_shape)], name=f"{kind}BackpropFilter_{variant}"),
        ]
        if kind == "Conv2D":  # the V2 ops take the tensors whose shapes the V1 ops take
            cases += [
                GradCase("Conv2DBackpropInputV2", lambda f, dy, a=attrs, s=x_shape: op(
                    "Conv2DBackpropInputV2", [tf.zeros(s, tf.float64), f, dy], a),
                    [rand(*filter_shape), rand(*y_shape)], name=f"Conv2DBackpropInputV2_{variant}"),
                GradCase("Conv2DBackpropFilterV2", lambda x, dy, a=attrs: op(
                    "Conv2DBackpropFilterV2", [x, tf.zeros(filter_shape, tf.float64), dy], a),
                    [rand(*x_shape), rand(*y_shape)], name=f"Conv2DBackpropFilterV2_{variant}"),
            ]
    return cases


_conv = _conv_cases("Conv2D", (3, 2, 2, 3)) + _conv_cases("DepthwiseConv2dNative", (2, 3, 2, 2))


def _conv3d_cases():
    variants = [("SAME", (1, 3, 4, 3, 2), {"strides": [1, 1, 1, 1, 1], "padding": "SAME"}),
                ("VALID_strided_NCDHW", (1, 2, 4, 3, 5),
                 {"strides": [1, 1, 2, 1, 2], "padding": "VALID", "data_format": "NCDHW"}),
                ("dilated", (1, 4, 4, 3, 2), {"strides": [1, 1, 1, 1, 1], "padding": "VALID",
                                              "dilations": [1, 2, 1, 1, 1]})]
    f_shape = (2, 2, 2, 2, 2)
    cases = []
    for variant, x_shape, attrs in variants:
        y_shape = _out_shape("Conv3D", x_shape, f_shape, attrs)
        cases += [
            GradCase("Conv3D", lambda x, f, a=attrs: op("Conv3D", [x, f], a), [rand(*x_shape), rand(*f_shape)],
                     name=f"Conv3D_{variant}"),
            GradCase("Conv3DBackpropInputV2",
                     lambda f, dy, a=attrs, s=x_shape: op("Conv3DBackpropInputV2", [list(s), f, dy], a),
                     [rand(*f_shape), rand(*y_shape)], name=f"Conv3DBackpropInputV2_{variant}"),
            GradCase("Conv3DBackpropFilterV2",
                     lambda x, dy, a=attrs: op("Conv3DBackpropFilterV2", [x, list(f_shape), dy], a),
                     [rand(*x_shape), rand(*y_shape)], name=f"Conv3DBackpropFilterV2_{variant}"),
        ]
    return cases


_conv += _conv3d_cases()

# ---------------------------------------------------------------- pooling
_POOL_VARIANTS = [  # (name, input shape, attrs)
    ("SAME", (2, 5, 5, 2), {"ksize": [1, 3, 3, 1], "strides": [1, 1, 1, 1], "padding": "SAME"}),
    ("VALID_stride2", (1, 6, 7, 2), {"ksize": [1, 2, 3, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}),
    ("SAME_stride2_NCHW", (1, 2, 5, 5), {"ksize": [1, 1, 2, 2], "strides": [1, 1, 2, 2], "padding": "SAME",
                                         "data_format": "NCHW"}),
]


def _pool_cases():
    cases = []
    for variant, shape, attrs in _POOL_VARIANTS:
        y_shape = _out_shape_pool(shape, attrs)
        cases += [
            GradCase("AvgPool", lambda x, a=attrs: op("AvgPool", [x], a), [rand(*shape)], name=f"AvgPool_{variant}"),
            GradCase("AvgPoolGrad", lambda g, a=attrs, s=shape: op("AvgPoolGrad", [list(s), g], a),
                     [rand(*y_shape)], name=f"AvgPoolGrad_{variant}"),
            GradCase("MaxPool", lambda x, a=attrs: op("MaxPool", [x], a), [distinct(*shape)],
                     name=f"MaxPool_{variant}"),
            GradCase("MaxPoolGrad", lambda x, g, a=attrs: op("MaxPoolGrad", [x, op("MaxPool", [x], a), g], a),
                     [distinct(*shape), rand(*y_shape)], name=f"MaxPoolGrad_{variant}"),
            GradCase("MaxPoolGradGrad",
                     lambda x, g, a=attrs: op("MaxPoolGradGrad", [x, op("MaxPool", [x], a), g], a),
                     [distinct(*shape), rand(*shape)], name=f"MaxPoolGradGrad_{variant}"),
        ]
    return cases


def _out_shape_pool(shape, attrs):
    with tf.Graph().as_default():
        return apply_op("MaxPool", [tf.zeros(shape, tf.float64)], attrs).outputs[0].shape.as_list()


_pool = _pool_cases()

# ---------------------------------------------------------------- normalisation


def _bn_train(x, scale, offset, data_format="NHWC"):
    return op("FusedBatchNormV3", [x, scale, offset, tf.constant([], tf.float32), tf.constant([], tf.float32)],
              {"epsilon": 0.001, "data_format": data_format, "is_training": True})


def _bn_infer(x, scale, offset):
    mean, var = tf.constant([0.1, -0.2, 0.3], tf.float32), tf.constant([0.5, 1.5, 2.0], tf.float32)
    return op("FusedBatchNormV3", [x, scale, offset, mean, var], {"epsilon": 0.001, "is_training": False})


def _bn_grad_train(dy, x, scale, data_format="NHWC"):
    fwd = apply_op("FusedBatchNormV3", [x, scale, tf.zeros_like(scale), tf.constant([], tf.float32),
                                        tf.constant([], tf.float32)],
                   {"epsilon": 0.001, "data_format": data_format, "is_training": True})
    return op("FusedBatchNormGradV3", [dy, x, scale] + fwd.outputs[3:6],
              {"epsilon": 0.001, "data_format": data_format, "is_training": True}, outputs=(0, 1, 2))


def _bn_grad_infer(dy, x, scale):
    mean, var = tf.constant([0.1, -0.2, 0.3], tf.float32), tf.constant([0.5, 1.5, 2.0], tf.float32)
    return op("FusedBatchNormGradV3", [dy, x, scale, mean, var, tf.constant([], tf.float32)],
              {"epsilon": 0.001, "is_training": False}, outputs=(0, 1, 2))


_norm = [
    GradCase("FusedBatchNormV3", as_f32(_bn_train), [rand(2, 3, 2, 3), positive(3), rand(3)], **F32),
    GradCase("FusedBatchNormV3", as_f32(lambda x, s, o: _bn_train(x, s, o, "NCHW")),
             [rand(2, 3, 2, 2), positive(3), rand(3)], name="FusedBatchNormV3_NCHW", **F32),
    GradCase("FusedBatchNormV3", as_f32(_bn_infer), [rand(2, 2, 2, 3), positive(3), rand(3)],
             name="FusedBatchNormV3_inference", **F32),
    GradCase("FusedBatchNormGradV3", as_f32(_bn_grad_train), [rand(2, 2, 2, 3), rand(2, 2, 2, 3, seed=5),
                                                               positive(3)], **F32),
    GradCase("FusedBatchNormGradV3", as_f32(lambda dy, x, s: _bn_grad_train(dy, x, s, "NCHW")),
             [rand(2, 3, 2, 2), rand(2, 3, 2, 2, seed=5), positive(3)], name="FusedBatchNormGradV3_NCHW", **F32),
    GradCase("FusedBatchNormGradV3", as_f32(_bn_grad_infer), [rand(2, 2, 2, 3), rand(2, 2, 2, 3, seed=5),
                                                               positive(3)], name="FusedBatchNormGradV3_inference",
             **F32),
    GradCase("LRN", as_f32(lambda x: tf.nn.lrn(x, depth_radius=2, bias=1.0, alpha=0.3, beta=0.75)),
             [rand(2, 2, 2, 6)], **F32),
]

# ---------------------------------------------------------------- segment reductions
_SEG = [0, 0, 2, 2, 2, 3]  # sorted, segment 1 empty
_USEG = [2, -1, 0, 2, 1, -1, 0]  # unsorted, two dropped rows
_with_zeros = rand(6, 2)
_with_zeros[0, 0] = 0.0  # one zero in segment 0, column 0
_with_zeros[2, 1] = _with_zeros[4, 1] = 0.0  # two zeros in segment 2, column 1
_useg_zeros = rand(7, 2)
_useg_zeros[2, 0] = 0.0
_useg_zeros[0, 1] = _useg_zeros[3, 1] = 0.0

_segment = [
    GradCase("SegmentSum", lambda d: tf.segment_sum(d, _SEG), [rand(6, 2)]),
    GradCase("SegmentMean", lambda d: tf.segment_mean(d, _SEG), [rand(6, 2)]),
    GradCase("SegmentMax", lambda d: tf.segment_max(d, _SEG), [distinct(6, 2)]),
    GradCase("SegmentMin", lambda d: tf.segment_min(d, _SEG), [distinct(6, 2)]),
    GradCase("SegmentProd", lambda d: tf.segment_prod(d, _SEG), [rand(6, 2)]),
    GradCase("SegmentProd", lambda d: tf.segment_prod(d, _SEG), [_with_zeros], name="SegmentProd_zeros"),
    GradCase("UnsortedSegmentSum", lambda d: tf.unsorted_segment_sum(d, _USEG, 4), [rand(7, 3)]),
    GradCase("UnsortedSegmentSum", lambda d: tf.unsorted_segment_sum(d, [[0, 2, -1], [1, 0, 2]], 3),
             [rand(2, 3, 2)], name="UnsortedSegmentSum_2d_ids"),
    GradCase("UnsortedSegmentMax", lambda d: tf.unsorted_segment_max(d, _USEG, 3), [distinct(7, 3)]),
    GradCase("UnsortedSegmentMin", lambda d: tf.unsorted_segment_min(d, _USEG, 3), [distinct(7, 3)]),
    GradCase("UnsortedSegmentProd", lambda d: tf.unsorted_segment_prod(d, _USEG, 4), [rand(7, 2)]),
    GradCase("UnsortedSegmentProd", lambda d: tf.unsorted_segment_prod(d, _USEG, 3), [_useg_zeros],
             name="UnsortedSegmentProd_zeros"),
]

_IDX, _SIDS = [0, 2, 2, 4, 1, 0], [0, 0, 1, 1, 3, 3]  # repeated rows, segment 2 empty
for _kind, _fn in (("Sum", tf.sparse_segment_sum), ("Mean", tf.sparse_segment_mean),
                   ("SqrtN", tf.sparse_segment_sqrt_n)):
    _segment += [
        GradCase(f"SparseSegment{_kind}", lambda d, f=_fn: f(d, _IDX, _SIDS), [rand(5, 3)]),
        GradCase(f"SparseSegment{_kind}WithNumSegments", lambda d, f=_fn: f(d, _IDX, _SIDS, num_segments=6),
                 [rand(5, 3)]),
        GradCase(f"SparseSegment{_kind}", lambda d, f=_fn: f(d, _IDX, _SIDS, sparse_gradient=True), [rand(5, 3)],
                 name=f"SparseSegment{_kind}_sparse_gradient"),
        GradCase(f"SparseSegment{_kind}Grad",
                 lambda g, k=_kind: op(f"SparseSegment{k}Grad", [g, _IDX, _SIDS, 6]), [rand(4, 3)]),
    ]

CASES: list[GradCase] = _act + _xent + _misc + _conv + _pool + _norm + _segment
