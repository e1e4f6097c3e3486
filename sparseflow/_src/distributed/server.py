"""``tf.train.Server``: one process-level server per task, hosting the MasterService and the
WorkerService on one gRPC port.

The server binds exactly the address its task has in the cluster spec (``127.0.0.1:0`` picks a
free port, and the spec is updated). Its worker's devices (``/job:J/replica:0/task:T/device:CPU:N``,
``ConfigProto.device_count``) hold variables, tables and queues for as long as the server lives,
across client sessions. ``tf.Session(server.target)`` in the same process talks to the server's
master directly (no RPC to itself); other processes use ``grpc://host:port``.

Example:
    >>> import sparseflow as tf
    >>> server = tf.train.Server.create_local_server()
    >>> server.target.startswith("grpc://127.0.0.1:")
    True
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(3.0)
    ...     with tf.Session(server.target) as sess:
    ...         sess.run(v.initializer)
    ...     with tf.Session(server.target) as sess:   # variables outlive the session
    ...         print(sess.run(v))
    3.0
    >>> server.stop()
"""

from __future__ import annotations

import atexit
import concurrent.futures.thread  # noqa: F401 - its exit hook must be registered before ours (see below)
import threading
import weakref

from sparseflow._src.distributed.allocator import keep_large_buffers_in_heap
from sparseflow._src.distributed.cluster_spec import ClusterSpec
from sparseflow._src.distributed.proto import master_service_pb2, worker_service_pb2
from sparseflow._src.distributed.rpc import Security, add_service, bind, make_server
from sparseflow._src.framework import errors
from sparseflow._src.framework.proto import cluster_pb2
from sparseflow._src.runtime.devices import DeviceMgr, cpu_count_of
from sparseflow._src.runtime.worker import Worker

_LOCAL_SERVERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # target -> Server in this process
_lock = threading.Lock()

DEFAULT_TASK_WAIT_SECONDS = 60.0


def _stop_servers_at_exit():
    for server in list(_LOCAL_SERVERS.values()):
        try:
            server.stop(grace=0)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


# Servers stop before the thread pools they serve from are shut down at interpreter exit (those are
# shut down by a threading-atexit hook, which runs before plain atexit handlers, in reverse order).
getattr(threading, "_register_atexit", atexit.register)(_stop_servers_at_exit)


def local_server(target: str):
    """The Server of this process whose target is ``target`` (None if there is none)."""
    return _LOCAL_SERVERS.get(target)


class Server:
    """An in-process server for one task of a cluster (TensorFlow's ``tf.train.Server``)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True, *, token: str | None = None, security: Security | None = None,
                 task_wait_seconds: float = DEFAULT_TASK_WAIT_SECONDS, rpc_threads: int = 256):
        if protocol not in (None, "grpc"):
            raise ValueError(f"Server protocol {protocol!r} is not supported; use 'grpc'.")
        keep_large_buffers_in_heap()  # megabyte RPC buffers without a page fault per page (allocator.py)
        cluster = server_or_cluster_def
        if isinstance(cluster, (dict, cluster_pb2.ClusterDef)):
            cluster = ClusterSpec(cluster)
        if not isinstance(cluster, ClusterSpec):
            raise TypeError("Server takes a ClusterSpec, a dict {job: [addresses]} or a ClusterDef, not "
                            f"{type(server_or_cluster_def).__name__}.")
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError(f"Server needs job_name: the cluster has jobs {cluster.jobs}.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError(f"Server needs task_index: job {job_name!r} has tasks {indices}.")
            task_index = indices[0]
        self._job = job_name
        self._task_index = int(task_index)
        address = cluster.task_address(job_name, self._task_index)
        sec = security or Security.from_env()
        if token is not None:
            sec = Security(token, sec.cert, sec.key, sec.ca)
        self.security = sec
        self.config = config
        self.task_wait_seconds = task_wait_seconds
        num_cpus = cpu_count_of(config)
        self.worker = Worker(DeviceMgr.local(num_cpus, job=job_name, task=self._task_index), self.remote_worker)
        self._remote: dict[str, object] = {}
        self._learned: dict[str, str] = {}  # task -> address of tasks masters told about (not in our spec)
        self._grpc = make_server(rpc_threads, sec)
        host, _, port = address.rpartition(":")
        bound = bind(self._grpc, address, sec)
        if not bound:
            raise errors.UnavailableError(None, None, f"Could not bind {address} for "
                                                      f"/job:{job_name}/task:{task_index}: is the port in use or "
                                                      f"the host not local?")
        if port == "0":
            address = f"{host}:{bound}"
            spec = cluster.as_dict()
            spec[job_name][self._task_index] = address  # a list or a {index: address} dict
            cluster = ClusterSpec(spec)
        self.cluster_spec = cluster
        self.address = address
        from sparseflow._src.distributed.collectives import ClusterCollectiveExecutor
        from sparseflow._src.distributed.master_service import MasterServicer
        from sparseflow._src.distributed.worker_service import WorkerServicer

        self.worker.collectives = ClusterCollectiveExecutor(self)
        self.master = MasterServicer(self)
        self.worker_service = WorkerServicer(self.worker, self.learn_cluster)  # .table_requests counts table RPCs
        add_service(self._grpc, worker_service_pb2.DESCRIPTOR.services_by_name["WorkerService"], self.worker_service)
        add_service(self._grpc, master_service_pb2.DESCRIPTOR.services_by_name["MasterService"], self.master)
        self._started = False
        self._stopped = threading.Event()
        with _lock:
            _LOCAL_SERVERS[self.target] = self
        if start:
            self.start()

    # ------------------------------------------------------------------ TF1 API
    @property
    def target(self) -> str:
        """``grpc://host:port``: pass it to ``tf.Session``."""
        return f"grpc://{self.address}"

    @property
    def server_def(self):
        return {"cluster": self.cluster_spec.as_dict(), "job_name": self._job, "task_index": self._task_index,
                "protocol": "grpc"}

    @property
    def task(self) -> str:
        return self.worker.task

    def start(self):
        """Starts serving (idempotent)."""
        if not self._started:
            self._grpc.start()
            self._started = True

    def join(self, timeout: float | None = None) -> bool:
        """Blocks until the server is stopped (a ps task's main loop); True once stopped."""
        return self._stopped.wait(timeout)

    def stop(self, grace: float | None = 1.0):
        """Stops serving; in-flight steps of this task are aborted."""
        if self._stopped.is_set():
            return
        self.worker.steps.abort_all(errors.AbortedError(None, None, f"{self.task} is shutting down."))
        self._grpc.stop(grace).wait()
        self.worker.collectives.close()
        for w in list(self._remote.values()):
            w.close()
        self._stopped.set()
        with _lock:
            if _LOCAL_SERVERS.get(self.target) is self:
                del _LOCAL_SERVERS[self.target]

    @staticmethod
    def create_local_server(config=None, start=True) -> Server:
        """A single-task server on a free loopback port (TensorFlow's job name ``localhost``)."""
        return Server({"localhost": ["127.0.0.1:0"]}, protocol="grpc", config=config, start=start)

    # ------------------------------------------------------------------ peers
    def remote_worker(self, task: str):
        """The WorkerService client of another task of the cluster (one channel per task)."""
        w = self._remote.get(task)
        if w is None:
            from sparseflow._src.distributed.remote_worker import RemoteWorker

            with _lock:
                w = self._remote.get(task)
                if w is None:
                    job, index = _job_task(task)
                    try:
                        address = self.cluster_spec.task_address(job, index)
                    except ValueError as e:
                        address = self._learned.get(task)
                        if address is None:
                            raise errors.InvalidArgumentError(
                                None, None, f"{task} is not in the cluster of {self.task}: {e}") from None
                    w = self._remote[task] = RemoteWorker(task, address, self.security)
        return w

    def learn_cluster(self, cluster_def) -> None:
        """Remembers the addresses of tasks that a master's cluster has and this server's spec lacks
        (ClusterSpec propagation: a ps started with only its own address can answer any worker)."""
        known = set(self.cluster_spec.device_names())
        for job, index, address in ClusterSpec(cluster_def).tasks():
            task = f"/job:{job}/replica:0/task:{index}"
            if task not in known:
                self._learned.setdefault(task, address)

    def __repr__(self):
        return f"<Server {self.task} at {self.address}>"


def _job_task(task: str) -> tuple[str, int]:
    parts = dict(p.split(":", 1) for p in task.strip("/").split("/"))
    return parts["job"], int(parts["task"])
