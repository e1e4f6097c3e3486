"""``tf.train.ClusterSpec``: the jobs of a distributed run and the address of each task.

A cluster maps job names to tasks: a list (task ``i`` at position ``i``) or a dict
``{task_index: "host:port"}`` for sparse task sets; a ``ClusterDef`` proto or another
ClusterSpec are accepted too.

Example:
    >>> c = ClusterSpec({"ps": ["127.0.0.1:2222"], "worker": {1: "127.0.0.1:2224"}})
    >>> c.jobs, c.num_tasks("worker"), c.task_indices("worker")
    (['ps', 'worker'], 1, [1])
    >>> c.task_address("ps", 0)
    '127.0.0.1:2222'
    >>> c.as_dict()
    {'ps': ['127.0.0.1:2222'], 'worker': {1: '127.0.0.1:2224'}}
    >>> c.device_names()[:1]
    ['/job:ps/replica:0/task:0']
"""

from __future__ import annotations

import re

from sparseflow._src.framework.proto import cluster_pb2

__all__ = ["ClusterSpec"]

_JOB_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class ClusterSpec:
    """The jobs and task addresses of a cluster (TensorFlow's ``tf.train.ClusterSpec``)."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._jobs = {j: dict(t) for j, t in cluster._jobs.items()}
        elif isinstance(cluster, cluster_pb2.ClusterDef):
            self._jobs = {}
            for job in cluster.job:
                if job.name in self._jobs:
                    raise ValueError(f"Duplicate job {job.name!r} in the ClusterDef.")
                self._jobs[job.name] = {int(i): str(a) for i, a in job.tasks.items()}
        elif isinstance(cluster, dict):
            self._jobs = {}
            for name, tasks in cluster.items():
                self._jobs[str(name)] = _tasks_of(name, tasks)
        else:
            raise TypeError("ClusterSpec takes a dict {job: [addresses] or {index: address}}, a ClusterDef or a "
                            f"ClusterSpec, not {type(cluster).__name__}.")
        for name in self._jobs:
            if not _JOB_NAME.match(name):
                raise ValueError(f"Invalid job name {name!r}: use letters, digits and '_', starting with a letter.")

    # ------------------------------------------------------------------ queries
    @property
    def jobs(self) -> list[str]:
        """The job names, sorted."""
        return sorted(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._job(job_name)
        try:
            return tasks[int(task_index)]
        except KeyError:
            raise ValueError(f"No task with index {task_index} in job {job_name!r} (tasks: "
                             f"{sorted(tasks)}).") from None

    def job_tasks(self, job_name: str) -> list:
        """Addresses by task index, with None for missing indices."""
        tasks = self._job(job_name)
        if not tasks:
            return []
        return [tasks.get(i) for i in range(max(tasks) + 1)]

    def tasks(self) -> list[tuple[str, int, str]]:
        """Every ``(job, task_index, address)``, in job then index order."""
        return [(j, i, self._jobs[j][i]) for j in self.jobs for i in sorted(self._jobs[j])]

    def device_names(self) -> list[str]:
        """``/job:J/replica:0/task:T`` of every task."""
        return [f"/job:{j}/replica:0/task:{i}" for j, i, _ in self.tasks()]

    def as_dict(self) -> dict:
        """Jobs with dense task indices ``0..n-1`` as lists, others as ``{index: address}``."""
        out = {}
        for j in self.jobs:
            tasks = self._jobs[j]
            if sorted(tasks) == list(range(len(tasks))):
                out[j] = [tasks[i] for i in range(len(tasks))]
            else:
                out[j] = dict(sorted(tasks.items()))
        return out

    def as_cluster_def(self) -> cluster_pb2.ClusterDef:
        cd = cluster_pb2.ClusterDef()
        for j in self.jobs:
            job = cd.job.add(name=j)
            for i, a in self._jobs[j].items():
                job.tasks[i] = a
        return cd

    def _job(self, job_name: str) -> dict:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r} (jobs: {self.jobs}).") from None

    # ------------------------------------------------------------------ protocol
    def __bool__(self):
        return bool(self._jobs)

    __nonzero__ = __bool__

    def __eq__(self, other):
        try:
            return self._jobs == ClusterSpec(other)._jobs
        except (TypeError, ValueError):
            return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __str__(self):
        return "ClusterSpec(" + repr(self.as_dict()) + ")"

    __repr__ = __str__


def _tasks_of(job, tasks) -> dict[int, str]:
    if isinstance(tasks, str):
        tasks = [tasks]
    if isinstance(tasks, dict):
        out = {}
        for i, a in tasks.items():
            if not isinstance(i, int) or i < 0:
                raise TypeError(f"Task indices of job {job!r} must be non-negative ints, got {i!r}.")
            out[i] = _address(job, i, a)
        return out
    if isinstance(tasks, (list, tuple)):
        return {i: _address(job, i, a) for i, a in enumerate(tasks)}
    raise TypeError(f"Tasks of job {job!r} must be a list of addresses or a dict {{index: address}}, "
                    f"got {type(tasks).__name__}.")


def _address(job, i, a) -> str:
    if not isinstance(a, str):
        raise TypeError(f"The address of task {i} of job {job!r} must be a 'host:port' string, got {a!r}.")
    return a
