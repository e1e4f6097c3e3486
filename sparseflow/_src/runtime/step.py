"""One step on one worker: its rendezvous, cancellation and deadline, shared by its partitions.

A step is identified by the master's ``step_id``. Its ``WorkerRendezvous`` holds the values this
task's ``_Send`` ops produced until their receivers take them: a ``_Recv`` on this task takes
them from the local table, a ``_Recv`` on another task pulls them with ``RecvTensor`` (pull
model: the receiver asks the sender's worker by rendezvous key). A ``_Recv`` of a tensor sent on
another task calls ``remote(task).recv_tensor_async`` on that task's worker.

``abort(error)`` ends the step here: every waiting receive fails with ``error``, every executor
of the step stops at its next check, and later ``RecvTensor`` calls for the step get ``error``.

Example:
    >>> steps = StepTable(task="/job:w/replica:0/task:0", remote=None)
    >>> step = steps.get(7)
    >>> key = "/job:w/replica:0/task:0/device:CPU:0;0000000000000001;/job:w/replica:0/task:0/device:CPU:1;e;0:0"
    >>> step.rendezvous.send(key, 3); step.rendezvous.recv(key)
    3
    >>> steps.end(7); len(steps)
    0
"""

from __future__ import annotations

import threading
import time

from sparseflow._src.framework import errors
from sparseflow._src.framework.device_spec import task_of_device  # noqa: F401  (imported from here by the runtime)
from sparseflow._src.runtime.rendezvous import LocalRendezvous

# A step nobody has touched for this long (its master died before cleaning it up) is dropped.
ORPHAN_STEP_SECONDS = 600.0


class WorkerRendezvous:
    """The rendezvous of one step on one worker: local table plus pulls from other tasks."""

    __slots__ = ("step_id", "task", "local", "_remote", "_pending", "_lock", "_prefetched")

    def __init__(self, step_id: int, task: str, remote):
        self.step_id = step_id
        self.task = task
        self.local = LocalRendezvous()
        self._remote = remote  # task name -> worker interface (recv_tensor_async), or None
        self._pending: set = set()  # cancel functions of RecvTensor calls in flight
        self._lock = threading.Lock()
        self._prefetched: set = set()  # remote keys pulled at the start of the step into the local table

    def prefetch(self, batches):
        """Starts pulling every remote key at once (``batches``: lists of keys from one task, each
        list in one streamed call, which brings each value as soon as its sender has it: one message
        per arrival); each value lands in the local table, where its ``_Recv`` finds it. A partition's
        receives then wait in parallel, not one by one, and none waits for a later one of its batch."""
        for keys in batches:
            keys = [k for k in keys if k not in self._prefetched]
            if not keys:
                continue
            self._prefetched.update(keys)

            def land(key, value, err):
                if err is not None:
                    self.abort(err)
                else:
                    try:
                        self.local.send(key, value)
                    except BaseException:  # noqa: BLE001 - the step was aborted meanwhile
                        pass

            if len(keys) == 1:
                self._pull(keys[0], lambda value, err, key=keys[0]: land(key, value, err))
            else:
                self._pull_many(keys, land)

    def expect(self, keys):
        """``keys`` of other tasks arrive in the local table without a pull (the master delivers them
        from their sender's RunGraph stream)."""
        self._prefetched.update(keys)

    def _pull_many(self, keys, land):
        src = self._src_task(keys[0])
        error = self.local.aborted
        if error is not None:
            land(keys[0], None, error)
            return
        holder = []

        def done(key, value, err):
            if err is not None:
                with self._lock:
                    if holder:
                        self._pending.discard(holder[0])
                if self.local.aborted is not None:
                    err = self.local.aborted
            land(key, value, err)

        cancel = self._remote(src).recv_tensors_async(self.step_id, keys, done)
        with self._lock:
            holder.append(cancel)
            self._pending.add(cancel)
        if self.local.aborted is not None:
            cancel()

    def send(self, key: str, value, is_dead: bool = False):
        self.local.send(key, value, is_dead)

    def _src_task(self, key: str) -> str:
        return task_of_device(key[:key.find(";")])

    def recv_async(self, key: str, callback):
        src = self._src_task(key)
        if src == self.task or self._remote is None or key in self._prefetched:
            self.local.recv_async(key, callback)
            return
        self._pull(key, callback)

    def _pull(self, key: str, callback):
        src = self._src_task(key)
        error = self.local.aborted
        if error is not None:
            callback(None, error)
            return
        holder = []

        def done(value, err):
            with self._lock:
                if holder:
                    self._pending.discard(holder[0])
            if err is not None and self.local.aborted is not None:
                err = self.local.aborted  # a pull cancelled by the step's abort reports the step's error
            callback(value, err)

        cancel = self._remote(src).recv_tensor_async(self.step_id, key, done)
        with self._lock:
            holder.append(cancel)
            self._pending.add(cancel)
        if self.local.aborted is not None:
            cancel()

    def recv(self, key: str, timeout: float | None = None):
        src = self._src_task(key)
        if src == self.task or self._remote is None or key in self._prefetched:
            return self.local.recv(key, timeout)
        box = []
        ready = threading.Event()

        def done(value, err):
            box.append((value, err))
            ready.set()

        self.recv_async(key, done)
        if not ready.wait(timeout):
            self.abort(errors.DeadlineExceededError(None, None, f"Timed out waiting for tensor {key} from {src}"))
            ready.wait(5.0)
            if not box:
                raise errors.DeadlineExceededError(None, None, f"Timed out waiting for tensor {key} from {src}")
        value, err = box[0]
        if err is not None:
            raise err
        return value

    @property
    def aborted(self):
        return self.local.aborted

    def abort(self, status: BaseException):
        self.local.abort(status)
        with self._lock:
            pending, self._pending = list(self._pending), set()
        for cancel in pending:
            cancel()


class StepState:
    """What the partitions of one step on one worker share."""

    __slots__ = ("step_id", "rendezvous", "cancelled", "error", "running", "touched")

    def __init__(self, step_id: int, task: str, remote):
        self.step_id = step_id
        self.rendezvous = WorkerRendezvous(step_id, task, remote)
        self.cancelled = threading.Event()
        self.error: BaseException | None = None
        self.running = 0
        self.touched = time.monotonic()

    def abort(self, error: BaseException):
        if self.error is None:
            self.error = error
        self.cancelled.set()
        self.rendezvous.abort(self.error)


class StepTable:
    """step_id -> StepState on one worker, created on first use (RunGraph or RecvTensor)."""

    def __init__(self, task: str, remote):
        self._task = task
        self._remote = remote
        self._steps: dict[int, StepState] = {}
        self._ended: dict[int, BaseException | None] = {}  # recently ended steps (late RecvTensor calls)
        self._lock = threading.Lock()

    def get(self, step_id: int) -> StepState:
        with self._lock:
            s = self._steps.get(step_id)
            if s is None:
                if step_id in self._ended:
                    err = self._ended[step_id] or errors.AbortedError(
                        None, None, f"Step {step_id:x} has already ended on {self._task}.")
                    s = StepState(step_id, self._task, self._remote)
                    s.abort(err)
                    return s
                s = self._steps[step_id] = StepState(step_id, self._task, self._remote)
                if len(self._steps) % 64 == 0:
                    self._collect_orphans()
            s.touched = time.monotonic()
            return s

    def end(self, step_id: int, error: BaseException | None = None):
        """Ends a step here: aborts it with ``error`` if given, and drops its state."""
        with self._lock:
            s = self._steps.pop(step_id, None)
            self._ended[step_id] = error
            if len(self._ended) > 4096:
                for k in list(self._ended)[:2048]:
                    del self._ended[k]
        if s is not None:
            s.abort(error or errors.CancelledError(None, None, f"Step {step_id:x} was cleaned up."))

    def abort_all(self, error: BaseException):
        with self._lock:
            steps = list(self._steps.values())
        for s in steps:
            s.abort(error)

    def _collect_orphans(self):
        now = time.monotonic()
        for sid, s in list(self._steps.items()):
            if s.running == 0 and now - s.touched > ORPHAN_STEP_SECONDS:
                del self._steps[sid]
                s.abort(errors.AbortedError(None, None, f"Step {sid:x} was abandoned by its master."))

    def __len__(self):
        with self._lock:
            return len(self._steps)
