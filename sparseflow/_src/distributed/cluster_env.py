"""A master's view of a cluster: which devices exist, their incarnations, how to reach each task.

Devices are discovered lazily and only for the tasks a session's graph names: a master asks those
tasks ``GetStatus`` (in parallel, waiting for them to come up) when it first compiles a signature,
and fails after the wait naming every task that did not answer (TensorFlow waits forever; a
worker's master never waits for the other workers it does not use). Tasks not yet discovered are
placed on their nominal ``/job:J/replica:0/task:T/device:CPU:0``. Each master session has its own
environment, so a new session after a ps restart sees the restarted task's new incarnation.

Example:
    >>> from sparseflow._src.distributed.cluster_spec import ClusterSpec
    >>> nominal_devices(ClusterSpec({"ps": ["h:1"], "worker": ["h:2"]}))
    ['/job:ps/replica:0/task:0/device:CPU:0', '/job:worker/replica:0/task:0/device:CPU:0']
"""

from __future__ import annotations

import threading
import time

from sparseflow._src.framework import errors
from sparseflow._src.runtime.master import MasterEnv
from sparseflow._src.runtime.step import task_of_device


def nominal_devices(cluster) -> list[str]:
    return [f"{t}/device:CPU:0" for t in cluster.device_names()]


class ClusterEnv(MasterEnv):
    """The environment of one master session on a ``Server`` (see the module docstring)."""

    def __init__(self, server, wait_seconds: float):
        super().__init__(server.worker)
        self.server = server
        self.cluster = server.cluster_spec
        self.wait_seconds = wait_seconds
        self._lock = threading.Lock()
        self._devices: dict[str, list] = {self.local_worker.task: [
            (d.name, d.incarnation) for d in self.local_worker.get_status()]}
        self._sessions: set[str] = {self.local_worker.task}

    @property
    def is_cluster(self) -> bool:
        return True

    def device_names(self) -> list[str]:
        out = []
        for task in self.cluster.device_names():
            known = self._devices.get(task)
            out.extend([n for n, _ in known] if known else [f"{task}/device:CPU:0"])
        return out

    def incarnations(self) -> dict:
        return {n: inc for devs in self._devices.values() for n, inc in devs}

    def worker(self, task: str):
        if task == self.local_worker.task:
            return self.local_worker
        return self.server.remote_worker(task)

    def known_tasks(self) -> list[str]:
        return sorted(self._devices)

    def prepare_tasks(self, tasks, session_handle: str, client_graph=None) -> None:
        tasks = [t for t in tasks if t in set(self.cluster.device_names())]
        self._discover([t for t in tasks if t not in self._devices])
        for t in tasks:
            if t not in self._sessions:
                inc = self.local_worker.devices.incarnations[self.local_worker.devices.names[0]]
                self.worker(t).create_worker_session(session_handle, self.local_worker.task, inc,
                                                     self.cluster.as_cluster_def())
                with self._lock:
                    self._sessions.add(t)

    def _discover(self, tasks: list[str]) -> None:
        if not tasks:
            return
        deadline = time.monotonic() + self.wait_seconds
        pending = {t: self.worker(t) for t in tasks}
        failures: dict[str, BaseException] = {}
        threads = []

        def ask(task, iface):
            try:
                resp = iface.get_status(max(0.01, deadline - time.monotonic()), wait_for_ready=True)
                devs = [(d.name, d.incarnation) for d in resp.device_attributes]
                if not devs or task_of_device(devs[0][0]) != task:
                    raise errors.FailedPreconditionError(
                        None, None, f"{iface.address} answered as {resp.task or '?'}, but the cluster spec says it "
                                    f"is {task}: check the cluster spec / TF_CONFIG of every task.")
                with self._lock:
                    self._devices[task] = devs
            except errors.OpError as e:
                failures[task] = e

        for t, iface in pending.items():
            th = threading.Thread(target=ask, args=(t, iface), daemon=True, name=f"sparseflow-discover-{t}")
            th.start()
            threads.append(th)
        for th in threads:
            th.join()
        if failures:
            wrong = [e for e in failures.values() if isinstance(e, errors.FailedPreconditionError)]
            if wrong:
                raise wrong[0]
            named = ", ".join(f"{t} ({pending[t].address})" for t in sorted(failures))
            raise errors.UnavailableError(
                None, None, f"Waited {self.wait_seconds:g} s for tasks that did not answer: {named}. Start them "
                            f"(or fix their addresses in the cluster spec); the wait is "
                            f"ConfigProto.operation_timeout_in_ms or Server(task_wait_seconds=). Last error: "
                            f"{next(iter(failures.values())).message}")
