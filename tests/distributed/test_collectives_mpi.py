"""All-reduce over MPI (distributed/collective_mpi.py): under a real ``mpirun.openmpi -n 2`` the
collectives member program (programs/collective_member.py) checks values, dtypes, sum/mean/min/max,
a size mismatch, the graph ops and four instances run by concurrent threads in opposite orders,
with MPI carrying all-reduces (``always``, or ``auto`` below a size); plus the agreement rule on
its own. The mpiexec runs need mpi4py (the test extra installs it) and Open MPI (.ci/run installs it)."""

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from sparseflow._src.distributed import collective_mpi
from sparseflow._src.kernels.collective_executor import Group, Member
from tests.distributed.conftest import free_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEMBER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "collective_member.py")
MPIEXEC = "mpirun.openmpi"


def _skip_reason():
    if shutil.which(MPIEXEC) is None:
        return f"{MPIEXEC} is not installed (.ci/run installs Open MPI)"
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install 'sparseflow[mpi]'; the test extra installs it)"
    return None


needs_mpi = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


def _mpirun(scenario, mode, max_bytes=None):
    env = {**os.environ, "PYTHONPATH": ROOT, "SPARSEFLOW_COLLECTIVE_MPI": mode, "OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    if max_bytes is not None:
        env["SPARSEFLOW_COLLECTIVE_MPI_MAX_BYTES"] = str(max_bytes)
    env.pop("TF_CONFIG", None)
    hosts = ",".join(f"127.0.0.1:{p}" for p in free_ports(2))
    run = subprocess.run([MPIEXEC, "-n", "2", sys.executable, MEMBER, "--workers", hosts, "--scenario", scenario],
                         env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert not [line for line in lines if line.startswith(("FAIL", "ERROR"))], run.stdout + run.stderr
    assert lines.count("DONE") == 2, run.stdout + run.stderr
    return lines, [int(line.split()[1]) for line in lines if line.startswith("MPI ")]


@pytest.mark.slow
@needs_mpi
def test_mpi_carries_every_all_reduce_with_the_right_values():
    lines, runs = _mpirun("values", "always")
    assert lines.count("OK mismatch True") == 2  # named members, clear error; the group goes on afterwards
    assert len([line for line in lines if line.startswith("OK sum-")]) == 2 * 30
    # float16 (no MPI op) takes the ring; every other all-reduce and the barriers MPI.
    assert len(runs) == 2 and runs[0] == runs[1] and runs[0] >= 24 + 5


@pytest.mark.slow
@needs_mpi
def test_auto_gives_mpi_the_small_all_reduces_and_the_ring_the_large():
    _, small_only = _mpirun("values", "auto", max_bytes=100_000)
    _, all_sizes = _mpirun("values", "auto", max_bytes=10**9)
    assert 0 < small_only[0] < all_sizes[0] and small_only[0] == small_only[1]


@pytest.mark.slow
@needs_mpi
def test_mpi_graph_ops_and_concurrent_instances():
    lines, runs = _mpirun("graph", "always")
    assert lines.count("OK graph-sum-2") == 2 and runs[0] >= 3 * 3  # sum, mean, mean-v2 per step
    lines, runs = _mpirun("concurrent", "always")
    assert sorted(line for line in lines if line.startswith("OK concurrent"))[::2] == [
        f"OK concurrent-{i}" for i in (1, 2, 3, 4)]
    assert runs == [81, 81]  # 4 x 20 and the final barrier


def _group(tags, executors=(1, 2)):
    members = tuple(Member(f"/job:worker/replica:0/task:{i}/device:CPU:0", executor_id=e, mpi=t)
                    for i, (t, e) in enumerate(zip(tags, executors)))
    return Group(1, len(members), 1, members)


def test_members_agree_on_mpi_only_with_one_job_one_policy_and_one_process_each():
    agreed = collective_mpi._agreed_ranks
    assert agreed(_group(["j/1/auto:64", "j/0/auto:64"])) == (1, 0)
    assert agreed(_group(["j/1/auto:64", ""])) is None  # a member without MPI
    assert agreed(_group(["j/1/auto:64", "k/0/auto:64"])) is None  # other jobs
    assert agreed(_group(["j/1/auto:64", "j/0/always"])) is None  # other policies
    assert agreed(_group(["j/0/always", "j/0/always"], executors=(1, 1))) is None  # one process


def test_no_carrier_outside_mpiexec_or_when_turned_off():
    assert collective_mpi.carrier(environ={}) is None
    env = {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "PMIX_NAMESPACE": "job"}
    assert collective_mpi.carrier("never", environ=env) is None
    with pytest.raises(ValueError, match="SPARSEFLOW_COLLECTIVE_MPI must be one of"):
        collective_mpi.carrier("sometimes", environ=env)
