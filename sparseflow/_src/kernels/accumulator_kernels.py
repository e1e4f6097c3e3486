"""Gradient accumulators (TensorFlow's ConditionalAccumulator / SparseConditionalAccumulator) and
their CPU kernels.

An accumulator sums the gradients applied to it for its current *global step*; a gradient
computed at an older step (``local_step < global_step``) is stale and dropped without error.
``take`` waits until ``num_required`` gradients are in, returns their mean (``reduction_type``
"MEAN") or sum ("SUM"), empties the accumulator and advances its global step by one.

The sparse accumulator keeps (indices, values, per-element counts) and merges each new gradient
into them as TensorFlow does: one pass over both index lists, taking the smaller index first and
adding values whose indices are equal. For gradients with sorted, unique indices (what
``tf.unique`` / the optimizers' deduplication produce) that is the sorted union of indices with
each row averaged over the gradients that contain it; other index orders merge exactly as
TensorFlow's do. The dense and sparse ops with resource and ref handles share the kernels.

Example:
    >>> import numpy as np
    >>> from sparseflow._src.framework import dtypes
    >>> acc = DenseAccumulator("a", dtypes.float32, (2,), "MEAN")
    >>> acc.apply(0, np.array([1.0, 2.0], np.float32)); acc.apply(0, np.array([3.0, 4.0], np.float32))
    >>> acc.take(None, 2), acc.global_step
    (array([2., 3.], dtype=float32), 1)
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.kernels.blocking import wait_until
from sparseflow._src.kernels.jit_cache import cached_njit
from sparseflow._src.kernels.queue_resources import as_dims
from sparseflow._src.kernels.registry import register_kernel

__all__ = ["DenseAccumulator", "SparseAccumulator"]

_private_ids = itertools.count()


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def _fmt(dims) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


class _Accumulator:
    kind = "ConditionalAccumulator"

    def __init__(self, name: str, dtype, shape, reduction_type: str = "MEAN"):
        self.name = name
        self.dtype = dtype
        self.np_dtype = np.dtype(dtype.as_numpy_dtype)
        self.shape = as_dims(shape)  # None: unknown rank; None entries: unknown dims
        if reduction_type not in ("MEAN", "SUM"):
            raise _invalid(f"reduction_type must be MEAN or SUM, got {reduction_type!r}")
        self.reduction_type = reduction_type
        self.global_step = 0
        self.counter = 0
        self._cond = threading.Condition()

    def describe(self) -> dict:
        return {"type": self.kind, "dtype": self.dtype.name, "shape": self.shape, "reduction_type": self.reduction_type}

    def check_compatible(self, other: _Accumulator):
        mine, theirs = self.describe(), other.describe()
        for key in mine:
            if mine[key] != theirs[key]:
                raise _invalid(f"Shared accumulator '{self.name}' has {key} {mine[key]} but requested {key} was "
                               f"{theirs[key]}. Every graph sharing an accumulator (same shared_name) must create "
                               f"it with the same arguments.")

    def num_accumulated(self) -> np.int32:
        with self._cond:
            return np.int32(self.counter)

    def set_global_step(self, step) -> None:
        step = int(step)
        with self._cond:
            if step < self.global_step:
                logging.warning("Attempt to set %s '%s' to global step %d, lower than its current step %d.",
                                self.kind, self.name, step, self.global_step)
            self.global_step = step
            self._cond.notify_all()

    def _is_fresh(self, local_step) -> bool:
        if int(local_step) < self.global_step:
            logging.debug("%s '%s': dropped a stale gradient (local step %d < global step %d).", self.kind,
                          self.name, int(local_step), self.global_step)
            return False
        return True

    def _wait_for(self, ctx, num_required):
        num_required = int(num_required)
        if num_required <= 0:
            raise _invalid(f"Argument num_required must be positive, but was {num_required}")
        wait_until(self._cond, lambda: self.counter >= num_required, ctx,
                   f"waiting for {num_required} gradients in {self.kind} '{self.name}' (it has {self.counter} "
                   f"for global step {self.global_step})")

    def _finish_take(self):
        self.counter = 0
        self.global_step += 1
        self._cond.notify_all()

    def _divide(self, values, counts):
        if self.reduction_type == "SUM":
            return values
        if self.np_dtype.kind in "fc":
            return values / np.asarray(counts, dtype=self.np_dtype)
        return np.fix(values / counts).astype(self.np_dtype)


class DenseAccumulator(_Accumulator):
    """Sums dense gradients of one shape."""

    kind = "ConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type="MEAN"):
        super().__init__(name, dtype, shape, reduction_type)
        self._sum = None

    def apply(self, local_step, grad) -> None:
        with self._cond:
            if not self._is_fresh(local_step):
                return
            grad = np.asarray(grad, dtype=self.np_dtype)
            want = self._sum.shape if self.counter > 0 else self.shape
            if want is not None and (len(want) != grad.ndim or
                                     any(w is not None and w != g for w, g in zip(want, grad.shape))):
                raise _invalid(f"Shape mismatch: expected {_fmt(want)}, got {_fmt(grad.shape)}")
            self._sum = grad.copy() if self.counter == 0 else self._sum + grad
            self.counter += 1
            self._cond.notify_all()

    def take(self, ctx, num_required) -> np.ndarray:
        with self._cond:
            self._wait_for(ctx, num_required)
            out = self._divide(self._sum, self.counter)
            self._sum = None
            self._finish_take()
            return out


@cached_njit(nogil=True)
def _merge_positions(a, b):  # pragma: no cover - compiled
    """One merge pass over index lists ``a`` and ``b``: (indices, position in a or -1, in b or -1)."""
    na, nb = a.shape[0], b.shape[0]
    out = np.empty(na + nb, np.int64)
    pa = np.full(na + nb, -1, np.int64)
    pb = np.full(na + nb, -1, np.int64)
    i = j = o = 0
    while i < na and j < nb:
        if a[i] < b[j]:
            out[o] = a[i]
            pa[o] = i
            i += 1
        elif a[i] > b[j]:
            out[o] = b[j]
            pb[o] = j
            j += 1
        else:
            out[o] = a[i]
            pa[o] = i
            pb[o] = j
            i += 1
            j += 1
        o += 1
    while i < na:
        out[o] = a[i]
        pa[o] = i
        i += 1
        o += 1
    while j < nb:
        out[o] = b[j]
        pb[o] = j
        j += 1
        o += 1
    return out[:o], pa[:o], pb[:o]


class SparseAccumulator(_Accumulator):
    """Sums IndexedSlices gradients row by row, counting per row how many gradients had it."""

    kind = "SparseConditionalAccumulator"

    def __init__(self, name, dtype, shape, reduction_type="MEAN"):
        super().__init__(name, dtype, shape, reduction_type)
        self._indices = self._values = self._counts = None

    def _validate(self, indices, values, dense_shape, has_known_shape):
        shape = self.shape or ()
        if has_known_shape:
            if len(shape) > dense_shape.size:
                raise _invalid(f"Shape mismatch: expected shape rank at least {len(shape)}, got {dense_shape.size}")
            for i, want in enumerate(shape):
                if want is not None and want != dense_shape[i]:
                    raise _invalid(f"Shape mismatch: expected shape dim {i} to be {want}, got {dense_shape[i]}")
        if values.ndim == 0 or values.shape[0] != indices.shape[0]:
            raise _invalid(f"Expected {indices.shape[0]} non-empty input values, got "
                           f"{values.shape[0] if values.ndim else 0}")
        if shape and shape[0] is not None and indices.size:
            bad = np.flatnonzero(indices >= shape[0])
            if bad.size:
                raise _invalid(f"Shape mismatch: index of slice {bad[0]} exceeded limits of shape; index is "
                               f"{indices[bad[0]]} exceeded {shape[0]}")
        if self.counter > 0:
            have = self._values
            if have.ndim != values.ndim:
                raise _invalid(f"Shape mismatch: expected values rank {have.ndim}, got {values.ndim}")
            for i in range(1, have.ndim):
                if have.shape[i] != values.shape[i]:
                    raise _invalid(f"Shape mismatch: expected values dim {i} to be {have.shape[i]}, got "
                                   f"{values.shape[i]}")
        else:
            if len(shape) > values.ndim:
                raise _invalid(f"Shape mismatch: expected values rank at least {len(shape)}, got {values.ndim}")
            for i in range(1, len(shape)):
                if shape[i] is not None and shape[i] != values.shape[i]:
                    raise _invalid(f"Shape mismatch: expected values dim {i} to be {shape[i]}, got "
                                   f"{values.shape[i]}")

    def apply(self, local_step, indices, values, dense_shape, has_known_shape=True) -> None:
        with self._cond:
            if not self._is_fresh(local_step):
                return
            indices = np.asarray(indices, dtype=np.int64).reshape(-1)
            values = np.asarray(values, dtype=self.np_dtype)
            self._validate(indices, values, np.asarray(dense_shape, np.int64).reshape(-1), has_known_shape)
            if self.counter == 0:
                self._indices, self._values = indices.copy(), values.copy()
                self._counts = np.ones(indices.shape[0], np.int64)
            else:
                merged, pa, pb = _merge_positions(self._indices, indices)
                in_a, in_b = pa >= 0, pb >= 0
                out = np.zeros((merged.shape[0],) + values.shape[1:], dtype=self.np_dtype)
                out[in_a] = self._values[pa[in_a]]
                out[in_b] += values[pb[in_b]]
                counts = np.zeros(merged.shape[0], np.int64)
                counts[in_a] = self._counts[pa[in_a]]
                counts[in_b] += 1
                self._indices, self._values, self._counts = merged, out, counts
            self.counter += 1
            self._cond.notify_all()

    def take(self, ctx, num_required):
        """(indices, values, dense shape): the first dimension of the shape is -1 when unknown."""
        with self._cond:
            self._wait_for(ctx, num_required)
            counts = self._counts.reshape((-1,) + (1,) * (self._values.ndim - 1))
            values = self._divide(self._values, counts)
            first = self.shape[0] if self.shape else None
            dense_shape = np.array([-1 if first is None else first] + list(self._values.shape[1:]), np.int64)
            indices = self._indices
            self._indices = self._values = self._counts = None
            self._finish_take()
            return indices, values, dense_shape


# ---------------------------------------------------------------------------------------- kernels
def _raise(error):
    def compute():
        raise type(error)(None, None, error.message)

    return compute


def _accumulator_factory(cls):
    def factory(node):
        a = node.attrs
        name = a.get("shared_name") or f"_{next(_private_ids)}_{node.name}"
        requested = cls(name, a["dtype"], a.get("shape"), a.get("reduction_type", "MEAN"))
        acc = node.resources.lookup_or_create(a.get("container", ""), name, lambda _name: requested)
        if acc is not requested:
            if not isinstance(acc, _Accumulator):
                return _raise(_invalid(f"Resource '{name}' of {node.device} is a {type(acc).__name__}, not an "
                                       f"accumulator; another op created it under the same shared_name."))
            try:
                acc.check_compatible(requested)
            except errors.OpError as e:
                return _raise(e)  # when the node runs, so that the error names it
        return lambda: acc

    return factory


def _expect(acc, cls):
    if not isinstance(acc, cls):
        raise _invalid(f"Expected a {cls.kind} handle, got a {getattr(acc, 'kind', type(acc).__name__)}.")


for _op in ("ResourceConditionalAccumulator", "ConditionalAccumulator"):
    register_kernel(_op, stateful=True)(_accumulator_factory(DenseAccumulator))
register_kernel("SparseConditionalAccumulator", stateful=True)(_accumulator_factory(SparseAccumulator))


def _apply_dense(node):
    def compute(acc, local_step, grad):
        _expect(acc, DenseAccumulator)
        acc.apply(local_step, grad)

    return compute


def _take_dense(node):
    def compute(ctx, acc, num_required):
        _expect(acc, DenseAccumulator)
        return acc.take(ctx, num_required)

    return compute


def _num_accumulated(node):
    return lambda acc: acc.num_accumulated()


def _set_global_step(node):
    def compute(acc, step):
        acc.set_global_step(step)

    return compute


for _prefix in ("Resource", ""):
    register_kernel(f"{_prefix}AccumulatorApplyGradient")(_apply_dense)
    register_kernel(f"{_prefix}AccumulatorTakeGradient", needs_context=True)(_take_dense)
    register_kernel(f"{_prefix}AccumulatorNumAccumulated")(_num_accumulated)
    register_kernel(f"{_prefix}AccumulatorSetGlobalStep")(_set_global_step)


@register_kernel("SparseAccumulatorApplyGradient")
def _apply_sparse(node):
    has_known_shape = bool(node.attrs.get("has_known_shape", False))

    def compute(acc, local_step, indices, values, dense_shape):
        _expect(acc, SparseAccumulator)
        acc.apply(local_step, indices, values, dense_shape, has_known_shape)

    return compute


@register_kernel("SparseAccumulatorTakeGradient", needs_context=True)
def _take_sparse(node):
    def compute(ctx, acc, num_required):
        _expect(acc, SparseAccumulator)
        return acc.take(ctx, num_required)

    return compute
