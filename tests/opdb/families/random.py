"""Random ops with fixed seeds: sparseflow reproduces TensorFlow's Philox streams bit for bit.

Shapes as int32 and int64, rank-0 and empty shapes, bad ranges, empty inputs to shuffle and
multinomial sampling. Each sample runs in a fresh session, so each draw is a first draw.
"""

from __future__ import annotations

from tests.opdb.spec import ANY_TYPE, OpEntry, Sample, T, empty, i32, i64, regular

_SEEDS = {"seed": 7, "seed2": 11}


def _shape_samples(extra=None):
    extra = extra or {}
    return [
        Sample("matrix", {"shape": i32([3, 4])}, {**_SEEDS, **extra}),
        Sample("int64_shape", {"shape": i64([5])}, {"seed": 1, "seed2": 2, **extra}),
        Sample("rank0", {"shape": i32([])}, {**_SEEDS, **extra}),
        Sample("empty", {"shape": i32([0, 3])}, {**_SEEDS, **extra}),
        Sample("odd_count", {"shape": i32([7])}, {"seed": 3, "seed2": 0, **extra}),
        Sample("negative_dim", {"shape": i32([-1, 2])}, {**_SEEDS, **extra}),
    ]


ENTRIES = [
    OpEntry("RandomUniform", _shape_samples(), type_attr="dtype", stateful=True,
            build=lambda tf, shape, dtype, **seeds: tf.raw_ops.RandomUniform(shape=shape, dtype=dtype, **seeds)),
    OpEntry("RandomStandardNormal", _shape_samples(), type_attr="dtype", stateful=True, rtol={"float32": 1e-6}),
    OpEntry("TruncatedNormal", _shape_samples(), type_attr="dtype", stateful=True, rtol={"float32": 1e-6}),
    OpEntry("RandomUniformInt", [
        Sample("range", {"shape": i32([4, 3]), "minval": T(-5), "maxval": T(5)}, _SEEDS),
        Sample("int64_shape", {"shape": i64([6]), "minval": T(0), "maxval": T(1000)}, {"seed": 1, "seed2": 2}),
        Sample("one_value", {"shape": i32([3]), "minval": T(2), "maxval": T(3)}, _SEEDS),
        Sample("empty", {"shape": i32([0]), "minval": T(0), "maxval": T(0)}, _SEEDS),
        Sample("empty_range", {"shape": i32([2]), "minval": T(3), "maxval": T(3)}, _SEEDS),
        Sample("bounds_not_scalar", {"shape": i32([2]), "minval": T([0]), "maxval": T(3)}, _SEEDS),
    ], type_attr="Tout", stateful=True),
    OpEntry("RandomShuffle", [
        Sample("vector", {"value": regular(6)}, _SEEDS),
        Sample("rows", {"value": regular(4, 2)}, {"seed": 2, "seed2": 5}),
        Sample("rank0", {"value": regular()}, _SEEDS),
        Sample("empty", {"value": empty(0, 2)}, _SEEDS),
        Sample("one", {"value": regular(1, 3)}, _SEEDS),
    ], dtypes=ANY_TYPE, stateful=True),
    OpEntry("Multinomial", [
        Sample("rows", {"logits": regular(2, 3), "num_samples": i32(5)}, _SEEDS),
        Sample("int64_out", {"logits": T([[0.0, 10.0, -10.0]]), "num_samples": i32(4)},
               {**_SEEDS, "output_dtype": "int32"}),
        Sample("zero_samples", {"logits": regular(2, 3), "num_samples": i32(0)}, _SEEDS),
        Sample("empty_batch", {"logits": empty(0, 3), "num_samples": i32(2)}, _SEEDS),
        Sample("no_classes", {"logits": empty(2, 0), "num_samples": i32(2)}, _SEEDS),
        Sample("negative_samples", {"logits": regular(2, 3), "num_samples": i32(-1)}, _SEEDS),
        Sample("rank1", {"logits": regular(3), "num_samples": i32(1)}, _SEEDS),
    ], stateful=True),
]
