"""Writes Event protos to a TensorBoard events file, the way TensorFlow does.

The file is ``<logdir>/events.out.tfevents.<10-digit seconds>.<hostname><suffix>``, created when the
first event is written; its first record is ``Event(file_version="brain.Event:2")``. Records are
TFRecords (kernels/tfrecord_framing.py). Events are queued (at most ``max_queue``) and written by one
background thread, which flushes the file at least every ``flush_secs``; ``flush()`` returns once
every event added before it is on disk.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
import time

from sparseflow._src.framework.proto import event_pb2
from sparseflow._src.kernels.tfrecord_framing import encode_record

__all__ = ["EventFileWriter", "FILE_VERSION"]

FILE_VERSION = "brain.Event:2"
_STOP = object()


class EventFileWriter:
    """Queue + thread writing events of one logdir (see the module docstring)."""

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=None):
        self._logdir = os.fspath(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._max_queue = int(max_queue)
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._closed = True
        self.reopen()

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str | None:
        """The events file (None before the first event is written)."""
        return self._path

    def reopen(self):
        """Reopens a closed writer: later events go to a new file."""
        with self._lock:
            if not self._closed:
                return
            self._queue: queue.Queue = queue.Queue(max(1, self._max_queue))
            self._file = None
            self._path = None
            self._error: BaseException | None = None
            self._closed = False
            self._thread = threading.Thread(target=self._run, name="sparseflow-event-writer", daemon=True)
            self._thread.start()

    def add_event(self, event: event_pb2.Event):
        """Queues ``event`` (an Event proto) for writing."""
        if self._closed:
            return
        self._queue.put(event.SerializeToString())

    def flush(self):
        """Writes every queued event and flushes the file."""
        if self._closed:
            return
        done = threading.Event()
        self._queue.put(done)
        done.wait()
        self._raise_error()

    def close(self):
        """Flushes, then closes the file; a closed writer ignores events until ``reopen()``."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join()
        self._raise_error()

    def _raise_error(self):
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    # ------------------------------------------------------------------ the writer thread
    def _open(self):
        stamp = int(time.time())
        base = os.path.join(self._logdir, f"events.out.tfevents.{stamp:010d}.{socket.gethostname()}")
        path, n = base + self._suffix, 1
        while os.path.exists(path):  # reopened within the same second: never overwrite a file
            path, n = f"{base}.{n}{self._suffix}", n + 1
        self._file = open(path, "wb")  # noqa: SIM115 - held open until close()
        self._path = path
        first = event_pb2.Event(wall_time=float(stamp), file_version=FILE_VERSION)
        first.source_metadata.writer = "sparseflow"
        self._file.write(encode_record(first.SerializeToString()))

    def _run(self):
        next_flush = time.monotonic() + self._flush_secs
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, next_flush - time.monotonic()))
            except queue.Empty:
                item = None
            try:
                if isinstance(item, bytes):
                    if self._file is None:
                        self._open()
                    self._file.write(encode_record(item))
                if item is None or item is _STOP or isinstance(item, threading.Event) or \
                        time.monotonic() >= next_flush:
                    if self._file is not None:
                        self._file.flush()
                    next_flush = time.monotonic() + self._flush_secs
            except OSError as e:  # reported by the next flush() or close()
                self._error = e
            if isinstance(item, threading.Event):
                item.set()
            if item is _STOP:
                if self._file is not None:
                    self._file.close()
                return
