"""Rendezvous: where a ``_Send`` and its ``_Recv`` meet, keyed
``src_device;src_incarnation(16 hex);dst_device;tensor_name;frame_id:iter_id``.

``LocalRendezvous`` is one step's table in one process: ``send`` never blocks, ``recv`` waits for
the value (until a timeout) and ``recv_async`` calls back when it arrives, so a dataflow executor
does not hold a thread while it waits. ``abort(error)`` fails every pending and later receive
with ``error``: the first failure of a step reaches every partition that waits on it.

Example:
    >>> key = create_key("/job:a/replica:0/task:0/device:CPU:0", 1,
    ...                  "/job:a/replica:0/task:0/device:CPU:1", "edge_3_x", "0:0")
    >>> key.split(";")[1]
    '0000000000000001'
    >>> r = LocalRendezvous(); r.send(key, 5); r.recv(key)
    5
    >>> got = []
    >>> r.recv_async(key, lambda value, error: got.append(value)); r.send(key, 6); got
    [6]
"""

from __future__ import annotations

import threading
import time

from sparseflow._src.framework import errors
from sparseflow._src.framework.rendezvous_key import create_key, parse_key

__all__ = ["LocalRendezvous", "create_key", "parse_key"]


class LocalRendezvous:
    """Send never blocks; recv waits for the value (until the deadline), or fails after abort."""

    __slots__ = ("_values", "_waiters", "_cond", "_aborted", "last_used")

    def __init__(self):
        self._values: dict[str, object] = {}
        self._waiters: dict[str, object] = {}  # key -> callback(value, error) of a recv_async
        self._cond = threading.Condition()
        self._aborted: BaseException | None = None
        self.last_used = time.monotonic()

    def send(self, key: str, value, is_dead: bool = False):
        with self._cond:
            if self._aborted is not None:
                raise self._aborted
            callback = self._waiters.pop(key, None)
            if callback is None:
                if key in self._values:
                    raise errors.AbortedError(None, None, f"Duplicated send: {key}")
                self._values[key] = value
                self._cond.notify_all()
        if callback is not None:
            callback(value, None)

    def recv(self, key: str, timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self.last_used = time.monotonic()
            while key not in self._values:
                if self._aborted is not None:
                    raise self._aborted
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise errors.DeadlineExceededError(None, None, f"Timed out waiting for tensor {key}")
                self._cond.wait(remaining)
            return self._values.pop(key)

    def recv_async(self, key: str, callback):
        """Calls ``callback(value, None)`` when ``key`` is sent (maybe at once, in this thread), or
        ``callback(None, error)`` when the rendezvous is aborted."""
        with self._cond:
            self.last_used = time.monotonic()
            error = self._aborted
            if error is None:
                if key in self._values:
                    value = self._values.pop(key)
                else:
                    if key in self._waiters:
                        raise errors.AbortedError(None, None, f"Duplicated recv: {key}")
                    self._waiters[key] = callback
                    return
        if error is not None:
            callback(None, error)
        else:
            callback(value, None)

    def cancel_recv(self, key: str, callback) -> bool:
        """Withdraws a ``recv_async`` of ``key`` that has not been called back; False when it was
        (or is being) called back, or another callback waits."""
        with self._cond:
            if self._waiters.get(key) is callback:
                del self._waiters[key]
                return True
            return False

    def try_recv(self, key: str, default=None):
        with self._cond:
            return self._values.pop(key, default)

    @property
    def aborted(self) -> BaseException | None:
        return self._aborted

    def abort(self, status: BaseException):
        with self._cond:
            if self._aborted is None:
                self._aborted = status
            waiters, self._waiters = self._waiters, {}
            self._values.clear()
            self._cond.notify_all()
        for callback in waiters.values():
            callback(None, status)
