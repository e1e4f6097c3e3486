"""MonitoredTrainingSession, MonitoredSession and the session hooks, and the progress bar."""

import io
import logging
import os

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.training.session.progress import ProgressBar

X = np.random.RandomState(2).randn(32, 3).astype(np.float32)
Y = X.dot([[0.5], [-1.0], [2.0]]).astype(np.float32)


def _model():
    x = tf.constant(X)
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - Y), name="loss")
    step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    return w, loss, step, train


def _run_to_end(sess, train):
    n = 0
    while not sess.should_stop():
        sess.run(train)
        n += 1
    return n


class RecordingHook(tf.train.SessionRunHook):
    def __init__(self, fetches=None, feed_dict=None, stop_after=None):
        self.calls, self.results = [], []
        self._fetches, self._feed, self._stop_after = fetches, feed_dict, stop_after

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        assert isinstance(coord, tf.train.Coordinator)
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        self.calls.append("before_run")
        return tf.train.SessionRunArgs(self._fetches, self._feed)

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.results.append(run_values.results)
        if self._stop_after is not None and len(self.results) >= self._stop_after:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


# ------------------------------------------------------------------------------------ the loop and hooks
def test_stop_at_step_with_last_step_and_num_steps():
    _, _, step, train = _model()
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
        assert _run_to_end(sess, train) == 5
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            sess.run(step)
        assert sess._tf_sess().run(step) == 5
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of"):
        tf.train.StopAtStepHook(num_steps=1, last_step=2)


def test_hook_protocol_order_fetches_feeds_and_stop_request():
    _, loss, step, train = _model()
    p = tf.placeholder_with_default(1.0, [], name="p")
    hook = RecordingHook(fetches={"loss": loss, "p": p}, feed_dict={p: 3.0}, stop_after=2)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert tf.get_default_graph().finalized
        assert _run_to_end(sess, train) == 2
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
            sess.run(train)
    assert not tf.get_default_graph().finalized  # unfinalized again on close
    assert hook.calls == ["begin", "after_create_session", "before_run", "after_run", "before_run", "after_run", "end"]
    assert [r["p"] for r in hook.results] == [3.0, 3.0] and hook.results[1]["loss"] < hook.results[0]["loss"] + 1


def test_conflicting_feeds_are_errors():
    p = tf.placeholder_with_default(1.0, [], name="p")
    tf.train.get_or_create_global_step()
    with tf.train.MonitoredSession(hooks=[RecordingHook(feed_dict={p: 2.0})]) as sess:
        with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
            sess.run(p, {p: 5.0})
    with tf.train.MonitoredSession(hooks=[RecordingHook(feed_dict={p: 2.0}), RecordingHook(feed_dict={p: 3.0})]) as s:
        with pytest.raises(RuntimeError, match="fed by two hooks"):
            s.run(p)


def test_out_of_range_ends_the_block_quietly_and_calls_end():
    _model()
    hook = RecordingHook()
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(tf.get_default_graph().get_tensor_by_name("loss:0"))
        raise tf.errors.OutOfRangeError(None, None, "End of sequence")
    assert hook.calls[-1] == "end"
    hook2 = RecordingHook()
    with pytest.raises(ValueError, match="boom"):
        with tf.train.MonitoredSession(hooks=[hook2]):
            raise ValueError("boom")
    assert "end" not in hook2.calls  # hooks' end() runs only on a clean exit


def test_nan_tensor_hook_raises_or_stops():
    bad = tf.constant(np.nan, name="bad")
    tf.train.get_or_create_global_step()
    with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(bad)]) as sess:
            sess.run(bad)
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(bad, fail_on_nan_loss=False)]) as sess:
        sess.run(bad)
        assert sess.should_stop()


def test_logging_tensor_hook_output(caplog):
    _, loss, _, train = _model()
    hook = tf.train.LoggingTensorHook({"the_loss": loss, "step": "global_step"}, every_n_iter=2, at_end=True)
    with caplog.at_level(logging.INFO, logger="sparseflow"):
        with tf.train.MonitoredTrainingSession(hooks=[hook, tf.train.StopAtStepHook(last_step=5)]) as sess:
            _run_to_end(sess, train)
    lines = [r.getMessage() for r in caplog.records if "the_loss = " in r.getMessage()]
    assert len(lines) == 4  # runs 0, 2, 4 and the end
    # A fetched variable shows its value after the run (the train op has incremented it).
    assert lines[0].startswith("step = 1, the_loss = ") and "sec)" in lines[1]
    assert lines[-1].startswith("step = 5, the_loss = ")
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook([loss])
    with pytest.raises(ValueError, match="invalid every_n_iter"):
        tf.train.LoggingTensorHook([loss], every_n_iter=0)


def test_step_counter_and_final_ops_hooks(caplog):
    w, _, _, train = _model()
    final = tf.train.FinalOpsHook(w)
    with caplog.at_level(logging.INFO, logger="sparseflow"):
        with tf.train.MonitoredSession(hooks=[tf.train.StepCounterHook(every_n_steps=2), final,
                                              tf.train.StopAtStepHook(last_step=6)]) as sess:
            _run_to_end(sess, train)
            last_w = sess._tf_sess().run(w)
    assert any(r.getMessage().startswith("global_step/sec: ") for r in caplog.records)
    np.testing.assert_array_equal(final.final_ops_values, last_w)


def test_run_step_fn_and_singular_session():
    _, loss, step, train = _model()

    def step_fn(step_context):
        if step_context.session.run(step) >= 3:
            step_context.request_stop()
        return step_context.run_with_hooks(train)

    with tf.train.SingularMonitoredSession() as sess:
        while not sess.should_stop():
            sess.run_step_fn(step_fn)
        assert sess.raw_session().run(step) == 3
    with pytest.raises(ValueError, match="step_fn"):
        with tf.train.MonitoredSession() as sess:
            sess.run_step_fn(lambda ctx: None)


# ------------------------------------------------------------------------------------ checkpoints
def test_checkpoint_every_n_steps_and_restore_on_restart(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        w, _, step, train = _model()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=3,
                                               hooks=[tf.train.StopAtStepHook(last_step=7)]) as sess:
            _run_to_end(sess, train)
            w7 = sess._tf_sess().run(w)
    steps = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(d) if f.endswith(".index"))
    assert steps == [0, 3, 6, 7]  # at creation, every 3 steps, and at the end
    assert os.path.exists(os.path.join(d, "graph.pbtxt")) and os.path.exists(os.path.join(d, "model.ckpt-7.meta"))
    assert tf.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-7")
    with tf.Graph().as_default():
        w, _, step, train = _model()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=3,
                                               hooks=[tf.train.StopAtStepHook(num_steps=2)]) as sess:
            assert sess.run(step) == 7
            np.testing.assert_array_equal(sess.run(w), w7)
            assert _run_to_end(sess, train) == 2
    assert tf.train.latest_checkpoint(d) == os.path.join(d, "model.ckpt-9")


def test_interrupted_training_continues_identically(tmp_path):
    with tf.Graph().as_default():
        w, _, _, train = _model()
        with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=8)]) as sess:
            _run_to_end(sess, train)
            straight = sess._tf_sess().run(w)
    d = str(tmp_path)
    for last in (3, 8):
        with tf.Graph().as_default():
            w, _, _, train = _model()
            with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_secs=3600,
                                                   hooks=[tf.train.StopAtStepHook(last_step=last)]) as sess:
                _run_to_end(sess, train)
                resumed = sess._tf_sess().run(w)
    np.testing.assert_array_equal(resumed, straight)


def test_checkpoint_saver_hook_listener_and_errors(tmp_path):
    class Listener(tf.train.CheckpointSaverListener):
        def __init__(self):
            self.saved = []

        def after_save(self, session, global_step_value):
            self.saved.append(global_step_value)
            return global_step_value >= 4  # ask training to stop

    _, _, _, train = _model()
    listener = Listener()
    saver = tf.train.Saver()
    hook = tf.train.CheckpointSaverHook(str(tmp_path / "new_dir"), save_steps=2, saver=saver, listeners=[listener])
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert _run_to_end(sess, train) == 4
    assert listener.saved == [0, 2, 4]
    with pytest.raises(ValueError, match="both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=saver, scaffold=tf.train.Scaffold())
    with pytest.raises(ValueError, match="every_secs or every_steps"):
        tf.train.CheckpointSaverHook(str(tmp_path))
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(RuntimeError, match="Global step should be created to use CheckpointSaverHook"):
            tf.train.MonitoredSession(hooks=[tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1)])
        assert not tf.get_default_graph().finalized


def test_preempted_run_recreates_the_session_from_the_checkpoint(tmp_path):
    d = str(tmp_path)

    class PreemptOnce(tf.train.SessionRunHook):
        def __init__(self):
            self.created, self.fired = 0, False

        def after_create_session(self, session, coord):
            self.created += 1

        def after_run(self, run_context, run_values):
            if not self.fired and run_context.session.run(tf.train.get_global_step()) == 5:
                self.fired = True
                raise tf.errors.UnavailableError(None, None, "parameter server ps/0 went away")

    w, _, step, train = _model()
    preempt = PreemptOnce()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=2,
                                           hooks=[preempt, tf.train.StopAtStepHook(last_step=8)]) as sess:
        _run_to_end(sess, train)
        assert sess._tf_sess().run(step) == 8
    assert preempt.created == 2  # the second session was restored from model.ckpt-4, then trained on


def test_scaffold_init_fn_ready_op_and_session_manager_errors():
    v = tf.Variable(1.0, name="v")
    seen = []
    scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: seen.append(sess.run(v)))
    with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
        assert sess.run(v) == 1.0
    assert seen == [1.0]
    with tf.Graph().as_default():
        tf.Variable(2.0, name="never_initialized")
        bad = tf.train.Scaffold(init_op=tf.no_op())
        with pytest.raises(RuntimeError, match="Init operations did not make model ready.*never_initialized"):
            tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=bad))
    with tf.Graph().as_default():
        tf.Variable(2.0, name="w")
        sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
        with pytest.raises(RuntimeError, match="no init_op or init_fn or local_init_op"):
            sm.prepare_session("")
        with pytest.raises(tf.errors.DeadlineExceededError, match="not ready after waiting"):
            sm.wait_for_session("", max_wait_secs=0.1)


# ------------------------------------------------------------------------------------ progress bar
def test_progress_bar_non_tty_writes_whole_lines_throttled():
    out = io.StringIO()
    t = [0.0]
    bar = ProgressBar(total=10, stream=out, width=10, batch_size=4, clock=lambda: t[0])
    assert not bar.tty and bar.every_n_secs == 10.0
    for step in range(1, 11):
        t[0] = step * 3.0
        bar.update(step, loss=1.0 / step)
    bar.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert [ln.split(" ")[1] for ln in lines] == ["1/10", "5/10", "9/10", "10/10"]  # every 10 s, then the end
    assert lines[1] == "step 5/10 [#####-----]  50% | 0.33 steps/s | 1.33 examples/s | loss=0.2 | 0:00:15<0:00:15"
    assert lines[-1].endswith("| 0:00:30") and "loss=0.1 " in lines[-1]


def test_progress_bar_tty_redraws_one_line():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    t = [0.0]
    bar = ProgressBar(stream=out, clock=lambda: t[0])
    for step in range(1, 4):
        t[0] = step * 1.0
        bar.update(step)
    bar.close()
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n") and text.count("\r") == 4
    assert text.split("\r")[-1].startswith("step 3 | 1.00 steps/s")


def test_progress_bar_hook_in_a_monitored_session():
    _, loss, _, train = _model()
    out = io.StringIO()
    hook = tf.train.ProgressBarHook(total_steps=4, tensors={"loss": loss}, batch_size=32, every_n_secs=0, stream=out)
    with tf.train.MonitoredTrainingSession(hooks=[hook, tf.train.StopAtStepHook(last_step=4)]) as sess:
        _run_to_end(sess, train)
    lines = out.getvalue().splitlines()
    assert [ln.split(" ")[1] for ln in lines] == ["1/4", "2/4", "3/4", "4/4"]
    assert all("examples/s" in ln and "loss=" in ln for ln in lines)


@pytest.mark.parametrize("module", ["session_run_hook", "coordinator", "basic_hooks", "progress", "scaffold",
                                    "session_manager", "monitored_session", "queue_runner"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"sparseflow._src.training.session.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
