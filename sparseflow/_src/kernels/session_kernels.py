"""CPU kernels of the session handle ops: values kept in the session's state (the per-session dict
every kernel of a session sees as ``node.session``), under ``<op name>;<id>;<device>`` handles.

As in TensorFlow, a value kept by a run is in the store for the runs after it, not for the run that
keeps it (reading or deleting it there is an InvalidArgumentError).

Example:
    >>> store = SessionTensorStore()
    >>> h = store.put("GetSessionHandle", "/job:localhost/replica:0/task:0/device:CPU:0", 7, step_id=1)
    >>> h, store.get(h, step_id=2)
    ('GetSessionHandle;0;/job:localhost/replica:0/task:0/device:CPU:0', 7)
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.kernels.registry import register_kernel

_STATE_KEY = "session_tensors"


class SessionTensorStore:
    """The values a session keeps by handle; thread-safe."""

    def __init__(self):
        self._values: dict = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def put(self, op_name: str, device: str, value, step_id) -> str:
        with self._lock:
            handle = f"{op_name};{next(self._ids)};{device}"
            self._values[handle] = (step_id, value)
        return handle

    def _entry(self, handle: str, step_id):
        entry = self._values.get(handle)
        if entry is None or entry[0] == step_id:  # kept by this very run: not in the store yet
            raise KeyError(handle)
        return entry

    def get(self, handle: str, step_id):
        with self._lock:
            return self._entry(handle, step_id)[1]

    def delete(self, handle: str, step_id):
        with self._lock:
            self._entry(handle, step_id)
            del self._values[handle]


def _store(node) -> SessionTensorStore:
    state = node.session
    if not isinstance(state, dict):
        raise errors.FailedPreconditionError(None, None, f"{node.op_type} {node.name!r} runs outside a session: "
                                                         f"session handles need a tf.Session.")
    store = state.get(_STATE_KEY)
    if store is None:
        store = state.setdefault(_STATE_KEY, SessionTensorStore())
    return store


def _text(handle) -> str:
    value = np.asarray(handle, dtype=object)
    if value.ndim != 0:
        raise errors.InvalidArgumentError(None, None, f"A session tensor handle is a scalar string, got shape "
                                                      f"{list(value.shape)}.")
    v = value[()]
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


def _missing(node, handle):
    return errors.InvalidArgumentError(None, None, f"The tensor with handle {handle!r} is not in the session store "
                                                   f"of {node.op_type} {node.name!r}: it was deleted, kept by "
                                                   f"another session or on another task, or kept by this same run "
                                                   f"(a kept value is readable from the next run on).")


@register_kernel("GetSessionHandle", stateful=True, needs_context=True)
def _get_session_handle(node):
    store = _store(node)
    device = node.device or "/job:localhost/replica:0/task:0/device:CPU:0"

    def compute(ctx, value):
        kept = np.array(value, copy=True) if isinstance(value, np.ndarray) else value
        return np.array(store.put(node.name, device, kept, ctx.step_id).encode(), dtype=object)

    return compute


@register_kernel("GetSessionTensor", stateful=True, needs_context=True)
def _get_session_tensor(node):
    store = _store(node)
    want = dtypes.as_dtype(node.attrs["dtype"])

    def compute(ctx, handle):
        key = _text(handle)
        try:
            value = store.get(key, ctx.step_id)
        except KeyError:
            raise _missing(node, key) from None
        got = np.asarray(value).dtype
        expected = np.dtype(object) if want == dtypes.string else np.dtype(want.as_numpy_dtype)
        if got != expected:
            raise errors.InternalError(None, None, f"The tensor with handle {key!r} holds {got}, but "
                                                   f"{node.op_type} {node.name!r} reads {want.name}: pass the "
                                                   f"kept tensor's dtype to tf.get_session_tensor.")
        return value

    return compute


@register_kernel("DeleteSessionTensor", stateful=True, needs_context=True)
def _delete_session_tensor(node):
    store = _store(node)

    def compute(ctx, handle):
        key = _text(handle)
        try:
            store.delete(key, ctx.step_id)
        except KeyError:
            raise _missing(node, key) from None

    return compute
