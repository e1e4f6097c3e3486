"""Flattening of nested fetch structures and rebuilding of their results.

Fetches may be Tensors, Operations (targets, fetched as None), tensor or op names, objects with
``_as_graph_element`` (variables), SparseTensors (fetched as SparseTensorValue), and any nesting
of lists, tuples, namedtuples and dicts.

Example:
    >>> m = FetchMapper.build(lambda x: x, {"a": ["t:0", "u:0"], "b": "t:0"})
    >>> m.unique_fetches(), m.build_results({"t:0": 1, "u:0": 2})
    (['t:0', 'u:0'], {'a': [1, 2], 'b': 1})
"""

from __future__ import annotations

import collections

from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.sparse_tensor import (
    IndexedSlices,
    IndexedSlicesValue,
    SparseTensor,
    SparseTensorValue,
)


class FetchMapper:
    """A tree whose leaves are graph elements; ``build_results`` maps leaf values back into it."""

    def __init__(self, kind, children=None, element=None, keys=None, cls=None):
        self.kind = kind
        self.children = children
        self.element = element
        self.keys = keys
        self.cls = cls

    @staticmethod
    def build(resolve, fetch, session=None) -> FetchMapper:
        """``resolve(fetch)`` turns a leaf into a Tensor or Operation of the session's graph; the value
        of a ``get_session_handle`` tensor becomes a TensorHandle of ``session``."""
        if fetch is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if isinstance(fetch, (Tensor, Operation, str)) or hasattr(fetch, "_as_graph_element"):
            el = resolve(fetch)
            if session is not None and isinstance(el, Tensor) and el.op.type == "GetSessionHandle":
                return FetchMapper("handle", element=el, cls=(el.op.inputs[0].dtype.base_dtype, session))
            return FetchMapper("leaf", element=el)
        if isinstance(fetch, SparseTensor):
            parts = [FetchMapper.build(resolve, t, session) for t in (fetch.indices, fetch.values, fetch.dense_shape)]
            return FetchMapper("sparse", children=parts)
        if isinstance(fetch, IndexedSlices):
            comps = [fetch.values, fetch.indices] + ([fetch.dense_shape] if fetch.dense_shape is not None else [])
            return FetchMapper("indexed_slices", children=[FetchMapper.build(resolve, t, session) for t in comps])
        if isinstance(fetch, dict):
            keys = list(fetch.keys())
            return FetchMapper("dict", [FetchMapper.build(resolve, fetch[k], session) for k in keys], keys=keys,
                               cls=type(fetch))
        if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):
            return FetchMapper("namedtuple", [FetchMapper.build(resolve, f, session) for f in fetch], cls=type(fetch))
        if isinstance(fetch, (list, tuple)):
            return FetchMapper("list", [FetchMapper.build(resolve, f, session) for f in fetch], cls=type(fetch))
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or Tensor. "
                        f"(Can not convert a {type(fetch).__name__} into a Tensor or Operation.)")

    def leaves(self):
        if self.kind in ("leaf", "handle"):
            yield self.element
        else:
            for c in self.children:
                yield from c.leaves()

    def unique_fetches(self) -> list:
        return list(dict.fromkeys(self.leaves()))

    def build_results(self, values: dict):
        if self.kind == "leaf":
            return values[self.element]
        if self.kind == "handle":
            from sparseflow._src.runtime.session_handle import TensorHandle

            return TensorHandle(values[self.element], *self.cls)
        parts = [c.build_results(values) for c in self.children]
        if self.kind == "sparse":
            return SparseTensorValue(*parts)
        if self.kind == "indexed_slices":
            return IndexedSlicesValue(parts[0], parts[1], parts[2] if len(parts) > 2 else None)
        if self.kind == "dict":
            if self.cls is collections.defaultdict:
                out = collections.defaultdict(None)
            else:
                try:
                    out = self.cls()
                except TypeError:
                    out = {}
            for k, v in zip(self.keys, parts):
                out[k] = v
            return out
        if self.kind == "namedtuple":
            return self.cls(*parts)
        if self.cls is tuple:
            return tuple(parts)
        if self.cls is list:
            return parts
        try:
            return self.cls(parts)
        except TypeError:
            return parts
