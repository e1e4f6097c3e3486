"""A training task's place in a cluster, and how a model is laid out and trained on it.

A strategy is created once per process from a cluster resolver (``TF_CONFIG``, ``mpiexec``
ranks, TF1 flags: ``resolve_cluster``). It starts the task's ``tf.train.Server``, says whether
the task only serves (``serves_only``: a ps of ``ParameterServerStrategy``; call ``join()``) or
trains, places the model (``scope()``: a device function for variables and embedding tables),
wraps the dense optimizer (``wrap_optimizer``: e.g. ``SyncReplicasOptimizer`` for synchronous
steps), opens the training session (``training_session()``: a ``MonitoredTrainingSession`` on
the task's server, the chief checkpointing) and ends a run together (``finish()``: the chief
waits until every worker is done and writes the final checkpoint; ``release()``: then the others
may leave). ``initialize(sess)`` does for a plain
``tf.Session`` on ``target`` what the training session's scaffold does.

The strategies: ``ParameterServerStrategy`` and ``PsStrategy`` (ps_strategies.py: parameters on
servers), ``MultiWorkerMirroredStrategy`` and ``HybridStrategy`` (mirrored_strategies.py: dense
variables on every worker, gradients all-reduced; tables sharded over the workers).

A TF1-style program::

    strategy = sparseflow.distribute.ParameterServerStrategy()   # or PsStrategy(), HybridStrategy(), ...
    if strategy.serves_only:
        strategy.join()
    with tf.Graph().as_default():
        with strategy.scope():
            ...  # model, loss, global step
            train_op = embedding.minimize(loss, strategy.wrap_optimizer(tf.train.AdamOptimizer()), step)
        with strategy.training_session(checkpoint_dir="ckpt") as sess:
            while ...:
                sess.run(train_op, feed)
            strategy.finish(sess)          # the chief returns when every worker has finished, and checkpoints
            if strategy.is_chief:
                ...                        # evaluate with the final parameters
        strategy.release()                 # after the chief's final checkpoint: the others may stop
"""

from __future__ import annotations

import contextlib
import time

from sparseflow._src.distributed.resolve import resolve_cluster
from sparseflow._src.distributed.server import Server
from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.ops.queue_ops import FIFOQueue
from sparseflow._src.training.session.basic_hooks import CheckpointSaverHook

__all__ = ["Strategy"]


class Strategy:
    """Base class (see the module docstring). Subclasses give ``device_function()``, and may
    override ``wrap_optimizer``, ``session_hooks`` and ``serves_only``."""

    #: jobs whose tasks train (the first is the chief's job when there is no "chief" job)
    TRAINING_JOBS = ("chief", "worker")

    def __init__(self, cluster_resolver=None, server_config=None, start_server=True):
        resolver = cluster_resolver if cluster_resolver is not None else resolve_cluster()
        if resolver is None:
            raise ValueError(f"{type(self).__name__} needs a cluster: set TF_CONFIG (sparseflow launch does), run "
                             "under mpiexec, or pass a cluster resolver")
        self.cluster_resolver = resolver
        self.cluster_spec = resolver.cluster_spec()
        self.task_type, self.task_id = resolver.task_type, int(resolver.task_id or 0)
        if self.task_type not in self.cluster_spec.jobs:
            raise ValueError(f"task {self.task_type}:{self.task_id} is not in the cluster "
                             f"{self.cluster_spec.as_dict()}")
        self._check_cluster()
        self.server = Server(self.cluster_spec, job_name=self.task_type, task_index=self.task_id,
                             config=server_config, start=start_server)
        self._barrier = None
        self._checkpoint_hook = None  # the chief's, in training_session()

    # ------------------------------------------------------------------ the cluster
    def _check_cluster(self) -> None:
        """Raises ValueError when the cluster lacks a job the strategy needs."""

    @property
    def workers(self) -> list[str]:
        """The training tasks, chief first: ``["/job:chief/task:0", "/job:worker/task:0", ...]``."""
        out = []
        for job in self.TRAINING_JOBS:
            if job in self.cluster_spec.jobs:
                out += [f"/job:{job}/task:{i}" for i in self.cluster_spec.task_indices(job)]
        return out

    @property
    def num_workers(self) -> int:
        return len(self.workers)

    @property
    def task_device(self) -> str:
        return f"/job:{self.task_type}/task:{self.task_id}"

    @property
    def worker_index(self) -> int:
        """This task's position among the training tasks (0 is the chief); -1 for a serving task."""
        return self.workers.index(self.task_device) if self.task_device in self.workers else -1

    @property
    def is_chief(self) -> bool:
        return self.worker_index == 0

    @property
    def serves_only(self) -> bool:
        return self.worker_index < 0

    @property
    def target(self) -> str:
        """The session target of this task's server."""
        return self.server.target

    def join(self) -> None:
        """Serves until the process is stopped (a serving task's whole life)."""
        self.server.join()

    # ------------------------------------------------------------------ the model
    def device_function(self):
        """The device function of ``scope()`` (for ``tf.device`` / ``Graph.device``)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def scope(self):
        """Places what is built inside: variables and table shards where the strategy keeps them,
        the computation on this task."""
        with get_default_graph().device(self.device_function()):
            yield self

    def wrap_optimizer(self, optimizer):
        """The optimizer to train the dense variables with (``optimizer`` itself by default)."""
        return optimizer

    def session_hooks(self) -> list:
        """Hooks the training session needs (a sync optimizer's, for instance)."""
        return []

    # ------------------------------------------------------------------ a run
    def _barrier_device(self) -> str:
        return self.workers[0]

    def _barrier_ops(self):
        """(mark this worker done, wait for all the others, let the others go, wait to be let go),
        two queues on the barrier device."""
        if self._barrier is None:
            n = self.num_workers
            with get_default_graph().device(self._barrier_device()):
                done = FIFOQueue(n, dtypes.int32, shapes=[()], name="strategy_done", shared_name="strategy_done")
                leave = FIFOQueue(n, dtypes.int32, shapes=[()], name="strategy_leave", shared_name="strategy_leave")
                self._barrier = (done.enqueue(self.worker_index), done.dequeue_many(n - 1) if n > 1 else None,
                                 leave.enqueue_many([[0] * (n - 1)]) if n > 1 else None, leave.dequeue())
        return self._barrier

    def training_session(self, checkpoint_dir=None, hooks=None, save_checkpoint_steps=None,
                         save_checkpoint_secs=None, max_wait_secs=600.0, scaffold=None, **kwargs):
        """A ``MonitoredTrainingSession`` on this task's server: the chief initializes or restores
        from ``checkpoint_dir`` and checkpoints there; the others wait up to ``max_wait_secs``."""
        from sparseflow._src.training.session.monitored_session import MonitoredTrainingSession
        from sparseflow._src.training.session.scaffold import Scaffold

        self._barrier_ops()
        if save_checkpoint_steps is None and save_checkpoint_secs is None:
            save_checkpoint_secs = 600
        chief_hooks = list(kwargs.pop("chief_only_hooks", None) or [])
        self._checkpoint_hook = None
        if self.is_chief and checkpoint_dir and ((save_checkpoint_steps or 0) > 0 or (save_checkpoint_secs or 0) > 0):
            # the chief's saver hook is the strategy's, so that finish() can write the final checkpoint
            scaffold = scaffold if scaffold is not None else Scaffold()
            self._checkpoint_hook = _ChiefCheckpointHook(
                checkpoint_dir, save_secs=save_checkpoint_secs, save_steps=save_checkpoint_steps, scaffold=scaffold,
                save_graph_def=kwargs.get("save_graph_def", True))
            chief_hooks.insert(0, self._checkpoint_hook)
        return MonitoredTrainingSession(
            master=self.target, is_chief=self.is_chief, checkpoint_dir=checkpoint_dir if self.is_chief else None,
            scaffold=scaffold, hooks=self.session_hooks() + list(hooks or []), chief_only_hooks=chief_hooks,
            save_checkpoint_steps=None, save_checkpoint_secs=None,
            save_summaries_steps=None, save_summaries_secs=None, log_step_count_steps=None,
            max_wait_secs=max_wait_secs, **kwargs)

    def initialize(self, sess, init_op=None, timeout: float = 600.0) -> None:
        """For a plain ``tf.Session`` on ``target`` (no ``training_session``): the chief runs ``init_op``
        (default: initialize the global variables), the others wait until it has (polling,
        ``DeadlineExceededError`` after ``timeout`` seconds); every worker then initializes its local
        variables."""
        from sparseflow._src.ops.variables import (
            global_variables,
            global_variables_initializer,
            local_variables_initializer,
            report_uninitialized_variables,
        )

        with sess.graph.as_default():
            init = init_op if init_op is not None else global_variables_initializer()
            not_ready = report_uninitialized_variables(global_variables())
            local = local_variables_initializer()
        if self.is_chief:
            sess.run(init)
        else:
            deadline, pause = time.monotonic() + timeout, 0.05
            while len(sess.run(not_ready)):
                if time.monotonic() + pause > deadline:
                    raise errors.DeadlineExceededError(None, None, f"the chief did not initialize the model within "
                                                                   f"{timeout:g} s")
                time.sleep(pause)
                pause = min(2 * pause, 1.0)
        sess.run(local)

    def finish(self, sess, timeout: float = 600.0) -> None:
        """Marks this worker done; the chief returns once every worker is (``DeadlineExceededError``
        after ``timeout`` seconds), the others at once. The chief of a ``training_session`` that
        checkpoints then writes its final checkpoint: the state every worker left, which is what it
        evaluates next (the checkpoint of its own last step may predate another worker's last update:
        a hybrid worker's table push, an asynchronous worker's step, still landing on the chief's
        shards when the chief saved); the session's close does not write it again."""
        self._wait_for_workers(sess, timeout)
        if self.is_chief and self._checkpoint_hook is not None:
            self._checkpoint_hook.save_now()

    def _wait_for_workers(self, sess, timeout: float) -> None:
        """``finish`` but the final checkpoint: marks this worker done; the chief waits for the others."""
        mark, wait_all, _, _ = self._barrier_ops()
        if not self.is_chief:
            sess.run(mark)
        elif wait_all is not None:
            try:
                sess.run(wait_all, options=_timeout_options(timeout))
            except errors.DeadlineExceededError:
                raise errors.DeadlineExceededError(
                    None, None, f"not every worker finished within {timeout:g} s (the chief waits for "
                                f"{self.num_workers - 1})") from None

    def release(self, timeout: float = 600.0) -> None:
        """After ``finish``: the chief lets the other workers go; they wait here for it (their servers
        may hold state the chief's last checkpoint and evaluation read). A chief that has gone (its
        task unreachable, shutting down) has let them go too: when the barrier is on the chief's own
        task, it may leave before a worker has taken its token."""
        _, _, let_go, wait_for_chief = self._barrier_ops()
        if self.num_workers < 2:
            return
        from sparseflow._src.runtime.session import Session

        with Session(self.target, graph=get_default_graph()) as sess:
            if self.is_chief:
                sess.run(let_go)
                return
            try:
                sess.run(wait_for_chief, options=_timeout_options(timeout))
            except (errors.UnavailableError, errors.AbortedError, errors.CancelledError):
                if not self._barrier_device().startswith(self.workers[0]):
                    raise


class _ChiefCheckpointHook(CheckpointSaverHook):
    """The chief's ``CheckpointSaverHook`` in a strategy's training session, with ``save_now()``: a
    checkpoint of the session's current state at its global step (``Strategy.finish``). ``end`` then
    saves only when the global step has moved since."""

    _session = None

    def after_create_session(self, session, coord):
        self._session = session
        super().after_create_session(session, coord)

    def end(self, session):
        try:
            super().end(session)
        finally:
            self._session = None

    def save_now(self) -> None:
        if self._session is None:  # the session is closed (its end() saved)
            return
        step = int(self._session.run(self._global_step_tensor))
        self._timer.update_last_triggered_step(step)
        self._save(self._session, step)


def _timeout_options(seconds: float):
    from sparseflow._src.framework.proto.config_pb2 import RunOptions

    return RunOptions(timeout_in_ms=int(seconds * 1000))
