"""Collectives between worker processes on 127.0.0.1 (tests/distributed/programs/collective_member.py):
values, dtypes, sum vs mean, uneven sizes, tensors smaller than the ring, all-gather, broadcast, the
graph ops in a Session on the cluster; over shared memory and over gRPC; a killed or absent member
named within the deadline. Every wait polls the members' output with a deadline."""

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
MEMBER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "collective_member.py")


class Member:
    """One worker process; its stdout lines arrive in a queue."""

    def __init__(self, hosts, index, scenario, transport, timeout=30.0):
        env = dict(os.environ, PYTHONPATH=ROOT, SPARSEFLOW_COLLECTIVE_TRANSPORT=transport)
        self.proc = subprocess.Popen([sys.executable, MEMBER, "--workers", ",".join(hosts), "--task_index",
                                      str(index), "--scenario", scenario, "--timeout", str(timeout)],
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.lines: queue.Queue = queue.Queue()
        self.out: list[str] = []
        self.err: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self._put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.err.append), daemon=True).start()

    def _put(self, line):
        self.out.append(line)
        self.lines.put(line)

    @staticmethod
    def _pump(stream, put):
        for line in stream:
            put(line.rstrip("\n"))

    def wait_for(self, predicate, timeout=120.0):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching line within {timeout} s; out: {self.out[-10:]}; stderr:\n"
                                     + "\n".join(self.err[-30:]))
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    raise AssertionError(f"member exited {self.proc.returncode}; out: {self.out[-10:]}:\n"
                                         + "\n".join(self.err[-30:])) from None
                continue
            if predicate(line):
                return line

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)


def run_members(n, scenario, transport, timeout=30.0):
    hosts = [f"127.0.0.1:{p}" for p in free_ports(n)]
    return [Member(hosts, i, scenario, transport, timeout) for i in range(n)]


def finish(members, timeout=180.0):
    try:
        for m in members:
            m.wait_for(lambda line: line == "DONE", timeout)
    finally:
        for m in members:
            m.stop()
    return [m.out for m in members]


@pytest.mark.slow
@pytest.mark.parametrize("n,transport,link", [(2, "auto", "ShmLink"), (3, "grpc", "GrpcLink")])
def test_values_dtypes_sizes_gather_and_broadcast(n, transport, link):
    outs = finish(run_members(n, "values", transport))
    for out in outs:
        fails = [line for line in out if line.startswith("FAIL")]
        assert not fails, fails
        oks = {line.split()[1] for line in out if line.startswith("OK")}
        assert {"sum-float32-0", "sum-int64-1", f"sum-float64-{n - 1}", "sum-float32-300001", "mean", "mean-int",
                "max", "min", "in-place", "gather-uneven", "gather-big", "bcast-big", "bcast-bool",
                "mismatch"} <= oks
        assert "OK mismatch True" in out  # the mismatch error names the other member's task
        assert f"LINK {link}" in out


@pytest.mark.slow
def test_graph_ops_in_sessions_on_the_cluster():
    outs = finish(run_members(3, "graph", "shm"))
    for out in outs:
        assert not [line for line in out if line.startswith("FAIL")], out
        assert sum(line.startswith("OK graph-") for line in out) == 21
        assert "SHAPE [2, 3] [None, 3]" in out


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["auto", "grpc"])
def test_a_killed_member_is_named_within_the_deadline(transport):
    members = run_members(3, "loop", transport, timeout=60.0)
    try:
        for m in members:
            m.wait_for(lambda line: line.startswith("ITER") and int(line.split()[1]) >= 10)
        killed_at = time.monotonic()
        members[1].kill()
        for i in (0, 2):
            line = members[i].wait_for(lambda line: line.startswith("ERROR"), timeout=60.0)
            assert "/job:worker/replica:0/task:1" in line, line
            assert time.monotonic() - killed_at < 60.0
    finally:
        for m in members:
            m.kill()


@pytest.mark.slow
def test_a_member_that_does_not_take_part_is_named_at_the_deadline():
    members = run_members(2, "absent", "auto", timeout=2.0)
    try:
        members[1].wait_for(lambda line: line == "IDLE")
        line = members[0].wait_for(lambda line: line.startswith(("ERROR", "FAIL")), timeout=60.0)
        assert line.startswith("ERROR DeadlineExceededError"), line
        assert "not started this run" in line and "/job:worker/replica:0/task:1/device:CPU:0" in line, line
    finally:
        for m in members:
            m.stop()
