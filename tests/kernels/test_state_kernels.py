"""Assign*/Scatter* kernels write through private buffers (kernels/var_buffers.py): the results
match NumPy over sequences of updates by several nodes, readers never see an array change, and a
scatter reuses its buffer instead of copying the variable."""

import numpy as np
import pytest

from sparseflow._src.framework import dtypes
from sparseflow._src.kernels.registry import KernelNode, get_kernel
from sparseflow._src.kernels.resources import VariableRef


def _kernel(op_type, dtype=dtypes.float32, **attrs):
    attrs = {"T": dtype, "use_locking": False, "Tindices": dtypes.int64, **attrs}
    return get_kernel(op_type).factory(KernelNode("k", op_type, attrs, [], [], "/device:CPU:0"))


def _ref(value, dtype=np.float32):
    ref = VariableRef("v")
    value = np.array(value, dtype=dtype)
    value.flags.writeable = False
    ref.value = value
    return ref


@pytest.mark.parametrize("dtype,tf_dtype", [(np.float32, dtypes.float32), (np.float64, dtypes.float64),
                                            (np.int32, dtypes.int32), (np.float16, dtypes.float16)])
def test_interleaved_updates_by_several_nodes_match_numpy(dtype, tf_dtype):
    rng = np.random.default_rng(0)
    kinds = {"ScatterAdd": np.add.at, "ScatterSub": np.subtract.at, "ScatterUpdate": None,
             "ScatterMax": np.maximum.at, "ScatterMul": np.multiply.at}
    kernels = {k: _kernel(k, tf_dtype) for k in kinds}
    assign, assign_add = _kernel("Assign", tf_dtype), _kernel("AssignAdd", tf_dtype)
    expected = rng.integers(-5, 5, (50, 3)).astype(dtype)
    ref = _ref(expected, dtype)
    for step in range(60):
        which = rng.integers(0, len(kinds) + 2)
        if which == len(kinds):
            value = rng.integers(-5, 5, (50, 3)).astype(dtype)
            assign(ref, value)
            expected = value.copy()
        elif which == len(kinds) + 1:
            value = rng.integers(-2, 2, (50, 3)).astype(dtype)
            assign_add(ref, value)
            expected = expected + value
        else:
            kind = list(kinds)[which]
            idx = rng.integers(0, 50, 7)  # duplicates included
            upd = rng.integers(-3, 3, (7, 3)).astype(dtype)
            kernels[kind](ref, idx, upd)
            if kinds[kind] is None:
                expected[idx] = upd
            else:
                kinds[kind](expected, idx, upd)
        np.testing.assert_array_equal(ref.value, expected, err_msg=f"step {step}")
        assert not ref.value.flags.writeable


def test_readers_holding_a_value_never_see_it_change():
    scatter, assign_sub = _kernel("ScatterAdd"), _kernel("AssignSub")
    ref = _ref(np.zeros((6, 2)))
    held = [ref.value]
    for _ in range(5):
        scatter(ref, np.array([1, 1, 4]), np.ones((3, 2), np.float32))
        held.append(ref.value)
        assign_sub(ref, np.full((6, 2), 0.5, np.float32))
        held.append(ref.value)
    running = np.zeros((6, 2), np.float32)
    for i in range(5):
        np.add.at(running, [1, 1, 4], 1.0)
        np.testing.assert_array_equal(held[1 + 2 * i], running)
        running = running - 0.5
        np.testing.assert_array_equal(held[2 + 2 * i], running)


def test_scatter_reuses_two_buffers_instead_of_copying_the_variable():
    scatter = _kernel("ScatterSub")
    ref = _ref(np.zeros((1000, 4)))
    ids = []
    for i in range(8):
        scatter(ref, np.array([i, 999]), np.ones((2, 4), np.float32))
        ids.append(id(ref.value))
    assert len(set(ids[1:])) == 2  # the replaced array becomes the next buffer
    assert ref.value[999].tolist() == [-8.0] * 4 and ref.value[3].tolist() == [-1.0] * 4
    assert ref.value[500].tolist() == [0.0] * 4


def test_scalar_updates_broadcast_and_a_failed_update_changes_nothing():
    scatter = _kernel("ScatterUpdate")
    ref = _ref(np.zeros((4, 2)))
    scatter(ref, np.array([0, 2]), np.float32(7.0))
    assert ref.value.tolist() == [[7, 7], [0, 0], [7, 7], [0, 0]]
    before = ref.value
    with pytest.raises(Exception, match="not in"):
        scatter(ref, np.array([1, 9]), np.ones((2, 2), np.float32))
    assert ref.value is before


@pytest.mark.parametrize("op,fn", [("ScatterNdAdd", np.add.at), ("ScatterNdSub", np.subtract.at),
                                   ("ScatterNdUpdate", None)])
def test_scatter_nd_through_buffers_matches_numpy(op, fn):
    rng = np.random.default_rng(1)
    kernel = _kernel(op)
    expected = rng.standard_normal((5, 4, 3)).astype(np.float32)
    ref = _ref(expected)
    for _ in range(10):
        k = int(rng.integers(1, 4))
        idx = np.stack([rng.integers(0, d, 6) for d in expected.shape[:k]], axis=1)
        upd = rng.standard_normal((6,) + expected.shape[k:]).astype(np.float32)
        kernel(ref, idx, upd)
        at = tuple(idx.T)
        if fn is None:
            expected[at] = upd
        else:
            fn(expected, at, upd)
        np.testing.assert_allclose(ref.value, expected, rtol=1e-6)
