"""Ring algorithms of the collectives (all-reduce, all-gather, broadcast), chunked and pipelined,
over any transport: the ``Mailbox`` where pieces arrive and the ``Link`` that sends to the next
member of the ring.

A collective among ``P`` members (ranks ``0..P-1``, ring order) moves its tensor in *pieces* of at
most ``piece_bytes``. Every piece is a message keyed by ``(exec_id, dst_rank, step, piece)``;
``exec_id`` is ``(group_key, generation, instance_key, seq)``, the same on every member for one run
of one collective. Sends are queued (each link has its own sender), so a member reduces piece ``j``
while piece ``j+1`` is still on its way: the ring is pipelined.

- **All-reduce** (reduce-scatter then all-gather): the flat buffer is cut into ``P`` segments; at
  step ``s < P-1`` rank ``r`` sends segment ``r-s`` and merges segment ``r-s-1`` from its
  predecessor; then ``P-1`` steps pass the finished segments on. Every segment is merged once,
  along one chain, so every member ends with bit-identical values.
- **All-gather**: ``P-1`` steps pass each member's tensor around; members may differ in dim 0.
- **Broadcast**: a pipelined chain from the root along the ring.

Every message carries a small metadata tuple (kind, dtype, sizes), checked by the receiver: members
that disagree on shape or dtype get an ``InvalidArgumentError`` naming the other member, not
garbage. Nothing received is unpickled: payloads are raw bytes viewed as the agreed dtype.

Example (two members in one process, in-process links):
    >>> import numpy as np, threading
    >>> box = Mailbox()
    >>> links = [InProcessLink(box, "m1"), InProcessLink(box, "m0")]
    >>> bufs = [np.arange(5, dtype=np.float32), np.ones(5, np.float32)]
    >>> def run(r):
    ...     ring = Ring(r, 2, (1, 1, 0, 0), links[r], box, meta=(KIND_REDUCE, 1, 5, 0), piece_bytes=8)
    ...     all_reduce(ring, bufs[r], np.add)
    >>> ts = [threading.Thread(target=run, args=(r,)) for r in (0, 1)]
    >>> _ = [t.start() for t in ts]; _ = [t.join() for t in ts]
    >>> bufs[0].tolist() == bufs[1].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    True
"""

from __future__ import annotations

import collections
import threading
import time

import numpy as np

from sparseflow._src.framework import errors

KIND_REDUCE, KIND_GATHER, KIND_BCAST = 1, 2, 3
KIND_NAMES = {KIND_REDUCE: "all-reduce", KIND_GATHER: "all-gather", KIND_BCAST: "broadcast"}
DEFAULT_PIECE_BYTES = 1 << 20
_POLL = 0.25  # seconds between cancellation checks of a waiting member


class Message:
    """A piece that arrived: ``meta`` (tuple of ints), ``data`` (bytes-like), ``release()`` when done
    with ``data`` (a shared-memory slot is then free for the next piece)."""

    __slots__ = ("meta", "data", "_release", "src")

    def __init__(self, meta, data, release=None, src=-1):
        self.meta = tuple(meta)
        self.data = data
        self._release = release
        self.src = src

    def array(self, dtype: np.dtype, count: int, what: str) -> np.ndarray:
        n = len(self.data) if not isinstance(self.data, np.ndarray) else self.data.nbytes
        if n != count * dtype.itemsize:
            raise errors.InternalError(None, None, f"{what}: a piece of {n} bytes arrived where {count} x "
                                                   f"{dtype.itemsize} bytes were expected.")
        return np.frombuffer(self.data, dtype=dtype, count=count)

    def release(self):
        r, self._release = self._release, None
        if r is not None:
            r()


class Mailbox:
    """Pieces that arrived, by ``(exec_id, dst_rank, step, piece)``, until a member takes them.
    ``fail(pred, error)`` ends the waits of the runs ``pred(exec_id)`` selects (a peer died, a
    member aborted) and drops their pieces, now and when they arrive later."""

    def __init__(self):
        self._cv = threading.Condition()
        self._items: dict = {}
        self._failed: collections.OrderedDict = collections.OrderedDict()  # exec_id -> error
        self._fail_rules: list = []  # (pred, error): runs that fail as soon as they look

    def put(self, key, msg: Message):
        with self._cv:
            err = self._failure_of(key[0])
            if err is not None or key in self._items:
                msg.release()  # a run that failed here (or a duplicate): dropped
                return
            self._items[key] = msg
            self._cv.notify_all()

    def _failure_of(self, exec_id):
        err = self._failed.get(exec_id)
        if err is None:
            for pred, e in self._fail_rules:
                if pred(exec_id):
                    return e
        return err

    def take(self, key, deadline: float, check, on_timeout) -> Message:
        """The message under ``key``; ``check()`` is called while waiting (raises to stop), and
        ``on_timeout()`` builds the error raised at ``deadline``."""
        with self._cv:
            while True:
                msg = self._items.pop(key, None)
                if msg is not None:
                    return msg
                err = self._failure_of(key[0])
                if err is not None:
                    raise err
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cv.wait(min(left, _POLL))
                if check is not None:
                    self._cv.release()
                    try:
                        check()
                    finally:
                        self._cv.acquire()
        raise on_timeout()

    def fail(self, exec_id, error: BaseException):
        """Fails one run: its waiters raise ``error``, its pieces are dropped."""
        with self._cv:
            self._failed[exec_id] = error
            while len(self._failed) > 4096:
                self._failed.popitem(last=False)
            self._drop(lambda e: e == exec_id)
            self._cv.notify_all()

    def fail_matching(self, pred, error: BaseException, drop: bool = True):
        """Fails every run ``pred(exec_id)`` selects, present and future (a broken group generation).
        ``drop=False`` keeps the pieces already here (a peer that exited after sending them)."""
        with self._cv:
            self._fail_rules.append((pred, error))
            del self._fail_rules[:-64]
            if drop:
                self._drop(pred)
            self._cv.notify_all()

    def forget(self, exec_id, dst_rank: int):
        """Drops what is left of a finished run for member ``dst_rank``."""
        with self._cv:
            for k in [k for k in self._items if k[0] == exec_id and k[1] == dst_rank]:
                self._items.pop(k).release()

    def _drop(self, pred):
        for k in [k for k in self._items if pred(k[0])]:
            self._items.pop(k).release()

    def __len__(self):
        return len(self._items)


class Link:
    """Sends pieces to one member (the next in the ring). ``send`` queues and returns at once;
    the bytes of ``array`` are read later, so the caller leaves them alone until ``wait_sent``
    (the ring's order guarantees it). Transports implement ``_transmit``; a failed transmit fails
    the run through ``on_error(exec_id, error)``."""

    def __init__(self, peer: str, on_error=None):
        self.peer = peer
        self.on_error = on_error
        self._queue: collections.deque = collections.deque()
        self._cv = threading.Condition()
        self._queued = 0
        self._done = 0
        self._errors: dict = {}  # exec_id -> error
        self._closed = False
        self._busy = False  # a piece is being handed to the transport (by the caller or the sender thread)
        self._thread = None

    def send(self, exec_id, dst_rank: int, step: int, piece: int, src_rank: int, meta, array: np.ndarray) -> int:
        """Queues a piece; returns a ticket for ``wait_sent``. When nothing is queued and the
        transport can take the piece without waiting, it is handed over in the caller's thread (no
        thread switch per piece)."""
        item = (exec_id, dst_rank, step, piece, src_rank, meta, array)
        with self._cv:
            if self._closed:
                raise errors.UnavailableError(None, None, f"The link to {self.peer} is closed.")
            self._queued += 1
            ticket = self._queued
            direct = not self._queue and not self._busy and self._ready()
            if direct:
                self._busy = True
            else:
                self._queue.append(item)
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=f"sparseflow-link-{self.peer}",
                                                    daemon=True)
                    self._thread.start()
                self._cv.notify_all()
                return ticket
        self._handle(item)
        return ticket

    def _ready(self) -> bool:
        """True when ``_transmit`` would not wait now (a transport's free slot or call window)."""
        return False

    def wait_sent(self, exec_id, ticket: int, deadline: float, check=None):
        """Waits until every piece queued up to ``ticket`` has left the caller's buffer."""
        with self._cv:
            while self._done < ticket:
                err = self._errors.get(exec_id)
                if err is not None:
                    raise err
                left = deadline - time.monotonic()
                if left <= 0:
                    raise errors.DeadlineExceededError(None, None, f"Sending to {self.peer} did not finish in time.")
                self._cv.wait(min(left, _POLL))
                if check is not None:
                    check()
            err = self._errors.get(exec_id)
            if err is not None:
                raise err

    def _run(self):
        while True:
            with self._cv:
                while (not self._queue or self._busy) and not (self._closed and not self._queue):
                    self._cv.wait()
                if self._closed and not self._queue:
                    return
                item = self._queue.popleft()
                self._busy = True
            self._handle(item)

    def _handle(self, item):
        exec_id = item[0]
        try:
            if exec_id not in self._errors:
                self._transmit(*item)
        except BaseException as e:  # noqa: BLE001 - reported to the run that sent it
            self.fail(exec_id, e)
        with self._cv:
            self._done += 1
            self._busy = False
            self._cv.notify_all()

    def fail(self, exec_id, error: BaseException):
        with self._cv:
            self._errors[exec_id] = error
            while len(self._errors) > 1024:
                self._errors.pop(next(iter(self._errors)))
            self._cv.notify_all()
        if self.on_error is not None:
            self.on_error(exec_id, error)

    def _transmit(self, exec_id, dst_rank, step, piece, src_rank, meta, array):
        raise NotImplementedError

    def flush(self, timeout: float) -> bool:
        """Waits (up to ``timeout`` s) until every queued piece was handed to the transport."""
        end = time.monotonic() + timeout
        with self._cv:
            while self._done < self._queued:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cv.wait(min(left, _POLL))
        return True

    def close(self, timeout: float = 5.0):
        """Delivers what is queued (up to ``timeout`` s: peers may still wait for the last pieces
        of a run that finished here), then stops the sender."""
        self.flush(timeout)
        with self._cv:
            self._closed = True
            self._cv.notify_all()


class InProcessLink(Link):
    """To a member in this process: the piece is copied straight into its mailbox."""

    def __init__(self, mailbox: Mailbox, peer: str):
        super().__init__(peer)
        self._box = mailbox

    def send(self, exec_id, dst_rank, step, piece, src_rank, meta, array):
        self._box.put((exec_id, dst_rank, step, piece), Message(meta, array.tobytes(), src=src_rank))
        return 0

    def wait_sent(self, exec_id, ticket, deadline, check=None):
        return None


class Ring:
    """One member's view of one run: its rank, the ring size, the run's id, the link to the next
    member, where its pieces arrive, and what every piece's metadata must say."""

    def __init__(self, rank: int, size: int, exec_id, link: Link | None, mailbox: Mailbox, meta=(),
                 piece_bytes: int = DEFAULT_PIECE_BYTES, deadline: float | None = None, check=None,
                 on_timeout=None, describe=None):
        self.rank = rank
        self.size = size
        self.exec_id = exec_id
        self.link = link
        self.mailbox = mailbox
        self.meta = tuple(meta)
        self.piece_bytes = max(int(piece_bytes), 64)
        self.deadline = deadline if deadline is not None else time.monotonic() + 3600.0
        self.check = check
        self.on_timeout = on_timeout or (lambda: errors.DeadlineExceededError(None, None, "Collective timed out."))
        self.describe = describe or (lambda rank: f"rank {rank}")
        self._ticket = 0

    @property
    def prev(self) -> int:
        return (self.rank - 1) % self.size

    def send(self, step: int, piece: int, array: np.ndarray, meta=None):
        self._ticket = self.link.send(self.exec_id, (self.rank + 1) % self.size, step, piece, self.rank,
                                      self.meta if meta is None else meta, array)

    def recv(self, step: int, piece: int) -> Message:
        return self.mailbox.take((self.exec_id, self.rank, step, piece), self.deadline, self.check, self.on_timeout)

    def check_meta(self, msg: Message, expected, what: str):
        got = msg.meta[:len(expected)]
        if got != tuple(expected):
            msg.release()
            raise errors.InvalidArgumentError(
                None, None, f"{what}: {self.describe(msg.src if msg.src >= 0 else self.prev)} called it with "
                            f"{describe_meta(got)}, this member ({self.describe(self.rank)}) with "
                            f"{describe_meta(expected)}. Every member must pass the same kind of collective, "
                            f"dtype and size.")

    def finish(self):
        """Waits until this member's last pieces have left its buffer."""
        if self.link is not None and self._ticket:
            self.link.wait_sent(self.exec_id, self._ticket, self.deadline, self.check)


def describe_meta(meta) -> str:
    from sparseflow._src.framework import dtypes

    if len(meta) < 3:
        return str(meta)
    kind = KIND_NAMES.get(meta[0], f"kind {meta[0]}")
    try:
        dt = dtypes.as_dtype(int(meta[1])).name
    except (TypeError, ValueError, KeyError):
        dt = f"dtype {meta[1]}"
    if meta[0] == KIND_REDUCE:
        return f"{kind} of {meta[2]} {dt} elements" + (f" (merge op {MERGE_NAMES.get(meta[3], meta[3])})"
                                                      if len(meta) > 3 else "")
    if meta[0] == KIND_GATHER:
        return f"{kind} of {dt} rows of shape {list(meta[4:])}"
    return f"{kind} of {dt} shape {list(meta[4:])}"


MERGE_OPS = {"Add": (0, np.add), "Mul": (1, np.multiply), "Min": (2, np.minimum), "Max": (3, np.maximum)}
MERGE_NAMES = {code: name for name, (code, _) in MERGE_OPS.items()}


def _pieces(lo: int, hi: int, per_piece: int) -> list[tuple[int, int]]:
    """[lo, hi) in pieces of at most ``per_piece`` elements; an empty range is one empty piece."""
    if hi <= lo:
        return [(lo, lo)]
    return [(a, min(a + per_piece, hi)) for a in range(lo, hi, per_piece)]


def all_reduce(ring: Ring, flat: np.ndarray, ufunc) -> None:
    """Merges ``flat`` (a writable, contiguous 1-D array holding this member's values) with the
    other members' in place, by ``ufunc`` (np.add, ...)."""
    p, r = ring.size, ring.rank
    if p == 1:
        return
    n = flat.shape[0]
    per_piece = max(1, ring.piece_bytes // max(flat.itemsize, 1))
    bounds = [n * i // p for i in range(p + 1)]
    pieces = [_pieces(bounds[i], bounds[i + 1], per_piece) for i in range(p)]
    what = "Collective all-reduce"
    for j, (lo, hi) in enumerate(pieces[r]):
        ring.send(0, j, flat[lo:hi])
    last = 2 * p - 3
    for s in range(last + 1):
        seg = (r - s - 1) % p if s < p - 1 else (r - (s - p + 1)) % p
        for j, (lo, hi) in enumerate(pieces[seg]):
            msg = ring.recv(s, j)
            ring.check_meta(msg, ring.meta, what)
            part = flat[lo:hi]
            view = msg.array(flat.dtype, hi - lo, what)
            if s < p - 1:
                ufunc(part, view, out=part)
            else:
                part[...] = view
            msg.release()
            if s < last:
                ring.send(s + 1, j, part)
    ring.finish()


def broadcast(ring: Ring, flat: np.ndarray, root: int) -> None:
    """Copies the root's ``flat`` into every other member's ``flat`` (pipelined along the ring)."""
    p, r = ring.size, ring.rank
    if p == 1:
        return
    per_piece = max(1, ring.piece_bytes // max(flat.itemsize, 1))
    pieces = _pieces(0, flat.shape[0], per_piece)
    pos = (r - root) % p
    if pos == 0:
        for j, (lo, hi) in enumerate(pieces):
            ring.send(0, j, flat[lo:hi])
    else:
        for j, (lo, hi) in enumerate(pieces):
            msg = ring.recv(0, j)
            ring.check_meta(msg, ring.meta, "Collective broadcast")
            flat[lo:hi] = msg.array(flat.dtype, hi - lo, "Collective broadcast")
            msg.release()
            if pos < p - 1:
                ring.send(0, j, flat[lo:hi])
    ring.finish()


def all_gather(ring: Ring, local: np.ndarray, dtype_enum: int) -> np.ndarray:
    """Every member's ``local`` concatenated along dim 0 in rank order (dim 0 may differ between
    members; the other dims and the dtype may not)."""
    p, r = ring.size, ring.rank
    local = np.ascontiguousarray(local)
    if local.ndim == 0:
        local = local.reshape(1)
    if p == 1:
        return local.copy()
    inner = tuple(local.shape[1:])
    row = int(np.prod(inner, dtype=np.int64)) if inner else 1
    per_piece = max(1, ring.piece_bytes // max(local.itemsize, 1))
    expected = (KIND_GATHER, dtype_enum)
    parts: list = [None] * p
    parts[r] = local
    flat = local.reshape(-1)
    own = _pieces(0, flat.shape[0], per_piece)
    meta = (KIND_GATHER, dtype_enum, local.shape[0], per_piece, *inner)
    for j, (lo, hi) in enumerate(own):
        ring.send(0, j, flat[lo:hi], meta)
    for s in range(p - 1):
        first = ring.recv(s, 0)
        ring.check_meta(first, expected, "Collective all-gather")
        rows, their_per_piece, their_inner = first.meta[2], first.meta[3], tuple(first.meta[4:])
        if their_inner != inner or rows < 0 or their_per_piece < 1:
            first.release()
            raise errors.InvalidArgumentError(
                None, None, f"Collective all-gather: {ring.describe(first.src)} sent rows of shape "
                            f"{list(their_inner)}, this member ({ring.describe(r)}) has rows of shape {list(inner)}. "
                            f"Members may differ in dim 0 only.")
        buf = np.empty(rows * row, dtype=local.dtype)
        for j, (lo, hi) in enumerate(_pieces(0, buf.shape[0], their_per_piece)):
            msg = first if j == 0 else ring.recv(s, j)
            buf[lo:hi] = msg.array(local.dtype, hi - lo, "Collective all-gather")
            msg.release()
            if s < p - 2:
                ring.send(s + 1, j, buf[lo:hi], first.meta)
        parts[(r - s - 1) % p] = buf.reshape((rows,) + inner)
    ring.finish()
    return np.concatenate(parts, axis=0)
