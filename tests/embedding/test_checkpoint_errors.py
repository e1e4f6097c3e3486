"""Embedding-table checkpoints on bad input: refused restores change nothing and name the table, the
dimensions and the file; a crash at any step of save_tables loses nothing; empty tables export."""

from __future__ import annotations

import os

import numpy as np
import pytest

import sparseflow as tf
from sparseflow import embedding as E
from sparseflow._src.framework import errors
from tests.crash_injection import FileSystemSteps

IDS = np.array([[1, 2, 3], [4, 5, 6]], np.int64)


def _build(dim=4, names=("emb",)):
    tables = [E.EmbeddingTable(n, dim, optimizer=E.Adagrad(0.1)) for n in names]
    ids = tf.placeholder(tf.int64, [None, 3])
    loss = tf.add_n([tf.reduce_sum(t.lookup(ids)) for t in tables])
    w = tf.Variable(2.0, name="w")
    train = E.minimize(loss * w, tf.train.GradientDescentOptimizer(0.1))
    return tables, ids, train, w


def _trained(tmp_path, dim=4, names=("emb",)):
    with tf.Graph().as_default():
        tables, ids, train, _ = _build(dim, names)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {ids: IDS})
            return saver.save(sess, str(tmp_path / "model.ckpt")), E.save_tables(tables, str(tmp_path / "tables"),
                                                                                   sess)


def test_saver_restore_into_a_wider_table_changes_nothing_and_names_the_dimensions(tmp_path):
    saved, _ = _trained(tmp_path, dim=4)
    with tf.Graph().as_default():
        (t,), ids, train, w = _build(dim=8)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(w.assign(5.0))
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"emb' \(dim 8\): the checkpoint has values of shape \[6, 4\]") as info:
                saver.restore(sess, saved)
            assert saved in info.value.message and "Nothing was restored" in info.value.message
            assert sess.run(w) == 5.0 and t.stats(sess)["keys"] == 0


def test_restore_tables_into_a_wider_table_is_a_clear_error(tmp_path):
    _, prefix = _trained(tmp_path, dim=4)
    with tf.Graph().as_default():
        (t,), ids, train, _ = _build(dim=8)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(errors.InvalidArgumentError, match=r"'emb' \(dim 8\).*values of shape \[6, 4\].*"
                                                                  + prefix):
                E.restore_tables([t], prefix, sess)


def test_restore_tables_checks_every_table_before_loading_any(tmp_path):
    _, prefix = _trained(tmp_path, names=("first",))
    with tf.Graph().as_default():
        tables, ids, train, _ = _build(names=("first", "second"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(errors.NotFoundError, match=r"'second' is not in the checkpoint .*tables"):
                E.restore_tables(tables, prefix, sess)
            assert tables[0].stats(sess)["keys"] == 0  # the first one was not loaded either
            E.restore_tables(tables[:1], prefix, sess)
            assert tables[0].stats(sess)["keys"] == 6


def test_a_crash_at_any_step_of_save_tables_onto_a_prefix_loses_nothing(tmp_path):
    def run(directory, crash_at):
        with tf.Graph().as_default():
            (t,), ids, train, _ = _build()
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train, {ids: IDS})
                prefix = E.save_tables([t], os.path.join(directory, "tables"), sess)
                old = sess.run(t.export())
                sess.run(train, {ids: IDS + 10})
                new = sess.run(t.export())
                with FileSystemSteps(crash_at) as steps:
                    try:
                        E.save_tables([t], prefix, sess)
                    except BaseException:  # noqa: BLE001 - the simulated crash
                        if crash_at is None:
                            raise
        with tf.Graph().as_default():
            (t2,), _, _, _ = _build()
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                E.restore_tables([t2], prefix, sess)
                got = sess.run(t2.export())
        return steps, got, old, new

    steps, _, _, _ = run(str(tmp_path), None)
    assert steps.count >= 6, steps.log
    for k in range(steps.count):
        d = str(tmp_path / f"crash{k}")
        os.mkdir(d)
        inj, got, old, new = run(d, k)
        assert inj.crashed
        same_as = [np.array_equal(np.sort(got.keys), np.sort(ref.keys)) and got.values.shape == ref.values.shape
                   and np.allclose(np.sort(got.values, axis=0), np.sort(ref.values, axis=0)) for ref in (old, new)]
        assert any(same_as), (k, inj.log)


def test_an_empty_table_exports_for_serving_and_the_hook_writes_it(tmp_path):
    with tf.Graph().as_default():
        (t,), ids, train, _ = _build()
        hook = E.ServingExportHook([t], str(tmp_path / "serving"))
        with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
            path = E.export_for_serving(t, str(tmp_path / "empty.emb"), sess)
    for p in (path, os.path.join(str(tmp_path / "serving"), "emb.emb")):
        keys, values = E.load_serving(p)
        assert keys.shape == (0,) and values.shape == (0, 4)
        assert E.ServingTable(p).lookup([[1, 2]]).shape == (1, 2, 4)
