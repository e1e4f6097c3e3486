"""Strategies with parameters on servers: separate ps tasks, or every worker serving a shard.

* ``ParameterServerStrategy``: the layout of TF1's ``replica_device_setter`` programs. ps tasks
  only serve (``serves_only``: ``join()``); dense variables are placed round-robin over them and
  every embedding table is sharded over all of them; workers train between-graph,
  asynchronously, or with ``sync=True`` through ``SyncReplicasOptimizer`` (one gradient of
  each worker per global step, table gradients summed by key on their shards).
* ``PsStrategy``: TensorNet's layout. There is no ps job: every worker also serves a shard of
  each table and a slice of the dense variables (round-robin over the workers), and trains
  asynchronously. Launched with ``sparseflow launch --ps 0 --workers N`` or ``mpiexec -n N``
  (``MPIClusterResolver`` with ``num_ps=0``). A worker that finishes keeps serving until the
  chief has checkpointed (``finish`` then ``release``).

Example (the cluster of a ``TF_CONFIG``; here one worker, in-process)::

    >>> import json, os, sparseflow as tf
    >>> from sparseflow._src.distributed.launcher import free_ports
    >>> cfg = {"cluster": {"worker": [f"127.0.0.1:{free_ports(1)[0]}"]}, "task": {"type": "worker", "index": 0}}
    >>> from sparseflow._src.distributed.cluster_resolver import TFConfigClusterResolver
    >>> s = PsStrategy(TFConfigClusterResolver(environ={"TF_CONFIG": json.dumps(cfg)}))
    >>> with tf.Graph().as_default():
    ...     with s.scope():
    ...         v = tf.Variable([1.0], name="v")
    ...     v.device
    '/job:worker/task:0'
    >>> s.server.stop()
"""

from __future__ import annotations

from sparseflow._src.training.device_setter import replica_device_setter
from sparseflow._src.training.distribute.strategy import Strategy
from sparseflow._src.training.session.session_run_hook import SessionRunHook

__all__ = ["ParameterServerStrategy", "PsStrategy"]


class ParameterServerStrategy(Strategy):
    """Separate ps tasks (see the module docstring). ``sync``: synchronous steps through
    ``tf.train.SyncReplicasOptimizer`` aggregating one gradient per worker.

    With ``sync`` no token is handed out before the first step (``init_tokens`` = 0; TensorFlow's
    hook default gives one per worker): every worker's gradient of global step s is then computed
    from the parameters after step s - 1, so N workers with batch B train as one process with batch
    N*B, and no gradient is computed twice from the initial parameters and dropped as stale."""

    init_tokens = 0  # tokens in the queue before the first step (see the class docstring)

    def __init__(self, cluster_resolver=None, sync=False, **kwargs):
        self.sync = bool(sync)
        self._sync_optimizer = None
        self._coord = self._steps_session = None  # the chief's synchronous steps (``_start_sync_steps``)
        super().__init__(cluster_resolver, **kwargs)

    def _check_cluster(self):
        if "ps" not in self.cluster_spec.jobs or not self.cluster_spec.num_tasks("ps"):
            raise ValueError("ParameterServerStrategy needs ps tasks in the cluster (a 'ps' job); for workers that "
                             "serve the parameters themselves use PsStrategy")

    def device_function(self):
        return replica_device_setter(cluster=self.cluster_spec, worker_device=self.task_device)

    def _barrier_device(self) -> str:
        return "/job:ps/task:0"

    def wrap_optimizer(self, optimizer):
        if not self.sync:
            return optimizer
        from sparseflow._src.training.optimizer.sync_replicas_optimizer import SyncReplicasOptimizer

        n = self.num_workers
        self._sync_optimizer = SyncReplicasOptimizer(optimizer, replicas_to_aggregate=n, total_num_replicas=n)
        return self._sync_optimizer

    def session_hooks(self) -> list:
        if self._sync_optimizer is None:
            return []
        return [_SyncStepsHook(self)]

    def _barrier_ops(self):
        first = self._barrier is None
        ops = super()._barrier_ops()
        if first and self._sync_optimizer is not None:
            # A worker that leaves may strand others waiting for a token of a step that will not
            # come: it hands out one token per worker (their gradients are then stale and dropped).
            self._release_tokens = self._sync_optimizer.get_init_tokens_op(self.num_workers)
            self._first_tokens = self._sync_optimizer.get_init_tokens_op(self.init_tokens)
        return ops

    def initialize(self, sess, init_op=None, timeout: float = 600.0) -> None:
        """``Strategy.initialize``; with ``sync`` also what the sync optimizer's session hook does: the
        local step from the global step, and on the chief the accumulators' step, the first tokens and
        the thread applying each aggregated step (stopped by ``finish``)."""
        super().initialize(sess, init_op, timeout)
        if self._sync_optimizer is not None:
            self._start_sync_steps(sess)

    def _start_sync_steps(self, sess) -> None:
        """The session-start part of synchronous training. The chief applies the aggregated steps in a
        thread of a session of its own, which ``finish`` closes once every worker is done: that
        cancels the thread's wait for gradients of a step no worker will run (a training session's
        close would otherwise wait out its grace period for it)."""
        from sparseflow._src.runtime.session import Session
        from sparseflow._src.training.session.coordinator import Coordinator

        opt = self._sync_optimizer
        self._barrier_ops()
        if not self.is_chief:
            sess.run(opt.local_step_init_op)
            return
        self._stop_sync_steps(60.0, report=False)  # a training session re-created after an error restarts them
        sess.run(opt.chief_init_op)
        sess.run(self._first_tokens)
        self._steps_session = Session(self.target, graph=sess.graph)
        self._coord = Coordinator()
        opt.get_chief_queue_runner().create_threads(self._steps_session, coord=self._coord, daemon=True, start=True)

    def _stop_sync_steps(self, timeout: float, report: bool = True) -> None:
        """Stops the chief's steps; raises the error that stopped them first, if any (``report``)."""
        coord, session = self._coord, self._steps_session
        if coord is None:
            return
        self._coord = self._steps_session = None
        coord.request_stop()
        session.close()  # cancels the pending step on every task
        try:
            coord.join(stop_grace_period_secs=timeout, ignore_live_threads=True)
        except Exception:
            if report:
                raise

    def _wait_for_workers(self, sess, timeout: float) -> None:
        self._barrier_ops()
        if self._sync_optimizer is not None:
            sess.run(self._release_tokens)
        super()._wait_for_workers(sess, timeout)
        self._stop_sync_steps(timeout)  # the chief: every worker is done, no step is left to apply


class _SyncStepsHook(SessionRunHook):
    """``ParameterServerStrategy(sync=True)``'s hook in its training session: the sync optimizer's
    session start, with the chief's steps applied in the strategy's own session (``finish`` stops them)."""

    def __init__(self, strategy):
        self._strategy = strategy

    def after_create_session(self, session, coord):
        self._strategy._start_sync_steps(session)


class PsStrategy(Strategy):
    """Every worker serves a shard of the tables and a slice of the dense variables, and trains
    asynchronously (see the module docstring)."""

    def _check_cluster(self):
        if "ps" in self.cluster_spec.jobs and self.cluster_spec.num_tasks("ps"):
            raise ValueError("PsStrategy has no ps job (every worker serves a shard): launch with --ps 0, or use "
                             "ParameterServerStrategy for separate ps tasks")

    def device_function(self):
        jobs = [j for j in self.TRAINING_JOBS if j in self.cluster_spec.jobs]
        if len(jobs) != 1:
            raise ValueError(f"PsStrategy shards over one job of workers; the cluster has {jobs}")
        return replica_device_setter(ps_tasks=self.cluster_spec.num_tasks(jobs[0]), ps_device=f"/job:{jobs[0]}",
                                     worker_device=self.task_device)
