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

__all__ = ["ParameterServerStrategy", "PsStrategy"]


class ParameterServerStrategy(Strategy):
    """Separate ps tasks (see the module docstring). ``sync``: synchronous steps through
    ``tf.train.SyncReplicasOptimizer`` aggregating one gradient per worker."""

    def __init__(self, cluster_resolver=None, sync=False, **kwargs):
        self.sync = bool(sync)
        self._sync_optimizer = None
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
        return [self._sync_optimizer.make_session_run_hook(self.is_chief)]

    def _barrier_ops(self):
        first = self._barrier is None
        ops = super()._barrier_ops()
        if first and self._sync_optimizer is not None:
            # A worker that leaves may strand others waiting for a token of a step that will not
            # come: it hands out one token per worker (their gradients are then stale and dropped).
            self._release_tokens = self._sync_optimizer.get_init_tokens_op(self.num_workers)
        return ops

    def finish(self, sess, timeout: float = 600.0) -> None:
        self._barrier_ops()
        if self._sync_optimizer is not None:
            sess.run(self._release_tokens)
        super().finish(sess, timeout)


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
