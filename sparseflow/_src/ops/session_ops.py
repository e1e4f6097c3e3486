"""Session handles: a tensor kept in the session between ``run`` calls and fed back by its handle
(ops ``GetSessionHandle``, ``GetSessionTensor``, ``DeleteSessionTensor``).

``sess.run(tf.get_session_handle(x))`` keeps ``x``'s value in the session and returns a TensorHandle
(``runtime/session_handle.py``); its ``handle`` string (``<op name>;<id>;<device>``) is fed to the placeholder
of ``tf.get_session_tensor`` to read the value in a later run, and to that of
``tf.delete_session_tensor`` (or ``TensorHandle.delete()``) to free it. A TensorHandle fed for any
tensor feeds the value it stands for. Closing the session frees every value it holds.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     h = sess.run(tf.get_session_handle(tf.constant([1.0, 2.0]) * 3))
    ...     holder, value = tf.get_session_tensor(h.handle, tf.float32)
    ...     print(sess.run(value + 1, {holder: h.handle}).tolist())
    ...     h.delete()
    [4.0, 7.0]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.device_spec import DeviceSpec
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_shape import TensorShape, unknown_shape
from sparseflow._src.ops.constant_op import placeholder

__all__ = ["get_session_handle", "get_session_tensor", "delete_session_tensor"]

SESSION_HANDLE_OP_TYPES = ("GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor")

register_op("GetSessionHandle", inputs=["value: T"], outputs=["handle: string"], attrs=["T: type"],
            shape_fn=lambda op: [TensorShape([])], is_stateful=True)
register_op("GetSessionTensor", inputs=["handle: string"], outputs=["value: dtype"], attrs=["dtype: type"],
            shape_fn=lambda op: [unknown_shape()], is_stateful=True)
register_op("DeleteSessionTensor", inputs=["handle: string"], outputs=[], shape_fn=lambda op: [], is_stateful=True)


def _device_of(handle) -> str:
    text = handle.decode() if isinstance(handle, bytes) else str(handle)
    parts = text.split(";")
    if len(parts) != 3:
        raise ValueError(f"{text!r} is not a session tensor handle (expected '<op name>;<id>;<device>', the "
                         f"`handle` of what Session.run returns for tf.get_session_handle).")
    DeviceSpec.from_string(parts[2])  # a malformed device is refused here, with the parser's message
    return parts[2]


def get_session_handle(data, name=None):
    """A string tensor: running it keeps ``data``'s value in the session and returns its TensorHandle.

    Example:
        >>> import sparseflow as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     h = sess.run(tf.get_session_handle(tf.constant(5)))
        ...     print(h.eval())
        5
    """
    if not isinstance(data, Tensor):
        raise TypeError("`data` must be of type Tensor.")
    with data.graph.colocate_with(data.op):
        return apply_op("GetSessionHandle", [data], name=name or "GetSessionHandle").outputs[0]


def get_session_tensor(handle, dtype, name=None):
    """``(placeholder, tensor)``: feed the placeholder a handle string (``TensorHandle.handle``) and
    ``tensor`` is the value kept under it, of ``dtype``. Built on the handle's device."""
    from sparseflow._src.framework.graph import get_default_graph

    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().device(_device_of(handle)):
        holder = placeholder(dtypes.string)
        tensor = apply_op("GetSessionTensor", [holder], {"dtype": dtype}, name=name or "GetSessionTensor").outputs[0]
    return holder, tensor


def delete_session_tensor(handle, name=None):
    """``(placeholder, op)``: running ``op`` with a handle string fed to the placeholder frees that value."""
    from sparseflow._src.framework.graph import get_default_graph

    with get_default_graph().device(_device_of(handle)):
        holder = placeholder(dtypes.string)
        op = apply_op("DeleteSessionTensor", [holder], name=name or "DeleteSessionTensor")
    return holder, op
