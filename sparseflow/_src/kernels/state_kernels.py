"""CPU kernels of reference variables: VariableV2, Assign*, Scatter*, IsVariableInitialized, CountUpTo.

A variable's storage is a ``VariableRef`` in the device's ResourceMgr. Updates never write into
the stored array: they write into the kernel node's private buffer and swap it in under the
variable's lock (``var_buffers``), so a value read earlier in a step (or fetched by the user)
never changes, and stored arrays are read-only. A ``Scatter*`` update costs O(rows it writes):
the buffer is one update behind and is caught up by copying the rows that update changed.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.jit_cache import cached_njit
from sparseflow._src.kernels.registry import register_kernel
from sparseflow._src.kernels.resources import VariableRef
from sparseflow._src.kernels.var_buffers import Buffers, publish, retire, take_spare


def _bad(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _fmt_shape(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _store(ref: VariableRef, value, np_dtype):
    arr = np.array(value, dtype=np_dtype, copy=True)
    if arr.ndim == 0:
        ref.assign(arr[()])  # an immutable NumPy scalar, as 0-d values flow elsewhere
        return
    arr.flags.writeable = False
    ref.assign(arr)


def _current(ref: VariableRef):
    v = ref.value
    if v is None:
        raise errors.FailedPreconditionError(None, None, f"Attempting to use uninitialized value {ref.name}")
    return v


@register_kernel("VariableV2", stateful=True)
def _variable_v2(node):
    a = node.attrs
    name = a.get("shared_name") or node.name
    shape = a.get("shape")
    dims = tuple(shape.as_list()) if shape is not None and shape.is_fully_defined() else None
    ref = node.resources.lookup_or_create(a.get("container", ""), name, VariableRef, dtype=a["dtype"],
                                          shape=dims)
    return lambda: ref


@register_kernel("IsVariableInitialized")
def _is_initialized(node):
    return lambda ref: np.bool_(ref.is_initialized)


def _buffers(table: dict, ref: VariableRef) -> Buffers:
    st = table.get(ref)
    if st is None:
        st = table[ref] = Buffers(1)
    return st


def _replace(buffers: dict, ref: VariableRef, np_dtype, write, rows=None, fill: bool = True) -> None:
    """Under ``ref.lock``: ``write(buffer, old)`` into this node's buffer holding ``ref``'s value
    (only the ``rows`` it changes need catching up next time; None: any element), then swaps the
    buffer in. Callers hold no reference to the old value, so it can become the next buffer."""
    dtype = np.dtype(np_dtype)
    st = _buffers(buffers, ref)
    olds = [ref.value]
    new = take_spare(st, 0, ref, olds[0], dtype, rows_valid=rows is not None, fill=fill)
    try:
        write(new, olds[0])
    except BaseException:
        st.spares[0] = None  # partly written: never reused
        raise
    publish([ref], st, [new], dtype)
    st.rows = rows
    retire(st, olds)


def _is_array(v) -> bool:
    return isinstance(v, np.ndarray) and v.ndim > 0


@register_kernel("Assign")
def _assign(node):
    validate = node.attrs.get("validate_shape", True)
    np_dtype = node.attrs["T"].as_numpy_dtype
    buffers: dict = {}

    def compute(ref, value):
        with ref.lock:
            shape = np.shape(ref.value) if ref.value is not None else ref.shape
            if validate and shape is not None and tuple(shape) != np.shape(value):
                raise _bad(
                    f"Assign requires shapes of both tensors to match. lhs shape= "
                    f"{_fmt_shape(shape)} rhs shape= {_fmt_shape(np.shape(value))}")
            if _is_array(ref.value) and ref.value.shape == np.shape(value):
                _replace(buffers, ref, np_dtype, lambda new, old: np.copyto(new, value, casting="unsafe"),
                         fill=False)
            else:
                _store(ref, value, np_dtype)
        return ref

    return compute


def _dense_update(fn):
    def factory(node):
        np_dtype = node.attrs["T"].as_numpy_dtype
        buffers: dict = {}

        def compute(ref, value):
            with ref.lock:
                old = ref.value
                if old is None:
                    raise errors.FailedPreconditionError(
                        None, None, f"Attempting to use uninitialized value {ref.name}")
                if np.shape(old) != np.shape(value):
                    raise _bad(
                        f"Parameters and update must be the same size: {_fmt_shape(np.shape(old))} "
                        f"vs. {_fmt_shape(np.shape(value))}")
                if not _is_array(old):
                    _store(ref, fn(old, value), np_dtype)
                    return ref
                del old  # the old value may become this node's next buffer
                value = np.asarray(value, dtype=np_dtype)
                _replace(buffers, ref, np_dtype, lambda new, old: fn(old, value, out=new, casting="unsafe"),
                         fill=False)
            return ref

        return compute

    return factory


register_kernel("AssignAdd")(_dense_update(np.add))
register_kernel("AssignSub")(_dense_update(np.subtract))


def _trunc_div(a, b):
    """C-style integer division (rounds toward zero), as TensorFlow's integer ScatterDiv."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


_ROW_LOOP_KINDS = {"update": 0, "add": 1, "sub": 2}
_ROW_LOOP_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


@cached_njit(nogil=True)
def _scatter_rows(arr, idx, upd, op):
    """``arr[idx[r]] (=, +=, -=) upd[r]`` for r in order (op 0, 1, 2); 2-D ``arr`` and ``upd``."""
    for r in range(idx.size):
        j = idx[r]
        for c in range(arr.shape[1]):
            if op == 0:
                arr[j, c] = upd[r, c]
            elif op == 1:
                arr[j, c] += upd[r, c]
            else:
                arr[j, c] -= upd[r, c]


def _apply_rows(arr, idx, upd, kind, is_int):
    """Applies ``kind`` at rows ``idx`` of the private buffer ``arr``; duplicates apply in order."""
    if kind in _ROW_LOOP_KINDS and not isinstance(idx, tuple) and arr.dtype in _ROW_LOOP_DTYPES and arr.ndim \
            and arr.shape[0] and arr.flags.c_contiguous:
        width = arr.size // arr.shape[0]
        rows = np.broadcast_to(np.asarray(upd, arr.dtype), (idx.size,) + arr.shape[1:]).reshape(idx.size, width)
        _scatter_rows(arr.reshape(arr.shape[0], width), idx.astype(np.intp, copy=False), rows,
                      _ROW_LOOP_KINDS[kind])
        return
    if kind == "update":
        arr[idx] = upd
    elif kind == "add":
        np.add.at(arr, idx, upd)
    elif kind == "sub":
        np.subtract.at(arr, idx, upd)
    elif kind == "mul":
        np.multiply.at(arr, idx, upd)
    elif kind == "min":
        np.minimum.at(arr, idx, upd)
    elif kind == "max":
        np.maximum.at(arr, idx, upd)
    elif kind == "div" and not is_int:
        np.divide.at(arr, idx, upd)
    else:  # integer division, sequentially so duplicate indices divide repeatedly
        upd = np.broadcast_to(upd, np.shape(arr[idx]))
        rows = idx if isinstance(idx, tuple) else (idx,)
        for j in range(len(rows[0])):
            at = tuple(r[j] for r in rows)
            arr[at] = _trunc_div(np.asarray(arr[at]), np.asarray(upd[j]))


def _scatter_into(buffers, ref, flat_rows, upd, kind, is_int, np_dtype):
    """Applies ``kind`` to rows ``flat_rows`` of ``ref``'s value in this node's buffer and swaps it
    in: O(rows), not O(variable)."""
    _replace(buffers, ref, np_dtype, lambda new, old: _apply_rows(new, flat_rows, upd, kind, is_int),
             rows=flat_rows.astype(np.intp))  # repeated rows are caught up twice: harmless


def _scatter(kind):
    def factory(node):
        np_dtype = node.attrs["T"].as_numpy_dtype
        is_int = np.issubdtype(np.dtype(np_dtype), np.integer)
        buffers: dict = {}

        def compute(ref, indices, updates):
            with ref.lock:
                params = _current(ref)
                indices = np.asarray(indices)
                updates = np.asarray(updates, dtype=np_dtype)
                pshape = np.shape(params)
                if len(pshape) < 1:
                    raise _bad(f"params must be at least 1-D, got shape "
                               f"{_fmt_shape(pshape)}")
                if updates.ndim and updates.shape != indices.shape + pshape[1:]:
                    raise _bad(
                        f"Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = "
                        f"[], got updates.shape {_fmt_shape(updates.shape)}, indices.shape "
                        f"{_fmt_shape(indices.shape)}, params.shape {_fmt_shape(pshape)}")
                flat = indices.reshape(-1)
                bad = np.flatnonzero((flat < 0) | (flat >= pshape[0]))
                if bad.size:
                    raise _bad(f"indices[{bad[0]}] = {flat[bad[0]]} is not in "
                               f"[0, {pshape[0]})")
                upd = updates.reshape((flat.size,) + pshape[1:]) if updates.ndim else updates
                del params  # the old value may become this node's next buffer
                _scatter_into(buffers, ref, flat, upd, kind, is_int, np_dtype)
            return ref

        return compute

    return factory


for _op, _kind in (("ScatterUpdate", "update"), ("ScatterAdd", "add"), ("ScatterSub", "sub"),
                   ("ScatterMul", "mul"), ("ScatterDiv", "div"), ("ScatterMin", "min"),
                   ("ScatterMax", "max")):
    register_kernel(_op)(_scatter(_kind))


def _scatter_nd_into(buffers, ref, row_shape, flat, upd, kind, np_dtype):
    """ScatterNd* through the buffers: the indexed axes seen as one row axis (``row_shape``);
    ``flat`` indexes it. Rows of the variable's first axis are what the buffers track."""
    k = len(np.shape(ref.value)) - (len(row_shape) - 1)
    per = int(np.prod(np.shape(ref.value)[1:k], dtype=np.int64)) if k else 0
    _replace(buffers, ref, np_dtype, lambda new, old: _apply_rows(new.reshape(row_shape), flat, upd, kind, False),
             rows=(flat // per).astype(np.intp) if per else None)


def _scatter_nd(kind):
    def factory(node):
        np_dtype = node.attrs["T"].as_numpy_dtype
        buffers: dict = {}

        def compute(ref, indices, updates):
            with ref.lock:
                params = _current(ref)
                indices = np.asarray(indices)
                updates = np.asarray(updates, dtype=np_dtype)
                pshape = np.shape(params)
                k = indices.shape[-1]
                if k > len(pshape):
                    raise _bad(f"The last dimension of indices ({k}) must be <= "
                               f"the rank of ref ({len(pshape)})")
                want = indices.shape[:-1] + pshape[k:]
                if updates.shape != want:
                    raise _bad(
                        f"updates has shape {_fmt_shape(updates.shape)} but must have shape "
                        f"indices.shape[:-1] + ref.shape[indices.shape[-1]:] = {_fmt_shape(want)}")
                rows = indices.reshape(-1, k)
                for j, row in enumerate(rows):
                    if any(r < 0 or r >= d for r, d in zip(row, pshape)):
                        raise _bad(
                            f"indices[{j}] = [{', '.join(str(int(r)) for r in row)}] does not index "
                            f"into param shape {_fmt_shape(pshape)}")
                flat = np.ravel_multi_index(tuple(rows.T), pshape[:k]) if k else np.zeros(rows.shape[0], np.intp)
                row_shape = (int(np.prod(pshape[:k], dtype=np.int64)),) + tuple(pshape[k:])
                upd = updates.reshape((rows.shape[0],) + pshape[k:])
                if not _is_array(params) or params.dtype != np.dtype(np_dtype):
                    new = np.array(params, dtype=np_dtype, copy=True)
                    _apply_rows(new.reshape(row_shape), flat, upd, kind, False)
                    _store(ref, new, np_dtype)
                    return ref
                del params  # the old value may become this node's next buffer
                _scatter_nd_into(buffers, ref, row_shape, flat, upd, kind, np_dtype)
            return ref

        return compute

    return factory


for _op, _kind in (("ScatterNdUpdate", "update"), ("ScatterNdAdd", "add"), ("ScatterNdSub", "sub")):
    register_kernel(_op)(_scatter_nd(_kind))


@register_kernel("CountUpTo")
def _count_up_to(node):
    limit = node.attrs["limit"]
    np_dtype = node.attrs["T"].as_numpy_dtype

    def compute(ref):
        with ref.lock:
            before = _current(ref)
            if np.ndim(before) != 0:
                raise errors.InvalidArgumentError(
                    None, None, f"input is not a scalar: {list(np.shape(before))} (CountUpTo counts a scalar "
                                f"variable)")
            if before >= limit:
                raise errors.OutOfRangeError(None, None, f"Reached limit of {limit}")
            _store(ref, before + 1, np_dtype)
        return np_dtype(before)

    return compute
