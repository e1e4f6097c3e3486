"""``tf.nn.embedding_lookup`` over shard lists and PartitionedVariables: TF's id -> (shard, row)
mapping for "mod" and "div" with uneven shards, max_norm, gradients that reach each shard as
IndexedSlices of its own rows, the sparse variants, and gathers placed with their shard.

The expected values were recorded with TensorFlow 2.21 by ``tests/record_tf_reference.py``
running the same programs (``embedding_lookup_programs.py``) with ``tensorflow.compat.v1``.
"""

import numpy as np
import pytest

import sparseflow as tf
from tests.ops import embedding_lookup_expected as expected
from tests.ops import embedding_lookup_programs as programs


def assert_close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), atol=1e-6, rtol=0)


@pytest.fixture(scope="module")
def lookups():
    return programs.lookups(tf)


@pytest.mark.parametrize("layout", sorted(expected.LOOKUPS))
def test_lookups_match_tensorflow(lookups, layout):
    want = expected.LOOKUPS[layout]
    assert sorted(lookups[layout]) == sorted(want)
    for key in want:
        assert_close(lookups[layout][key], want[key])


def test_the_two_strategies_map_ids_differently():
    want = expected.LOOKUPS["11_in_3"]
    assert not np.allclose(want["mod_of_div_shards"], want["div"])  # the check above can tell them apart


def test_gradients_reach_each_shard_as_indexed_slices_like_tensorflow():
    got = programs.lookup_gradients(tf)
    for strategy, want in expected.LOOKUP_GRADIENTS.items():
        assert got[strategy]["kinds"] == want["kinds"] == ["IndexedSlices"] * 3
        assert_close(got[strategy]["rows"], want["rows"])
        for (g_idx, g_val), (w_idx, w_val) in zip(got[strategy]["grads"], want["grads"], strict=True):
            assert g_idx == w_idx
            assert_close(g_val, w_val)


def test_sparse_lookups_match_tensorflow():
    got = programs.sparse_lookups(tf)
    assert sorted(got) == sorted(expected.SPARSE_LOOKUPS)
    for key, want in expected.SPARSE_LOOKUPS.items():
        assert_close(got[key], want)


def test_each_gather_runs_where_its_shard_lives():
    with tf.Graph().as_default() as g:
        shards = []
        for i, rows in enumerate([4, 4, 3]):
            with tf.device(f"/job:ps/task:{i}"):
                shards.append(tf.Variable(tf.zeros([rows, 2]), name=f"shard{i}"))
        with tf.device("/job:worker/task:0"):
            out = tf.nn.embedding_lookup(shards, [3, 7, 10], partition_strategy="div")
    gathers = sorted((op for op in g.get_operations() if op.type == "GatherV2"), key=lambda op: op.name)
    assert [op.device for op in gathers] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2"]
    assert [op.get_attr("_class") for op in gathers] == [[b"loc:@shard0"], [b"loc:@shard1"], [b"loc:@shard2"]]
    assert out.device == "/job:worker/task:0"


def test_unknown_strategy_is_rejected():
    with pytest.raises(ValueError, match="Unrecognized partition strategy: modulo"):
        tf.nn.embedding_lookup([tf.zeros([2, 2]), tf.zeros([2, 2])], [0], partition_strategy="modulo")
