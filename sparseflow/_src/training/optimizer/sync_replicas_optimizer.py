"""``tf.train.SyncReplicasOptimizer``: synchronous data-parallel training with parameter servers.

Every worker runs the same ``train_op`` on its own batches. How one global step happens:

1. each worker pushes its gradients into per-variable accumulators that live next to the
   variables (``ConditionalAccumulator``; ``SparseConditionalAccumulator`` for IndexedSlices
   gradients such as an embedding's, averaged row by row), tagged with its local step; gradients
   of an older step are dropped by the accumulator (stale);
2. the worker then waits for a token from the shared ``sync_token_q`` queue;
3. the chief's queue runner (``get_chief_queue_runner``) takes the average of
   ``replicas_to_aggregate`` gradients from every accumulator (waiting for them), applies it with
   the wrapped optimizer, increments ``global_step``, and puts ``max(total_num_replicas,
   replicas_to_aggregate)`` tokens holding the new global step into the queue;
4. each worker takes one token and makes its value its local step (``sync_rep_local_step``, a
   local variable), then computes the next gradients.

With ``total_num_replicas > replicas_to_aggregate`` the slowest workers are backups: the step
goes on with the first gradients in, and theirs arrive stale and are dropped.

Embedding tables take part through ``sparseflow.embedding.minimize(loss, sync_opt, global_step)``
(which calls :meth:`SyncReplicasOptimizer.apply_gradients_with_tables`): each worker's row
gradients are accumulated by key on the table part (or parameter server shard) owning them, and
the chief's update applies their average once per step with the table's own optimizer, before the
tokens go out (sparseflow/_src/embedding/sync.py).

The accumulators and the token queue are shared by name (``<var name>/grad_accum``,
``sync_token_q``), so every worker's graph, built the same way, uses the same ones on the
parameter servers. ``make_session_run_hook(is_chief)`` sets everything up in a
MonitoredTrainingSession: local step initialization, the chief's initial tokens and queue runner.

Example (one process, two workers simulated by two threads of one session)::

    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                         replicas_to_aggregate=2)
    train_op = opt.minimize(loss, global_step=global_step)
    hook = opt.make_session_run_hook(is_chief=True)
    with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
        ...  # every worker thread: sess.run(train_op, feed_dict=its_batch)
"""

from __future__ import annotations

from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.graph import GraphKeys, get_default_graph, name_scope
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.ops import array_fill_ops, core_ops, state_ops
from sparseflow._src.ops.accumulator_ops import ConditionalAccumulator, SparseConditionalAccumulator
from sparseflow._src.ops.queue_ops import FIFOQueue
from sparseflow._src.ops.variables import Variable, global_variables, report_uninitialized_variables
from sparseflow._src.training.optimizer.optimizer import Optimizer
from sparseflow._src.training.session import session_manager
from sparseflow._src.training.session.queue_runner import QueueRunner
from sparseflow._src.training.session.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]


class SyncReplicasOptimizer(Optimizer):
    """Wraps ``opt`` so that each update averages the gradients of ``replicas_to_aggregate`` workers."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None, variable_averages=None,
                 variables_to_average=None, use_locking=False, name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        logging.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s", replicas_to_aggregate,
                     total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list: list = []
        self._table_sync = None  # the tables' part of the step (embedding/sync.py), when it trains tables
        self._local_step = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's ``compute_gradients``."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The worker's train op: push the gradients, then wait for the token of the next step.

        Also builds the chief's update (``get_chief_queue_runner``), ``local_step_init_op``,
        ``chief_init_op`` and ``ready_for_local_init_op``.
        """
        return self.apply_gradients_with_tables(grads_and_vars, (), global_step=global_step, name=name)

    def apply_gradients_with_tables(self, grads_and_vars, grads_and_lookups, global_step=None, name=None):
        """``apply_gradients`` whose synchronous step also trains embedding tables: ``grads_and_lookups``
        are (gradient, ``sparseflow.embedding.Lookup``) pairs (``sparseflow.embedding.compute_gradients``).
        Each worker accumulates its row gradients before it waits for its token; the chief applies their
        average per table part, then releases the tokens. ``sparseflow.embedding.minimize(loss, self,
        global_step)`` calls this."""
        grads_and_vars = list(grads_and_vars)
        grads_and_lookups = list(grads_and_lookups)
        if not grads_and_vars and not grads_and_lookups:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        g = get_default_graph()
        self._global_step = global_step
        train_ops, aggregated_grads, var_list = [], [], []
        local_anchor = core_ops.no_op()  # on the worker: the local step must stay off the parameter servers
        with g.colocate_with(local_anchor):
            self._local_step = Variable(initial_value=0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                                        dtype=global_step.dtype.base_dtype, name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

        with name_scope(None, self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                with g.device(var.device):
                    if grad is None:
                        aggregated_grads.append(None)  # passed through: the variable is not updated
                        continue
                    if isinstance(grad, Tensor):
                        accum = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                       shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                        aggregated_grads.append(accum.take_grad(self._replicas_to_aggregate))
                    elif isinstance(grad, IndexedSlices):
                        accum = SparseConditionalAccumulator(grad.dtype, shape=(), shared_name=var.name + "/grad_accum")
                        train_ops.append(accum.apply_indexed_slices_grad(grad, local_step=self._local_step))
                        aggregated_grads.append(accum.take_indexed_slices_grad(self._replicas_to_aggregate))
                    else:
                        raise ValueError(f"Unknown grad type! {type(grad).__name__} for {var.name}")
                    self._accumulator_list.append((accum, var.device))

            table_update = None
            if grads_and_lookups:
                from sparseflow._src.embedding.sync import TableSyncStep

                self._table_sync = TableSyncStep(grads_and_lookups)
                train_ops.append(self._table_sync.accumulate(self._local_step))
                table_update = self._table_sync.apply(self._replicas_to_aggregate)
                chief_init_ops.append(self._table_sync.set_global_step(global_step))

            with g.device(global_step.device), name_scope(""):
                if var_list:
                    update_op = self._opt.apply_gradients(zip(aggregated_grads, var_list), global_step)
                else:  # tables only: the step ends with their update
                    with g.control_dependencies([table_update]):
                        update_op = state_ops.assign_add(global_step, 1)
                released_after = [update_op] if table_update is None else [update_op, table_update]
                self._sync_token_queue = FIFOQueue(-1, global_step.dtype.base_dtype, shapes=(), name="sync_token_q",
                                                   shared_name="sync_token_q")
                with g.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = state_ops.assign(self._local_step, token)
                with g.control_dependencies(released_after):
                    tokens = array_fill_ops.fill([self._tokens_per_step], global_step)
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with g.control_dependencies([sync_op]), name_scope(""):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                self._chief_queue_runner = QueueRunner(self._sync_token_queue, [sync_op])
            for accum, dev in self._accumulator_list:
                with g.device(dev):
                    chief_init_ops.append(accum.set_global_step(global_step, name="SetGlobalStep"))
            self.chief_init_op = core_ops.group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self):
        """The QueueRunner the chief runs: it applies the averaged gradients and hands out tokens."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens=-1):
        """The op that puts ``num_tokens`` tokens (default ``replicas_to_aggregate``) in the token queue,
        run once by the chief at the start; at least ``replicas_to_aggregate - total_num_replicas``
        are needed for the first step to finish when there are fewer workers than that."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) vs {tokens_needed} "
                             f"(needed)")
        if num_tokens <= 0:
            return core_ops.no_op(name="no_init_tokens")
        g = get_default_graph()
        with g.device(self._global_step.device), name_scope(""):
            tokens = array_fill_ops.fill([num_tokens], self._global_step)
            return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A SessionRunHook that initializes the local step, and on the chief the accumulators' global
        steps, the initial tokens and the chief queue runner, when a monitored session is created."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        ok, msg = session_manager._ready(self._ready_for_local_init_op, session,
                                         "Model is not ready for SyncReplicasOptimizer local init.")
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                               f"Init op: {self._local_init_op.name}, error: {msg}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
