"""The queues behind FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2 and PriorityQueueV2.

A queue is a resource of its device (shared between graphs and sessions of one process by
``shared_name``) holding elements: tuples of NumPy arrays, one per component. All its state is
guarded by one condition variable. Enqueue and dequeue attempts wait in line (first come, first
served) and move elements one at a time as they can, as TensorFlow's queues do: a
``dequeue_many(n)`` larger than the capacity completes while producers keep enqueueing, and an
``enqueue_many`` larger than the capacity completes while consumers keep dequeueing.

Closing a queue refuses new enqueues (CancelledError); pending ones still complete unless
``cancel_pending_enqueues`` cancels them. A dequeue that can no longer be satisfied (closed,
too few elements, no pending enqueue) raises OutOfRangeError and gives back what it had taken;
``dequeue_up_to`` returns what is left instead. Blocked attempts end with CancelledError /
DeadlineExceededError when their step is cancelled or times out (see ``blocking.py``).

Example:
    >>> import numpy as np
    >>> from sparseflow._src.framework import dtypes
    >>> q = FIFOQueue("q", [dtypes.int32], [()], capacity=3)
    >>> q.enqueue_many(None, [np.array([1, 2], np.int32)])
    >>> q.dequeue(None)[0], int(q.size())
    (array(1, dtype=int32), 1)
"""

from __future__ import annotations

import collections
import heapq
import itertools
import secrets
import sys
import threading

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.blocking import wait_until
from sparseflow._src.kernels.philox import PhiloxRandom

__all__ = ["QueueResource", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue", "as_dims"]


def as_dims(shape):
    """A TensorShape attr as a tuple of ints/None, or None when the rank is unknown."""
    if shape is None:
        return None
    if hasattr(shape, "ndims"):
        return None if shape.ndims is None else tuple(shape.as_list())
    return tuple(shape)


def _fmt(dims) -> str:
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def _compatible(want, got) -> bool:
    return want is None or (len(want) == len(got) and all(w is None or w == g for w, g in zip(want, got)))


class QueueResource:
    """A bounded queue of elements (tuples of arrays); subclasses choose the order."""

    kind = "FIFOQueue"

    def __init__(self, name: str, component_types, shapes, capacity: int = -1):
        self.name = name
        self.component_types = list(component_types)
        self._np_dtypes = [d.as_numpy_dtype for d in self.component_types]
        shapes = list(shapes or [])
        if shapes and len(shapes) != len(self.component_types):
            raise _invalid(f"{self.kind} '{name}': {len(shapes)} shapes for {len(self.component_types)} "
                           f"component types.")
        self.shapes = [as_dims(s) for s in shapes] if shapes else [None] * len(self.component_types)
        self.capacity = int(capacity)
        self._limit = sys.maxsize if self.capacity < 0 else self.capacity
        self._cond = threading.Condition()
        self._closed = False
        self._enqueues_cancelled = False
        self._enqueue_line: collections.deque = collections.deque()
        self._dequeue_line: collections.deque = collections.deque()

    # ------------------------------------------------------------------ storage (per subclass)
    def _size(self) -> int:
        raise NotImplementedError

    def _push(self, element: tuple):
        raise NotImplementedError

    def _take(self) -> tuple:
        raise NotImplementedError

    def _restore(self, elements: list):
        """Gives back the elements of a dequeue that failed, so that none is lost."""
        raise NotImplementedError

    def _takeable(self) -> int:
        return self._size()

    # ------------------------------------------------------------------ sharing
    def describe(self) -> dict:
        return {"type": self.kind, "component types": [d.name for d in self.component_types],
                "shapes": self.shapes, "capacity": self.capacity}

    def check_compatible(self, other: QueueResource):
        """InvalidArgumentError unless ``other`` (what a node requests) describes this shared queue."""
        mine, theirs = self.describe(), other.describe()
        for key in mine:
            if mine[key] != theirs[key]:
                def show(v, key=key):
                    if key == "shapes":
                        return ", ".join(_fmt(s) for s in v)
                    return ", ".join(v) if isinstance(v, list) else str(v)
                raise _invalid(f"Shared queue '{self.name}' has {key} {show(mine[key])} but requested {key} "
                               f"{'were' if key.endswith('s') else 'was'} {show(theirs[key])}. Every graph sharing "
                               f"a queue (same shared_name) must create it with the same arguments.")

    # ------------------------------------------------------------------ small ops
    def size(self) -> np.int32:
        with self._cond:
            return np.int32(self._size())

    def is_closed(self) -> np.bool_:
        with self._cond:
            return np.bool_(self._closed)

    def close(self, cancel_pending_enqueues: bool = False):
        with self._cond:
            self._closed = True
            if cancel_pending_enqueues:
                self._enqueues_cancelled = True
            self._cond.notify_all()

    # ------------------------------------------------------------------ enqueue
    def _component(self, i: int, value, batched: bool):
        arr = np.array(value, dtype=self._np_dtypes[i], copy=True)
        got = arr.shape[1:] if batched else arr.shape
        if batched and arr.ndim == 0:
            raise _invalid(f"Tuple component {i} of an enqueue_many into {self.kind} '{self.name}' is a scalar; "
                           f"enqueue_many slices each component along its first dimension. Use enqueue for one "
                           f"element.")
        if not _compatible(self.shapes[i], got):
            raise _invalid(f"Shape mismatch in tuple component {i}. Expected {_fmt(self.shapes[i])}, got "
                           f"{_fmt(got)}" + (" (after the batch dimension)" if batched else ""))
        return arr

    def _check_element(self, element: tuple):
        """Subclass hook: checks one element before it is enqueued."""

    def enqueue(self, ctx, components):
        element = tuple(self._component(i, v, False) for i, v in enumerate(components))
        self._check_element(element)
        self._enqueue(ctx, [element])

    def enqueue_many(self, ctx, components):
        arrays = [self._component(i, v, True) for i, v in enumerate(components)]
        n = arrays[0].shape[0]
        for i, a in enumerate(arrays[1:], 1):
            if a.shape[0] != n:
                raise _invalid(f"enqueue_many into {self.kind} '{self.name}': tuple component {i} has "
                               f"{a.shape[0]} elements (first dimension) but component 0 has {n}; every "
                               f"component must have the same batch size.")
        elements = [tuple(a[j, ...] for a in arrays) for j in range(n)]  # 0-d arrays for scalars
        for e in elements:
            self._check_element(e)
        self._enqueue(ctx, elements)

    def _enqueue(self, ctx, elements: list):
        with self._cond:
            if self._closed:
                raise errors.CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")
            if not elements:
                return
            token = object()
            self._enqueue_line.append(token)
            try:
                done = 0
                what = f"waiting for room in {self.kind} '{self.name}' (capacity {self.capacity})"
                while done < len(elements):
                    wait_until(self._cond, lambda: self._enqueues_cancelled or (
                        self._enqueue_line[0] is token and self._size() < self._limit), ctx, what)
                    if self._enqueues_cancelled:
                        raise errors.CancelledError(None, None, f"Enqueue operation was cancelled: {self.kind} "
                                                                f"'{self.name}' was closed with "
                                                                f"cancel_pending_enqueues=True.")
                    while done < len(elements) and self._size() < self._limit:
                        self._push(elements[done])
                        done += 1
                    self._cond.notify_all()
            finally:
                self._enqueue_line.remove(token)
                self._cond.notify_all()

    # ------------------------------------------------------------------ dequeue
    def dequeue(self, ctx) -> tuple:
        return self._dequeue(ctx, 1, False)[0]

    def dequeue_many(self, ctx, n: int, allow_small_batch: bool = False) -> tuple:
        """``n`` elements batched along a new first dimension (fewer for ``allow_small_batch``
        when the queue is closed)."""
        n = int(n)
        if n < 0:
            raise _invalid(f"Dequeue{'UpTo' if allow_small_batch else 'Many'} of {self.kind} '{self.name}' "
                           f"requested {n} < 0 elements.")
        self._check_batchable()
        elements = self._dequeue(ctx, n, allow_small_batch) if n else []
        return tuple(self._batch(i, [e[i] for e in elements]) for i in range(len(self.component_types)))

    def _check_batchable(self):
        if any(s is None for s in self.shapes):
            raise _invalid(f"{self.kind}'s DequeueMany and DequeueUpTo require the components to have specified "
                           f"shapes. Give the queue `shapes=` when you create it.")

    def _batch(self, i: int, values: list) -> np.ndarray:
        dtype = self._np_dtypes[i]
        if not values:
            return np.empty((0,) + tuple(d or 0 for d in self.shapes[i]), dtype=dtype)
        if np.dtype(dtype).kind != "O":
            return np.stack(values)
        out = np.empty((len(values),) + values[0].shape, dtype=dtype)
        for j, v in enumerate(values):
            out[j, ...] = v  # copies the strings (``out[j] = v`` would store a 0-d array as one object)
        return out

    def _dequeue(self, ctx, n: int, allow_small_batch: bool) -> list:
        got: list = []
        with self._cond:
            token = object()
            self._dequeue_line.append(token)
            what = f"waiting for {n} element{'s' if n != 1 else ''} of {self.kind} '{self.name}'"
            try:
                while len(got) < n:
                    wait_until(self._cond, lambda: self._dequeue_line[0] is token and (
                        self._takeable() > 0 or (self._closed and not self._enqueue_line)), ctx, what)
                    while len(got) < n and self._takeable() > 0:
                        got.append(self._take())
                    self._cond.notify_all()
                    if len(got) < n and self._closed and not self._enqueue_line and self._takeable() == 0:
                        if allow_small_batch and got:
                            break
                        raise errors.OutOfRangeError(None, None, (
                            f"{self.kind} '{self.name}' is closed and has insufficient elements (requested {n}, "
                            f"current size {self._size() + len(got)})"))
            except BaseException:
                if got:
                    self._restore(got)
                    got = []
                raise
            finally:
                self._dequeue_line.remove(token)
                self._cond.notify_all()
        return got


class FIFOQueue(QueueResource):
    """Elements leave in the order they came."""

    kind = "FIFOQueue"

    def __init__(self, name, component_types, shapes, capacity=-1):
        super().__init__(name, component_types, shapes, capacity)
        self._items: collections.deque = collections.deque()

    def _size(self):
        return len(self._items)

    def _push(self, element):
        self._items.append(element)

    def _take(self):
        return self._items.popleft()

    def _restore(self, elements):
        self._items.extendleft(reversed(elements))


class PaddingFIFOQueue(FIFOQueue):
    """A FIFOQueue whose components may vary along dimensions given as None; ``dequeue_many``
    pads each component with zeros (empty strings) to the largest element of the batch."""

    kind = "PaddingFIFOQueue"

    def __init__(self, name, component_types, shapes, capacity=-1):
        super().__init__(name, component_types, shapes, capacity)
        if any(s is None for s in self.shapes):
            raise _invalid(f"PaddingFIFOQueue '{name}' needs a shape (of known rank) for every component.")

    def _check_batchable(self):
        pass

    def _batch(self, i, values):
        if not values:
            return super()._batch(i, values)
        rank = len(self.shapes[i])
        padded = tuple(max(v.shape[d] for v in values) for d in range(rank))
        dtype = self._np_dtypes[i]
        out = np.full((len(values),) + padded, b"" if np.dtype(dtype).kind == "O" else 0, dtype=dtype)
        for j, v in enumerate(values):
            out[(j,) + tuple(slice(0, s) for s in v.shape) + (Ellipsis,)] = v
        return out


class RandomShuffleQueue(QueueResource):
    """Elements leave in random order; ``min_after_dequeue`` elements always stay (until closed).

    The order is TensorFlow's for the same seeds: each dequeued element is the one at
    ``sample % size`` (a 32-bit Philox sample), replaced by the last element.
    """

    kind = "RandomShuffleQueue"

    def __init__(self, name, component_types, shapes, capacity=-1, min_after_dequeue=0, seed=0, seed2=0):
        super().__init__(name, component_types, shapes, capacity)
        self.min_after_dequeue = int(min_after_dequeue)
        if self.min_after_dequeue < 0:
            raise _invalid(f"RandomShuffleQueue '{name}': min_after_dequeue must be >= 0, got {min_after_dequeue}.")
        if self.min_after_dequeue >= self._limit:
            raise _invalid(f"RandomShuffleQueue '{name}': min_after_dequeue ({min_after_dequeue}) must be less "
                           f"than capacity ({capacity}), or dequeues could never complete.")
        self.seeds = (int(seed), int(seed2))
        if seed == 0 and seed2 == 0:
            seed, seed2 = secrets.randbits(64), secrets.randbits(64)
        self._gen = PhiloxRandom(seed, seed2)
        self._samples: list = []
        self._items: list = []

    def describe(self):
        d = super().describe()
        d["min_after_dequeue"] = self.min_after_dequeue
        return d

    def _next_sample(self) -> int:
        if not self._samples:
            self._samples = self._gen.blocks(1).reshape(-1).tolist()[::-1]
            self._gen.skip(1)
        return self._samples.pop()

    def _size(self):
        return len(self._items)

    def _takeable(self):
        if self._closed:
            return len(self._items)
        return max(0, len(self._items) - self.min_after_dequeue)

    def _push(self, element):
        self._items.append(element)

    def _take(self):
        items = self._items
        i = self._next_sample() % len(items)
        element = items[i]
        items[i] = items[-1]
        items.pop()
        return element

    def _restore(self, elements):
        self._items.extend(elements)


class PriorityQueue(QueueResource):
    """Elements leave lowest priority first (component 0, an int64 scalar); equal priorities in the
    order they came."""

    kind = "PriorityQueue"

    def __init__(self, name, component_types, shapes, capacity=-1):
        super().__init__(name, component_types, shapes, capacity)
        self._heap: list = []
        self._order = itertools.count()

    def _check_element(self, element):
        priority = element[0]
        if priority.shape != () or priority.dtype != np.int64:
            raise _invalid(f"PriorityQueue '{self.name}': the first component of every element is its priority, "
                           f"an int64 scalar; got {priority.dtype} of shape {_fmt(priority.shape)}.")

    def _size(self):
        return len(self._heap)

    def _push(self, element):
        heapq.heappush(self._heap, (int(element[0]), next(self._order), element))

    def _take(self):
        return heapq.heappop(self._heap)[2]

    def _restore(self, elements):
        for e in elements:
            self._push(e)
