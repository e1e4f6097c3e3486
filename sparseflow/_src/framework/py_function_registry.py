"""The Python functions of ``tf.py_func`` nodes in this process, by token (``pyfunc_<n>``).

A PyFunc node carries only its token; its function stays here, in the process that built the graph,
and is forgotten when that graph is. Kernels find it by token; another process never has it.

Example:
    >>> import sparseflow as tf
    >>> g = tf.Graph()
    >>> token = register_function(abs, g)
    >>> registered_function(token) is abs
    True
"""

from __future__ import annotations

import itertools
import threading
import weakref

__all__ = ["register_function", "registered_function"]

_FUNCTIONS: dict[str, object] = {}
_COUNTER = itertools.count()
_LOCK = threading.Lock()


def register_function(func, graph) -> str:
    """A new token for ``func``, kept as long as ``graph`` lives."""
    with _LOCK:
        token = f"pyfunc_{next(_COUNTER)}"
        _FUNCTIONS[token] = func
    weakref.finalize(graph, _FUNCTIONS.pop, token, None)
    return token


def registered_function(token: str):
    """The Python function of ``token`` in this process, or None."""
    return _FUNCTIONS.get(token)
