"""``tf.train.Coordinator``: lets threads (and monitored sessions) stop together and report errors.

Example:
    >>> coord = Coordinator()
    >>> with coord.stop_on_exception():
    ...     raise ValueError("worker failed")
    >>> coord.should_stop()
    True
    >>> try:
    ...     coord.join([])
    ... except ValueError as e:
    ...     print(e)
    worker failed
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging

__all__ = ["Coordinator"]


class Coordinator:
    """A stop flag shared by threads, with the first error kept to be re-raised by :meth:`join`."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()

    def _filter_exception(self, ex):
        if isinstance(ex, tuple):
            ex2 = ex[1]
        else:
            ex2 = ex
        if isinstance(ex2, self._clean_stop_exception_types):
            ex = None
        return ex

    def request_stop(self, ex=None):
        """Requests all threads to stop; ``ex`` (an exception or exc_info) is re-raised by join()."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    raise ex[1].with_traceback(ex[2])
                if ex is not None:
                    raise ex
            if self._stop_event.is_set():
                # Errors after the stop request (threads cancelled by it) are not the cause; as in
                # TensorFlow, only an error reported with the first request is re-raised by join().
                return
            if ex and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    logging.info("Error reported to Coordinator: %s", ex[1])
                    self._exc_info_to_raise = ex
                else:
                    logging.info("Error reported to Coordinator: %s, %s", type(ex), ex)
                    self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
            self._stop_event.set()

    def clear_stop(self):
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Reports an exception raised in the block with request_stop() instead of propagating it."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - reported to the coordinator
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None) -> bool:
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for ``threads`` (and registered ones) to stop, then re-raises a reported error."""
        threads = set(threads or ()) | self._registered_threads
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, ex, tb = self._exc_info_to_raise
                raise ex.with_traceback(tb)
        if alive:
            if ignore_live_threads:
                logging.info("Coordinator stopped with threads still running: %s", " ".join(alive))
            else:
                raise RuntimeError(f"Coordinator stopped with threads still running: {' '.join(alive)}")

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self):
        """Re-raises the exception reported with request_stop(), if any."""
        with self._lock:
            if self._exc_info_to_raise:
                _, ex, tb = self._exc_info_to_raise
                raise ex.with_traceback(tb)
