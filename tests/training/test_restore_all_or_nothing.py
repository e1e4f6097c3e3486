"""A refused restore changes nothing, and its error names the checkpoint file, the checkpoint key,
the variable and both shapes."""

import os
import re

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.training.checkpoint.saver import BaseSaverBuilder

NAMES = ["a", "b", "c", "d", "e"]


def _save(tmp_path, shapes):
    with tf.Graph().as_default():
        for n in NAMES:
            tf.Variable(np.full(shapes.get(n, [2]), 1.0, np.float32), name=n)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, str(tmp_path / "model.ckpt"))


def _try_restore(path, shapes, extra=(), **saver_kwargs):
    """Restores into variables holding 9.0 (shapes by name); returns (error, values afterwards)."""
    with tf.Graph().as_default():
        variables = [tf.Variable(np.full(shapes.get(n, [2]), 9.0, np.float32), name=n) for n in [*NAMES, *extra]]
        saver = tf.train.Saver(**saver_kwargs)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.OpError) as info:
                saver.restore(sess, path)
            return info.value, {v.op.name: sess.run(v) for v in variables}


def _untouched(values):
    return all((v == 9.0).all() for v in values.values())


@pytest.mark.parametrize("wrong", ["a", "c", "e"])
@pytest.mark.parametrize("kwargs", [{}, {"builder": BaseSaverBuilder()}, {"sharded": True}],
                         ids=["bulk", "one_restore_per_variable", "sharded"])
def test_a_shape_mismatch_restores_nothing_and_names_variable_key_file_and_shapes(tmp_path, wrong, kwargs):
    path = _save(tmp_path, {})
    err, values = _try_restore(path, {wrong: [3]}, **kwargs)
    assert isinstance(err, tf.errors.InvalidArgumentError)
    assert _untouched(values), values
    assert path in err.message
    assert f"holds '{wrong}' with shape [2], but variable {wrong}:0 has shape [3]" in err.message
    assert "Nothing was restored" in err.message


@pytest.mark.parametrize("kwargs", [{}, {"builder": BaseSaverBuilder()}, {"sharded": True}],
                         ids=["bulk", "one_restore_per_variable", "sharded"])
def test_a_missing_variable_restores_nothing_and_names_the_checkpoint(tmp_path, kwargs):
    path = _save(tmp_path, {})
    err, values = _try_restore(path, {}, extra=["zz"], **kwargs)
    assert isinstance(err, tf.errors.NotFoundError)
    assert _untouched(values), values
    assert f"Key zz not found in checkpoint {path}" in err.message
    assert "'zz' (for variable zz:0)" in err.message
    assert re.search(r"Restoring from checkpoint \S+model.ckpt failed", err.message)


def test_with_reshape_a_different_number_of_elements_restores_nothing(tmp_path):
    path = _save(tmp_path, {"b": [2, 2]})
    with tf.Graph().as_default():
        a = tf.Variable(np.full([2], 9.0, np.float32), name="a")
        b = tf.Variable(np.full([4], 9.0, np.float32), name="b")
        saver = tf.train.Saver([a, b], reshape=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.restore(sess, path)  # same number of elements: restored, reshaped
            assert sess.run(b).tolist() == [1.0] * 4
    with tf.Graph().as_default():
        a = tf.Variable(np.full([2], 9.0, np.float32), name="a")
        b = tf.Variable(np.full([3], 9.0, np.float32), name="b")
        saver = tf.train.Saver([a, b], reshape=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"holds 'b' with shape \[2, 2\].*different "
                                                                     r"number of elements"):
                saver.restore(sess, path)
            assert sess.run(a).tolist() == [9.0, 9.0]


def test_an_imported_meta_graph_restores_all_or_nothing_too(tmp_path):
    path = _save(tmp_path, {})
    with tf.Graph().as_default():
        tf.Variable(np.zeros([2], np.float32), name="a")
        tf.Variable(np.zeros([3], np.float32), name="e")
        tf.train.Saver().export_meta_graph(str(tmp_path / "other.meta"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(str(tmp_path / "other.meta"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"holds 'e' with shape \[2\], but its variable "
                                                                     r"has shape \[3\]"):
                saver.restore(sess, path)
            assert sess.run(g.get_tensor_by_name("a:0")).tolist() == [0.0, 0.0]
    assert os.path.exists(path + ".index")
