"""Per-device resource manager: (container, name) -> resource (variables, tables, queues).

Example:
    >>> rm = ResourceMgr("/job:localhost/replica:0/task:0/device:CPU:0")
    >>> rm.lookup_or_create("", "v", VariableRef, dtype=None, shape=None).name
    'v'
"""

from __future__ import annotations

import threading

import numpy as np

from sparseflow._src.framework import errors

DEFAULT_CONTAINER = "localhost"


class VariableRef:
    """The storage of one variable: a NumPy array (None until initialized).

    Ref-typed tensors carry this object; readers take ``.read()``. Assignments replace the array,
    so a value read earlier in a step is never changed by a later assignment. A dense optimizer
    update may write the array in place instead, under ``lock`` and only when no one else holds
    it (``var_buffers.claim_in_place``); ``updating`` is set meanwhile, and a reader that finds it
    set waits for the lock, so no reader ever sees a half-updated array.
    """

    __slots__ = ("name", "dtype", "shape", "value", "lock", "writer", "updating")

    def __init__(self, name: str, dtype=None, shape=None):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value = None
        self.lock = threading.Lock()
        self.writer = None  # the private buffers (kernels/var_buffers.py) whose array ``value`` is
        self.updating = False  # ``value`` is being written in place (under ``lock``)

    def read(self):
        v = self.value
        if self.updating:  # set before the in-place writer checked that no one holds ``v``: wait for it
            with self.lock:
                v = self.value
        if v is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.name}. Run its initializer "
                            f"(e.g. sess.run(tf.global_variables_initializer())) first.")
        return v

    @property
    def is_initialized(self) -> bool:
        return self.value is not None

    def assign(self, value):
        self.value = value
        self.writer = None
        return self

    def __repr__(self):
        shape = None if self.value is None else np.shape(self.value)
        return f"<VariableRef {self.name} shape={shape}>"


class ResourceMgr:
    """Resources of one device, grouped in containers (default ``localhost``)."""

    def __init__(self, device: str):
        self.device = device
        self._lock = threading.Lock()
        self._containers: dict[str, dict[str, object]] = {}

    def lookup_or_create(self, container: str, name: str, factory, **kwargs):
        container = container or DEFAULT_CONTAINER
        with self._lock:
            c = self._containers.setdefault(container, {})
            r = c.get(name)
            if r is None:
                r = c[name] = factory(name, **kwargs)
            return r

    def lookup(self, container: str, name: str):
        container = container or DEFAULT_CONTAINER
        with self._lock:
            r = self._containers.get(container, {}).get(name)
        if r is None:
            raise errors.NotFoundError(None, None, f"Resource {container}/{name} does not exist on "
                                                   f"{self.device}.")
        return r

    def clear(self, containers=None):
        """Destroys the resources of ``containers`` (all when None)."""
        with self._lock:
            if containers is None:
                self._containers.clear()
            else:
                for c in containers:
                    self._containers.pop(c or DEFAULT_CONTAINER, None)

    def names(self):
        with self._lock:
            return {c: list(v) for c, v in self._containers.items()}
