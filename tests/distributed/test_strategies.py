"""sparseflow.distribute strategies: where they place a model, what clusters they accept, a
PsStrategy job of 2 workers under a real ``mpiexec -n 2`` (Open MPI and MPICH, when installed), and
MultiWorkerMirroredStrategy / HybridStrategy jobs of 2 workers under ``mpirun.openmpi -n 2``."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import sparseflow as tf
from sparseflow import embedding
from sparseflow._src.distributed.cluster_resolver import SimpleClusterResolver
from sparseflow._src.distributed.launcher import free_ports
from sparseflow.distribute import ParameterServerStrategy, PsStrategy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _resolver(jobs: dict, task_type: str, task_id: int = 0):
    ports = iter(free_ports(sum(jobs.values())))
    spec = tf.train.ClusterSpec({job: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for job, n in jobs.items()})
    return SimpleClusterResolver(spec, task_type=task_type, task_id=task_id)


def test_parameter_server_strategy_places_variables_and_tables_on_the_ps_tasks():
    s = ParameterServerStrategy(_resolver({"ps": 2, "worker": 2}, "worker", 1), start_server=False)
    assert (s.num_workers, s.worker_index, s.is_chief, s.serves_only) == (2, 1, False, False)
    with tf.Graph().as_default():
        with s.scope():
            a = tf.Variable([1.0], name="a")
            b = tf.Variable([1.0], name="b")
            table = embedding.EmbeddingTable("t", 4)
            y = a * b
    assert (a.device, b.device, y.device) == ("/job:ps/task:0", "/job:ps/task:1", "/job:worker/task:1")
    assert table.shard_devices == ["/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"]
    ps = ParameterServerStrategy(_resolver({"ps": 1, "worker": 1}, "ps"), start_server=False)
    assert ps.serves_only and ps.worker_index == -1


def test_ps_strategy_shards_over_the_workers_themselves():
    s = PsStrategy(_resolver({"worker": 3}, "worker", 2), start_server=False)
    with tf.Graph().as_default():
        with s.scope():
            vs = [tf.Variable([1.0], name=f"v{i}") for i in range(3)]
    assert [v.device for v in vs] == [f"/job:worker/task:{i}" for i in range(3)]
    assert not s.serves_only and s.worker_index == 2


def test_strategies_refuse_clusters_of_the_other_layout(monkeypatch):
    with pytest.raises(ValueError, match="needs ps tasks"):
        ParameterServerStrategy(_resolver({"worker": 2}, "worker"), start_server=False)
    with pytest.raises(ValueError, match="no ps job"):
        PsStrategy(_resolver({"ps": 1, "worker": 2}, "worker"), start_server=False)
    for var in ("TF_CONFIG", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="needs a cluster"):
        PsStrategy()


MPI_PROGRAM = """
import json, sys
import numpy as np
import sparseflow as tf
from sparseflow import embedding
from sparseflow import embedding
from sparseflow.distribute import PsStrategy, resolve_cluster

strategy = PsStrategy(resolve_cluster({"num_ps": 0, "rendezvous_dir": sys.argv[1]}))
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
                          "shards": table.shard_devices}), flush=True)
    strategy.release(timeout=60)
"""


@pytest.mark.slow
@pytest.mark.parametrize("mpiexec", ["mpirun.openmpi", "mpiexec.mpich"])
def test_a_ps_strategy_job_of_two_workers_under_mpiexec(mpiexec, tmp_path):
    if shutil.which(mpiexec) is None:
        pytest.skip(f"{mpiexec} is not installed (.ci/run installs Open MPI)")
    (tmp_path / "prog.py").write_text(MPI_PROGRAM)
    rendezvous = tmp_path / "rendezvous"
    rendezvous.mkdir()
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "PYTHONPATH": ROOT, "SPARSEFLOW_MPI_HOST": "127.0.0.1"}
    env.pop("TF_CONFIG", None)
    run = subprocess.run([mpiexec, "-n", "2", sys.executable, str(tmp_path / "prog.py"), str(rendezvous)], env=env,
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    results = sorted((json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")),
                     key=lambda r: r["worker"])
    assert [r["worker"] for r in results] == [0, 1]
    assert results[0]["step"] == 60  # both workers' 30 asynchronous steps
    assert all(r["last"] < r["first"] for r in results)
    assert results[0]["shards"] == ["/job:worker/replica:0/task:0/device:CPU:0",
                                    "/job:worker/replica:0/task:1/device:CPU:0"]


MIRRORED_MPI_PROGRAM = """
import hashlib, json, sys
import numpy as np
import sparseflow as tf
from sparseflow import embedding
from sparseflow.distribute import HybridStrategy, MultiWorkerMirroredStrategy, resolve_cluster

cls = {"mirrored": MultiWorkerMirroredStrategy, "hybrid": HybridStrategy}[sys.argv[2]]
strategy = cls(resolve_cluster({"num_ps": 0, "rendezvous_dir": sys.argv[1]}), collective_timeout=120)
with tf.Graph().as_default():
    with strategy.scope():
        keys = tf.placeholder(tf.uint64, [None])
        labels = tf.placeholder(tf.float32, [None])
        table = embedding.EmbeddingTable("t", 4, optimizer=embedding.Adagrad(0.2))
        w = tf.Variable(tf.ones([4, 1]) * 0.1)
        step = tf.train.get_or_create_global_step()
        logits = tf.squeeze(tf.matmul(table.lookup(keys), w), 1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
        train = embedding.minimize(loss, strategy.wrap_optimizer(tf.train.AdamOptimizer(0.05)), global_step=step)
    mirrored = strategy.mirrored_variables()
    with strategy.training_session(max_wait_secs=120) as sess:
        rng = np.random.default_rng(strategy.worker_index)
        k = rng.integers(0, 500, 64).astype(np.uint64)
        feed = {keys: k, labels: (k % 2).astype(np.float32)}
        first = float(sess.run(loss, feed))
        for _ in range(20):
            sess.run(train, feed)
        last = float(sess.run(loss, feed))
        digest = hashlib.sha256(b"".join(sess.run(v).tobytes() for v in mirrored)).hexdigest()
        strategy.finish(sess, timeout=120)
        print(json.dumps({"worker": strategy.worker_index, "first": first, "last": last, "step": int(sess.run(step)),
                          "mirrored": digest, "shards": table.shard_devices}), flush=True)
    strategy.release(timeout=120)
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mirrored", "hybrid"])
def test_an_all_reduce_strategy_job_of_two_workers_under_mpiexec(name, tmp_path):
    mpiexec = "mpirun.openmpi"
    if shutil.which(mpiexec) is None:
        pytest.skip(f"{mpiexec} is not installed (.ci/run installs Open MPI)")
    (tmp_path / "prog.py").write_text(MIRRORED_MPI_PROGRAM)
    rendezvous = tmp_path / "rendezvous"
    rendezvous.mkdir()
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "PYTHONPATH": ROOT, "SPARSEFLOW_MPI_HOST": "127.0.0.1"}
    env.pop("TF_CONFIG", None)
    run = subprocess.run([mpiexec, "-n", "2", sys.executable, str(tmp_path / "prog.py"), str(rendezvous), name],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    results = sorted((json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")),
                     key=lambda r: r["worker"])
    assert [r["worker"] for r in results] == [0, 1]
    assert [r["step"] for r in results] == [20, 20]  # every worker's copy of the global step: 20 lockstep steps
    assert results[0]["mirrored"] == results[1]["mirrored"]  # bit-identical dense variables, slots, step
    assert all(r["last"] < r["first"] for r in results)
    assert results[0]["shards"] == ["/job:worker/replica:0/task:0/device:CPU:0",
                                    "/job:worker/replica:0/task:1/device:CPU:0"]
