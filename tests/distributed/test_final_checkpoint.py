"""The chief's last checkpoint is the state it evaluates after ``strategy.finish``: every worker's
last update is in it, even one that reaches the chief's table shard after the chief saved at the
last step (HybridStrategy: a worker's table pushes land on the other workers' shards while they
step on; workers as threads of this process, one tf.train.Server each, 127.0.0.1)."""

import sys
import threading

import numpy as np

import sparseflow as tf
from sparseflow._src.kernels import embedding_service
from sparseflow.distribute import HybridStrategy
from tests.distributed.test_mirrored_strategies import B, _data, _model, _rows, _run_workers, _strategies

STEPS = 3


class _AfterSaveAt(tf.train.SessionRunHook):
    """Sets ``event`` after the run that took the global step to ``step`` (the chief's checkpoint
    hook, listed before the user's hooks, has saved by then)."""

    def __init__(self, step, event):
        self.step, self.event = step, event

    def after_run(self, run_context, run_values):
        if int(run_context.session.run(tf.train.get_global_step())) >= self.step:
            self.event.set()


def test_the_chiefs_last_checkpoint_has_the_other_workers_last_table_push(tmp_path, monkeypatch):
    """Worker 1's table push of the last step is held on the chief's shard until the chief's step
    checkpoint at that step is written; the chief then finishes (worker 1's push is in), reads the
    table and the dense variables, and closes its session. Restoring the directory's last checkpoint
    gives exactly what it read."""
    strategies = _strategies(HybridStrategy)
    saved_at_last_step = threading.Event()
    serving = embedding_service.shards_of(strategies[0].server.worker.devices)  # the chief's shards
    real_push = type(serving).push
    remote_pushes = []

    def push(self, items):
        # worker 1's pushes come through the chief's TablePush handler; the chief's own are served inline
        if self is serving and sys._getframe(1).f_code.co_name == "TablePush":
            remote_pushes.append(len(items))
            if len(remote_pushes) == STEPS:  # one push per worker step to each task
                assert saved_at_last_step.wait(60)
        return real_push(self, items)

    monkeypatch.setattr(type(serving), "push", push)
    keys, x, y = _data(STEPS, seed=5)
    model_dir = str(tmp_path / "model")

    def work(i, strategy):
        with tf.Graph().as_default():
            with strategy.scope():
                (k, xp, yp), train, dense, table, step = _model("sgd", strategy.wrap_optimizer)
                rows = _rows(table)
            hooks = [_AfterSaveAt(STEPS, saved_at_last_step)] if i == 0 else []
            with strategy.training_session(checkpoint_dir=model_dir if i == 0 else None, save_checkpoint_steps=STEPS,
                                           max_wait_secs=60, hooks=hooks) as sess:
                for s in range(STEPS):
                    part = slice(i * B, (i + 1) * B)
                    sess.run(train, {k: keys[s][part], xp: x[s][part], yp: y[s][part]})
                strategy.finish(sess, timeout=60)
                final = sess.run([rows, step, *dense])
            restored = None
            if i == 0:  # worker 1 still serves its shard: it waits in release()
                with tf.Session(strategy.target) as plain:
                    tf.train.Saver(sharded=True).restore(plain, tf.train.latest_checkpoint(model_dir))
                    restored = plain.run([rows, step, *dense])
            strategy.release(timeout=60)
            return final, restored

    (final, restored), _ = _run_workers(strategies, work)
    assert len(remote_pushes) == STEPS and int(final[1]) == STEPS
    for got, want in zip(restored, final):
        np.testing.assert_array_equal(got, want)
