"""Saves are atomic as a whole: a crash at any file-system step of a save, onto a new prefix or
onto the prefix of the previous checkpoint, leaves the previous or the new checkpoint, in full."""

import os
import shutil
import tempfile

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import tensor_bundle as bundle
from tests.crash_injection import FileSystemSteps, SimulatedCrash

OLD = {"v": np.array([1.0, 2.0], np.float32), "w": np.array([[3.0]], np.float32)}
NEW = {"v": np.array([5.0, 6.0], np.float32), "w": np.array([[7.0]], np.float32)}


class _Graph:
    """Two variables on two devices and the saver's ops, built once per test: every "program" below
    (:meth:`model`, :meth:`restored`) is a new session on it with a new Saver of the same SaverDef,
    so it starts with fresh kernels and remembers no earlier checkpoints, as a restarted process."""

    def __init__(self, sharded):
        self.graph = g = tf.Graph()
        with g.as_default():
            with tf.device("/cpu:0"):
                v = tf.Variable(OLD["v"], name="v")
            with tf.device("/cpu:1"):
                w = tf.Variable(OLD["w"], name="w")
            self.variables = {"v": v, "w": w}
            self.assigns = [v.assign(NEW["v"]), w.assign(NEW["w"])]
            self.zeros = [var.assign(np.zeros_like(OLD[k])) for k, var in self.variables.items()]
            self.saver_def = tf.train.Saver(sharded=sharded).as_saver_def()
            self.init = tf.global_variables_initializer()

    def model(self):
        """A session holding OLD, its saver, the assigns to NEW."""
        sess = tf.Session(graph=self.graph, config=tf.ConfigProto(device_count={"CPU": 2}))
        sess.run(self.init)
        with self.graph.as_default():
            saver = tf.train.Saver(saver_def=self.saver_def)
        return sess, saver, self.assigns

    def restored(self, path):
        sess, saver, _ = self.model()
        with sess:
            sess.run(self.zeros)
            saver.restore(sess, path)
            return {k: sess.run(v) for k, v in self.variables.items()}


@pytest.fixture
def save_dir(tmp_path):
    """Where the saves go: a fresh directory in memory (tmpfs, /dev/shm) where there is one, else
    ``tmp_path``. A save makes the same file-system calls on either (the steps counted and crashed
    at below); on a disk each of its fsyncs, removes and renames waits milliseconds for the device,
    hundreds of them a test."""
    shm = "/dev/shm"
    if not (os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK)):
        yield tmp_path
        return
    d = tempfile.mkdtemp(prefix="sparseflow-crash-safety-", dir=shm)
    try:
        yield type(tmp_path)(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _same(values, expected):
    return all(np.array_equal(values[k], expected[k]) for k in expected)


def _save(directory, sess, saver, global_step):
    return saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=global_step)


@pytest.mark.parametrize("sharded", [False, True], ids=["one_bundle", "sharded"])
@pytest.mark.parametrize("global_step", [None, 2], ids=["same_prefix", "new_prefix"])
def test_a_crash_at_any_step_of_a_save_loses_nothing(save_dir, sharded, global_step):
    # How many file-system steps a save takes (bundle, state file, meta graph).
    d0 = str(save_dir / "count")
    os.mkdir(d0)
    graph = _Graph(sharded)
    sess, saver, assigns = graph.model()
    with sess:
        _save(d0, sess, saver, 1 if global_step else None)
        sess.run(assigns)
        with FileSystemSteps() as rec:
            _save(d0, sess, saver, global_step)
    assert rec.count >= 8, rec.log  # data file, index, renames, fsyncs, state file, meta graph
    renames = [p for what, p in rec.log if what in ("replace", "rename")]
    assert any(p.endswith(".index") for p in renames)

    for k in range(rec.count):
        d = str(save_dir / f"crash{k}")
        os.mkdir(d)
        sess, saver, assigns = graph.model()
        with sess:
            old = _save(d, sess, saver, 1 if global_step else None)
            sess.run(assigns)
            with FileSystemSteps(crash_at=k) as inj, pytest.raises(BaseException) as info:
                _save(d, sess, saver, global_step)
            assert inj.crashed, k
            assert isinstance(info.value, (SimulatedCrash, tf.errors.OpError)), info.value
        latest = tf.train.latest_checkpoint(d)
        assert latest is not None, (k, inj.log, os.listdir(d))
        values = graph.restored(latest)
        if latest == old:
            assert _same(values, OLD) or (global_step is None and _same(values, NEW)), (k, inj.log, values)
        else:
            assert _same(values, NEW), (k, inj.log, values)
        if global_step is None:  # the prefix itself: whatever restores is one whole checkpoint
            assert _same(values, OLD) or _same(values, NEW)
        else:  # the previous checkpoint is never touched
            assert _same(graph.restored(old), OLD), (k, inj.log)
        # and the next save after the crash works and cleans up after the crashed one
        sess, saver, assigns = graph.model()
        with sess:
            sess.run(assigns)
            path = _save(d, sess, saver, global_step)
        assert _same(graph.restored(path), NEW)
        leftovers = [f for f in os.listdir(d) if ".prev-" in f]
        assert not leftovers, (k, leftovers)


def test_the_old_index_reads_its_data_from_where_an_uncommitted_save_set_it_aside(tmp_path):
    prefix = str(tmp_path / "c")
    with bundle.BundleWriter(prefix) as w:
        w.add("x", np.arange(3.0))
    real_replace = os.replace

    def replace(src, dst):
        if dst.endswith(".index"):
            raise SimulatedCrash("before the commit")
        real_replace(src, dst)

    os.replace = replace
    try:
        with pytest.raises(SimulatedCrash):
            with bundle.BundleWriter(prefix) as w:
                w.add("x", np.zeros(3))
    finally:
        os.replace = real_replace
    # the rollback put the old data file back
    np.testing.assert_array_equal(bundle.BundleReader(prefix).read("x"), np.arange(3.0))
    assert not [f for f in os.listdir(tmp_path) if ".prev-" in f or "tempstate" in f]


def test_a_save_onto_a_prefix_removes_data_files_the_new_index_does_not_use(tmp_path):
    prefix = str(tmp_path / "c")
    with bundle.BundleWriter(prefix) as w:
        w.add("x", np.arange(3.0))
    stale = bundle.data_path(prefix, 1, 2)
    open(stale, "wb").close()
    with bundle.BundleWriter(prefix) as w:
        w.add("x", np.ones(3))
    assert sorted(os.listdir(tmp_path)) == ["c.data-00000-of-00001", "c.index"]
