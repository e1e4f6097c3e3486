"""Finite-difference cases for the gradients of the array ops (sparseflow/_src/grad/array_grad*.py).

Every differentiable array op type has at least one case; ops with several paths (concat along
each axis and with more than 16 inputs, gather along axis 0 / another axis / with batch_dims,
every strided-slice mask, both MirrorPad modes) have one case per path. Gradients that come back
as IndexedSlices (axis-0 gather, row GatherNd) are densified by the checker. Index inputs
(gather indices, partitions, paddings, ...) are constants: only float64 inputs are perturbed.
"""

from __future__ import annotations

import numpy as np

import sparseflow as tf
from sparseflow._src.framework.op_def_library import apply_op
from tests.grad.grad_case import GradCase, rand


def op(op_type, inputs, attrs=None):
    return apply_op(op_type, inputs, attrs).outputs[0]


def distinct(*shape, seed=0):
    """Well separated values (no ties), for composites with a max inside."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float64) / n - 0.5).reshape(shape) * 2.0


# Weights make every output element count differently, so a gradient routed to the wrong
# position (a transposed or shifted slice) fails the check even where a plain sum would not.
def weighted(t):
    n = tf.size(t)
    ramp = tf.cast(tf.range(n), tf.float64) / tf.cast(tf.maximum(n, 1), tf.float64)
    return t * (0.5 + tf.reshape(ramp, tf.shape(t)))


# ---------------------------------------------------------------- shapes
_shape = [
    GradCase("Reshape", lambda x: weighted(tf.reshape(x, [4, 3])), [rand(3, 4)]),
    GradCase("Reshape", lambda x: weighted(tf.reshape(tf.placeholder_with_default(x, [None, 4]), [2, 6])),
             [rand(3, 4)], name="Reshape_partial_input_shape"),
    GradCase("ExpandDims", lambda x: weighted(tf.expand_dims(x, 1)), [rand(3, 4)]),
    GradCase("Squeeze", lambda x: weighted(tf.squeeze(x, axis=[0, 2])), [rand(1, 3, 1, 2)]),
    GradCase("Transpose", lambda x: weighted(tf.transpose(x, [2, 0, 1])), [rand(2, 3, 4)]),
    GradCase("ConjugateTranspose", lambda x: weighted(op("ConjugateTranspose", [x, [1, 0]])), [rand(2, 3)]),
    GradCase("BroadcastTo", lambda x: weighted(tf.broadcast_to(x, [2, 3, 4])), [rand(3, 1)]),
    GradCase("BroadcastTo", lambda x: weighted(tf.broadcast_to(x, tf.constant([2, 3], tf.int64))), [rand(3)],
             name="BroadcastTo_int64_shape"),
    GradCase("BroadcastTo",
             lambda x: weighted(tf.broadcast_to(x, tf.shape(tf.placeholder_with_default(tf.zeros([4, 2, 3]),
                                                                                         [None, 2, 3]),
                                                            out_type=tf.int64))),
             [rand(2, 1)], name="BroadcastTo_dynamic_int64_shape"),
    GradCase("EnsureShape", lambda x: weighted(tf.ensure_shape(x, [2, None])), [rand(2, 3)]),
    GradCase("CheckNumerics", lambda x: weighted(tf.check_numerics(x * x, "finite")), [rand(2, 3)]),
    GradCase("Print", lambda x: weighted(tf.Print(x * x, [x], first_n=0)), [rand(2, 3)]),
    GradCase("PlaceholderWithDefault", lambda x: weighted(tf.placeholder_with_default(x, [2, 3])), [rand(2, 3)]),
    GradCase("Fill", lambda v: weighted(tf.fill([2, 3], v)), [np.array(0.7)]),
]

# ---------------------------------------------------------------- slices
_ss = dict(begin=[1, 0, 0], end=[0, 0, 3], strides=[1, 1, -1])
_slices = [
    GradCase("Slice", lambda x: weighted(tf.slice(x, [1, 0, 1], [2, -1, 2])), [rand(3, 2, 4)]),
    GradCase("StridedSlice", lambda x: weighted(x[1:, ::-2]), [rand(3, 5)]),
    GradCase("StridedSlice", lambda x: weighted(x[..., 1, tf.newaxis, ::2]), [rand(2, 3, 5)],
             name="StridedSlice_ellipsis_shrink_newaxis"),
    GradCase("StridedSlice", lambda x: weighted(x[-1]), [rand(3, 4)], name="StridedSlice_shrink_negative"),
    GradCase("StridedSlice", lambda x: weighted(tf.strided_slice(x, [0, 1], [0, 4], [1, 2], begin_mask=1,
                                                                 end_mask=1)),
             [rand(3, 5)], name="StridedSlice_masks"),
    GradCase("StridedSliceGrad",
             lambda dy: weighted(op("StridedSliceGrad", [[3, 5], [1, 4], [3, 0], [1, -2], dy])),
             [rand(2, 2)]),
    GradCase("StridedSliceGrad", lambda x: tf.gradients(tf.reduce_sum(x[1:, ::2] ** 3), x)[0],
             [rand(3, 4)], name="StridedSlice_second_derivative"),
]

# ---------------------------------------------------------------- joins, splits, tiles
_many = [rand(2, 1, seed=i) for i in range(17)]
_joins = [
    GradCase("ConcatV2", lambda a, b: weighted(tf.concat([a, b * b], 0)), [rand(2, 3), rand(1, 3)]),
    GradCase("ConcatV2", lambda a, b, c: weighted(tf.concat([a, b, c], -1)), [rand(2, 1), rand(2, 3), rand(2, 2)],
             name="ConcatV2_negative_axis"),
    GradCase("ConcatV2",
             lambda a, b: weighted(tf.concat([tf.placeholder_with_default(a, [None, 2]), b], 1)),
             [rand(3, 2), rand(3, 1)], name="ConcatV2_unknown_shapes"),
    GradCase("ConcatV2", lambda *xs: weighted(tf.concat(list(xs), 1)), _many, name="ConcatV2_17_inputs"),
    GradCase("Pack", lambda a, b: weighted(tf.stack([a, b * 2.0], axis=1)), [rand(2, 3), rand(2, 3)]),
    GradCase("Unpack", lambda x: [weighted(t) for t in tf.unstack(x, axis=1)], [rand(2, 3, 2)]),
    GradCase("Unpack", lambda x: weighted(tf.unstack(x)[1]), [rand(3, 2)], name="Unpack_one_output_used"),
    GradCase("Split", lambda x: [weighted(t) for t in tf.split(x, 3, axis=1)], [rand(2, 6)]),
    GradCase("Split", lambda x: weighted(tf.split(x, 2)[0]), [rand(4, 3)], name="Split_one_output_used"),
    GradCase("SplitV", lambda x: [weighted(t) for t in tf.split(x, [1, -1, 2], axis=0)], [rand(6, 2)]),
    GradCase("Tile", lambda x: weighted(tf.tile(x, [2, 1, 3])), [rand(2, 3, 2)]),
]

# ---------------------------------------------------------------- pads, reversals
_pads = [
    GradCase("Pad", lambda x: weighted(tf.pad(x, [[1, 2], [0, 1]])), [rand(2, 3)]),
    GradCase("PadV2", lambda x: weighted(tf.pad(x, [[1, 0], [2, 1]], constant_values=3.0)), [rand(2, 3)]),
    GradCase("MirrorPad", lambda x: weighted(tf.pad(x, [[1, 2], [2, 2]], mode="REFLECT")), [rand(4, 3)]),
    GradCase("MirrorPad", lambda x: weighted(tf.pad(x, [[2, 1], [0, 3], [1, 0]], mode="SYMMETRIC")),
             [rand(3, 3, 2)], name="MirrorPad_symmetric"),
    GradCase("MirrorPad", lambda x: tf.gradients(tf.reduce_sum(weighted(tf.pad(x * x, [[1, 1]], mode="REFLECT"))),
                                                 x)[0], [rand(4)], name="MirrorPad_second_derivative"),
    GradCase("MirrorPadGrad", lambda g: weighted(tf.raw_ops.MirrorPadGrad(input=g, paddings=[[1, 2], [0, 1]],
                                                                        mode="SYMMETRIC")), [rand(6, 4)]),
    GradCase("ReverseV2", lambda x: weighted(tf.reverse(x, [0, 2])), [rand(2, 3, 2)]),
    GradCase("ReverseSequence",
             lambda x: weighted(tf.reverse_sequence(x, tf.constant([3, 1, 2], tf.int64), seq_axis=1, batch_axis=0)),
             [rand(3, 4, 2)]),
]

# ---------------------------------------------------------------- gathers, scatters, partitions
_index = [
    GradCase("GatherV2", lambda p: weighted(tf.gather(p, [2, 0, 2, 3])), [rand(4, 3)]),
    GradCase("GatherV2", lambda p: weighted(tf.gather(p, [[1, 1], [0, 2]])), [rand(3, 2, 2)],
             name="GatherV2_2d_indices"),
    GradCase("GatherV2", lambda p: weighted(tf.gather(p, [2, 0, 2], axis=1)), [rand(2, 3, 2)],
             name="GatherV2_axis1"),
    GradCase("GatherV2", lambda p: weighted(tf.gather(p, [1, 0], axis=-1)), [rand(2, 3)],
             name="GatherV2_negative_axis"),
    GradCase("GatherV2", lambda p: weighted(tf.gather(p, [[0, 0, 1], [2, 1, 2]], axis=1, batch_dims=1)),
             [rand(2, 3, 2)], name="GatherV2_batch_dims"),
    GradCase("GatherV2", lambda p: weighted(tf.gather(p, [[1], [0]], axis=2, batch_dims=1)),
             [rand(2, 3, 2)], name="GatherV2_batch_dims_axis2"),
    GradCase("GatherNd", lambda p: weighted(tf.gather_nd(p, [[1, 0], [2, 1], [1, 0]])), [rand(3, 2, 2)]),
    GradCase("GatherNd", lambda p: weighted(tf.gather_nd(p, [[2], [0], [2]])), [rand(3, 2)],
             name="GatherNd_rows"),
    GradCase("ScatterNd", lambda u: weighted(tf.scatter_nd([[1], [3], [1]], u, [4, 2])), [rand(3, 2)]),
    GradCase("DynamicPartition", lambda x: [weighted(t) for t in tf.dynamic_partition(x, [1, 0, 2, 1], 3)],
             [rand(4, 2)]),
    GradCase("DynamicPartition", lambda x: weighted(tf.dynamic_partition(x, [[1, 0], [1, 1]], 2)[1]),
             [rand(2, 2, 3)], name="DynamicPartition_2d_one_output_used"),
    GradCase("DynamicStitch", lambda a, b: weighted(tf.dynamic_stitch([[0, 2], [1, 3]], [a, b])),
             [rand(2, 3), rand(2, 3)]),
    GradCase("DynamicStitch", lambda a, b: weighted(tf.dynamic_stitch([[0, 1, 2], [1]], [a, b])),
             [rand(3), rand(1)], name="DynamicStitch_overwritten_rows"),
    GradCase("GatherV2",
             lambda p: tf.convert_to_tensor(tf.gradients(tf.reduce_sum(tf.gather(p, [1, 1, 0]) ** 3), p)[0]),
             [rand(3, 2)], name="GatherV2_second_derivative"),
]

CASES = _shape + _slices + _joins + _pads + _index
