"""``resolve_cluster``: the one call a training program makes to find its cluster, wherever it started.

Tries, in order:

1. TF1 example flags (``--ps_hosts``, ``--worker_hosts``, ``--job_name``, ``--task_index``), when given;
2. the ``TF_CONFIG`` environment variable (set by ``sparseflow launch`` and by Kubeflow's TFJob);
3. an ``mpiexec``/``mpirun`` environment (see ``mpi_cluster_resolver``);
4. otherwise None: run locally.

Example:
    >>> import json
    >>> env = {"TF_CONFIG": json.dumps({"cluster": {"ps": ["127.0.0.1:2222"],
    ...                                             "worker": ["127.0.0.1:2223", "127.0.0.1:2224"]},
    ...                                 "task": {"type": "worker", "index": 1}})}
    >>> r = resolve_cluster(environ=env)
    >>> r.task_type, r.task_id, r.master()
    ('worker', 1, 'grpc://127.0.0.1:2224')
    >>> resolve_cluster(environ={}) is None
    True
"""

from __future__ import annotations

import os

from sparseflow._src.distributed.cluster_resolver import (
    SimpleClusterResolver,
    TFConfigClusterResolver,
    load_tf_config,
)
from sparseflow._src.distributed.cluster_spec import ClusterSpec
from sparseflow._src.distributed.mpi_cluster_resolver import MPIClusterResolver, mpi_world

__all__ = ["add_cluster_flags", "cluster_resolver_from_flags", "resolve_cluster"]


def add_cluster_flags(parser) -> None:
    """Adds the TF1 example flags to an ``argparse`` parser (all optional).

    ``--ps_hosts``, ``--worker_hosts``, ``--chief_hosts`` (comma-separated ``host:port``),
    ``--job_name``, ``--task_index``; for ``mpiexec`` runs ``--num_ps``, ``--port_base`` and
    ``--rendezvous_dir`` (see ``MPIClusterResolver``).
    """
    parser.add_argument("--ps_hosts", default="", help="comma-separated host:port of the ps tasks")
    parser.add_argument("--worker_hosts", default="", help="comma-separated host:port of the worker tasks")
    parser.add_argument("--chief_hosts", default="", help="host:port of the chief task, if any")
    parser.add_argument("--job_name", default="", help="this task's job: ps, worker or chief")
    parser.add_argument("--task_index", type=int, default=0, help="this task's index in its job")
    parser.add_argument("--num_ps", type=int, default=None, help="under mpiexec: the first NUM_PS ranks are ps")
    parser.add_argument("--port_base", type=int, default=None, help="under mpiexec: rank r listens on PORT_BASE+r")
    parser.add_argument("--rendezvous_dir", default=None,
                        help="under mpiexec: a fresh directory shared by all ranks where each writes its address")


def cluster_resolver_from_flags(ps_hosts="", worker_hosts="", job_name="", task_index=0, chief_hosts="",
                                rpc_layer="grpc") -> SimpleClusterResolver:
    """A resolver from TF1 example flags: comma-separated host lists, this task's job and index.

    Example:
        >>> r = cluster_resolver_from_flags("h:1", "h:2,h:3", "worker", 1)
        >>> r.cluster_spec().as_dict(), r.master()
        ({'ps': ['h:1'], 'worker': ['h:2', 'h:3']}, 'grpc://h:3')
    """
    jobs = {}
    for job, hosts in (("chief", chief_hosts), ("ps", ps_hosts), ("worker", worker_hosts)):
        if isinstance(hosts, str):
            hosts = [h.strip() for h in hosts.split(",")] if hosts.strip() else []
        if any(not h for h in hosts):
            raise ValueError(f"--{job}_hosts has an empty entry: {','.join(hosts)!r} (write host:port,host:port).")
        if hosts:
            jobs[job] = list(hosts)
    if not jobs:
        raise ValueError("No cluster in the flags: give --ps_hosts and/or --worker_hosts (comma-separated host:port).")
    if not job_name:
        raise ValueError(f"--job_name is required with a cluster; one of {sorted(jobs)}.")
    if job_name not in jobs:
        raise ValueError(f"--job_name={job_name!r} is not a job of the cluster (jobs: {sorted(jobs)}; "
                         f"give --{job_name}_hosts or pick another job).")
    if not 0 <= int(task_index) < len(jobs[job_name]):
        raise ValueError(f"--task_index={task_index} is out of range for job {job_name!r}, which has "
                         f"{len(jobs[job_name])} task(s) in --{job_name}_hosts.")
    spec = ClusterSpec(jobs)
    return SimpleClusterResolver(spec, master=spec.task_address(job_name, task_index), task_type=job_name,
                                 task_id=int(task_index), rpc_layer=rpc_layer)


def _flag(flags, name, default=None):
    if flags is None:
        return default
    if isinstance(flags, dict):
        return flags.get(name, default)
    return getattr(flags, name, default)


def resolve_cluster(flags=None, *, environ=None, rpc_layer=None):
    """This process's cluster: a ``ClusterResolver``, or None to run locally.

    Tries, in order: the cluster flags in ``flags`` (an ``argparse.Namespace`` or a dict, see
    ``add_cluster_flags``) when ``ps_hosts``/``worker_hosts``/``chief_hosts`` is non-empty;
    ``TF_CONFIG`` when it names a cluster; an ``mpiexec``/``mpirun`` environment (rank variables
    of Open MPI, MPICH/Hydra or PMIx; ``num_ps``, ``port_base``, ``rendezvous_dir`` from ``flags``
    or ``SPARSEFLOW_MPI_*`` variables). Explicit flags win over the environment. The resolver's rpc
    layer is ``rpc_layer``, else TF_CONFIG's, else ``grpc``, so ``master()`` is a session target.
    Raises ValueError naming the flag or variable when what is found is malformed.

    Example (a TF1 program)::

        r = resolve_cluster(args)
        if r is None:
            target = ""                                    # local session
        else:
            server = tf.train.Server(r.cluster_spec(), job_name=r.task_type, task_index=r.task_id)
            if r.task_type == "ps":
                server.join()
            target = server.target
    """
    environ = os.environ if environ is None else environ
    if any(_flag(flags, f"{job}_hosts", "") for job in ("ps", "worker", "chief")):
        return cluster_resolver_from_flags(
            _flag(flags, "ps_hosts", ""), _flag(flags, "worker_hosts", ""), _flag(flags, "job_name", ""),
            _flag(flags, "task_index", 0) or 0, _flag(flags, "chief_hosts", ""), rpc_layer=rpc_layer or "grpc")
    config = load_tf_config(environ)
    if config.get("cluster"):
        return TFConfigClusterResolver(rpc_layer=rpc_layer or config.get("rpc_layer") or "grpc", environ=environ)
    if mpi_world(environ) is not None:
        return MPIClusterResolver(num_ps=_flag(flags, "num_ps"), port_base=_flag(flags, "port_base"),
                                  rendezvous_dir=_flag(flags, "rendezvous_dir"), rpc_layer=rpc_layer or "grpc",
                                  environ=environ)
    return None
