"""All-reduce strategies when a worker stops (worker processes on 127.0.0.1, programs/mirrored_worker.py):
a worker killed with SIGKILL in the middle of a step makes the survivor's collective fail with an
error naming the missing task at once (shared memory) or within a few probe periods (gRPC), the
survivor's session waits for the cluster, and once the killed worker is restarted both go on from
the last checkpoint to the same parameters; a worker that hangs instead fails the survivor's step
at the collective deadline, naming it. Every wait polls the workers' output with a deadline."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.distributed.conftest import free_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "mirrored_worker.py")
VICTIM = "/job:worker/replica:0/task:1"


class Worker:
    """One worker process; its stdout JSON lines and stderr lines arrive in queues."""

    def __init__(self, hosts, index, ckpt, *args, transport="auto"):
        env = dict(os.environ, PYTHONPATH=ROOT, SPARSEFLOW_COLLECTIVE_TRANSPORT=transport)
        self.proc = subprocess.Popen([sys.executable, WORKER, "--workers", ",".join(hosts), "--task_index", str(index),
                                      "--ckpt", str(ckpt), *map(str, args)], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.docs: queue.Queue = queue.Queue()
        self.log: queue.Queue = queue.Queue()
        self.err: list[str] = []
        self.out: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self._doc), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self._line), daemon=True).start()

    def _doc(self, line):
        self.out.append(line)
        if line.startswith("{"):
            self.docs.put(json.loads(line))

    def _line(self, line):
        self.err.append(line)
        self.log.put(line)

    @staticmethod
    def _pump(stream, put):
        for line in stream:
            put(line.rstrip("\n"))

    def _wait(self, q, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {what} within {timeout} s; {self._said()}")
            try:
                item = q.get(timeout=min(left, 1.0))
            except queue.Empty:
                if self.proc.poll() is not None and q.empty():
                    raise AssertionError(f"exited {self.proc.returncode} before {what}; {self._said()}") from None
                continue
            if predicate(item):
                return item

    def _said(self) -> str:
        return "stdout:\n" + "\n".join(self.out[-10:]) + "\nstderr:\n" + "\n".join(self.err[-30:])

    def doc(self, key, timeout=120.0):
        return self._wait(self.docs, lambda d: key in d, timeout, f"{{{key!r}: ...}} line")

    def log_line(self, needle, timeout):
        return self._wait(self.log, lambda line: needle in line, timeout, f"log line with {needle!r}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)


@pytest.mark.slow
@pytest.mark.parametrize("strategy,transport,table", [("mirrored", "auto", True), ("hybrid", "grpc", True),
                                                     ("mirrored", "grpc", False)])
def test_a_worker_killed_mid_step_is_named_and_training_resumes_from_the_checkpoint(tmp_path, strategy, transport,
                                                                                   table):
    """With tables the survivor may meet the dead worker first in a table pull or push (an RPC error
    naming the task); without, only in a collective (found by its liveness probe over gRPC)."""
    hosts = [f"127.0.0.1:{p}" for p in free_ports(2)]
    common = ("--strategy", strategy, "--steps", 30, "--save_steps", 5) + (() if table else ("--no_table",))
    workers = [Worker(hosts, 0, tmp_path, *common, transport=transport),
               Worker(hosts, 1, tmp_path, *common, "--block_at", 13, transport=transport)]
    try:
        assert workers[1].doc("blocking")["blocking"] == 13  # stopped inside step 13, after its table pulls
        killed = time.monotonic()
        workers[1].proc.send_signal(signal.SIGKILL)
        workers[1].proc.wait(30)
        line = workers[0].log_line("An error was raised", timeout=60)  # the collective's deadline is 60 s
        assert time.monotonic() - killed < 60
        assert VICTIM in line and ("Collective" in line or table), line
        # the survivor's session waits for the cluster; the restarted worker takes the chief's restored state
        workers[1] = Worker(hosts, 1, tmp_path, *common, transport=transport)
        assert workers[1].doc("start")["start"] == 10  # the last checkpoint before step 13
        done = [w.doc("done") for w in workers]
        assert [d["done"] for d in done] == [30, 30] and done[0]["digest"] == done[1]["digest"]
        assert all(w.proc.wait(60) == 0 for w in workers)
    finally:
        for w in workers:
            w.stop()


@pytest.mark.slow
def test_a_worker_that_hangs_fails_the_step_at_the_collective_deadline(tmp_path):
    hosts = [f"127.0.0.1:{p}" for p in free_ports(2)]
    common = ("--steps", 30, "--timeout", 5)
    workers = [Worker(hosts, 0, tmp_path, *common), Worker(hosts, 1, tmp_path, *common, "--block_at", 3)]
    try:
        workers[1].doc("blocking")
        error = workers[0].doc("error", timeout=60)
        assert error["error"] == "DeadlineExceededError", error
        assert "timed out after" in error["message"] and VICTIM in error["message"], error
        assert workers[0].proc.wait(60) == 3
    finally:
        for w in workers:
            w.stop()
