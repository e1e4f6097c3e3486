"""An elastic thread pool: partitions of a step may wait on each other, so a submitted function
never queues behind a busy thread; it takes an idle thread or starts a new one.

Example:
    >>> pool = ElasticPool("doc")
    >>> pool.submit(lambda: 6 * 7).result()
    42
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

_IDLE_SECONDS = 30.0


class ElasticPool:
    """Runs each submitted function at once on an idle thread, or on a new one (never queued)."""

    def __init__(self, name: str):
        self._name = name
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._count = 0

    def submit(self, fn, *args) -> Future:
        fut: Future = Future()
        with self._lock:
            worker = self._idle.pop() if self._idle else None
            if worker is None:
                self._count += 1
                worker = _Worker(self, f"{self._name}-{self._count}")
        worker.give(fn, args, fut)
        return fut

    def _park(self, worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def _retire(self, worker) -> bool:
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


class _Worker:
    __slots__ = ("_pool", "_cond", "_job", "_thread")

    def __init__(self, pool: ElasticPool, name: str):
        self._pool = pool
        self._cond = threading.Condition()
        self._job = None
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def give(self, fn, args, fut):
        with self._cond:
            self._job = (fn, args, fut)
            self._cond.notify()

    def _loop(self):
        while True:
            with self._cond:
                while self._job is None:
                    if not self._cond.wait(_IDLE_SECONDS) and self._job is None:
                        if self._pool._retire(self):
                            return
                fn, args, fut = self._job
                self._job = None
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args))
                except BaseException as e:  # noqa: BLE001 - handed to the future
                    fut.set_exception(e)
            del fn, args, fut
            self._pool._park(self)
