"""A local cluster: one process per ps/chief/worker task on 127.0.0.1, supervised as one job.

``sparseflow launch --ps 1 --workers 2 -- train.py --lr 0.1`` runs ``python train.py --lr 0.1``
three times, each with ``TF_CONFIG`` naming the cluster and its own task (``rpc_layer`` "grpc")
and ``SPARSEFLOW_TASK=job:index``, so ``resolve_cluster()`` or ``TFConfigClusterResolver`` in the
script finds its place. The supervision rules:

* every line a task prints goes to the launcher's stdout/stderr as ``[worker:0] line``;
* a task that exits non-zero (or dies by a signal) stops all others; the launcher exits with its
  status (128+N for signal N);
* when every worker and the chief have exited 0, the ps tasks, which usually block for ever in
  ``server.join()``, are stopped and the launcher exits 0;
* Ctrl-C / SIGTERM to the launcher, or ``--timeout``, stop every task (exit 130 / 143 / 124).

Stopping a task sends SIGTERM to its process group (each task runs in a session of its own, so
processes it started go too), then SIGKILL after the grace period. Under Linux the CLI's tasks
are also killed if the launcher itself is killed (``die_with_launcher``). POSIX only.

``SupervisedJob`` holds these rules; ``LocalCluster`` runs the tasks as local processes, and
``ray_launcher.RayCluster`` (``sparseflow launch --ray [ADDRESS]``) as Ray actors' processes.

Example:
    >>> import io, sys
    >>> out = io.StringIO()
    >>> cluster = launch_local_cluster(["-c", "import os; print(os.environ['SPARSEFLOW_TASK'])"],
    ...                                num_ps=1, num_workers=2, out=out, err=io.StringIO())
    >>> cluster.wait(timeout=60)
    0
    >>> sorted(line for line in out.getvalue().splitlines() if line.startswith("[worker"))
    ['[worker:0] worker:0', '[worker:1] worker:1']
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

from sparseflow._src.distributed.cluster_spec import ClusterSpec

__all__ = ["LocalCluster", "SupervisedJob", "Task", "launch_local_cluster", "free_ports", "reserve_ports",
           "task_layout"]

TIMEOUT_STATUS = 124  # as timeout(1)


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """``n`` distinct ports that were free on ``host`` a moment ago (bound together, then released:
    anyone may take them before they are bound again; ``reserve_ports`` holds them)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def reserve_ports(n: int, host: str = "127.0.0.1") -> list[socket.socket]:
    """``n`` distinct free ports of ``host``, held until the returned sockets are closed.

    Each socket is bound with SO_REUSEADDR and never listens: a server that binds its port with
    SO_REUSEADDR (a gRPC server does) may do so meanwhile, while the kernel gives the port to no
    other ``bind(port 0)`` and to no outgoing connection as its local port. Ports picked and
    released (``free_ports``) stay open to both until their task binds them: another process
    starting servers or connections at the same time takes one now and then, and the task that
    should serve there fails to bind."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, 0))
        return sockets
    except BaseException:
        for s in sockets:
            s.close()
        raise


def exit_status(returncode: int) -> int:
    """A shell's exit status for a ``Popen.returncode``: the code, or 128+N when killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


class Task:
    """One task of the cluster and, once started, how it runs (a process here; a Ray actor's process
    in ray_launcher.py) and how it ended (``returncode`` as ``Popen``'s, negative for a signal)."""

    def __init__(self, job: str, index: int, address: str = ""):
        self.job, self.index, self.address = job, index, address
        self.process: subprocess.Popen | None = None
        self.returncode: int | None = None
        self.exited = threading.Event()
        self.stopped_by_launcher = False
        self._readers: list[threading.Thread] = []

    @property
    def name(self) -> str:
        return f"{self.job}:{self.index}"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def __repr__(self):
        return f"Task({self.name} at {self.address}, pid={self.pid}, returncode={self.returncode})"


# Unless the environment says otherwise: output line by line, and not gRPC's INFO line per closed connection.
DEFAULT_TASK_ENV = {"PYTHONUNBUFFERED": "1", "GRPC_VERBOSITY": "ERROR"}


def task_environment(base, overrides) -> dict:
    """A task's whole environment: ``base`` (the launcher's or the node's), ``overrides``, the defaults."""
    env = {**base, **overrides}
    for name, value in DEFAULT_TASK_ENV.items():
        env.setdefault(name, value)
    return env


def task_layout(num_ps: int, num_workers: int, chief: bool) -> list[tuple[str, int]]:
    """(job, index) of every task in start order: ps tasks, the chief, the workers."""
    if num_ps < 0 or num_workers < 0:
        raise ValueError(f"--ps and --workers must be >= 0, got {num_ps} and {num_workers}.")
    if num_workers + (1 if chief else 0) < 1:
        raise ValueError("A cluster needs at least one worker or a chief (ps tasks alone never finish).")
    jobs = [("ps", i) for i in range(num_ps)] + ([("chief", 0)] if chief else [])
    return jobs + [("worker", i) for i in range(num_workers)]


def port_range(port_base: int, n: int) -> list[int]:
    """Ports ``port_base .. port_base+n-1`` (``--port-base``), checked to fit below 65536."""
    if not 0 < port_base <= 65536 - n:
        raise ValueError(f"--port-base {port_base} leaves no room for {n} ports below 65536.")
    return list(range(port_base, port_base + n))


class SupervisedJob:
    """The supervision shared by the launchers: the tasks, their ``TF_CONFIG``, prefixed output and
    the rules of ``wait()`` (see the module docstring). A subclass starts the tasks, reports each
    exit with ``_task_exited`` and ends them in ``_terminate`` / ``_kill_all``."""

    def __init__(self, num_ps=1, num_workers=1, chief=False, env=None, out=None, err=None, grace_period=5.0):
        self.tasks = [Task(job, i) for job, i in task_layout(num_ps, num_workers, chief)]
        self.cluster_spec: ClusterSpec | None = None
        self._cluster: dict[str, list[str]] = {}
        self.env = dict(env or {})
        self.out, self.err = out, err
        self.grace_period = float(grace_period)
        self._events: queue.SimpleQueue = queue.SimpleQueue()  # put() is safe from signal handlers
        self._write_lock = threading.Lock()
        self._stopping = self._stopped = False

    def _set_addresses(self, addresses) -> None:
        cluster: dict[str, list[str]] = {}
        for task, address in zip(self.tasks, addresses):
            task.address = address
            cluster.setdefault(task.job, []).append(address)
        self._cluster = cluster
        self.cluster_spec = ClusterSpec(cluster)

    def tf_config(self, task: Task) -> dict:
        """The ``TF_CONFIG`` document given to ``task``."""
        return {"cluster": self._cluster, "task": {"type": task.job, "index": task.index}, "rpc_layer": "grpc"}

    def task_env(self, task: Task) -> dict:
        """The variables a task gets on top of its environment: ``env``, ``TF_CONFIG``, ``SPARSEFLOW_TASK``
        (``task_environment`` adds the defaults)."""
        return {**self.env, "TF_CONFIG": json.dumps(self.tf_config(task)), "SPARSEFLOW_TASK": task.name}

    # ------------------------------------------------------------------ output
    def _stream(self, which: str):
        if which == "stderr":
            return self.err if self.err is not None else sys.stderr
        return self.out if self.out is not None else sys.stdout

    def _write(self, stream, line: str) -> None:
        with self._write_lock:
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass  # the launcher's own output is gone (closed pipe): keep draining the task

    def task_line(self, task: Task, which: str, line: str) -> None:
        """A line the task printed on ``which`` ("stdout"/"stderr"), written as ``[job:i] line``."""
        self._write(self._stream(which), f"[{task.name}] {line}")

    def log(self, message: str) -> None:
        """A line from the launcher itself, ``[launch] message``, on ``err``."""
        self._write(self._stream("stderr"), f"[launch] {message}")

    def _task_exited(self, task: Task, returncode: int) -> None:
        task.returncode = returncode
        task.exited.set()
        self._events.put(("exit", task))

    # ------------------------------------------------------------------ supervise
    def request_stop(self, signum: int) -> None:
        """Asks ``wait()`` to stop the job (safe from a signal handler); a second request kills at once."""
        if self._stopping:
            self._kill_all()
        self._events.put(("signal", signum))

    def wait(self, timeout=None) -> int:
        """Supervises until the job ends; returns its exit status (see the module docstring)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        training = [t for t in self.tasks if t.job != "ps"]
        while True:
            try:
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                kind, payload = self._events.get(timeout=remaining)
            except queue.Empty:
                self.log(f"timed out after {timeout:g} s; stopping all tasks")
                self.stop()
                return TIMEOUT_STATUS
            if kind == "signal":
                self.log(f"received {signal.Signals(payload).name}; stopping all tasks")
                self.stop()
                return 128 + payload
            task = payload
            status = exit_status(task.returncode)
            if status != 0 and not task.stopped_by_launcher:
                others = sum(1 for t in self.tasks if not t.exited.is_set())
                self.log(f"{task.name} exited with status {status}; stopping {others} other task(s)")
                self.stop()
                return status
            if status == 0 and all(t.exited.is_set() and t.returncode == 0 for t in training):
                ps = [t.name for t in self.tasks if not t.exited.is_set()]
                self.log("all workers finished" + (f"; stopping {', '.join(ps)}" if ps else ""))
                self.stop()
                return 0

    def stop(self) -> None:
        """Ends every task still running (SIGTERM, then SIGKILL after the grace period) and waits for them."""
        if self._stopped:
            return
        self._stopping = True
        for task in self.tasks:
            if not task.exited.is_set():
                task.stopped_by_launcher = True
        self._terminate()
        self._stopped = True

    def _terminate(self) -> None:
        raise NotImplementedError

    def _kill_all(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


_PR_SET_PDEATHSIG = 1


def _die_with_parent_hook():
    """A ``preexec_fn`` asking Linux to SIGKILL the child when the launcher dies (prctl resolved here,
    in the parent, so the child only calls it)."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def hook():
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return hook


class LocalCluster(SupervisedJob):
    """Runs ``command`` once per task of a local ps/chief/worker cluster and supervises the job.

    ``command`` is the script and its arguments (``python=True``: run by this Python, so
    ``["-m", "pkg.mod"]`` works too), or a whole command line with ``python=False``. ``out``/``err``
    receive the tasks' prefixed lines (default: this process's stdout/stderr); ``env`` adds
    variables. ``start()`` spawns, ``wait()`` applies the supervision rules and returns the job's
    exit status, ``stop()`` ends every task. Also a context manager that stops on exit.
    """

    def __init__(self, command, num_ps=1, num_workers=1, chief=False, port_base=None, host="127.0.0.1",
                 python=True, env=None, out=None, err=None, grace_period=5.0, die_with_launcher=False):
        command = list(command)
        if not command:
            raise ValueError("No command to launch: give a script (and its arguments).")
        super().__init__(num_ps, num_workers, chief, env, out, err, grace_period)
        n = len(self.tasks)
        # picked ports stay held until the job stops (reserve_ports): the tasks bind them seconds later
        self._held_ports = reserve_ports(n, host) if port_base is None else []
        ports = [s.getsockname()[1] for s in self._held_ports] if port_base is None else port_range(port_base, n)
        self._set_addresses([f"{host}:{port}" for port in ports])
        self.argv = [sys.executable, *command] if python else command
        self.die_with_launcher = die_with_launcher and sys.platform.startswith("linux")

    def start(self) -> LocalCluster:
        """Spawns every task (ps first), then the threads that stream their output and wait on them."""
        self.log("cluster " + " ".join(f"{t.name}={t.address}" for t in self.tasks))
        preexec = _die_with_parent_hook() if self.die_with_launcher else None
        try:
            for task in self.tasks:
                task.process = subprocess.Popen(
                    self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    env=task_environment(os.environ, self.task_env(task)), start_new_session=True, preexec_fn=preexec)
        except OSError as e:
            self.log(f"could not start {self.argv[0]!r}: {e}")
            self.stop()
            raise
        for task in self.tasks:  # threads only after every fork (preexec_fn and threads do not mix)
            for pipe, which in ((task.process.stdout, "stdout"), (task.process.stderr, "stderr")):
                reader = threading.Thread(target=self._pump, args=(task, pipe, which), daemon=True,
                                          name=f"launch-{task.name}-output")
                reader.start()
                task._readers.append(reader)
            threading.Thread(target=self._reap, args=(task,), daemon=True, name=f"launch-{task.name}-wait").start()
        return self

    def _pump(self, task: Task, pipe, which: str) -> None:
        with pipe:
            for raw in iter(pipe.readline, b""):
                self.task_line(task, which, raw.decode("utf-8", errors="replace").rstrip("\r\n"))

    def _reap(self, task: Task) -> None:
        task.process.wait()
        self._task_exited(task, task.process.returncode)

    def _terminate(self) -> None:
        """SIGTERM to each task's process group, SIGKILL after the grace period; then reaps."""
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + self.grace_period
        for task in self.tasks:
            if task.process is not None:
                task.exited.wait(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in self.tasks if t.process is not None and not t.exited.is_set()]
        if stragglers:
            self.log(f"{', '.join(stragglers)} still running {self.grace_period:g} s after SIGTERM; sending SIGKILL")
        self._signal_all(signal.SIGKILL)  # stragglers, and whatever the tasks left in their groups
        for task in self.tasks:
            if task.process is not None:
                task.process.wait()
                task.returncode = task.process.returncode
                task.exited.set()
                for reader in task._readers:
                    reader.join(timeout=self.grace_period)
        for s in self._held_ports:
            s.close()

    def _kill_all(self) -> None:
        self._signal_all(signal.SIGKILL)

    def _signal_all(self, signum: int) -> None:
        for task in self.tasks:
            if task.process is None:
                continue
            try:
                os.killpg(task.process.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass  # the group is empty: the task and all it started are gone


def launch_local_cluster(command, num_ps=1, num_workers=1, chief=False, **kwargs) -> LocalCluster:
    """Starts a ``LocalCluster`` (see there) and returns it; call ``wait()`` or ``stop()`` on it."""
    return LocalCluster(command, num_ps=num_ps, num_workers=num_workers, chief=chief, **kwargs).start()
