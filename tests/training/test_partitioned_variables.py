"""Partitioned variables: TF's partitioners and shard layout, PartitionedVariable, sparse training of
the shards, and checkpoints that hold one logical tensor restorable into any partitioning.

The expected values were recorded with TensorFlow 2.21 by ``tests/record_tf_reference.py``
running the same programs (``partitioned_programs.py``) with ``tensorflow.compat.v1``.
"""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import errors
from sparseflow._src.framework import tensor_bundle as bundle
from tests.training import partitioned_expected as expected
from tests.training import partitioned_programs as programs

ATOL = 1e-6


def assert_close(got, want):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                               atol=ATOL, rtol=0)


def test_shard_layouts_match_tensorflow():
    assert programs.shard_layouts(tf) == expected.SHARD_LAYOUTS


def test_scope_partitioner_reuse_concat_and_assign_match_tensorflow():
    got = programs.scope_partitioner_and_reuse(tf)
    want = expected.SCOPE_PARTITIONER_AND_REUSE
    assert got["same_object"] is want["same_object"] is True
    assert (got["concat_op"], got["concat_input"]) == (want["concat_op"], want["concat_input"])
    for key in ("before", "after_assign"):
        assert_close(got[key], want[key])
    for g, w in zip(got["eye_shards"], want["eye_shards"], strict=True):  # identity sliced by partition_info
        assert_close(g, w)


@pytest.mark.parametrize("case", sorted(expected.TRAINING))
def test_training_a_partitioned_embedding_matches_tensorflow(case):
    optimizer, strategy = case.split("_")
    got = programs.train_partitioned_embedding(tf, optimizer, strategy)
    want = expected.TRAINING[case]
    assert got["shard_shapes"] == want["shard_shapes"] == [[4, 4], [4, 4], [3, 4]]
    assert got["grad_kinds"] == want["grad_kinds"]
    assert got["slot_names"] == want["slot_names"]
    assert_close(got["losses"], want["losses"])
    assert_close(got["w"], want["w"])
    for g, w in zip(got["shards"], want["shards"], strict=True):
        assert_close(g, w)


def _full_table(shards, strategy):
    if strategy == "div":
        return np.concatenate(shards)
    n = len(shards)
    return np.stack([shards[i % n][i // n] for i in range(sum(len(s) for s in shards))])


@pytest.mark.parametrize("optimizer", ["sgd", "adagrad", "ftrl"])
@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sparse_optimizers_update_only_the_rows_looked_up(optimizer, strategy):
    got = programs.train_partitioned_embedding(tf, optimizer, strategy)
    table = _full_table([np.asarray(s, np.float32) for s in got["shards"]], strategy)  # exact: 8 decimals
    initial = _full_table(np.split(programs.FULL, [4, 8]), strategy)  # the shards start as FULL's slices
    touched = sorted({i for ids, _ in programs.BATCHES for i in ids})
    np.testing.assert_array_equal(table[programs.UNTOUCHED_ROWS], initial[programs.UNTOUCHED_ROWS])
    assert not np.any(np.all(table[touched] == initial[touched], axis=1))


def test_each_shard_gets_its_own_sparse_update_op():
    with tf.Graph().as_default() as g:
        emb = tf.get_variable("emb", [11, 4], partitioner=tf.fixed_size_partitioner(3))
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [1, 2, 10]))
        tf.train.AdagradOptimizer(0.1).minimize(loss)
    updates = {op.name: op.inputs[0].op.name for op in g.get_operations() if op.type == "SparseApplyAdagrad"}
    assert sorted(updates.values()) == ["emb/part_0", "emb/part_1", "emb/part_2"]


def test_saver_round_trip_into_other_partitionings_matches_tensorflow(tmp_path):
    got = programs.saver_round_trip(tf, str(tmp_path))
    want = expected.SAVER_ROUND_TRIP
    assert got["listed"] == want["listed"]
    assert_close(got["saved_full"], want["saved_full"])
    assert_close(got["emb_value"], want["emb_value"])
    assert sorted(got["restored"]) == sorted(want["restored"])
    for key in want["restored"]:
        assert_close(got["restored"][key], want["restored"][key])


def _save_three_shards(tmp_path):
    with tf.Graph().as_default():
        tf.get_variable("emb", initializer=tf.constant(programs.FULL), partitioner=tf.fixed_size_partitioner(3))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, str(tmp_path / "ckpt"))


def test_checkpoint_holds_one_logical_tensor_in_checksummed_slices(tmp_path):
    path = _save_three_shards(tmp_path)
    with bundle.BundleReader(path) as r:
        assert r.names() == ["emb"]
        assert r.shape("emb") == [11, 4]
        assert r.slices("emb") == [[(0, 4), (0, 4)], [(4, 4), (0, 4)], [(8, 3), (0, 4)]]
        np.testing.assert_array_equal(r.read("emb"), programs.FULL)
    data = bundle.data_path(path, 0, 1)
    raw = bytearray(open(data, "rb").read())
    raw[-5] ^= 0xFF  # a byte of the last slice
    open(data, "wb").write(bytes(raw))
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [11, 4], partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess, pytest.raises(errors.DataLossError, match="emb.*CRC"):
            tf.train.Saver().restore(sess, path)
        del emb


def test_restoring_into_a_different_full_shape_is_a_clear_error(tmp_path):
    path = _save_three_shards(tmp_path)
    with tf.Graph().as_default():
        tf.get_variable("emb", [12, 4], partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match=r"emb.*\[11, 4\]"):
            tf.train.Saver().restore(sess, path)


# ---------------------------------------------------------------------- PartitionedVariable
def test_partitioned_variable_protocol():
    v = tf.get_variable("v", [7, 2], partitioner=tf.fixed_size_partitioner(3), initializer=tf.ones_initializer())
    shards = list(v)
    assert len(v) == 3 and v._get_variable_list() == shards and v._get_partitions() == [3, 1]
    assert v.name == "v" and v.dtype == tf.float32 and v.get_shape().as_list() == [7, 2] == v.shape.as_list()
    assert [s._get_save_slice_info().var_offset for s in shards] == [[0, 0], [3, 0], [5, 0]]
    assert all(s in tf.trainable_variables() and s in tf.global_variables() for s in shards)
    assert v not in tf.global_variables()  # the shards are the variables; the container is not
    with pytest.raises(NotImplementedError, match="reference"):
        tf.convert_to_tensor(v, as_ref=True)
    with pytest.raises(ValueError, match="Incompatible type conversion"):
        tf.convert_to_tensor(v, dtype=tf.int32)


def test_partitioned_variable_assign_forms():
    v = tf.get_variable("v", [5, 2], partitioner=tf.fixed_size_partitioner(2), initializer=tf.zeros_initializer())
    other = tf.get_variable("o", [5, 2], partitioner=tf.fixed_size_partitioner(2), initializer=tf.ones_initializer())
    full = np.arange(10, dtype=np.float32).reshape(5, 2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(v.assign(full))
        np.testing.assert_array_equal(sess.run(v.as_tensor()), full)
        sess.run(v.assign_add([np.ones([3, 2], np.float32), np.ones([2, 2], np.float32)]))
        np.testing.assert_array_equal(sess.run(v.as_tensor()), full + 1)
        ops = v.assign(other, read_value=False)
        assert all(isinstance(op, tf.Operation) for op in ops)
        sess.run(ops)
        np.testing.assert_array_equal(sess.run(v.as_tensor()), np.ones([5, 2]))
    with pytest.raises(ValueError, match="one value per shard"):
        v.assign([full])


def test_reuse_rules():
    p = tf.fixed_size_partitioner(2)
    v = tf.get_variable("v", [4, 2], partitioner=p)
    with pytest.raises(ValueError, match="Partitioned variable with name v already exists"):
        tf.get_variable("v", [4, 2], partitioner=p)
    with tf.variable_scope("", reuse=True):
        assert tf.get_variable("v", [4, 2], partitioner=p) is v
        assert tf.get_variable("v") is v  # no partitioner needed to reuse
        with pytest.raises(ValueError, match="specified partitions \\[4, 1\\] and found partitions \\[2, 1\\]"):
            tf.get_variable("v", [4, 2], partitioner=tf.fixed_size_partitioner(4))
        with pytest.raises(ValueError, match="specified shape"):
            tf.get_variable("v", [5, 2], partitioner=p)
        with pytest.raises(ValueError, match="PartitionedVariable w does not exist"):
            tf.get_variable("w", [4, 2], partitioner=p)
    with pytest.raises(ValueError, match="No partitioner was provided, but a partitioned version"):
        tf.get_variable("v", [4, 2])
    tf.get_variable("plain", [4, 2])
    with pytest.raises(ValueError, match="an unpartitioned version of the variable was found: plain"):
        tf.get_variable("plain", [4, 2], partitioner=p)


@pytest.mark.parametrize("partitioner, message", [
    (lambda shape, dtype: [2, 2], "Can only slice a variable along one dimension"),
    (lambda shape, dtype: [2], "does not match the Variable's rank"),
    (lambda shape, dtype: [0, 1], "zero partitions"),
    (lambda shape, dtype: 2, "must return a sequence"),
    ("fixed", "Partitioner must be callable"),
])
def test_bad_partitioners_are_named_in_the_error(partitioner, message):
    with pytest.raises(ValueError, match=message):
        tf.get_variable("bad", [4, 2], partitioner=partitioner)


def test_shape_must_be_fully_defined_and_partitioner_arguments_checked():
    with pytest.raises(ValueError, match="must be fully defined.*variable u"):
        tf.get_variable("u", initializer=np.zeros([4, 2], np.float32), partitioner=tf.fixed_size_partitioner(2))
    with pytest.raises(ValueError, match="must be positive"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="max_shards must be positive"):
        tf.variable_axis_size_partitioner(10, max_shards=-1)
    with pytest.raises(ValueError, match="axis 2"):
        tf.get_variable("x", [4, 2], partitioner=tf.min_max_variable_partitioner(2, axis=2))


def test_public_names():
    assert tf.compat.v1.fixed_size_partitioner is tf.fixed_size_partitioner
    assert tf.compat.v1.min_max_variable_partitioner is tf.min_max_variable_partitioner
    assert tf.compat.v1.variable_axis_size_partitioner is tf.variable_axis_size_partitioner
    assert tf.compat.v1.PartitionedVariable is tf.PartitionedVariable


@pytest.mark.parametrize("module", ["ops.partitioned_variables", "ops.partitioned_variable"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"sparseflow._src.{module}"),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_optimizer_var_list_takes_the_shards_and_says_so():
    emb = tf.get_variable("emb", [6, 2], partitioner=tf.fixed_size_partitioner(2))
    loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [1, 4]))
    with pytest.raises(NotImplementedError, match=r"pass var_list=list\(emb\)"):
        tf.train.AdagradOptimizer(0.1).minimize(loss, var_list=[emb])
    assert tf.train.AdagradOptimizer(0.1).minimize(loss, var_list=list(emb)) is not None
