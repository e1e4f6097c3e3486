"""``sparseflow launch`` and ``launch_local_cluster``: TF_CONFIG per task, prefixed output, supervision.

The task scripts are plain Python (no sparseflow import) so that they start fast. Every wait polls
with a deadline; nothing passes by sleeping.
"""

import errno
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sparseflow as tf
from sparseflow._src.distributed.launcher import exit_status

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 60.0

# Each task writes "pid child_pid" to DIR/<task>.pids (it starts a child, to check that process
# groups are stopped whole), prints "ready", its TF_CONFIG and a stderr line, and waits until all N
# tasks are ready. Then --fail makes worker:1 exit 3 and --kill-self makes it SIGKILL itself; ps
# tasks and --hang block; others exit 0. --ignore-term ignores SIGTERM. Usage: task.py DIR N [flags].
TASK = r"""
import os, signal, subprocess, sys, time
directory, n_tasks, flags = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
task = os.environ["SPARSEFLOW_TASK"]
if "--ignore-term" in flags:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
with open(os.path.join(directory, task + ".tmp"), "w") as f:
    f.write(f"{os.getpid()} {child.pid}")
os.replace(os.path.join(directory, task + ".tmp"), os.path.join(directory, task + ".pids"))
print("ready", task, flush=True)
print("TF_CONFIG", os.environ["TF_CONFIG"], flush=True)
print("err line from", task, file=sys.stderr, flush=True)
deadline = time.monotonic() + 60
while sum(name.endswith(".pids") for name in os.listdir(directory)) < n_tasks and time.monotonic() < deadline:
    time.sleep(0.01)
if task == "worker:1" and "--fail" in flags:
    sys.exit(3)
if task == "worker:1" and "--kill-self" in flags:
    os.kill(os.getpid(), signal.SIGKILL)
if task.startswith("ps") or "--hang" in flags:
    while True:
        signal.pause()
child.kill()
child.wait()
"""


class Tasks:
    """The task script and its pid directory."""

    def __init__(self, tmp_path):
        self.script = str(tmp_path / "task.py")
        (tmp_path / "task.py").write_text(TASK)
        self.dir = tmp_path / "pids"
        self.dir.mkdir()

    def args(self, n_tasks, *flags):
        return [self.script, str(self.dir), str(n_tasks), *flags]

    def names(self):
        return sorted(p.name[:-5] for p in self.dir.glob("*.pids"))

    def pids(self):
        return [int(x) for p in self.dir.glob("*.pids") for x in p.read_text().split()]

    def wait_ready(self, n, deadline=DEADLINE):
        end = time.monotonic() + deadline
        while len(self.names()) < n:
            assert time.monotonic() < end, f"only {self.names()} ready after {deadline} s"
            time.sleep(0.02)


@pytest.fixture
def tasks(tmp_path):
    return Tasks(tmp_path)


def _gone(pid: int) -> bool:
    """True when ``pid`` has exited (a zombie waiting for a reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _all_gone(pids, deadline=DEADLINE) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if all(_gone(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


def _env():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TF_CONFIG", None)
    return env


def _launch(*args, timeout=DEADLINE):
    return subprocess.run([sys.executable, "-m", "sparseflow", "launch", *args], env=_env(), capture_output=True,
                          text=True, timeout=timeout)


# --------------------------------------------------------------------------- Python API


def test_each_task_gets_its_tf_config_and_prefixed_output():
    out, err = io.StringIO(), io.StringIO()
    code = "import os, sys; print(os.environ['TF_CONFIG']); print('to stderr', file=sys.stderr); print('last', end='')"
    cluster = tf.distribute.launch_local_cluster(["-c", code], num_ps=2, num_workers=2, chief=True, out=out, err=err)
    assert cluster.wait(timeout=DEADLINE) == 0
    spec = cluster.cluster_spec.as_dict()
    assert sorted(spec) == ["chief", "ps", "worker"] and [len(spec[j]) for j in ("chief", "ps", "worker")] == [1, 2, 2]
    addresses = [a for _, _, a in cluster.cluster_spec.tasks()]
    assert len(set(addresses)) == 5 and all(a.startswith("127.0.0.1:") for a in addresses)
    configs = {}
    for line in out.getvalue().splitlines():
        name, text = line[1:].split("] ", 1)
        if text.startswith("{"):
            configs[name] = json.loads(text)
    for name in ("chief:0", "worker:0", "worker:1"):  # ps tasks may be stopped before they print
        job, index = name.split(":")
        assert configs[name] == {"cluster": spec, "task": {"type": job, "index": int(index)}, "rpc_layer": "grpc"}
        assert f"[{name}] last" in out.getvalue().splitlines()  # a last line without newline still comes out
        assert f"[{name}] to stderr" in err.getvalue().splitlines()
    assert "[launch] all workers finished" in err.getvalue()


def test_port_base_gives_consecutive_ports_in_task_order():
    cluster = tf.distribute.LocalCluster(["x.py"], num_ps=2, num_workers=1, chief=True, port_base=41000)
    assert cluster.cluster_spec.as_dict() == {"ps": ["127.0.0.1:41000", "127.0.0.1:41001"],
                                              "chief": ["127.0.0.1:41002"], "worker": ["127.0.0.1:41003"]}


def test_picked_ports_are_held_until_the_tasks_bind_them():
    """From the moment a cluster picks its ports until it stops, no other socket can bind them (nor
    be given one by bind(0) or as a connection's local port); its tasks' servers bind them all the same."""
    server = ("from sparseflow.distribute.cluster_resolver import resolve_cluster; import sparseflow as tf; "
              "r = resolve_cluster(); "
              "s = tf.train.Server(r.cluster_spec(), job_name=r.task_type, task_index=r.task_id); "
              "print('serving', s.target)")
    out, err = io.StringIO(), io.StringIO()
    cluster = tf.distribute.LocalCluster(["-c", server], num_ps=1, num_workers=1, out=out, err=err,
                                         env={"PYTHONPATH": str(ROOT)})
    addresses = [t.address for t in cluster.tasks]
    for address in addresses:
        with socket.socket() as other, pytest.raises(OSError) as e:
            other.bind(("127.0.0.1", int(address.rsplit(":", 1)[1])))
        assert e.value.errno == errno.EADDRINUSE
    with cluster:
        assert cluster.start().wait(timeout=DEADLINE) == 0, err.getvalue()
    assert f"[worker:0] serving grpc://{addresses[1]}" in out.getvalue().splitlines()


@pytest.mark.parametrize("kwargs, problem", [
    ({"num_ps": 1, "num_workers": 0}, "at least one worker or a chief"),
    ({"num_ps": -1, "num_workers": 1}, "must be >= 0"),
    ({"port_base": 65535, "num_workers": 2}, "leaves no room for 3 ports"),
])
def test_bad_cluster_shapes(kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        tf.distribute.LocalCluster(["x.py"], **kwargs)


def test_python_api_failure_stops_the_rest(tasks):
    out = io.StringIO()
    with tf.distribute.launch_local_cluster(tasks.args(3, "--fail", "--hang"), num_ps=1, num_workers=2, out=out,
                                            err=io.StringIO()) as cluster:
        assert cluster.wait(timeout=DEADLINE) == 3
    assert [t.returncode for t in cluster.tasks if t.name == "worker:1"] == [3]
    assert all(t.returncode is not None for t in cluster.tasks)
    assert tasks.names() == ["ps:0", "worker:0", "worker:1"] and _all_gone(tasks.pids())


def test_exit_status_of_a_signal():
    assert (exit_status(0), exit_status(3), exit_status(-signal.SIGKILL)) == (0, 3, 137)


# --------------------------------------------------------------------------- command line


@pytest.mark.slow
def test_cli_failing_worker_stops_the_others_and_sets_the_status(tasks):
    run = _launch("--ps", "1", "--workers", "3", "--", *tasks.args(4, "--fail", "--hang"))
    assert run.returncode == 3, run.stderr
    assert "[launch] worker:1 exited with status 3; stopping 3 other task(s)" in run.stderr.splitlines()
    assert tasks.names() == ["ps:0", "worker:0", "worker:1", "worker:2"]
    assert _all_gone(tasks.pids())  # the tasks and the processes they started
    lines = run.stdout.splitlines()
    assert sorted(line for line in lines if " ready " in line) == [
        "[ps:0] ready ps:0", "[worker:0] ready worker:0", "[worker:1] ready worker:1", "[worker:2] ready worker:2"]
    assert "[worker:2] err line from worker:2" in run.stderr.splitlines()


@pytest.mark.slow
def test_cli_task_killed_by_a_signal(tasks):
    run = _launch("--ps", "0", "--workers", "2", *tasks.args(2, "--kill-self", "--hang"))
    assert run.returncode == 128 + signal.SIGKILL, run.stderr
    assert tasks.names() == ["worker:0", "worker:1"] and _all_gone(tasks.pids())


@pytest.mark.slow
def test_cli_stops_ps_tasks_once_workers_succeed(tasks):
    run = _launch("--ps", "2", "--workers", "2", "--chief", *tasks.args(5))
    assert run.returncode == 0, run.stderr
    assert "[launch] all workers finished; stopping ps:0, ps:1" in run.stderr.splitlines()
    assert tasks.names() == ["chief:0", "ps:0", "ps:1", "worker:0", "worker:1"] and _all_gone(tasks.pids())


@pytest.mark.slow
def test_cli_kills_a_ps_that_ignores_sigterm_after_the_grace_period(tasks):
    run = _launch("--ps", "1", "--workers", "1", "--grace", "0.5", *tasks.args(2, "--ignore-term"))
    assert run.returncode == 0, run.stderr
    assert "[launch] ps:0 still running 0.5 s after SIGTERM; sending SIGKILL" in run.stderr.splitlines()
    assert _all_gone(tasks.pids())


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_cli_signal_stops_every_task(tasks, signum):
    launcher = subprocess.Popen([sys.executable, "-m", "sparseflow", "launch", "--ps", "1", "--workers", "2", "--",
                                 *tasks.args(3, "--hang")], env=_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    try:
        tasks.wait_ready(3)
        launcher.send_signal(signum)
        out, err = launcher.communicate(timeout=DEADLINE)
    finally:
        launcher.kill()
    assert launcher.returncode == 128 + signum, err
    assert f"[launch] received {signal.Signals(signum).name}; stopping all tasks" in err.splitlines()
    assert _all_gone(tasks.pids())


@pytest.mark.slow
def test_cli_timeout(tasks):
    run = _launch("--ps", "0", "--workers", "1", "--timeout", "3", *tasks.args(1, "--hang"))
    assert run.returncode == 124 and "[launch] timed out after 3 s; stopping all tasks" in run.stderr, run.stderr
    assert _all_gone(tasks.pids())


@pytest.mark.slow
def test_cli_module_and_no_python(tmp_path):
    (tmp_path / "mytask.py").write_text("import os\nprint('module', os.environ['SPARSEFLOW_TASK'])\n")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    run = subprocess.run([sys.executable, "-m", "sparseflow", "launch", "--ps", "0", "--workers", "2", "-m", "mytask"],
                         env=env, capture_output=True, text=True, timeout=DEADLINE)
    assert run.returncode == 0 and sorted(run.stdout.splitlines()) == ["[worker:0] module worker:0",
                                                                       "[worker:1] module worker:1"], run.stderr
    run = _launch("--ps", "0", "--no-python", "--", "sh", "-c", 'echo "$SPARSEFLOW_TASK"; exit 5')
    assert run.returncode == 5 and run.stdout == "[worker:0] worker:0\n"
    assert _launch("--no-python", "/nonexistent/program").returncode == 127


@pytest.mark.parametrize("args, problem", [
    ([], "give the script to run"),
    (["--workers", "0", "x.py"], "at least one worker or a chief"),
])
def test_cli_usage_errors(args, problem, capsys):
    from sparseflow.cli import main

    assert main(["launch", *args]) == 2
    assert problem in capsys.readouterr().err


@pytest.mark.slow
def test_cli_tasks_resolve_their_cluster(tmp_path):
    (tmp_path / "prog.py").write_text(
        "from sparseflow.distribute.cluster_resolver import resolve_cluster\n"
        "r = resolve_cluster()\n"
        "print(r.task_type, r.task_id, r.master(), r.master('ps', 0), sorted(r.cluster_spec().jobs))\n")
    run = _launch("--ps", "1", "--workers", "1", "--port-base", "47000", str(tmp_path / "prog.py"))
    assert run.returncode == 0, run.stderr
    assert "[worker:0] worker 0 grpc://127.0.0.1:47001 grpc://127.0.0.1:47000 ['ps', 'worker']" in run.stdout
