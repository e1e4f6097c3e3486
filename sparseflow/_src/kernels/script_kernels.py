"""CPU kernels of PyFunc and PyFuncStateless: call the Python function registered under the node's
token in this process (framework/py_function_registry.py), check the results against the declared dtypes, and turn
Python exceptions into TensorFlow's errors. Client-only: the master never places them on another
task's process, and a process without the token refuses the node."""

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


def _py_func(node):
    token = node.attrs["token"]
    tout = list(node.attrs.get("Tout", ()))
    func = registered_function(token)
    if func is None:
        raise errors.InvalidArgumentError(
            None, None, f"The Python function of {node.op_type} node '{node.name}' ({token}) is not registered in "
                        f"this process: tf.py_func and tf.numpy_function run only in the client process that built "
                        f"the graph. Place the node on the client's task.")

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
