"""CPU kernels of PyFunc, PyFuncStateless and EagerPyFunc (``tf.py_function``: its inputs are arrays
with ``.numpy()``): call the Python function registered under the node's token in this process
(framework/py_function_registry.py), check the results against the declared dtypes, and turn Python
exceptions into TensorFlow's errors. Client-only: the master never places them on another task's
process, and a process without the token refuses the node."""

from __future__ import annotations

import traceback

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework.py_function_registry import registered_function
from sparseflow._src.kernels.registry import register_kernel

_ERRORS = ((ValueError, errors.InvalidArgumentError), (TypeError, errors.InvalidArgumentError),
           (StopIteration, errors.OutOfRangeError), (MemoryError, errors.ResourceExhaustedError),
           (NotImplementedError, errors.UnimplementedError))


def _as_array(value) -> np.ndarray:
    a = np.asarray(value, order="C")
    if a.dtype.kind in "SU":
        flat = [x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in a.ravel().tolist()]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(a.shape)
    return a


def _tf_name(name: str) -> str:
    """TensorFlow's name of a dtype in messages (float, double, half, int32, ...)."""
    return {"float32": "float", "float64": "double", "float16": "half", "object": "string"}.get(name, name)


def _check(value, dtype, i, token) -> np.ndarray:
    a = _as_array(value)
    want = dtype.as_numpy_dtype
    if dtype.name == "string":
        if a.dtype != object or not all(isinstance(x, bytes) for x in a.ravel().tolist()):
            raise errors.InvalidArgumentError(None, None, f"{i}-th value returned by {token} is "
                                                          f"{_tf_name(a.dtype.name)}, but expects string")
        return a
    if a.dtype != np.dtype(want):
        raise errors.InvalidArgumentError(None, None, f"{i}-th value returned by {token} is "
                                                      f"{_tf_name(a.dtype.name)}, but expects {_tf_name(dtype.name)}")
    return a


def _registered(node):
    """The Python function the node's token names in this process (InvalidArgumentError if none)."""
    token = node.attrs["token"]
    func = registered_function(token)
    if func is None:
        raise errors.InvalidArgumentError(
            None, None, f"The Python function of {node.op_type} node '{node.name}' ({token}) is not registered in "
                        f"this process: tf.py_func, tf.numpy_function and tf.py_function run only in the client "
                        f"process that built the graph. Place the node on the client's task.")
    return func


def _py_func(node):
    token = node.attrs["token"]
    tout = list(node.attrs.get("Tout", ()))
    func = _registered(node)

    def compute(*inputs):
        args = [np.asarray(x) if not isinstance(x, np.ndarray) else x for x in inputs]
        try:
            result = func(*args)
        except Exception as e:  # noqa: BLE001 - the function's error becomes the op's
            kind = next((err for exc, err in _ERRORS if isinstance(e, exc)), errors.UnknownError)
            text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            raise kind(None, None, f"{type(e).__name__}: {e}\n{text}") from e
        values = list(result) if isinstance(result, (list, tuple)) else ([] if result is None and not tout
                                                                         else [result])
        if len(values) != len(tout):
            raise errors.InvalidArgumentError(None, None, f"{token} returns {len(values)} values, but expects to see "
                                                          f"{len(tout)} values.")
        outs = [_check(v, d, i, token) for i, (v, d) in enumerate(zip(values, tout))]
        if not tout:
            return None
        return outs if len(outs) > 1 else outs[0]

    return compute


register_kernel("PyFunc", stateful=True, client_only=True)(_py_func)
register_kernel("PyFuncStateless", client_only=True)(_py_func)


class EagerValue(np.ndarray):
    """An input of ``tf.py_function``'s function: a NumPy array with EagerTensor's ``.numpy()``."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self).copy()


def _coerce(value, dtype):
    """A result of ``tf.py_function``'s function converted to ``dtype`` the way TensorFlow's
    ``convert_to_tensor(value, dtype)`` accepts it: Python values and arrays of the same kind are cast."""
    if dtype.name == "string" or isinstance(value, (bytes, str)):
        return value
    a = np.asarray(value)
    want = np.dtype(dtype.as_numpy_dtype)
    if a.dtype == want or a.dtype == object:
        return a
    python_number = isinstance(value, (bool, int, float, complex, list, tuple))
    if np.can_cast(a.dtype, want, "same_kind") or (python_number and np.can_cast(a.dtype, want, "unsafe")
                                                   and (a.dtype.kind != "f" or want.kind in "fc")):
        return a.astype(want)
    return a


def _eager_py_func(node):
    tout = list(node.attrs.get("Tout", ()))
    token = node.attrs["token"]
    func = _registered(node)

    def compute(*inputs):
        args = [np.asarray(x).view(EagerValue) for x in inputs]
        try:
            result = func(*args)
        except Exception as e:  # noqa: BLE001 - the function's error becomes the op's
            kind = next((err for exc, err in _ERRORS if isinstance(e, exc)), errors.UnknownError)
            text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            raise kind(None, None, f"{type(e).__name__}: {e}\n{text}") from e
        values = list(result) if isinstance(result, (list, tuple)) and len(tout) != 1 else (
            [] if result is None and not tout else [result])
        if len(values) != len(tout):
            raise errors.InvalidArgumentError(None, None, f"{token} returns {len(values)} values, but expects to see "
                                                          f"{len(tout)} values.")
        outs = [_check(np.asarray(_coerce(v, d)) if not isinstance(v, (bytes, str)) else v, d, i, token)
                for i, (v, d) in enumerate(zip(values, tout))]
        if not tout:
            return None
        return outs if len(outs) > 1 else outs[0]

    return compute


register_kernel("EagerPyFunc", stateful=True, client_only=True)(_eager_py_func)
