"""``MPIClusterResolver``: the cluster of a job started by ``mpiexec``/``mpirun``, without MPI calls.

The rank and world size come from the launcher's environment: Open MPI's
``OMPI_COMM_WORLD_RANK``/``OMPI_COMM_WORLD_SIZE``, MPICH/Hydra's ``PMI_RANK``/``PMI_SIZE``, or
``PMIX_RANK`` (with the size from one of those or ``SLURM_NTASKS``).

Roles, rank ``r`` of ``N``: ranks ``0 .. num_ps-1`` are ``ps`` tasks ``0 .. num_ps-1``; with
``chief=True`` the next rank is ``chief:0``; the remaining ranks are ``worker`` tasks in rank order.
``num_ps=0`` (the default) makes every rank a worker.

Addresses, one of two rules:

* base port (default): rank ``r`` listens on ``host:port_base+r``, host ``127.0.0.1`` and
  ``port_base`` 2222 unless given. Every rank computes the same cluster with no communication,
  which only holds when all ranks run on one machine; ranks spread over several machines (as the
  launcher's local-size variables tell) are refused with a pointer to the second rule.
* rendezvous directory (``rendezvous_dir``, a directory all ranks share, e.g. on NFS): each rank
  picks a free port, writes ``host:port`` to ``<dir>/rank-<r>.addr`` (atomically, plain text) and
  waits until all ``N`` files exist. Open MPI jobs use the subdirectory named by ``PMIX_NAMESPACE``
  (unique per job); otherwise the directory must be fresh for each job. The port is free when
  chosen and bound by the task's server shortly after; another process could take it between.

Each setting can come from ``SPARSEFLOW_MPI_NUM_PS``, ``SPARSEFLOW_MPI_CHIEF`` (1/0),
``SPARSEFLOW_MPI_PORT_BASE``, ``SPARSEFLOW_MPI_RENDEZVOUS_DIR`` and ``SPARSEFLOW_MPI_HOST``
(``mpiexec -x NAME`` forwards a variable with Open MPI; Hydra forwards all by default).

Example:
    >>> env = {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4"}
    >>> r = MPIClusterResolver(num_ps=1, port_base=5000, environ=env)
    >>> r.task_type, r.task_id, r.master()
    ('worker', 1, 'grpc://127.0.0.1:5002')
    >>> r.cluster_spec().as_dict()
    {'ps': ['127.0.0.1:5000'], 'worker': ['127.0.0.1:5001', '127.0.0.1:5002', '127.0.0.1:5003']}
"""

from __future__ import annotations

import os
import re
import socket
import time
from typing import NamedTuple

from sparseflow._src.distributed.cluster_resolver import ClusterResolver, format_master_url
from sparseflow._src.distributed.cluster_spec import ClusterSpec

__all__ = ["MPIClusterResolver", "MPIWorld", "mpi_world"]

DEFAULT_PORT_BASE = 2222
_ADDRESS = re.compile(r"^[A-Za-z0-9_.\-]+:[0-9]{1,5}$|^\[[0-9A-Fa-f:.]+\]:[0-9]{1,5}$")


# (rank, world size, ranks on this machine) variables of Open MPI, MPICH/Hydra and PMIx.
_RANK_VARIABLES = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"),
                   ("PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"),
                   ("PMIX_RANK", None, None))


class MPIWorld(NamedTuple):
    """This process's place in an MPI job, as its launcher's environment tells it."""

    rank: int
    size: int
    local_size: int | None  # ranks on this machine, when the launcher says
    source: str  # the variable the rank came from


def _int_var(environ, name) -> int | None:
    value = environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer.") from None


def mpi_world(environ=None) -> MPIWorld | None:
    """The rank and size from ``mpiexec``'s environment variables, or None outside an MPI job.

    Example:
        >>> mpi_world({"PMI_RANK": "1", "PMI_SIZE": "3"})
        MPIWorld(rank=1, size=3, local_size=None, source='PMI_RANK')
        >>> mpi_world({}) is None
        True
    """
    environ = os.environ if environ is None else environ
    for rank_var, size_var, local_var in _RANK_VARIABLES:
        rank = _int_var(environ, rank_var)
        if rank is None:
            continue
        if size_var is not None:
            size, size_name = _int_var(environ, size_var), size_var
        else:
            size_name = next((v for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS") if environ.get(v)), None)
            size = _int_var(environ, size_name) if size_name else None
        if size is None:
            raise ValueError(f"{rank_var}={rank} is set but the world size is not "
                             f"({size_var or 'OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS'}).")
        if not 0 <= rank < size:
            raise ValueError(f"{rank_var}={rank} is out of range for a world of {size_name}={size} ranks.")
        local_size = _int_var(environ, local_var) if local_var else None
        return MPIWorld(rank, size, local_size, rank_var)
    return None


def _truthy(value) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


class MPIClusterResolver(ClusterResolver):
    """Maps this MPI rank to a ps/chief/worker task (rules in the module docstring)."""

    def __init__(self, num_ps=None, port_base=None, rendezvous_dir=None, host=None, chief=None,
                 rpc_layer="grpc", timeout=300.0, environ=None):
        self._environ = os.environ if environ is None else environ
        env = self._environ
        world = mpi_world(env)
        if world is None:
            raise ValueError("Not in an MPI job: none of OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK is set "
                             "(start the program with mpiexec/mpirun, or use TF_CONFIG).")
        self.world = world
        self.num_ps = int(num_ps if num_ps is not None else _int_var(env, "SPARSEFLOW_MPI_NUM_PS") or 0)
        self.chief = bool(chief) if chief is not None else _truthy(env.get("SPARSEFLOW_MPI_CHIEF", "0"))
        self.rendezvous_dir = rendezvous_dir or env.get("SPARSEFLOW_MPI_RENDEZVOUS_DIR") or None
        self.port_base = int(port_base if port_base is not None else
                             _int_var(env, "SPARSEFLOW_MPI_PORT_BASE") or DEFAULT_PORT_BASE)
        default_host = socket.gethostname() if self.rendezvous_dir else "127.0.0.1"
        self.host = host or env.get("SPARSEFLOW_MPI_HOST") or default_host
        self.rpc_layer = rpc_layer
        self.timeout = float(timeout)
        if not 0 <= self.num_ps < world.size:
            raise ValueError(f"num_ps={self.num_ps} leaves no worker{' or chief' if self.chief else ''} among "
                             f"{world.size} MPI ranks; start more ranks or lower num_ps.")
        if not self.rendezvous_dir:
            if world.local_size is not None and world.local_size != world.size:
                raise ValueError(f"The {world.size} MPI ranks run on several machines ({world.local_size} here): "
                                 "base-port addresses only work on one machine; give a shared rendezvous_dir "
                                 "(--rendezvous_dir or SPARSEFLOW_MPI_RENDEZVOUS_DIR).")
            if not 0 < self.port_base <= 65536 - world.size:
                raise ValueError(f"port_base={self.port_base} leaves no room for {world.size} ports below 65536.")
        self.task_type, self.task_id = self._task_of(world.rank)
        self._cluster_spec = None

    def _task_of(self, rank: int) -> tuple[str, int]:
        if rank < self.num_ps:
            return "ps", rank
        rank -= self.num_ps
        if self.chief:
            if rank == 0:
                return "chief", 0
            rank -= 1
        return "worker", rank

    def cluster_spec(self) -> ClusterSpec:
        """The cluster; with a rendezvous directory the first call waits for every rank's address."""
        if self._cluster_spec is None:
            if self.rendezvous_dir:
                addresses = self._rendezvous()
            else:
                addresses = [f"{self.host}:{self.port_base + r}" for r in range(self.world.size)]
            jobs: dict[str, list[str]] = {}
            for rank, address in enumerate(addresses):
                job, _ = self._task_of(rank)
                jobs.setdefault(job, []).append(address)
            self._cluster_spec = ClusterSpec(jobs)
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        spec = self.cluster_spec()
        if self.world.size <= 1:
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        return format_master_url(spec.task_address(task_type, task_id), self.rpc_layer if rpc_layer is None
                                 else rpc_layer)

    @property
    def environment(self) -> str:
        return ""

    # ------------------------------------------------------------------ rendezvous
    def _directory(self) -> str:
        namespace = self._environ.get("PMIX_NAMESPACE")
        path = os.path.join(self.rendezvous_dir, f"job-{namespace}") if namespace else self.rendezvous_dir
        os.makedirs(path, exist_ok=True)
        return path

    def _rendezvous(self) -> list[str]:
        directory = self._directory()
        with socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET) as s:
            s.bind((self.host, 0))
            port = s.getsockname()[1]
        mine = os.path.join(directory, f"rank-{self.world.rank}.addr")
        tmp = f"{mine}.tmp{os.getpid()}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        with open(tmp, "w") as f:
            f.write(f"{host}:{port} {self.world.size}\n")
        os.replace(tmp, mine)
        deadline = time.monotonic() + self.timeout
        addresses: dict[int, str] = {}
        delay = 0.01
        while True:
            for r in range(self.world.size):
                if r not in addresses:
                    address = self._read_address(directory, r)
                    if address is not None:
                        addresses[r] = address
            if len(addresses) == self.world.size:
                return [addresses[r] for r in range(self.world.size)]
            if time.monotonic() >= deadline:
                missing = sorted(set(range(self.world.size)) - set(addresses))
                raise TimeoutError(f"MPI rendezvous in {directory}: ranks {missing} did not write their address "
                                   f"within {self.timeout:g} s (are all {self.world.size} ranks running and "
                                   "sharing this directory?).")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _read_address(self, directory: str, rank: int) -> str | None:
        path = os.path.join(directory, f"rank-{rank}.addr")
        try:
            with open(path) as f:
                text = f.read(256)
        except FileNotFoundError:
            return None
        parts = text.split()
        if len(parts) != 2 or not _ADDRESS.match(parts[0]) or parts[1] != str(self.world.size):
            raise ValueError(f"MPI rendezvous file {path} holds {text.strip()!r}, not 'host:port {self.world.size}': "
                             "a stale file from another job? Use a fresh rendezvous directory per job.")
        return parts[0]
