"""Cluster resolvers: TF_CONFIG (as TensorFlow 2.21 reads it), flags, mpiexec ranks, resolve_cluster."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import sparseflow as tf
from sparseflow._src.distributed.cluster_resolver import load_tf_config
from sparseflow._src.distributed.cluster_spec import ClusterSpec
from sparseflow._src.distributed.mpi_cluster_resolver import MPIWorld, mpi_world
from sparseflow.distribute.cluster_resolver import (
    MPIClusterResolver,
    SimpleClusterResolver,
    TFConfigClusterResolver,
    add_cluster_flags,
    cluster_resolver_from_flags,
    resolve_cluster,
)

ROOT = Path(__file__).resolve().parents[2]
PS_WORKERS = {"ps": ["a:1"], "worker": ["b:2", "c:3"]}


def _env(doc):
    return {"TF_CONFIG": doc if isinstance(doc, str) else json.dumps(doc)}


def _tf_config(doc, **kwargs):
    return TFConfigClusterResolver(environ=_env(doc), **kwargs)


# --------------------------------------------------------------------------- TF_CONFIG


def test_public_names_match_tensorflow():
    assert tf.distribute.cluster_resolver.TFConfigClusterResolver is TFConfigClusterResolver
    assert tf.compat.v1.distribute.cluster_resolver.SimpleClusterResolver is SimpleClusterResolver


def test_tf_config_worker_task():
    # Values recorded with TensorFlow 2.21's TFConfigClusterResolver.
    r = _tf_config({"cluster": PS_WORKERS, "task": {"type": "worker", "index": 1}})
    assert r.cluster_spec() == ClusterSpec(PS_WORKERS)
    assert (r.task_type, r.task_id, r.rpc_layer, r.environment) == ("worker", 1, None, None)
    assert r.master() == "c:3"  # no rpc layer: the bare address, as TensorFlow
    assert r.master("ps", 0, rpc_layer="grpc") == "grpc://a:1"
    assert r.num_accelerators() == {} and r.num_accelerators()["GPU"] == 0


def test_tf_config_rpc_layer_and_environment():
    r = _tf_config({"cluster": PS_WORKERS, "task": {"type": "ps", "index": 0}, "rpc_layer": "grpc",
                    "environment": "cloud"})
    assert r.rpc_layer == "grpc" and r.master() == "grpc://a:1" and r.environment == "cloud"
    r = _tf_config({"cluster": PS_WORKERS, "task": {"type": "ps", "index": 0}, "rpc_layer": "grpc"},
                   rpc_layer="grpc+verbs", environment="google")
    assert r.master() == "grpc+verbs://a:1" and r.environment == "google"


def test_tf_config_sparse_task_dict():
    doc = {"cluster": {"ps": ["a:1"], "worker": {"1": "c:3", "4": "d:4"}}, "task": {"type": "worker", "index": 4}}
    r = _tf_config(doc)
    assert r.cluster_spec().as_dict() == {"ps": ["a:1"], "worker": {1: "c:3", 4: "d:4"}}
    assert r.cluster_spec().task_indices("worker") == [1, 4]
    assert (r.task_id, r.master()) == (4, "d:4")


def test_tf_config_chief_and_evaluator():
    cluster = {"chief": ["x:1"], "worker": ["b:2"], "ps": ["a:1"]}
    r = _tf_config({"cluster": cluster, "task": {"type": "chief", "index": 0}, "rpc_layer": "grpc"})
    assert (r.task_type, r.task_id, r.master()) == ("chief", 0, "grpc://x:1")
    # An evaluator inside the cluster has an address; outside it (as Estimator sets it up) it runs locally.
    r = _tf_config({"cluster": {**cluster, "evaluator": ["e:5"]}, "task": {"type": "evaluator", "index": 0}})
    assert r.master() == "e:5"
    r = _tf_config({"cluster": cluster, "task": {"type": "evaluator", "index": 0}})
    assert (r.task_type, r.task_id, r.master()) == ("evaluator", 0, "")


def test_tf_config_master_rules():
    # A single-task cluster runs a local session; session_master wins (both as TensorFlow).
    assert _tf_config({"cluster": {"worker": ["b:2"]}, "task": {"type": "worker", "index": 0}}).master() == ""
    doc = {"cluster": PS_WORKERS, "task": {"type": "worker", "index": 0}, "session_master": "z:9", "rpc_layer": "grpc"}
    assert _tf_config(doc).master() == "grpc://z:9"
    assert _tf_config({"cluster": PS_WORKERS}).master() == ""  # no task
    with pytest.raises(ValueError, match="No task with index 5"):
        _tf_config({"cluster": PS_WORKERS}).master("worker", 5)


def test_tf_config_constructor_and_setters_override_the_document():
    r = _tf_config({"cluster": PS_WORKERS, "task": {"type": "ps", "index": 0}}, task_type="worker", task_id=1)
    assert (r.task_type, r.task_id, r.master()) == ("worker", 1, "c:3")
    r.task_type, r.task_id, r.rpc_layer = "ps", 0, "grpc"
    assert (r.task_type, r.task_id, r.rpc_layer, r.master()) == ("ps", 0, "grpc", "grpc://a:1")


def test_tf_config_is_read_at_call_time(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    r = TFConfigClusterResolver()
    assert (r.cluster_spec().as_dict(), r.task_type, r.task_id, r.master()) == ({}, None, None, "")
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": PS_WORKERS, "task": {"type": "worker", "index": "1"}}))
    assert (r.task_type, r.task_id, r.master()) == ("worker", 1, "c:3")


def test_empty_tf_config_is_unset():
    assert load_tf_config({"TF_CONFIG": "  "}) == {} and load_tf_config({}) == {}


@pytest.mark.parametrize("doc, problem", [
    ("{bad json", "is not valid JSON"),
    ('["ps"]', "must be a JSON object"),
    ({"cluster": ["a:1"]}, "'cluster' must be an object"),
    ({"cluster": {"ps": 7}}, "tasks of job 'ps' must be a list"),
    ({"cluster": {"ps": [""]}}, "address of task 0 of job 'ps'"),
    ({"cluster": {"ps": {"x": "a:1"}}}, "task indices of job 'ps' must be non-negative integers, got 'x'"),
    ({"cluster": {"ps": {"-1": "a:1"}}}, "non-negative integers, got '-1'"),
    ({"cluster": {"p-s": ["a:1"]}}, "Invalid job name 'p-s'"),
    ({"cluster": PS_WORKERS, "task": {"type": "chief", "index": 0}},
     r"task type 'chief' is not a job of the cluster \(jobs: \['ps', 'worker'\]\)"),
    ({"cluster": PS_WORKERS, "task": {"type": "worker", "index": 2}},
     r"task index 2 is out of range for job 'worker' \(its task indices: \[0, 1\]\)"),
    ({"cluster": {"worker": {"1": "b:2"}}, "task": {"type": "worker", "index": 0}},
     r"task index 0 is out of range for job 'worker' \(its task indices: \[1\]\)"),
    ({"cluster": PS_WORKERS, "task": {"type": "worker", "index": -1}}, "non-negative integers, got -1"),
    ({"cluster": PS_WORKERS, "task": {"index": 0}}, "'task' needs a job name in 'type'"),
    ({"cluster": PS_WORKERS, "task": "worker"}, "'task' must be an object"),
    ({"cluster": PS_WORKERS, "rpc_layer": 1}, "'rpc_layer' must be a string"),
])
def test_malformed_tf_config_is_a_clear_error(doc, problem):
    r = _tf_config(doc)
    for read in (r.cluster_spec, lambda: r.task_type, r.master):
        with pytest.raises(ValueError, match="TF_CONFIG") as e:
            read()
        assert e.match(problem)
    with pytest.raises(ValueError, match=problem):
        resolve_cluster(environ=_env(doc))


# --------------------------------------------------------------------------- SimpleClusterResolver


def test_simple_cluster_resolver():
    spec = ClusterSpec(PS_WORKERS)
    r = SimpleClusterResolver(spec, master="grpc://b:2", task_type="worker", task_id=0, rpc_layer="grpc")
    assert r.cluster_spec() is spec and (r.task_type, r.task_id, r.rpc_layer) == ("worker", 0, "grpc")
    assert r.master() == "grpc://b:2"  # an address with a scheme is not prefixed twice
    assert r.master("ps", 0) == "grpc://a:1" and r.master("ps", 0, rpc_layer="") == "a:1"
    assert SimpleClusterResolver(spec).master() == "" and r.num_accelerators() == {}
    assert SimpleClusterResolver(spec, num_accelerators={"GPU": 2}).num_accelerators()["GPU"] == 2
    with pytest.raises(TypeError, match="takes a ClusterSpec"):
        SimpleClusterResolver(PS_WORKERS)


# --------------------------------------------------------------------------- flags


def test_cluster_from_tf1_flags():
    parser = argparse.ArgumentParser()
    add_cluster_flags(parser)
    args = parser.parse_args(["--ps_hosts=h:1", "--worker_hosts", "h:2, h:3", "--job_name=worker", "--task_index=1"])
    r = resolve_cluster(args, environ=_env({"cluster": {"worker": ["elsewhere:1", "x:2"]}}))  # flags win
    assert r.cluster_spec().as_dict() == {"ps": ["h:1"], "worker": ["h:2", "h:3"]}
    assert (r.task_type, r.task_id, r.master()) == ("worker", 1, "grpc://h:3")
    r = cluster_resolver_from_flags("h:1", "h:2", "chief", 0, chief_hosts="h:0")
    assert r.cluster_spec().jobs == ["chief", "ps", "worker"] and r.master() == "grpc://h:0"
    assert resolve_cluster(parser.parse_args([]), environ={}) is None


@pytest.mark.parametrize("kwargs, problem", [
    ({"ps_hosts": "h:1", "worker_hosts": "h:2"}, "--job_name is required"),
    ({"ps_hosts": "h:1", "job_name": "worker"}, "--job_name='worker' is not a job of the cluster"),
    ({"ps_hosts": "h:1", "worker_hosts": "h:2,h:3", "job_name": "worker", "task_index": 2},
     "--task_index=2 is out of range for job 'worker', which has 2 task"),
    ({"worker_hosts": "h:2,,h:3", "job_name": "worker"}, "--worker_hosts has an empty entry"),
    ({"job_name": "worker"}, "No cluster in the flags"),
])
def test_bad_flags_are_clear_errors(kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        cluster_resolver_from_flags(**kwargs)


# --------------------------------------------------------------------------- mpiexec


def test_mpi_world_from_each_launcher():
    assert mpi_world({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
                      "PMIX_RANK": "1"}) == MPIWorld(1, 4, 4, "OMPI_COMM_WORLD_RANK")
    assert mpi_world({"PMI_RANK": "2", "PMI_SIZE": "3", "MPI_LOCALNRANKS": "3"}) == MPIWorld(2, 3, 3, "PMI_RANK")
    assert mpi_world({"PMIX_RANK": "0", "SLURM_NTASKS": "2"}) == MPIWorld(0, 2, None, "PMIX_RANK")
    assert mpi_world({"OMPI_COMM_WORLD_LOCAL_RANK": "0"}) is None


@pytest.mark.parametrize("env, problem", [
    ({"PMIX_RANK": "0"}, "PMIX_RANK=0 is set but the world size is not"),
    ({"PMI_RANK": "3", "PMI_SIZE": "3"}, "PMI_RANK=3 is out of range for a world of PMI_SIZE=3"),
    ({"OMPI_COMM_WORLD_RANK": "one", "OMPI_COMM_WORLD_SIZE": "2"}, "OMPI_COMM_WORLD_RANK='one' is not an integer"),
])
def test_bad_mpi_environment(env, problem):
    with pytest.raises(ValueError, match=problem):
        mpi_world(env)


def _ompi(rank, size, **extra):
    return {"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": str(size), **extra}


def test_mpi_ranks_map_to_ps_then_workers():
    tasks = [MPIClusterResolver(num_ps=2, port_base=7000, environ=_ompi(r, 5)) for r in range(5)]
    assert [(t.task_type, t.task_id) for t in tasks] == [("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1),
                                                         ("worker", 2)]
    spec = tasks[0].cluster_spec()
    assert spec.as_dict() == {"ps": ["127.0.0.1:7000", "127.0.0.1:7001"],
                              "worker": ["127.0.0.1:7002", "127.0.0.1:7003", "127.0.0.1:7004"]}
    assert all(t.cluster_spec() == spec for t in tasks)
    assert tasks[3].master() == "grpc://127.0.0.1:7003"
    everyone_works = [MPIClusterResolver(environ=_ompi(r, 2)) for r in range(2)]
    assert [(t.task_type, t.task_id) for t in everyone_works] == [("worker", 0), ("worker", 1)]
    assert everyone_works[1].cluster_spec().as_dict() == {"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]}


def test_mpi_settings_from_environment_and_chief():
    env = {"PMI_RANK": "1", "PMI_SIZE": "4", "SPARSEFLOW_MPI_NUM_PS": "1", "SPARSEFLOW_MPI_CHIEF": "1",
           "SPARSEFLOW_MPI_PORT_BASE": "9000", "SPARSEFLOW_MPI_HOST": "localhost"}
    r = resolve_cluster(environ=env)
    assert isinstance(r, MPIClusterResolver)
    assert (r.task_type, r.task_id, r.master()) == ("chief", 0, "grpc://localhost:9001")
    assert r.cluster_spec().as_dict() == {"chief": ["localhost:9001"], "ps": ["localhost:9000"],
                                          "worker": ["localhost:9002", "localhost:9003"]}
    assert resolve_cluster({"num_ps": 3}, environ=env).task_type == "ps"  # flags beat the environment
    # A single rank runs a local session.
    assert MPIClusterResolver(environ=_ompi(0, 1)).master() == ""


@pytest.mark.parametrize("kwargs, env, problem", [
    ({"num_ps": 2}, _ompi(0, 2), "leaves no worker among 2 MPI ranks"),
    ({}, _ompi(0, 4, OMPI_COMM_WORLD_LOCAL_SIZE="2"), "run on several machines"),
    ({"port_base": 65535}, _ompi(0, 4), "leaves no room for 4 ports"),
    ({}, {}, "Not in an MPI job"),
])
def test_bad_mpi_settings(kwargs, env, problem):
    with pytest.raises(ValueError, match=problem):
        MPIClusterResolver(environ=env, **kwargs)


def test_tf_config_wins_over_mpi_and_none_means_local():
    env = {**_env({"cluster": PS_WORKERS, "task": {"type": "ps", "index": 0}}), **_ompi(1, 3)}
    r = resolve_cluster(environ=env)
    assert isinstance(r, TFConfigClusterResolver) and r.master() == "grpc://a:1"  # rpc layer defaults to grpc
    env["TF_CONFIG"] = json.dumps({"cluster": PS_WORKERS, "task": {"type": "ps", "index": 0}, "rpc_layer": "grpc+x"})
    assert resolve_cluster(environ=env).master() == "grpc+x://a:1"
    assert isinstance(resolve_cluster(environ={**_env({}), **_ompi(1, 3)}), MPIClusterResolver)
    assert resolve_cluster(environ=_env({"task": {"type": "worker", "index": 0}})) is None


def _rendezvous(directory, size, extra=None, timeout=60.0):
    results, errors = [None] * size, []

    def rank(r):
        try:
            env = {**_ompi(r, size), **(extra or {})}
            resolver = MPIClusterResolver(num_ps=1, rendezvous_dir=str(directory), host="127.0.0.1",
                                          timeout=timeout, environ=env)
            results[r] = (resolver.task_type, resolver.task_id, resolver.cluster_spec())
        except Exception as e:  # noqa: BLE001 - handed to the test thread
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 30)
    return results, errors


def test_mpi_rendezvous_directory_agrees_on_one_cluster(tmp_path):
    results, errors = _rendezvous(tmp_path, 3, {"PMIX_NAMESPACE": "1234"})
    assert not errors
    specs = [spec for _, _, spec in results]
    assert all(spec == specs[0] for spec in specs)
    addresses = [a for _, _, a in specs[0].tasks()]
    assert len(set(addresses)) == 3 and all(a.startswith("127.0.0.1:") for a in addresses)
    assert [(job, i) for job, i, _ in results] == [("ps", 0), ("worker", 0), ("worker", 1)]
    assert sorted(os.listdir(tmp_path / "job-1234")) == ["rank-0.addr", "rank-1.addr", "rank-2.addr"]


def test_mpi_rendezvous_reports_missing_ranks_and_stale_files(tmp_path):
    r = MPIClusterResolver(rendezvous_dir=str(tmp_path), host="127.0.0.1", timeout=0.2, environ=_ompi(0, 3))
    with pytest.raises(TimeoutError, match=r"ranks \[1, 2\] did not write their address"):
        r.cluster_spec()
    (tmp_path / "rank-1.addr").write_text("127.0.0.1:5000 8\n")  # from a job of 8 ranks
    with pytest.raises(ValueError, match="stale file from another job"):
        MPIClusterResolver(rendezvous_dir=str(tmp_path), host="127.0.0.1", environ=_ompi(0, 3)).cluster_spec()


MPI_PROGRAM = """
import json, os, sys
from sparseflow.distribute.cluster_resolver import resolve_cluster
r = resolve_cluster({"num_ps": 1, "port_base": 7100})
# one file per rank: the ranks' standard outputs are merged by mpiexec and may interleave mid-line
with open(os.path.join(sys.argv[1], f"{r.task_type}-{r.task_id}.json"), "w") as f:
    json.dump([r.task_type, r.task_id, r.master(), r.cluster_spec().as_dict()], f)
"""


@pytest.mark.slow
@pytest.mark.parametrize("mpiexec", ["mpirun.openmpi", "mpiexec.mpich"])
def test_real_mpiexec(mpiexec, tmp_path):
    if shutil.which(mpiexec) is None:
        pytest.skip(f"{mpiexec} is not installed")
    (tmp_path / "prog.py").write_text(MPI_PROGRAM)
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "PYTHONPATH": str(ROOT)}
    env.pop("TF_CONFIG", None)
    out = tmp_path / "out"
    out.mkdir()
    run = subprocess.run([mpiexec, "-n", "3", sys.executable, str(tmp_path / "prog.py"), str(out)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    tasks = sorted(json.loads(p.read_text()) for p in out.glob("*.json"))
    cluster = {"ps": ["127.0.0.1:7100"], "worker": ["127.0.0.1:7101", "127.0.0.1:7102"]}
    assert tasks == [["ps", 0, "grpc://127.0.0.1:7100", cluster], ["worker", 0, "grpc://127.0.0.1:7101", cluster],
                     ["worker", 1, "grpc://127.0.0.1:7102", cluster]]
