"""CPU kernels of functional control flow (If, Case, While, Assert) and of tensor lists (TensorList*).

``If`` and ``Case`` run only the chosen branch function and ``While`` runs its cond/body functions until the
condition is false; both run the functions as compiled sub-plans through ``node.function_runner``.
A ``While`` checks the step's deadline and cancellation between iterations.

Tensor lists are immutable ``TensorListValue`` objects (the value of a variant tensor): every
update returns a new list sharing the unchanged elements.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel
from sparseflow._src.kernels.tensor_format import summarize_value


def _bad(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def truthy(value) -> bool:
    """TensorFlow's rule for a predicate: a scalar by value (strings: non-empty), else non-empty."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        v = arr[()]
        return len(v) > 0 if isinstance(v, (bytes, str)) else bool(v)
    return arr.size > 0


def _outputs(values, n):
    if n == 0:
        return None
    if n == 1:
        return values[0]
    return tuple(values)


@register_kernel("If", needs_context=True)
def _if(node):
    then_name, else_name = node.attrs["then_branch"], node.attrs["else_branch"]
    runner = node.function_runner
    n = len(node.attrs.get("Tout", ()))

    def compute(ctx, cond, *args):
        return _outputs(runner(then_name if truthy(cond) else else_name)(ctx, *args), n)

    return compute


@register_kernel("Case", needs_context=True)
def _case(node):
    branches = list(node.attrs["branches"])
    runner = node.function_runner
    n = len(node.attrs.get("Tout", ()))

    def compute(ctx, index, *args):
        i = int(index)
        name = branches[i] if 0 <= i < len(branches) else branches[-1]  # out of range: the default
        return _outputs(runner(name)(ctx, *args), n)

    return compute


@register_kernel("While", needs_context=True)
def _while(node):
    cond_name, body_name = node.attrs["cond"], node.attrs["body"]
    runner = node.function_runner
    n = len(node.attrs.get("T", ()))

    def compute(ctx, *values):
        cond_fn, body_fn = runner(cond_name), runner(body_name)
        values = list(values)
        while True:
            if ctx is not None:
                if ctx.cancelled.is_set():
                    raise errors.CancelledError(None, None, "Step was cancelled while running a while loop.")
                left = ctx.remaining()
                if left is not None and left <= 0:
                    raise errors.DeadlineExceededError(
                        None, None, "Timed out in a while loop: the step ran past its deadline "
                                    "(RunOptions.timeout_in_ms).")
            if not truthy(cond_fn(ctx, *values)[0]):
                break
            values = body_fn(ctx, *values)
        return _outputs(values, n)

    return compute


@register_kernel("Assert")
def _assert(node):
    summarize = node.attrs.get("summarize", 3)

    def compute(condition, *data):
        if np.ndim(condition) != 0:
            raise _bad(f"In[0] should be a scalar: [{','.join(map(str, np.shape(condition)))}]")
        if not truthy(condition):
            shown = " ".join(f"[{summarize_value(d, summarize)}]" for d in data)
            raise _bad(f"assertion failed: {shown}")

    return compute


# ---------------------------------------------------------------------- tensor lists
class TensorListValue:
    """An immutable list of arrays (None = never written) with a partially known element shape.

    Elements are kept in fixed-size chunks, so an update copies one chunk and the chunk index
    instead of the whole list (a loop writing n elements costs O(n * (n / 64 + 64)), not O(n^2)).
    """

    __slots__ = ("_chunks", "_n", "element_shape")
    CHUNK = 64

    def __init__(self, items=(), element_shape=None, _chunks=None, _n=0):
        self.element_shape = element_shape  # None (unknown rank) or a tuple of int / None
        if _chunks is not None:
            self._chunks, self._n = _chunks, _n
            return
        items = list(items)
        c = self.CHUNK
        self._chunks = tuple(tuple(items[i:i + c]) for i in range(0, len(items), c))
        self._n = len(items)

    def __len__(self):
        return self._n

    @property
    def items(self) -> list:
        return [x for chunk in self._chunks for x in chunk]

    def get(self, i):
        return self._chunks[i // self.CHUNK][i % self.CHUNK]

    def resized(self, n) -> TensorListValue:
        if n <= self._n:
            return TensorListValue(self.items[:n], self.element_shape)
        c = self.CHUNK
        chunks = list(self._chunks)
        if chunks and len(chunks[-1]) < c:
            last = chunks.pop()
            fill = min(c - len(last), n - self._n)
            chunks.append(last + (None,) * fill)
            have = self._n + fill
        else:
            have = self._n
        while have < n:
            k = min(c, n - have)
            chunks.append((None,) * k)
            have += k
        return TensorListValue(element_shape=self.element_shape, _chunks=tuple(chunks), _n=n)

    def set(self, i, value) -> TensorListValue:
        """A new list with element ``i`` (< len) set to ``value``."""
        q, r = divmod(i, self.CHUNK)
        chunk = self._chunks[q]
        chunks = self._chunks[:q] + (chunk[:r] + (value,) + chunk[r + 1:],) + self._chunks[q + 1:]
        return TensorListValue(element_shape=self.element_shape, _chunks=chunks, _n=self._n)

    def __repr__(self):
        return f"TensorList(len={self._n}, element_shape={self.element_shape})"


def _shape_from(value):
    """An element_shape input (-1 scalar = unknown rank; -1 dims = unknown) as None or a tuple."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return None
    return tuple(None if int(d) < 0 else int(d) for d in arr.reshape(-1))


def _merge(a, b, what="element shapes"):
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b) or any(x is not None and y is not None and x != y for x, y in zip(a, b)):
        raise _bad(f"Incompatible {what}: {_fmt(a)} vs. {_fmt(b)}")
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _fmt(shape):
    return "<unknown>" if shape is None else "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _full(shape):
    return shape is not None and all(d is not None for d in shape)


def _check_list(lst):
    if not isinstance(lst, TensorListValue):
        raise _bad(f"Expected a tensor list, got {type(lst).__name__}.")
    return lst


def _elements(lst, positions, shape, dtype, op):
    """The arrays at ``positions``; unwritten ones are zeros of the (then fully known) element shape."""
    shape = _merge(lst.element_shape, shape)
    picked = [lst.get(i) for i in positions]
    for item in picked:
        if item is not None:
            shape = _merge(shape, np.shape(item), "shapes of list elements")
    out = []
    for i, item in zip(positions, picked):
        if item is None:
            if not _full(shape):
                raise _bad(
                    f"{op}: trying to read element {i} that was never written, and the element shape "
                    f"{_fmt(shape)} is not fully defined.")
            item = np.zeros(shape, dtype)
        out.append(item)
    return out, shape


def _stack(items, shape, dtype, op):
    if not items:
        if not _full(shape):
            raise _bad(f"{op}: tried to stack elements of an empty list with "
                       f"non-fully-defined element_shape: {_fmt(shape)}")
        return np.zeros((0,) + tuple(shape), dtype)
    return np.stack(items).astype(dtype, copy=False)


def _list_kernel(op_type):
    def deco(fn):
        def factory(node):
            dt = node.attrs.get("element_dtype")
            return fn(node, dt.as_numpy_dtype if dt is not None else None)

        register_kernel(op_type)(factory)
        return fn

    return deco


def add_tensor_lists(*lists):
    """The element-wise sum of tensor lists of one length (AddN of variants); unwritten elements are zeros."""
    n = len(_check_list(lists[0]))
    for lst in lists[1:]:
        if len(_check_list(lst)) != n:
            raise _bad(f"Trying to add two lists of tensors with different lengths. One is {n} and the other "
                       f"is {len(lst)}")
    shape = lists[0].element_shape
    for lst in lists[1:]:
        shape = _merge(shape, lst.element_shape)
    items = []
    for i in range(n):
        vals = [lst.get(i) for lst in lists if lst.get(i) is not None]
        total = None
        for v in vals:
            if total is not None and np.shape(v) != np.shape(total):
                raise _bad(f"Trying to add two tensors with incompatible element shapes. One is "
                           f"{_fmt(np.shape(total))} and the other is {_fmt(np.shape(v))}")
            total = np.array(v, copy=True) if total is None else total + v
        items.append(total)
    return TensorListValue(items, shape)


@_list_kernel("TensorListReserve")
def _reserve(node, dtype):
    def compute(element_shape, num_elements):
        n = int(num_elements)
        if n < 0:
            raise _bad(f"The num_elements to reserve must be a non negative "
                       f"number, but got {n}")
        return TensorListValue([None] * n, _shape_from(element_shape))

    return compute


@_list_kernel("TensorListFromTensor")
def _from_tensor(node, dtype):
    def compute(tensor, element_shape):
        arr = np.asarray(tensor)
        if arr.ndim == 0:
            raise _bad("Tensor must be at least a vector, but saw shape: []")
        shape = _merge(_shape_from(element_shape), arr.shape[1:])
        return TensorListValue(list(arr), shape)

    return compute


@_list_kernel("TensorListSetItem")
def _set_item(node, dtype):
    resize = node.attrs.get("resize_if_index_out_of_bounds", False)

    def compute(lst, index, item):
        n = len(_check_list(lst))
        i = int(index)
        if i < 0 or (i >= n and not resize):
            raise _bad(f"Trying to modify element {i} in a list with "
                       f"{n} elements.")
        try:
            _merge(lst.element_shape, np.shape(item))
        except errors.InvalidArgumentError:
            raise _bad(
                f"Tried to set a tensor with incompatible shape at a list index. Item element shape: "
                f"{_fmt(np.shape(item))} list shape: {_fmt(lst.element_shape)}") from None
        return (lst.resized(i + 1) if i >= n else lst).set(i, item)

    return compute


@_list_kernel("TensorListGetItem")
def _get_item(node, dtype):
    def compute(lst, index, element_shape):
        n = len(_check_list(lst))
        i = int(index)
        if i < 0 or i >= n:
            raise _bad(f"Trying to access element {i} in a list with {n} "
                       f"elements.")
        items, _ = _elements(lst, [i], _shape_from(element_shape), dtype, "TensorListGetItem")
        return items[0]

    return compute


@_list_kernel("TensorListStack")
def _list_stack(node, dtype):
    want = node.attrs.get("num_elements", -1)

    def compute(lst, element_shape):
        n = len(_check_list(lst))
        if want >= 0 and n != want:
            raise _bad(f"Operation expected a list with {want} elements but "
                       f"got a list with {n} elements.")
        items, shape = _elements(lst, range(n), _shape_from(element_shape), dtype, "TensorListStack")
        return _stack(items, shape, dtype, "TensorListStack")

    return compute


@_list_kernel("TensorListGather")
def _gather(node, dtype):
    def compute(lst, indices, element_shape):
        n = len(_check_list(lst))
        idx = np.asarray(indices).reshape(-1)
        bad = [int(i) for i in idx if i < 0 or i >= n]
        if bad:
            raise _bad(f"Trying to access element {bad[0]} in a list with {n} "
                       f"elements.")
        picked = [int(i) for i in idx]
        items, shape = _elements(lst, picked, _shape_from(element_shape), dtype, "TensorListGather")
        return _stack(items, shape, dtype, "TensorListGather")

    return compute


@_list_kernel("TensorListScatterIntoExistingList")
def _scatter(node, dtype):
    def compute(lst, tensor, indices):
        items = list(_check_list(lst).items)
        arr = np.asarray(tensor)
        idx = np.asarray(indices).reshape(-1)
        if arr.ndim == 0 or arr.shape[0] != idx.size:
            raise _bad(f"Specified a list with shape {_fmt(arr.shape)} from a "
                       f"tensor with {idx.size} indices")
        _merge(lst.element_shape, arr.shape[1:])
        if idx.size and idx.min() < 0:
            raise _bad(f"Indices must be non-negative, got {int(idx.min())}")
        if idx.size and idx.max() >= len(items):
            items.extend([None] * (int(idx.max()) + 1 - len(items)))
        for j, i in enumerate(idx):
            items[int(i)] = arr[j]
        return TensorListValue(items, lst.element_shape)

    return compute


@_list_kernel("TensorListLength")
def _length(node, dtype):
    return lambda lst: np.int32(len(_check_list(lst)))


@_list_kernel("TensorListConcatV2")
def _concat(node, dtype):
    def compute(lst, element_shape, leading_dims):
        _check_list(lst)
        shape = _merge(lst.element_shape, _shape_from(element_shape))
        items = []
        for i, item in enumerate(lst.items):
            if item is None:
                raise _bad(f"TensorListConcat: element {i} was never written.")
            if np.ndim(item) == 0:
                raise _bad("Concat requires elements to be at least vectors, "
                           "found scalars instead.")
            items.append(item)
        lengths = np.array([np.shape(x)[0] for x in items], dtype=np.int64)
        if not items:
            if shape is None or not _full(shape[1:]):
                raise _bad(f"All except the first dimension must be fully "
                           f"defined when concating an empty tensor list. "
                           f"element_shape: {_fmt(shape)}")
            return np.zeros((0,) + tuple(shape[1:]), dtype), lengths
        try:
            return np.concatenate(items).astype(dtype, copy=False), lengths
        except ValueError as e:
            raise _bad(f"Incompatible shapes during TensorListConcat: {e}") from e

    return compute


@_list_kernel("TensorListSplit")
def _split(node, dtype):
    def compute(tensor, element_shape, lengths):
        arr = np.asarray(tensor)
        lens = np.asarray(lengths, dtype=np.int64).reshape(-1)
        if arr.ndim == 0:
            raise _bad("Tensor must be at least a vector, but saw shape: []")
        if lens.size and lens.min() < 0 or int(lens.sum()) != arr.shape[0]:
            raise _bad(f"Unable to split tensor: expected the sum of lengths "
                       f"({int(lens.sum())}) to equal the first dimension of "
                       f"the tensor ({arr.shape[0]}).")
        cuts = np.cumsum(lens)[:-1]
        shape = _shape_from(element_shape)
        if shape is not None:
            shape = (None,) + tuple(shape[1:])
        return TensorListValue(np.split(arr, cuts) if lens.size else [], shape)

    return compute
