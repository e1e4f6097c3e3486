"""Hooks that write for TensorBoard: ``SummarySaverHook`` (summaries every N steps or seconds) and
``ProfilerHook`` (a Chrome trace of a traced step, ``timeline-<step>.json``, and its RunMetadata).

Both follow TensorFlow's ``basic_session_run_hooks``: a SessionLog START before the first
summaries, global steps read after the run that triggers, writers shared per directory through
``FileWriterCache``.

Example:
    >>> import glob, tempfile
    >>> import sparseflow as tf
    >>> logdir = tempfile.mkdtemp()
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     summary = tf.summary.scalar("x", tf.constant(2.0))
    ...     hook = tf.train.SummarySaverHook(save_steps=2, output_dir=logdir, summary_op=tf.summary.merge_all())
    ...     train = tf.assign_add(step, 1)
    ...     with tf.train.MonitoredSession(hooks=[hook]) as sess:
    ...         for _ in range(5):
    ...             _ = sess.run(train)
    >>> events = list(tf.train.summary_iterator(glob.glob(logdir + "/events.*")[0]))
    >>> [(e.step, e.summary.value[0].simple_value) for e in events if e.HasField("summary")]
    [(1, 2.0), (3, 2.0), (5, 2.0)]
"""

from __future__ import annotations

import os

from sparseflow._src.framework.proto import config_pb2, event_pb2
from sparseflow._src.runtime.timeline import Timeline
from sparseflow._src.training.optimizer.training_util import get_global_step
from sparseflow._src.training.session.basic_hooks import SecondOrStepTimer
from sparseflow._src.training.session.session_run_hook import SessionRunArgs, SessionRunHook
from sparseflow._src.training.summary.writer import FileWriterCache

__all__ = ["SummarySaverHook", "ProfilerHook"]


def _global_step(hook_name):
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


class SummarySaverHook(SessionRunHook):
    """Runs ``summary_op`` (or the scaffold's) every ``save_steps`` steps or ``save_secs`` seconds and
    writes the result to ``summary_writer`` (or the FileWriter of ``output_dir``)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _global_step("SummarySaverHook")

    def before_run(self, run_context):
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests = {"global_step": self._global_step_tensor}
        summary_ops = self._summary_ops() if self._request_summary else None
        if summary_ops:
            requests["summary"] = summary_ops
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()

    def _summary_ops(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return None
        return list(op) if isinstance(op, (list, tuple)) else [op]


class ProfilerHook(SessionRunHook):
    """Traces one step every ``save_steps`` steps or ``save_secs`` seconds: writes its Chrome trace to
    ``output_dir/timeline-<global step>.json`` and its RunMetadata (tag ``step_<global step>``) to the
    events file of ``output_dir``."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True, show_memory=False):
        self._output_file = os.path.join(os.fspath(output_dir), "timeline-{}.json")
        self._output_dir = os.fspath(output_dir)
        self._file_writer = None
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._next_step = None
        self._global_step_tensor = _global_step("ProfilerHook")
        self._file_writer = FileWriterCache.get(self._output_dir)

    def before_run(self, run_context):
        self._request_summary = self._next_step is not None and self._timer.should_trigger_for_step(self._next_step)
        options = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE) if self._request_summary \
            else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context, run_values):
        stale = int(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale)
        global_step = stale + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            trace = Timeline(run_values.run_metadata.step_stats).generate_chrome_trace_format(
                show_dataflow=self._show_dataflow, show_memory=self._show_memory)
            with open(self._output_file.format(global_step), "w") as f:
                f.write(trace)
            self._file_writer.add_run_metadata(run_values.run_metadata, f"step_{global_step}")
        self._next_step = global_step + 1
