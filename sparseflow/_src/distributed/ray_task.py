"""What a Ray actor of ``sparseflow launch --ray`` does on its node: choose the task's address, run
the task's command as a child process, hand its output lines to the launcher, stop it.

Plain Python (no Ray import): ray_launcher.py turns ``TaskRunner`` into an actor class. The child
runs in a session of its own (stopping it stops what it started), and Linux kills it if the actor
dies: a small Python prologue asks for that (PR_SET_PDEATHSIG; no ``preexec_fn``, which is unsafe in a
process with threads) and then execs the command; the thread that started it waits on it, so it
lives exactly as long as the child.

Example (here without Ray):
    >>> import sys
    >>> runner = TaskRunner()
    >>> runner.address("127.0.0.1").startswith("127.0.0.1:")
    True
    >>> runner.start([sys.executable, "-c", "print('hi')"], {}, None) > 0
    True
    >>> lines, eof = [], False
    >>> while not eof:
    ...     more, returncode, eof = runner.poll(5.0)
    ...     lines += more
    >>> lines, returncode
    ([('stdout', 'hi')], 0)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["TaskRunner", "node_address"]

MAX_LINES_PER_POLL = 2000
EXIT_DRAIN_SECONDS = 0.5  # after the process exits, how long its pipes may stay open before it counts as ended


def node_address() -> str:
    """The IP address Ray knows this node by (127.0.0.1 for the launcher's local instance)."""
    try:
        import ray

        return ray.util.get_node_ip_address()
    except Exception:  # noqa: BLE001 - outside a Ray worker
        return "127.0.0.1"


class TaskRunner:
    """One task's process on this node (see the module docstring). Methods may be called from
    several threads (the actor's ``max_concurrency``): ``poll`` blocks while ``terminate`` runs."""

    def __init__(self):
        self._cv = threading.Condition()
        self._lines: list[tuple[str, str]] = []
        self._open_pipes = 0
        self._returncode: int | None = None
        self._process: subprocess.Popen | None = None
        self._reported = False

    def address(self, host: str | None = None, port: int | None = None) -> str:
        """``host:port`` for the task's server: this node's address and a port free on it (or ``port``)."""
        host = host or node_address()
        if port is None:
            with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
                s.bind((host, 0))
                port = s.getsockname()[1]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def start(self, argv, env_overrides: dict, cwd: str | None, python: bool = False) -> int:
        """Starts ``argv`` (after this node's Python when ``python``) with this node's environment plus
        ``env_overrides``; returns its pid. A command that cannot be started exits with status 127."""
        from sparseflow._src.distributed.launcher import task_environment

        argv = [sys.executable, *argv] if python else list(argv)
        if cwd is not None and not os.path.isdir(cwd):
            cwd = None  # not on this node: the actor's directory (Ray's working_dir, when given)
        env = task_environment(os.environ, env_overrides)
        started: dict = {}
        ready = threading.Event()
        threading.Thread(target=self._run, args=(argv, env, cwd, started, ready), daemon=True,
                         name="sparseflow-ray-task").start()
        ready.wait()
        if "error" in started:
            raise started["error"]
        return started["pid"]

    def _run(self, argv, env, cwd, started, ready):
        if sys.platform.startswith("linux"):
            argv = [sys.executable, "-c", _DIE_WITH_PARENT, str(os.getpid()), *argv]
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            started["error"] = e
            ready.set()
            return
        with self._cv:
            self._process = process
            self._open_pipes = 2
        started["pid"] = process.pid
        ready.set()
        for pipe, which in ((process.stdout, "stdout"), (process.stderr, "stderr")):
            threading.Thread(target=self._pump, args=(pipe, which), daemon=True).start()
        code = process.wait()  # this thread stays as long as the process (PR_SET_PDEATHSIG follows it)
        with self._cv:  # its last lines first: wait for EOF, briefly (processes it started may hold the pipes)
            end = time.monotonic() + EXIT_DRAIN_SECONDS
            while self._open_pipes and time.monotonic() < end:
                self._cv.wait(max(0.0, end - time.monotonic()))
            self._returncode = code
            self._cv.notify_all()

    def _pump(self, pipe, which):
        with pipe:
            for raw in iter(pipe.readline, b""):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                with self._cv:
                    self._lines.append((which, line))
                    self._cv.notify_all()
        with self._cv:
            self._open_pipes -= 1
            self._cv.notify_all()

    def poll(self, timeout: float):
        """Waits up to ``timeout`` s for output or the end; returns (lines as (stream, text), the return
        code once the process ended and its lines so far were handed out (else None), True once its
        output pipes are closed too)."""
        end = time.monotonic() + timeout
        with self._cv:
            while not self._lines and not self._eof():
                left = end - time.monotonic()
                if left <= 0 or (self._returncode is not None and not self._reported):
                    break
                self._cv.wait(left)
            lines, self._lines = self._lines[:MAX_LINES_PER_POLL], self._lines[MAX_LINES_PER_POLL:]
            if self._returncode is None or self._lines:
                return lines, None, False
            self._reported = True
            return lines, self._returncode, self._eof()

    def _eof(self) -> bool:
        return self._returncode is not None and self._open_pipes == 0

    def terminate(self, grace: float) -> int | None:
        """SIGTERM to the task's process group, SIGKILL after ``grace`` s; returns its return code."""
        with self._cv:
            process = self._process
        if process is None:
            return None
        _signal_group(process.pid, signal.SIGTERM)
        end = time.monotonic() + grace
        with self._cv:
            while self._returncode is None and time.monotonic() < end:
                self._cv.wait(max(0.0, end - time.monotonic()))
        _signal_group(process.pid, signal.SIGKILL)  # a straggler, and whatever the task left in its group
        with self._cv:
            while self._returncode is None:
                self._cv.wait(1.0)
            return self._returncode


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # the group is empty


# argv: the actor's pid, then the command. Exits 127 when the command cannot be started (as a shell).
_DIE_WITH_PARENT = """\
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    os._exit(128 + signal.SIGKILL)  # the actor died before that
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as e:
    print(f"could not start {sys.argv[2]!r}: {e}", file=sys.stderr)
    os._exit(127)
"""
