"""``sparseflow launch --ray``: a PsStrategy job of 2 workers as Ray actors on a local Ray instance
(which the launcher binds to 127.0.0.1), a failing task stopping the rest, and the message when Ray
is missing. Every run has a deadline (``--timeout`` and the subprocess timeout)."""

import json
import os
import subprocess
import sys

import pytest

from tests.distributed.test_launcher import ROOT, Tasks, _all_gone

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False

needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="ray is not importable (pip install 'sparseflow[ray]'; "
                                                    "the test extra installs it)")
DEADLINE = 240.0

PS_PROGRAM = """
import json
import numpy as np
import sparseflow as tf
from sparseflow import embedding
from sparseflow.distribute import PsStrategy

strategy = PsStrategy()  # the cluster from TF_CONFIG
with tf.Graph().as_default():
    with strategy.scope():
        keys = tf.placeholder(tf.uint64, [None])
        labels = tf.placeholder(tf.float32, [None])
        table = embedding.EmbeddingTable("t", 4, optimizer=embedding.Adagrad(0.2))
        w = tf.Variable(tf.ones([4, 1]) * 0.1)
        step = tf.train.get_or_create_global_step()
        logits = tf.squeeze(tf.matmul(table.lookup(keys), w), 1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
        train = embedding.minimize(loss, strategy.wrap_optimizer(tf.train.AdagradOptimizer(0.2)), global_step=step)
    with strategy.training_session(max_wait_secs=60) as sess:
        rng = np.random.default_rng(strategy.worker_index)
        k = rng.integers(0, 500, 64).astype(np.uint64)
        feed = {keys: k, labels: (k % 2).astype(np.float32)}
        first = float(sess.run(loss, feed))
        for _ in range(30):
            sess.run(train, feed)
        last = float(sess.run(loss, feed))
        strategy.finish(sess, timeout=60)
        print(json.dumps({"worker": strategy.worker_index, "first": first, "last": last,
                          "step": int(sess.run(step)) if strategy.is_chief else None,
                          "cluster": strategy.cluster_spec.as_dict()}), flush=True)
    strategy.release(timeout=60)
"""


def _launch_ray(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("TF_CONFIG", "RAY_ADDRESS"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "sparseflow", "launch", "--ray", "--timeout", "180", *args], env=env,
                          capture_output=True, text=True, timeout=DEADLINE)


@pytest.mark.slow
@needs_ray
def test_a_ps_strategy_job_of_two_workers_on_a_local_ray_instance(tmp_path):
    (tmp_path / "prog.py").write_text(PS_PROGRAM)
    run = _launch_ray("--ps", "0", "--workers", "2", "--", str(tmp_path / "prog.py"))
    assert run.returncode == 0, run.stdout + run.stderr
    results = {}
    for line in run.stdout.splitlines():
        name, _, text = line.partition("] ")
        if text.startswith("{"):
            results[name[1:]] = json.loads(text)
    assert sorted(results) == ["worker:0", "worker:1"], run.stdout + run.stderr
    assert [results[f"worker:{i}"]["worker"] for i in (0, 1)] == [0, 1]
    assert results["worker:0"]["step"] == 60  # both workers' 30 asynchronous steps
    assert all(r["last"] < r["first"] for r in results.values())
    addresses = results["worker:0"]["cluster"]["worker"]
    assert len(set(addresses)) == 2 and all(a.startswith("127.0.0.1:") for a in addresses)
    assert (f"[launch] cluster on a local Ray instance: worker:0={addresses[0]} worker:1={addresses[1]}"
            in run.stderr.splitlines())
    assert "[launch] all workers finished" in run.stderr.splitlines()


@pytest.mark.slow
@needs_ray
def test_a_failing_task_stops_the_other_actors_tasks_and_sets_the_status(tmp_path):
    tasks = Tasks(tmp_path)
    run = _launch_ray("--ps", "1", "--workers", "2", "--", *tasks.args(3, "--fail", "--hang"))
    assert run.returncode == 3, run.stdout + run.stderr
    assert "[launch] worker:1 exited with status 3; stopping 2 other task(s)" in run.stderr.splitlines()
    assert tasks.names() == ["ps:0", "worker:0", "worker:1"]
    assert _all_gone(tasks.pids())  # the tasks and the processes they started
    assert sorted(line for line in run.stdout.splitlines() if " ready " in line) == [
        "[ps:0] ready ps:0", "[worker:0] ready worker:0", "[worker:1] ready worker:1"]
    assert "[worker:0] err line from worker:0" in run.stderr.splitlines()


def test_without_ray_the_error_says_how_to_install_it(tmp_path):
    (tmp_path / "ray.py").write_text("raise ImportError('No module named ray (hidden by the test)')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    run = subprocess.run([sys.executable, "-m", "sparseflow", "launch", "--ray", "--workers", "1", "--",
                          "task.py"], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "needs Ray, which is not installed" in run.stderr and "pip install 'sparseflow[ray]'" in run.stderr


def test_a_script_after_a_bare_ray_flag_is_not_taken_for_an_address(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "sparseflow", "launch", "--workers", "2", "--ray", "train.py"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "put -- before the script" in run.stderr
