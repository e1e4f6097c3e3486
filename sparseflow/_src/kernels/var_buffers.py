"""Private buffers of the kernels that write variables: updates cost O(rows written), not O(variable).

A stored array is never written while anyone may hold it. Each kernel node that updates a
variable keeps, per variable (and slot), one *private* buffer, and an update goes:

1. ``take_spare``: the node's buffer, brought up to date with the value it replaces. The buffer
   holds the value from before this node's previous update; when the variable still holds what
   this node published then, only the rows that update changed are copied (``rows``); otherwise
   the whole value is copied (another op wrote the variable since).
2. the kernel writes its update into the buffer in place (a few rows, or every element);
3. ``publish``: the buffer becomes the variable's value (read-only);
4. ``retire``: the replaced array becomes the node's next buffer, but only when nothing else
   references it (its reference count shows no reader, and after the swap no new reader can
   reach it); otherwise it is left to its readers and a new buffer is allocated next time.

A dense update that rewrites every element may skip the buffer (``claim_in_place``): when no one
but the variable holds its array, the update writes that array in place, with the variable's
``updating`` flag set so that a reader arriving meanwhile waits for the lock (``VariableRef.read``);
``publish`` then records it as the node's and ``finish_in_place`` lets readers through. That
saves the buffer's memory and a third of the update's memory traffic (the new values go where
the old ones were just read).

Example:
    >>> import numpy as np
    >>> from sparseflow._src.kernels.resources import VariableRef
    >>> ref = VariableRef("v"); ref.value = np.zeros((4, 2), np.float32)
    >>> st = Buffers(1)
    >>> old = [ref.value]
    >>> buf = take_spare(st, 0, ref, old[0], np.float32, rows_valid=True)
    >>> buf[1] = 5.0
    >>> publish([ref], st, [buf], np.float32); st.rows = np.array([1]); retire(st, old)
    >>> ref.value[1].tolist(), ref.value.flags.writeable
    ([5.0, 5.0], False)
"""

from __future__ import annotations

import sys
import weakref

import numpy as np

from sparseflow._src.kernels.jit_cache import cached_njit

__all__ = ["Buffers", "claim_in_place", "copy_rows", "finish_in_place", "publish", "retire", "take_spare"]


class Buffers:
    """A kernel node's private buffers for one variable and its slots."""

    __slots__ = ("published", "spares", "rows")

    def __init__(self, n: int):
        self.published = [None] * n  # weak references to the arrays this node swapped in last
        self.spares = [None] * n  # private buffers (the values from before that update)
        self.rows = None  # flat row indices that update changed; None: every element


def _calibrate(olds: list) -> int:
    """The reference count ``retire`` sees for an array that only it holds (same call shape)."""
    old = olds[0]
    olds[0] = None
    return sys.getrefcount(old)


_EXCLUSIVE_REFS = _calibrate([np.empty(1)])
_NUMBA_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                                 np.uint8, np.uint16, np.uint32, np.uint64, np.bool_))


def retire(st: Buffers, olds: list) -> None:
    """Keeps each replaced array as the next private buffer when no one else holds it."""
    for i in range(len(olds)):
        old = olds[i]
        olds[i] = None
        st.spares[i] = None
        if isinstance(old, np.ndarray) and old.flags.owndata and old.flags.c_contiguous and \
                sys.getrefcount(old) <= _EXCLUSIVE_REFS:
            old.flags.writeable = True
            st.spares[i] = old


def claim_in_place(st: Buffers, i: int, ref, olds: list, work) -> bool:
    """Under ``ref.lock``: True when ``olds[i]``, the value of ``ref`` just read, may be written in
    place (held by ``ref`` and ``olds`` only, a C-order array of dtype ``work`` that owns its data);
    ``ref.updating`` is then set and the array writeable until :func:`finish_in_place`. The flag is
    set before the count is taken: a reader that takes the array after it waits for the lock."""
    old = olds[i]
    if not (isinstance(old, np.ndarray) and old.dtype == work and old.flags.owndata and old.flags.c_contiguous
            and old.ndim and old.size and ref.value is old):  # a 0-d value is published as a scalar
        return False
    ref.updating = True
    olds[i] = None
    held_by_others = sys.getrefcount(old) > _EXCLUSIVE_REFS + 1  # + 1: ``ref.value``
    olds[i] = old
    if held_by_others:
        ref.updating = False
        return False
    old.flags.writeable = True
    st.spares[i] = None  # not needed while updates go in place (one is made again if one cannot)
    return True


def finish_in_place(ref) -> None:
    """Ends an update in place of ``ref``'s value (see :func:`claim_in_place`), published or not:
    read-only again, readers let through."""
    ref.value.flags.writeable = False
    ref.updating = False


def publish(refs, st: Buffers, news: list, out_dtype) -> None:
    """Makes each ``news[i]`` (read-only, cast to ``out_dtype``) the value of ``refs[i]``."""
    for i, ref in enumerate(refs):
        new = news[i]
        if new.dtype != out_dtype:
            new = new.astype(out_dtype)
        if new.ndim == 0:
            ref.assign(new[()])
            st.published[i] = None
            continue
        new.flags.writeable = False
        ref.value = new
        ref.writer = st
        st.published[i] = weakref.ref(new)  # weak: the array can still be retired by another node


def take_spare(st: Buffers, i: int, ref, old, work, rows_valid: bool, fill: bool = True):
    """Buffer ``i`` (dtype ``work``, ``old``'s shape, C order) holding ``old``, the value of ``ref``.

    ``rows_valid``: the update about to run keeps ``st.rows``' meaning (a sparse update), so a
    buffer one update behind is caught up by copying those rows; that holds only while ``ref``
    still has the very array this node published last, and no other node has published since
    (another node may have reused that array as its buffer and published it again: ``writer``).
    ``fill=False``: the caller overwrites every element, so the buffer's content does not matter."""
    shape = np.shape(old)
    spare = st.spares[i]
    st.spares[i] = None
    if spare is None or spare.shape != shape or spare.dtype != work:
        if not fill:
            return np.empty(shape, work)
        return np.array(old, dtype=work, order="C", copy=True)
    if not fill:
        return spare
    published = st.published[i]() if st.published[i] is not None else None
    if rows_valid and st.rows is not None and published is old and ref.writer is st and len(shape) >= 1 \
            and shape[0] > 0:
        width = spare.size // shape[0]
        dst, src = spare.reshape(shape[0], width), np.asarray(old).reshape(shape[0], width)
        if spare.dtype in _NUMBA_DTYPES:
            copy_rows(dst, src, st.rows)
        else:
            dst[st.rows] = src[st.rows]
    else:
        np.copyto(spare, old, casting="unsafe")
    return spare


@cached_njit(nogil=True)
def copy_rows(dst, src, idx):
    """``dst[idx] = src[idx]`` for 2-D arrays (brings a stale private buffer up to date)."""
    for r in range(idx.size):
        j = idx[r]
        for c in range(dst.shape[1]):
            dst[j, c] = src[j, c]
