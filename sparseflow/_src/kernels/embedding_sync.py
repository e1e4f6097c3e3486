"""Synchronous training of embedding tables: gradients accumulated by key per global step, applied once.

With ``tf.train.SyncReplicasOptimizer`` a table's rows are trained like its dense variables:

1. every worker's step sends its row gradients (keys, grads, counts, clicks) tagged with its local
   step to the table part that owns the keys: :meth:`TableGradAccumulator.accumulate`. A push
   computed at a step the part has already applied (``local_step < global_step``) is stale: it
   is dropped and counted (``stale_pushes`` in the table's stats), as TensorFlow's accumulators
   drop stale dense gradients;
2. the chief's synchronous update (:func:`apply_accumulated`) waits until ``num_required``
   pushes are in, sums them by key, divides by the number of pushes (the average over the
   replicas, as for dense gradients: N workers with batch B give the update of one worker with
   batch N*B for a mean loss), applies that once with the table's own optimizer (the show and
   click counters get the sums) and advances the part's step by one;
3. :meth:`TableGradAccumulator.set_global_step` (the chief's init) says where the steps start.

The accumulator of a table part hangs off its :class:`EmbeddingTableResource`
(``res.grad_accumulator``), so the in-process ops (this module's kernels), a parameter server's
``TableAccumulate`` / ``TableApplyAccumulated`` RPCs and the table's stats all see the same one.
Waiting follows blocking.py: it notices cancellation and the step's deadline within
``POLL_SECONDS``.

Example:
    >>> import numpy as np
    >>> from sparseflow._src.kernels.embedding_table import EmbeddingTableResource, TableSpec
    >>> t = EmbeddingTableResource("t", TableSpec(dim=1, optimizer="sgd", optimizer_params=(),
    ...                                            initializer="constant", initializer_params=(0.0,)))
    >>> _ = t.pull(np.array([1, 2], np.uint64))
    >>> acc = accumulator_of(t)
    >>> acc.accumulate(0, np.array([1, 2], np.uint64), np.array([[2.0], [4.0]], np.float32))
    True
    >>> acc.accumulate(0, np.array([1], np.uint64), np.array([[4.0]], np.float32))
    True
    >>> apply_accumulated(t, None, 2, learning_rate=1.0)  # (pushes averaged, keys dropped)
    (2, 0)
    >>> t.pull(np.array([1, 2], np.uint64)).ravel().tolist()   # -(2+4)/2, -(4+0)/2
    [-3.0, -2.0]
    >>> acc.accumulate(0, np.array([1], np.uint64), np.array([[1.0]], np.float32)), acc.stale
    (False, 1)
"""

from __future__ import annotations

import threading

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.kernels.blocking import wait_until
from sparseflow._src.kernels.embedding_table import EmbeddingTableResource
from sparseflow._src.kernels.registry import register_kernel

__all__ = ["TableGradAccumulator", "accumulator_of", "apply_accumulated"]

_EMPTY_F = np.zeros(0, np.float32)
_lock = threading.Lock()


def _bad(msg):
    return errors.InvalidArgumentError(None, None, msg)


class TableGradAccumulator:
    """The pushes of one table part for its current synchronous step (see the module docstring)."""

    def __init__(self, table: EmbeddingTableResource):
        self.name = table.name
        self.dim = table.spec.dim
        self.global_step = 0
        self.stale = 0  # pushes dropped because their step had been applied already
        self.waiting = 0  # applies waiting for pushes right now
        self._pushes: list = []  # (keys, grads, counts or None, clicks or None) of this step
        self._cond = threading.Condition()

    @property
    def num_accumulated(self) -> int:
        with self._cond:
            return len(self._pushes)

    def _checked(self, keys, grads, counts, clicks):
        keys = EmbeddingTableResource._keys(keys)
        n = keys.shape[0]
        grads = np.asarray(grads)
        if grads.shape != (n, self.dim):
            raise _bad(f"Synchronous push to embedding table {self.name!r}: gradients of shape {list(grads.shape)} "
                       f"for {n} keys of dim {self.dim} (want [{n}, {self.dim}]).")
        out = [keys.copy(), np.array(grads, dtype=np.float32)]
        for what, arr in (("counts", counts), ("clicks", clicks)):
            arr = None if arr is None or np.size(arr) == 0 else np.asarray(arr, dtype=np.float32).reshape(-1)
            if arr is not None and arr.shape[0] != n:
                raise _bad(f"Synchronous push to embedding table {self.name!r}: {arr.shape[0]} {what} for {n} keys.")
            out.append(None if arr is None else arr.copy())
        return out

    def accumulate(self, local_step, keys, grads, counts=None, clicks=None) -> bool:
        """Adds one worker's push computed at ``local_step``; False (dropped, counted) when stale."""
        push = self._checked(keys, grads, counts, clicks)  # bad input is refused even when stale
        with self._cond:
            if int(local_step) < self.global_step:
                self.stale += 1
                logging.debug("Embedding table %r: dropped a stale push (local step %d < global step %d).",
                              self.name, int(local_step), self.global_step)
                return False
            self._pushes.append(push)
            self._cond.notify_all()
            return True

    def set_global_step(self, step) -> None:
        step = int(step)
        with self._cond:
            if step < self.global_step:
                logging.warning("Attempt to set the synchronous step of embedding table %r to %d, lower than its "
                                "current step %d.", self.name, step, self.global_step)
            self.global_step = step
            self._cond.notify_all()

    def take(self, ctx, num_required):
        """Waits for ``num_required`` pushes; returns ``(keys, mean grads, counts, clicks, n)`` over all
        ``n`` pushes in (duplicate keys not yet summed), empties the accumulator, advances its step."""
        num_required = int(num_required)
        if num_required < 1:
            raise _bad(f"Applying the synchronous step of embedding table {self.name!r}: num_required must be "
                       f"positive, got {num_required}.")
        with self._cond:
            self.waiting += 1
            try:
                wait_until(self._cond, lambda: len(self._pushes) >= num_required, ctx,
                           f"waiting for {num_required} pushes to embedding table {self.name!r} (it has "
                           f"{len(self._pushes)} for global step {self.global_step})")
            finally:
                self.waiting -= 1
            pushes, self._pushes = self._pushes, []
            self.global_step += 1
            self._cond.notify_all()
        n = len(pushes)
        keys = np.concatenate([p[0] for p in pushes])
        grads = np.concatenate([p[1] for p in pushes])
        grads *= np.float32(1.0 / n)
        counts = _merged([p[2] for p in pushes], [p[0].shape[0] for p in pushes], 1.0)
        clicks = _merged([p[3] for p in pushes], [p[0].shape[0] for p in pushes], 0.0)
        return keys, grads, counts, clicks, n


def _merged(parts, sizes, fill):
    """The per-key counters of all pushes in one vector (``fill`` for a push without them); None
    when no push had any."""
    if all(p is None for p in parts):
        return None
    return np.concatenate([np.full(n, fill, np.float32) if p is None else p for p, n in zip(parts, sizes)])


def accumulator_of(table: EmbeddingTableResource) -> TableGradAccumulator:
    """The one accumulator of a table part (made on first use)."""
    acc = table.grad_accumulator
    if acc is None:
        with _lock:
            acc = table.grad_accumulator
            if acc is None:
                acc = table.grad_accumulator = TableGradAccumulator(table)
    return acc


def apply_accumulated(table: EmbeddingTableResource, ctx, num_required, learning_rate) -> tuple[int, int]:
    """The chief's update of one table part: waits for ``num_required`` pushes, applies their average
    once with the table's optimizer. Returns (pushes averaged, distinct keys dropped for want of a row)."""
    keys, grads, counts, clicks, n = accumulator_of(table).take(ctx, num_required)
    dropped = table.push(keys, grads, counts, clicks, learning_rate=float(learning_rate))
    return n, dropped


# ---------------------------------------------------------------------------------------- kernels
@register_kernel("EmbeddingTableAccumulate")
def _accumulate(node):
    def compute(res, local_step, keys, grads, counts, clicks):
        accumulator_of(res).accumulate(local_step, keys, grads, counts, clicks)

    return compute


@register_kernel("EmbeddingTableApplyAccumulated", needs_context=True)
def _apply(node):
    def compute(ctx, res, num_required, learning_rate):
        apply_accumulated(res, ctx, num_required, learning_rate)

    return compute


@register_kernel("EmbeddingTableSetSyncStep")
def _set_step(node):
    def compute(res, global_step):
        accumulator_of(res).set_global_step(global_step)

    return compute
