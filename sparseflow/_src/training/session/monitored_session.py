"""Monitored sessions: a training loop's session with hooks, initialization/restore and recovery.

``MonitoredTrainingSession(checkpoint_dir=..., hooks=[...])`` is the usual entry point::

    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=[tf.train.StopAtStepHook(1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)

On creation it calls every hook's ``begin``, finalizes the graph (Scaffold), makes a session that
is restored from the newest checkpoint of ``checkpoint_dir`` (or initialized), starts the graph's
queue runners (QUEUE_RUNNERS collection) under the session's Coordinator, then calls
``after_create_session``; closing stops the coordinator and joins the runners' threads. Each
``run`` merges the hooks' fetches, feeds and options with the caller's. A hook's ``request_stop``
ends the loop; a clean exit calls every hook's ``end`` (CheckpointSaverHook saves there).
AbortedError / UnavailableError during a run (a lost parameter server or worker) close the
session and make a new one, restored from the checkpoint.
OutOfRangeError (end of input) ends the ``with`` block quietly.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     inc = tf.assign_add(step, 1)
    ...     with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
    ...         while not sess.should_stop():
    ...             n = sess.run(inc)
    >>> int(n)
    3
"""

from __future__ import annotations

import inspect

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.proto.config_pb2 import RunMetadata, RunOptions
from sparseflow._src.training.session import basic_hooks, summary_hooks
from sparseflow._src.training.session.coordinator import Coordinator
from sparseflow._src.training.session.queue_runner import start_queue_runners
from sparseflow._src.training.session.scaffold import Scaffold
from sparseflow._src.training.session.session_manager import SessionManager
from sparseflow._src.training.session.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

__all__ = ["SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator", "MonitoredSession",
           "SingularMonitoredSession", "MonitoredTrainingSession"]

_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
USE_DEFAULT = object()


class SessionCreator:
    """Makes the raw session of a MonitoredSession."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for {self}.")


class ChiefSessionCreator(SessionCreator):
    """The chief's session: restored from ``checkpoint_dir`` (or a checkpoint file) or initialized."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None, checkpoint_filename_with_path=None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op, local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op, ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph())
        return self._session_manager

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path, config=self._config,
            init_op=self._scaffold.init_op, init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """A non-chief worker's session: waits until the chief has initialized or restored the model."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        sm = SessionManager(local_init_op=self._scaffold.local_init_op,
                            local_init_feed_dict=self._scaffold.local_init_feed_dict,
                            ready_op=self._scaffold.ready_op,
                            ready_for_local_init_op=self._scaffold.ready_for_local_init_op, graph=get_default_graph())
        return sm.wait_for_session(self._master, config=self._config, max_wait_secs=self._max_wait_secs)


class _StepContext:
    """What ``run_step_fn``'s function gets: the raw ``session`` and ``run_with_hooks``."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        raise StopIteration("step_fn has requested the iterations to stop.")


class _WrappedSession:
    """A session wrapper with a stop flag; subclasses add behaviour around ``run``."""

    def __init__(self, sess):
        self._sess = sess

    @property
    def graph(self):
        return self._sess.graph

    @property
    def sess_str(self):
        return self._sess.sess_str

    def should_stop(self) -> bool:
        if self._check_stop():
            return True
        return self._sess.should_stop() if self._sess is not None and hasattr(self._sess, "should_stop") else False

    def _check_stop(self) -> bool:
        return False

    def close(self):
        if self._sess is not None:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as e:
                logging.error("An error occurred when attempting to close the session. This may be due to a "
                              "preemption in a connected worker or parameter server. Error: %s", e)
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        return step_fn(_StepContext(raw_session, run_with_hooks or self.run))


class _HookedSession(_WrappedSession):
    """Calls the hooks around each run and merges their fetches, feeds and options."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self):
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict), session=self._sess)
        options = options or RunOptions()
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata or RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(results=outputs[hook] if hook in outputs else None,
                                                         options=options, run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context, fetch_dict, user_feed_dict, options):
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict, "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user.")
        merged = dict(user_feed_dict)
        merged.update(hook_feeds)
        return merged


def _raise_if_feeds_intersect(a, b, message):
    common = set(a) & set(b)
    if common:
        raise RuntimeError(f"{message} Conflict(s): {sorted(str(c) for c in common)}")


def _merge_run_options(options, incoming):
    options.trace_level = max(options.trace_level, incoming.trace_level)
    if incoming.timeout_in_ms:
        options.timeout_in_ms = min(options.timeout_in_ms or incoming.timeout_in_ms, incoming.timeout_in_ms)
    options.output_partition_graphs = options.output_partition_graphs or incoming.output_partition_graphs
    options.report_tensor_allocations_upon_oom = (options.report_tensor_allocations_upon_oom
                                                  or incoming.report_tensor_allocations_upon_oom)


class _CoordinatedSession(_WrappedSession):
    """Stops when the coordinator does; closing stops the coordinator and joins its threads."""

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self):
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self):
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True)
        finally:
            super().close()


class _RecoverableSession(_WrappedSession):
    """Re-creates the session (restoring the checkpoint) after AbortedError / UnavailableError."""

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised while a session was being created. This may be due to a "
                             "preemption of a connected worker or parameter server. A new session will be created. "
                             "Error: %s", e)

    def _check_stop(self):
        if self._sess is None:
            return True
        try:
            return self._sess.should_stop()
        except _PREEMPTION_ERRORS as e:
            logging.info("An error was raised while considering whether the session is complete. This may be due "
                         "to a preemption in a connected worker or parameter server. The current session will be "
                         "closed and a new session will be created. Error: %s", e)
            self.close()
            self._sess = self._create_session()
            return False

    def should_stop(self):
        return self._check_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if self._sess is None:
                    self._sess = self._create_session()
                return self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised. This may be due to a preemption in a connected worker or "
                             "parameter server. The current session will be closed and a new session will be "
                             "created. Error: %s", e)
                self.close()

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        while True:
            try:
                if self._sess is None:
                    self._sess = self._create_session()
                return self._sess.run_step_fn(step_fn, raw_session, self._sess.run)
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised while running step_fn: %s. A new session will be created.", e)
                self.close()


class _CoordinatedSessionCreator(SessionCreator):
    """Raw session + Coordinator + hooks' after_create_session, wrapped as hooked and coordinated."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.coord = None
        self.tf_sess = None

    def create_session(self):
        self.tf_sess = self._session_creator.create_session()
        self.coord = Coordinator()
        start_queue_runners(sess=self.tf_sess, coord=self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


class _MonitoredSession:
    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(session_creator or ChiefSessionCreator(), self._hooks,
                                                               stop_grace_period_secs)
        try:
            if should_recover:
                self._sess = _RecoverableSession(self._coordinated_creator)
            else:
                self._sess = self._coordinated_creator.create_session()
        except BaseException:
            if not self._graph_was_finalized:
                self._graph._unsafe_unfinalize()
            raise

    @property
    def graph(self):
        return self._graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs ``fetches`` with the hooks' additions; returns the caller's fetch values."""
        return self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)

    def run_step_fn(self, step_fn):
        """Calls ``step_fn(step_context)``: ``step_context.session`` is the raw session,
        ``step_context.run_with_hooks(...)`` a run with hooks, ``request_stop()`` ends the loop."""
        params = [p for p in inspect.signature(step_fn).parameters]
        if params not in (["step_context"], ["self", "step_context"]):
            raise ValueError(f"`step_fn` may either have one `step_context` argument, or `self` and `step_context` "
                             f"arguments if it's an instance method. Got {tuple(params)} instead.")
        return self._sess.run_step_fn(step_fn, self._tf_sess(), run_with_hooks=None)

    def should_stop(self) -> bool:
        return self._sess is None or self._sess.should_stop()

    def close(self):
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None

    def _close_internal(self, exception_type=None):
        try:
            if not exception_type:
                for h in self._hooks:
                    h.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    self._graph._unsafe_unfinalize()

    def _is_closed(self) -> bool:
        return self._sess is None

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that runs hooks, initializes or restores the model, and recovers from preemption."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True, stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession for one process (a chief session creator, no recovery) with ``raw_session()``."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The underlying Session (runs without hooks)."""
        return self._tf_sess()


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession set up for training (TensorFlow 1.x ``tf.train.MonitoredTrainingSession``).

    The chief restores from / checkpoints to ``checkpoint_dir`` (every ``save_checkpoint_secs``,
    600 by default, or every ``save_checkpoint_steps``) and logs steps/sec every
    ``log_step_count_steps``; other workers wait for the chief's initialization. The chief writes
    the scaffold's summaries (``merge_all`` by default) to ``summary_dir`` (default:
    ``checkpoint_dir``) every ``save_summaries_steps`` (100 by default) or ``save_summaries_secs``.
    """
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir and log_step_count_steps and log_step_count_steps > 0:
        all_hooks.append(basic_hooks.StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))
    if summary_dir and ((save_summaries_steps and save_summaries_steps > 0)
                        or (save_summaries_secs and save_summaries_secs > 0)):
        all_hooks.append(summary_hooks.SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                                        save_secs=save_summaries_secs, output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0)
                           or (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(basic_hooks.CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                                         save_secs=save_checkpoint_secs, scaffold=scaffold,
                                                         save_graph_def=save_graph_def))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)
