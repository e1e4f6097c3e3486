"""Failures on a real multi-process cluster (1 ps + 2 workers on 127.0.0.1): a worker killed with
SIGKILL leaves the others training and rejoins when restarted; a ps killed and restarted is detected
(its new incarnation / lost sessions) and the chief resumes from the last checkpoint. Every wait is a
poll of the tasks' output with a deadline."""

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
TRAINER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "elastic_trainer.py")


class Task:
    """One task process; its stdout lines arrive in a queue."""

    def __init__(self, args, job, index):
        env = dict(os.environ, PYTHONPATH=ROOT)
        self.proc = subprocess.Popen([sys.executable, TRAINER, *args, "--job_name", job, "--task_index", str(index)],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.err.append), daemon=True).start()

    @staticmethod
    def _pump(stream, put):
        for line in stream:
            put(line.rstrip("\n"))

    def wait_for(self, predicate, timeout=120.0):
        """The first line (from now on) satisfying ``predicate``; fails after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching line within {timeout} s; stderr:\n" + "\n".join(self.err[-30:]))
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    raise AssertionError(f"task exited {self.proc.returncode}:\n" + "\n".join(self.err[-30:])) from None
                continue
            if predicate(line):
                return line

    def drain(self):
        while not self.lines.empty():
            self.lines.get_nowait()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)


def step_of(line):
    return int(line.split()[1]) if line.startswith("STEP ") else -1


@pytest.fixture
def cluster_args(tmp_path):
    ps_port, w0, w1 = free_ports(3)
    return ["--ps_hosts", f"127.0.0.1:{ps_port}", "--worker_hosts", f"127.0.0.1:{w0},127.0.0.1:{w1}",
            "--ckpt_dir", str(tmp_path / "ckpt"), "--stop_file", str(tmp_path / "stop")], tmp_path


@pytest.mark.slow
def test_a_killed_worker_leaves_the_others_training_and_rejoins(cluster_args):
    args, tmp = cluster_args
    tasks = [Task(args, "ps", 0)]
    try:
        tasks[0].wait_for(lambda s: s == "PS READY")
        chief, other = Task(args, "worker", 0), Task(args, "worker", 1)
        tasks += [chief, other]
        other.wait_for(lambda s: step_of(s) > 0)
        other.kill()
        chief.drain()
        before = step_of(chief.wait_for(lambda s: s.startswith("STEP ")))
        chief.wait_for(lambda s: step_of(s) > before + 50)  # the chief trains on without worker 1
        again = Task(args, "worker", 1)
        tasks.append(again)
        again.wait_for(lambda s: step_of(s) > before + 50 and s.split()[2] == "5")  # rejoined: 5 local steps
        (tmp / "stop").write_text("")
        for t in (chief, again):
            t.wait_for(lambda s: s == "DONE", timeout=60)
            assert t.proc.wait(60) == 0
    finally:
        for t in tasks:
            t.kill()


@pytest.mark.slow
def test_a_killed_ps_is_detected_and_the_chief_resumes_from_the_last_checkpoint(cluster_args):
    args, tmp = cluster_args
    ps = Task(args, "ps", 0)
    tasks = [ps]
    try:
        ps.wait_for(lambda s: s == "PS READY")
        chief = Task(args, "worker", 0)
        tasks.append(chief)
        assert chief.wait_for(lambda s: s.startswith("SESSION ")) == "SESSION 0"
        chief.wait_for(lambda s: step_of(s) > 45)  # checkpoints at 20 and 40 exist
        ps.kill()
        ps2 = Task(args, "ps", 0)
        tasks.append(ps2)
        ps2.wait_for(lambda s: s == "PS READY")
        # The chief's next steps fail (the ps is gone), its session is re-created once the ps is back,
        # the variables on the new ps are restored from the last checkpoint, and training continues.
        restored = int(chief.wait_for(lambda s: s.startswith("SESSION "), timeout=120).split()[1])
        ckpts = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(tmp / "ckpt") if f.endswith(".index"))
        assert restored == ckpts[-1] or restored in ckpts, (restored, ckpts)
        resumed_step = step_of(chief.wait_for(lambda s: s.startswith("STEP ")))
        assert resumed_step == restored + 1
        chief.wait_for(lambda s: step_of(s) > resumed_step + 20)
        (tmp / "stop").write_text("")
        chief.wait_for(lambda s: s == "DONE", timeout=60)
        assert chief.proc.wait(60) == 0
    finally:
        for t in tasks:
            t.kill()
