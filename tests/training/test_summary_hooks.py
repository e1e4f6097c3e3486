"""SummarySaverHook, ProfilerHook and MonitoredTrainingSession's summary arguments (TensorFlow's
rules; the TF1 program tests/tf1_programs/s01_summaries.py compares whole runs with TensorFlow's)."""

import glob
import json
import os

import pytest

import sparseflow as tf


def _summary_steps(logdir):
    return [e.step for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))
            for e in tf.train.summary_iterator(path) if e.HasField("summary")]


def _model():
    step = tf.train.get_or_create_global_step()
    x = tf.Variable(1.0, name="x")
    tf.summary.scalar("x", x)
    return step, tf.group(tf.assign_add(x, 1.0), tf.assign_add(step, 1))


def test_summary_saver_hook_needs_exactly_one_source():
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1, scaffold=tf.train.Scaffold(), summary_op=tf.constant(""))


@pytest.mark.parametrize("kwargs,steps", [({}, [1]), ({"save_summaries_steps": 2}, [1, 3, 5]),
                                          ({"save_summaries_steps": None, "save_summaries_secs": None}, [])])
def test_monitored_training_session_writes_the_scaffolds_summaries(tmp_path, kwargs, steps):
    _, train = _model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), log_step_count_steps=None,
                                           save_checkpoint_secs=None, **kwargs) as sess:
        for _ in range(5):
            sess.run(train)
    tf.summary.FileWriterCache.clear()
    assert _summary_steps(str(tmp_path)) == steps


def test_profiler_hook_writes_chrome_traces_and_run_metadata(tmp_path):
    _, train = _model()
    # Every step: which step a run that increments the global step reads is a race (as in TensorFlow);
    # the hook reads the step again after a traced run, and the first run is never traced.
    hook = tf.train.ProfilerHook(save_steps=1, output_dir=str(tmp_path), show_memory=True)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(5):
            sess.run(train)
    tf.summary.FileWriterCache.clear()
    traces = sorted(os.path.basename(p) for p in glob.glob(os.path.join(str(tmp_path), "timeline-*.json")))
    assert traces == [f"timeline-{i}.json" for i in (2, 3, 4, 5)]
    events = json.load(open(os.path.join(str(tmp_path), traces[0])))["traceEvents"]
    processes = sorted(e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name")
    assert processes[0].endswith("CPU:0 Compute") and processes[1].endswith("CPU:0 Tensors")
    assert {"AssignAdd"} <= {e["name"] for e in events if e["ph"] == "X"}
    tags = [e.tagged_run_metadata.tag for p in glob.glob(os.path.join(str(tmp_path), "events.*"))
            for e in tf.train.summary_iterator(p) if e.HasField("tagged_run_metadata")]
    assert tags == ["step_2", "step_3", "step_4", "step_5"]
