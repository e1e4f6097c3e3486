"""What ``Session.run`` returns for a ``tf.get_session_handle`` tensor: a TensorHandle, the handle
string of a value kept in the session (see ``ops/session_ops.py``), which reads (``eval``) and frees
(``delete``) that value through the session. Fed for a tensor, it feeds the value it keeps.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     h = sess.run(tf.get_session_handle(tf.constant([3, 4])))
    ...     x = tf.placeholder(tf.int32)
    ...     print(h.eval().tolist(), sess.run(x * 2, {x: h}).tolist())
    [3, 4] [6, 8]
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import unknown_shape

_ops_by_graph: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # graph -> {(device, dtype|None): ops}
_lock = threading.Lock()


def _handle_ops(graph, device: str, dtype):
    """``(placeholder, GetSessionTensor output)``, or ``(placeholder, DeleteSessionTensor op)`` when
    ``dtype`` is None, on ``device``: built once per graph."""
    with _lock:
        per_graph = _ops_by_graph.setdefault(graph, {})
        ops = per_graph.get((device, dtype))
        if ops is None:
            with graph.as_default(), graph.name_scope(None), graph.device(device):
                holder = apply_op("Placeholder", [], {"dtype": dtypes.string, "shape": unknown_shape()},
                                  name="session_handle").outputs[0]
                if dtype is None:
                    ops = (holder, apply_op("DeleteSessionTensor", [holder], name="DeleteSessionTensor"))
                else:
                    ops = (holder, apply_op("GetSessionTensor", [holder], {"dtype": dtype},
                                            name="GetSessionTensor").outputs[0])
            per_graph[(device, dtype)] = ops
        return ops


class TensorHandle:
    """The handle of a value of ``dtype`` kept in ``session``."""

    def __init__(self, handle, dtype, session):
        value = handle[()] if isinstance(handle, np.ndarray) else handle
        self._handle = value.decode() if isinstance(value, bytes) else str(value)
        self._dtype = dtypes.as_dtype(dtype)
        self._session = session

    def __str__(self):
        return self._handle

    def __repr__(self):
        return f"TensorHandle({self._handle!r}, {self._dtype.name})"

    @property
    def handle(self) -> str:
        """The handle string, to feed to ``get_session_tensor`` / ``delete_session_tensor`` placeholders."""
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    def get_raw_handle(self) -> str:
        return self._handle

    def to_numpy_array(self):
        return np.asarray(self._handle)

    @property
    def _device(self) -> str:
        return self._handle.rsplit(";", 1)[-1]

    def eval(self):
        """The value kept under this handle (runs a GetSessionTensor in the session)."""
        holder, tensor = _handle_ops(self._session.graph, self._device, self._dtype)
        return self._session.run(tensor, {holder: self._handle})

    def delete(self):
        """Frees the value kept under this handle."""
        holder, op = _handle_ops(self._session.graph, self._device, None)
        self._session.run(op, {holder: self._handle})
