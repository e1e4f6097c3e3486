"""The dense half of an all-reduce training step: gradients averaged over the workers in buckets
that start while the backward pass still runs, then applied by the wrapped optimizer to every
worker's own copy of the variables (``MultiWorkerMirroredStrategy``, ``HybridStrategy``).

``AllReduceOptimizer(opt, strategy)`` is what ``strategy.wrap_optimizer(opt)`` returns. Its step:

1. **Buckets.** The gradients, last variable first (the backward pass computes them in about that
   order), are packed into buckets of at most ``bucket_bytes`` (one dtype each; a larger gradient
   is a bucket of its own). Each bucket is one ``CollectiveReduceStart`` (the bucket's tensors
   fused into one buffer, mean over the workers) and one ``CollectiveReduceDone``: the master
   orders a Start as early as its gradients allow and a Done as late as it can, so a bucket's ring
   runs while the rest of the backward pass computes (``RunMetadata`` step stats show each Start
   before the backward ops that follow it).
2. **Dense update.** ``opt.apply_gradients`` on the averaged gradients: every worker applies the
   same update to bit-identical copies (the all-reduce gives every member the same bits), and
   increments its own copy of the global step.
3. **Tables** (the strategy's ``table_update``): synchronous by key (mirrored) or pushed
   asynchronously (hybrid); its ops may hold back the last bucket (``before_last_bucket``).

Used through ``sparseflow.embedding.minimize(loss, strategy.wrap_optimizer(opt), global_step)``
(dense variables and tables in one step) or ``opt.minimize(loss)`` (dense variables only).

Example (one worker: the buckets of a small model)::

    >>> import sparseflow as tf
    >>> from sparseflow._src.distributed.cluster_resolver import SimpleClusterResolver
    >>> from sparseflow._src.distributed.launcher import free_ports
    >>> from sparseflow._src.training.distribute.mirrored_strategies import MultiWorkerMirroredStrategy
    >>> spec = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{free_ports(1)[0]}"]})
    >>> s = MultiWorkerMirroredStrategy(SimpleClusterResolver(spec, task_type="worker", task_id=0), start_server=False,
    ...                                 bucket_bytes=64)
    >>> with tf.Graph().as_default() as g:
    ...     with s.scope():
    ...         w1, w2 = tf.Variable(tf.ones([4, 4])), tf.Variable(tf.ones([4]))
    ...         train = s.wrap_optimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(
    ...             tf.reduce_sum(tf.matmul(tf.ones([1, 4]), w1) + w2))
    ...     sorted(op.type for op in g.get_operations() if op.type.startswith("CollectiveReduce"))
    ['CollectiveReduceDone', 'CollectiveReduceDone', 'CollectiveReduceStart', 'CollectiveReduceStart']
"""

from __future__ import annotations

from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.grad.grad_func_graph import densify
from sparseflow._src.ops import collective_ops, core_ops, state_ops
from sparseflow._src.training.optimizer.optimizer import Optimizer

__all__ = ["AllReduceOptimizer", "all_reduce_in_buckets", "plan_buckets"]


def plan_buckets(grads_and_vars, bucket_bytes: int) -> list[list[int]]:
    """Indices into ``grads_and_vars`` (gradient not None), last first, packed into buckets of at
    most ``bucket_bytes`` of one dtype each."""
    buckets, size, dtype = [], 0, None
    for i in reversed(range(len(grads_and_vars))):
        g, v = grads_and_vars[i]
        if g is None:
            continue
        shape = v.get_shape()
        if not shape.is_fully_defined():
            raise ValueError(f"All-reduce training needs variables of a fully defined shape; {v.name} has {shape}.")
        nbytes = shape.num_elements() * v.dtype.base_dtype.size
        d = v.dtype.base_dtype
        if not buckets or d != dtype or (size and size + nbytes > bucket_bytes):
            buckets.append([])
            size, dtype = 0, d
        buckets[-1].append(i)
        size += nbytes
    return buckets


def all_reduce_in_buckets(grads_and_vars, group_size: int, group_key: int, instance_keys, bucket_bytes: int,
                          timeout: float = 0, last_bucket_deps=(), device=None):
    """``grads_and_vars`` with every gradient replaced by its mean over the group (None stays None;
    IndexedSlices are made dense). ``instance_keys``: a function giving the next instance key;
    ``last_bucket_deps``: ops the last bucket's Start waits for."""
    gv = [(densify(g), v) for g, v in grads_and_vars]
    out = list(gv)
    buckets = plan_buckets(gv, bucket_bytes)
    g = get_default_graph()
    for k, bucket in enumerate(buckets):
        deps = list(last_bucket_deps) if k == len(buckets) - 1 else []
        tensors = [gv[i][0] for i in bucket]
        shapes = [gv[i][1].get_shape() for i in bucket]
        with g.device(device), g.name_scope(f"all_reduce_bucket_{k}"), g.control_dependencies(deps):
            handle = collective_ops.all_reduce_start(tensors, group_size, group_key, instance_keys(), final_op="Div",
                                                     timeout=timeout)
            reduced = collective_ops.all_reduce_done(handle, tensors[0].dtype.base_dtype, shapes)
        for i, r in zip(bucket, reduced):
            out[i] = (r, gv[i][1])
    return out


class AllReduceOptimizer(Optimizer):
    """Wraps ``opt``: gradients averaged over the strategy's workers in buckets, then applied by
    ``opt`` on this worker (see the module docstring). Tables: the strategy's ``table_update``."""

    def __init__(self, opt, strategy, name=None):
        super().__init__(False, name or f"AllReduce{type(opt).__name__}")
        self._opt = opt
        self._strategy = strategy

    @property
    def wrapped(self):
        return self._opt

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's ``compute_gradients``."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The step for dense variables only (``opt.minimize(loss)``)."""
        return self.apply_gradients_with_tables(grads_and_vars, (), global_step=global_step, name=name)

    def apply_gradients_with_tables(self, grads_and_vars, grads_and_lookups, global_step=None, name=None):
        """One step: table updates (the strategy's), dense gradients all-reduced in buckets and applied.
        ``sparseflow.embedding.minimize(loss, this, global_step)`` calls it."""
        gv, pairs = list(grads_and_vars), list(grads_and_lookups)
        if not any(g is not None for g, _ in gv) and not pairs:
            raise ValueError(f"No gradients provided for any variable: {[str(v) for _, v in gv]}.")
        s = self._strategy
        g = get_default_graph()
        with g.name_scope(name or self._name):
            tables = s.table_update(pairs)
            reduced = all_reduce_in_buckets(gv, s.num_workers, s.group_key, s.next_instance_key, s.bucket_bytes,
                                            s.collective_timeout, tables.before_last_bucket, s.task_device)
        ops = list(tables.ops)
        dense = any(r is not None for r, _ in reduced)
        if not dense and tables.before_last_bucket:  # no bucket to wait for them: a barrier
            ops.append(s.step_barrier(tables.before_last_bucket))
        if dense:
            ops.append(self._opt.apply_gradients(reduced, global_step=global_step))
        elif global_step is not None:
            with g.control_dependencies(ops), g.colocate_with(global_step):
                ops = [state_ops.assign_add(global_step, 1).op]
        return core_ops.group(*ops, name=name or "all_reduce_train")

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

