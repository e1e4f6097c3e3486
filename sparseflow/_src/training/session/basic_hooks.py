"""Standard session hooks (TensorFlow's ``basic_session_run_hooks``).

StopAtStepHook, CheckpointSaverHook (with CheckpointSaverListener), LoggingTensorHook,
NanTensorHook, StepCounterHook, FinalOpsHook, FeedFnHook and GlobalStepWaiterHook, plus the
SecondOrStepTimer they share. StepCounterHook and CheckpointSaverHook also write to the events
file of their directory, as TensorFlow's do (the summary hooks are in summary_hooks.py).

Example:
    >>> timer = SecondOrStepTimer(every_steps=10)
    >>> timer.should_trigger_for_step(0), timer.update_last_triggered_step(0)
    (True, (None, None))
    >>> timer.should_trigger_for_step(5), timer.should_trigger_for_step(10)
    (False, True)
"""

from __future__ import annotations

import os
import time

import numpy as np

from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.file_io import write_graph
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.proto import event_pb2, summary_pb2
from sparseflow._src.training.checkpoint.meta_graph import export_meta_graph
from sparseflow._src.training.optimizer.training_util import get_global_step
from sparseflow._src.training.session.session_run_hook import SessionRunArgs, SessionRunHook
from sparseflow._src.training.summary.writer import FileWriterCache

__all__ = ["SecondOrStepTimer", "StopAtStepHook", "CheckpointSaverListener", "CheckpointSaverHook",
           "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook", "StepCounterHook", "FinalOpsHook",
           "FeedFnHook", "GlobalStepWaiterHook"]


class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (exactly one of them)."""

    def __init__(self, every_secs=None, every_steps=None):
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step) -> bool:
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Records a trigger at ``step``; returns (seconds, steps) since the previous one (None, None first)."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time, self._last_triggered_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


class _NeverTriggerTimer(SecondOrStepTimer):
    def __init__(self):
        super().__init__(every_steps=1)

    def should_trigger_for_step(self, step):
        return False


def _as_graph_element(obj):
    """A tensor (or op) of the default graph from a Tensor or a name ("x" means "x:0")."""
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to current graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs (at least 2).")


def _require_global_step(hook_name):
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches ``last_step`` (or ``num_steps`` more steps)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _require_global_step("StopAtStepHook")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self._last_step:
            # The fetched value may predate this run's increment: check the current one.
            if int(run_context.session.run(self._global_step_tensor)) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Called around the saves of a CheckpointSaverHook; ``after_save`` returning True stops training."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session starts, every ``save_secs`` or ``save_steps``, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None, save_graph_def=True):
        logging.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._save_path = os.path.join(self._checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = listeners or []
        self._save_graph_def = save_graph_def

    def begin(self):
        self._global_step_tensor = _require_global_step("CheckpointSaverHook")
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def:
            graph = get_default_graph()
            write_graph(graph.as_graph_def(add_shapes=True), self._checkpoint_dir, "graph.pbtxt")
            saver = self._get_saver()
            self._summary_writer.add_graph(graph)
            self._summary_writer.add_meta_graph(export_meta_graph(graph=graph, saver_def=saver.saver_def if saver
                                                                  else None))
        # The checkpoint saved here is the state at step `global_step`.
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        stale = int(run_values.results)
        if self._timer.should_trigger_for_step(stale + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step) -> bool:
        for listener in self._listeners:
            listener.before_save(session, step)
        logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT,
                                                                  checkpoint_path=self._save_path), step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logging.info("A CheckpointSaverListener requested that training be stopped. listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the collection or "
                               f"provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one to use "
                               f"by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver


class LoggingTensorHook(SessionRunHook):
    """Logs ``tensors`` (names or Tensors; a dict gives tags) every N runs, every N seconds and/or at the end.

    The line is ``"tag = value, tag = value (0.123 sec)"`` (logged at INFO), or ``formatter(values)``.
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._timer = _NeverTriggerTimer() if only_at_end else SecondOrStepTimer(every_secs=every_n_secs,
                                                                                 every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, values):
        elapsed, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter:
            logging.info(self._formatter(values))
            return
        with np.printoptions(suppress=True):
            stats = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
        if elapsed is not None:
            logging.info("%s (%.3f sec)", stats, elapsed)
        else:
            logging.info("%s", stats)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class NanLossDuringTrainingError(RuntimeError):
    """Raised by NanTensorHook when the loss is NaN."""

    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Raises NanLossDuringTrainingError (or just stops, with ``fail_on_nan_loss=False``) on a NaN loss."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.any(np.isnan(run_values.results)):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logging.error(message)
                raise NanLossDuringTrainingError
            logging.warning(message)
            run_context.request_stop()


class StepCounterHook(SessionRunHook):
    """Logs the training speed, ``global_step/sec: <rate>``, every N steps or seconds."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None,
                 steps_per_run=1):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._output_dir = output_dir
        self._summary_writer = summary_writer
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._steps_per_run = steps_per_run
        self._last_global_step = None
        self._global_step_check_count = 0

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _require_global_step("StepCounterHook")
        self._summary_tag = self._global_step_tensor.op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        stale = int(run_values.results)
        if self._timer.should_trigger_for_step(stale + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time:
                    rate = elapsed_steps / elapsed_time
                    if self._summary_writer is not None:
                        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=self._summary_tag,
                                                                                       simple_value=rate)])
                        self._summary_writer.add_summary(summary, global_step)
                    logging.info("%s: %g", self._summary_tag, rate)
        if stale == self._last_global_step:
            self._global_step_check_count += 1
            if self._global_step_check_count % 20 == 0:
                self._global_step_check_count = 0
                logging.warning("It seems that global step (tf.train.get_global_step) has not been increased. "
                                "Current value (could be stable): %s vs previous value: %s. You could increase the "
                                "global step by passing tf.train.get_global_step() to Optimizer.apply_gradients or "
                                "Optimizer.minimize.", stale, self._last_global_step)
        else:
            self._global_step_check_count = 0
        self._last_global_step = stale


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` when the session ends; their values are in ``final_ops_values``."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)


class FeedFnHook(SessionRunHook):
    """Feeds ``feed_fn()`` (a feed dict) into every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches ``wait_until_step`` (non-chief workers)."""

    def __init__(self, wait_until_step, poll_secs=0.5):
        self._wait_until_step = wait_until_step
        self._poll_secs = poll_secs

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _require_global_step("GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started or self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        last_logged = None
        while True:
            current = int(run_context.session.run(self._global_step_tensor))
            if current >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current != last_logged:
                logging.info("Waiting for global step %d before starting training; now %d.", self._wait_until_step,
                             current)
                last_logged = current
            time.sleep(self._poll_secs)
