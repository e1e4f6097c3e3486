"""MPI's all-reduce as a transport of the collectives, in a job started by ``mpiexec`` with mpi4py
installed (``pip install 'sparseflow[mpi]'``).

Which all-reduces MPI carries, by ``SPARSEFLOW_COLLECTIVE_MPI`` (or the executor's ``mpi=``):

* ``auto`` (default): those of at most ``SPARSEFLOW_COLLECTIVE_MPI_MAX_BYTES`` bytes
  (default ``DEFAULT_MAX_BYTES``); larger ones take the ring. The rule comes from
  ``benchmarks/allreduce.py --transport ring|mpi`` under ``mpiexec -n 2`` (docs/distributed.md,
  "Collectives over MPI"): Open MPI's all-reduce wins on small buffers, the pipelined ring over
  shared memory on large ones.
* ``always``: every all-reduce MPI can carry; ``never``: none (MPI is not even initialized).

MPI carries a run only when every member of the group agrees, which they see at the group's join:
each member's ``Member.mpi`` says "job/rank/policy" (empty when this process has no MPI). All
members must be distinct processes of one ``mpiexec`` job with the same policy, the dtype a plain
number type and the merge op Add/Mul/Min/Max; then the decision is the same function of the same
facts on every member. Otherwise the ring runs, as without MPI.

Each collective instance of a group generation gets a communicator of its own (``Create_group``
of the members' world ranks, tagged by the instance), so instances never wait on each other; runs
of one instance go in their run order. Every call runs on a helper thread while the member waits
with the run's deadline and liveness checks: at the deadline the run fails like a ring run (naming
the members that have not started it), and since a stuck MPI call cannot be cancelled, MPI stays
off in this process from then on (the group's next generation uses the ring). A first tiny
all-reduce of (dtype, count, op) makes members that disagree fail with a clear error.

With Open MPI, mpi4py's binary wheel needs ``MPI4PY_MPIABI=openmpi`` (its loader would otherwise
pick MPICH's ABI); it is set here under Open MPI's ``mpiexec`` unless given.

Example (outside mpiexec there is nothing to carry):
    >>> carrier(environ={}) is None
    True
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import queue
import threading
import time
import zlib

import numpy as np

from sparseflow._src.distributed.mpi_cluster_resolver import mpi_world
from sparseflow._src.framework import errors
from sparseflow._src.kernels.collective_executor import Group

__all__ = ["MpiCarrier", "carrier", "MODES", "DEFAULT_MAX_BYTES"]

MODES = ("auto", "always", "never")
DEFAULT_MAX_BYTES = 16 << 20  # measured crossover: MPI wins at 16 MB, the ring at 24 MB and above
CHECK_EVERY = 0.25  # seconds between the waiting member's checks
_JOB_VARIABLES = ("PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid", "PMI_KVSNAME")
_OPS = {"Add": "SUM", "Mul": "PROD", "Min": "MIN", "Max": "MAX"}
_OP_CODES = {"Add": 1, "Mul": 2, "Min": 3, "Max": 4}
_DTYPES = frozenset("bhilqBHILQfd")  # numpy type chars MPI reduces natively

_log = logging.getLogger("sparseflow.collectives")
_lock = threading.Lock()
_carriers: dict = {}


def carrier(mode: str | None = None, max_bytes: int | None = None, environ=None):
    """This process's ``MpiCarrier`` for ``mode`` (default ``SPARSEFLOW_COLLECTIVE_MPI``), or None:
    not under mpiexec, ``never``, or mpi4py missing / unusable (logged once)."""
    env = os.environ if environ is None else environ
    mode = (mode or env.get("SPARSEFLOW_COLLECTIVE_MPI", "auto")).lower()
    if mode not in MODES:
        raise ValueError(f"SPARSEFLOW_COLLECTIVE_MPI must be one of {MODES}, got {mode!r}.")
    if max_bytes is None:
        max_bytes = int(env.get("SPARSEFLOW_COLLECTIVE_MPI_MAX_BYTES", DEFAULT_MAX_BYTES))
    world = mpi_world(env)
    job = next((env[v] for v in _JOB_VARIABLES if env.get(v)), "")
    if mode == "never" or world is None or world.size < 2 or not job:
        return None
    with _lock:
        if "MPI" not in _carriers:
            _carriers["MPI"] = _import_mpi(world.source)
        mpi = _carriers["MPI"]
        if mpi is None:
            return None
        key = (mode, max_bytes)
        if key not in _carriers:
            _carriers[key] = MpiCarrier(mpi, mode, max_bytes, job)
        return _carriers[key]


def _import_mpi(rank_variable: str):
    if rank_variable.startswith("OMPI_"):
        os.environ.setdefault("MPI4PY_MPIABI", "openmpi")
    try:
        from mpi4py import MPI
    except Exception as e:  # noqa: BLE001 - ImportError, or a library that does not load (RuntimeError)
        _log.info("Collectives: no MPI transport (%s: %s); pip install 'sparseflow[mpi]' for it.",
                  type(e).__name__, e)
        return None
    if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        _log.warning("Collectives: this MPI gives no MPI_THREAD_MULTIPLE; not using it for all-reduce.")
        return None
    return MPI


class _Channel:
    """One instance's communicator and whose turn it is: the run numbers (``exec_id[3]``) go in order;
    runs MPI does not carry (ring, all-gather, broadcast) pass their turn at once."""

    def __init__(self):
        self.comm = None
        self.next_seq = 0
        self.passed: set[int] = set()
        self.cv = threading.Condition()

    def advance(self, seq: int) -> None:
        with self.cv:
            if seq > self.next_seq:
                self.passed.add(seq)
            elif seq == self.next_seq:
                self.next_seq += 1
                while self.next_seq in self.passed:
                    self.passed.discard(self.next_seq)
                    self.next_seq += 1
                self.cv.notify_all()


class MpiCarrier:
    """Carries the all-reduces of groups whose members agree (see the module docstring)."""

    def __init__(self, MPI, mode: str, max_bytes: int, job: str):
        self.MPI = MPI
        self.world = MPI.COMM_WORLD
        self.rank = self.world.Get_rank()
        self.mode, self.max_bytes = mode, int(max_bytes)
        self.policy = "always" if mode == "always" else f"auto:{self.max_bytes}"
        self.job = job.replace("/", "_")
        self.broken: str | None = None
        self.runs = 0  # all-reduces MPI carried
        self._lock = threading.Lock()
        self._ranks: dict[tuple, tuple | None] = {}
        self._channels: dict[tuple, _Channel] = {}
        self._helpers = _Helpers()
        tag_ub = self.world.Get_attr(MPI.TAG_UB)
        self._tag_ub = int(tag_ub) if tag_ub else 32767

    def member_tag(self) -> str:
        """What this process puts in ``Member.mpi``: "" once MPI is off here."""
        return "" if self.broken else f"{self.job}/{self.rank}/{self.policy}"

    def world_ranks(self, group: Group):
        """The members' world ranks in group order when MPI may carry the group's runs, else None."""
        k = (group.key, group.generation)
        if k not in self._ranks:
            self._ranks[k] = _agreed_ranks(group)
        return self._ranks[k]

    def carries(self, group: Group, flat: np.ndarray, merge_op: str) -> bool:
        """Whether MPI carries this all-reduce (the same answer on every member of the group)."""
        if group.size < 2 or merge_op not in _OPS or flat.dtype.char not in _DTYPES:
            return False
        if self.world_ranks(group) is None:
            return False
        return self.mode == "always" or flat.nbytes <= self.max_bytes

    def _channel(self, key) -> _Channel:
        with self._lock:
            return self._channels.setdefault(key, _Channel())

    def pass_turn(self, exec_id) -> None:
        """A run of an MPI group that MPI does not carry (or that failed before it started) lets the
        instance's later MPI runs go."""
        self._channel(exec_id[:3]).advance(exec_id[3])

    def all_reduce(self, ring, group: Group, flat: np.ndarray, merge_op: str) -> None:
        """All-reduces ``flat`` in place with MPI; ``ring`` gives the run's id, deadline and checks."""
        if self.broken:
            raise errors.AbortedError(None, None, f"MPI is off in this process ({self.broken}); the group "
                                                  f"re-forms on the ring at its next run.")
        key, seq = ring.exec_id[:3], ring.exec_id[3]
        chan = self._channel(key)
        with chan.cv:  # runs of one instance in their order
            while chan.next_seq != seq:
                self._wait_step(ring, lambda: chan.cv.wait(CHECK_EVERY))
        try:
            meta = np.array([*ring.meta[1:3], _OP_CODES[merge_op]], np.int64)
            job = self._helpers.submit(lambda: self._run(chan, group, key, flat, merge_op, meta))
            while not job.done():
                self._wait_step(ring, lambda: concurrent.futures.wait([job], CHECK_EVERY), job)
            try:
                agreed = job.result()
            except self.MPI.Exception as e:
                raise errors.InternalError(None, None, f"Collective all-reduce over MPI failed: {e}") from None
        finally:
            chan.advance(seq)
        if not agreed:
            raise errors.InvalidArgumentError(None, None, f"Collective all-reduce over MPI: the members passed "
                                                          f"different dtypes, sizes or merge ops (this member: "
                                                          f"{flat.dtype}, {flat.size} elements, {merge_op}). Every "
                                                          f"member must pass the same.")

    def _wait_step(self, ring, wait, job=None) -> None:
        if time.monotonic() >= ring.deadline:
            self._give_up(job, "a run passed its deadline")
            raise ring.on_timeout()
        try:
            if ring.check is not None:
                ring.check()
        except errors.OpError:
            self._give_up(job, "a member failed during a run")
            raise
        wait()

    def _give_up(self, job, why: str) -> None:
        if job is not None and not job.done():
            self.broken = f"{why} while an MPI call was in flight"
            _log.warning("Collectives: MPI is off in this process from now on (%s).", self.broken)

    def _run(self, chan: _Channel, group: Group, key, flat: np.ndarray, merge_op: str, meta: np.ndarray) -> bool:
        MPI = self.MPI
        if chan.comm is None:
            ranks = self.world_ranks(group)
            members = self.world.Get_group().Incl(list(ranks))
            chan.comm = self.world.Create_group(members, zlib.crc32(repr(key).encode()) % (self._tag_ub + 1))
            members.Free()
        both = np.concatenate([meta, -meta])
        chan.comm.Allreduce(MPI.IN_PLACE, both, op=MPI.MAX)
        if not (np.array_equal(both[:3], meta) and np.array_equal(-both[3:], meta)):
            return False
        chan.comm.Allreduce(MPI.IN_PLACE, flat, op=getattr(MPI, _OPS[merge_op]))
        self.runs += 1
        return True


def _agreed_ranks(group: Group):
    tags = [m.mpi.split("/") for m in group.members]
    if any(len(t) != 3 for t in tags):
        return None
    if len({(t[0], t[2]) for t in tags}) != 1:
        return None  # other jobs, or other policies
    ranks = tuple(int(t[1]) for t in tags)
    if len(set(ranks)) != len(ranks) or len({m.executor_id for m in group.members}) != len(ranks):
        return None  # members share a process
    return ranks


class _Helpers:
    """Daemon threads that run MPI calls; a new one starts when none is idle (one stuck in a call
    that never returns holds nothing else up)."""

    def __init__(self):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, fn) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1
        if start:
            threading.Thread(target=self._serve, daemon=True, name="sparseflow-mpi").start()
        self._jobs.put((fn, future))
        return future

    def _serve(self):
        while True:
            fn, future = self._jobs.get()
            try:
                future.set_result(fn())
            except BaseException as e:  # noqa: BLE001 - handed to the waiting member
                future.set_exception(e)
            with self._lock:
                self._idle += 1
