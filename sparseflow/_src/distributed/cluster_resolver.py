"""Cluster resolvers (TensorFlow's ``tf.distribute.cluster_resolver``): how a task learns the cluster
it belongs to and its own place in it. ``ClusterResolver`` is the interface; ``SimpleClusterResolver``
wraps a ``ClusterSpec``; ``TFConfigClusterResolver`` reads the ``TF_CONFIG`` environment variable.
``MPIClusterResolver`` (mpiexec ranks) and ``resolve_cluster`` (try them all) live beside this module.

Example:
    >>> import json, os
    >>> os.environ["TF_CONFIG"] = json.dumps({"cluster": {"ps": ["127.0.0.1:2222"],
    ...                                                   "worker": ["127.0.0.1:2223", "127.0.0.1:2224"]},
    ...                                       "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"})
    >>> r = TFConfigClusterResolver()
    >>> r.task_type, r.task_id, r.master(), r.num_accelerators()
    ('worker', 1, 'grpc://127.0.0.1:2224', {})
    >>> del os.environ["TF_CONFIG"]
"""

from __future__ import annotations

import abc
import json
import os

from sparseflow._src.distributed.cluster_spec import ClusterSpec

__all__ = [
    "ClusterResolver",
    "SimpleClusterResolver",
    "TFConfigClusterResolver",
    "format_master_url",
    "load_tf_config",
]

TF_CONFIG = "TF_CONFIG"


def format_master_url(master: str, rpc_layer: str | None = None) -> str:
    """``rpc_layer://master``, or ``master`` unchanged when there is no rpc layer or it has a scheme."""
    if rpc_layer and master and "://" not in master:
        return f"{rpc_layer}://{master}"
    return master


class _Counts(dict):
    """A dict of counts that reads 0 for a missing key (as TensorFlow's defaultdict(int)), printed as a dict."""

    def __missing__(self, key):
        return 0


class ClusterResolver(abc.ABC):
    """The interface of every resolver (TensorFlow's ``tf.distribute.cluster_resolver.ClusterResolver``).

    ``cluster_spec()`` and ``master()`` are abstract; ``task_type``, ``task_id`` and ``rpc_layer`` are
    settable attributes; ``num_accelerators()`` counts GPUs/TPUs, of which sparseflow has none.
    """

    task_type: str | None = None
    task_id: int | None = None
    rpc_layer: str | None = None

    @abc.abstractmethod
    def cluster_spec(self) -> ClusterSpec:
        """The ``ClusterSpec`` of the whole cluster."""

    @abc.abstractmethod
    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """The session target of a task (``grpc://host:port``), or '' for an in-process session."""

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        """Accelerators per device type: ``{}`` (sparseflow runs on CPUs), a dict that reads 0 for any key."""
        del task_type, task_id, config_proto
        return _Counts()

    @property
    def environment(self) -> str:
        return ""


class SimpleClusterResolver(ClusterResolver):
    """A resolver over a given ``ClusterSpec`` (TensorFlow's ``SimpleClusterResolver``).

    Example:
        >>> r = SimpleClusterResolver(ClusterSpec({"ps": ["h:1"], "worker": ["h:2"]}),
        ...                           task_type="worker", task_id=0, rpc_layer="grpc")
        >>> r.master(), r.master("ps", 0), r.master("ps", 0, rpc_layer="")
        ('', 'grpc://h:1', 'h:1')
        >>> SimpleClusterResolver(ClusterSpec({}), master="h:9", rpc_layer="grpc").master()
        'grpc://h:9'
    """

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError(f"SimpleClusterResolver takes a ClusterSpec, not {type(cluster_spec).__name__}.")
        self._cluster_spec = cluster_spec
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self.rpc_layer = rpc_layer
        self._environment = environment
        self._num_accelerators = dict(num_accelerators or {})

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """The address of ``task_type:task_id`` when both are given, else the ``master`` given at construction."""
        if task_type is not None and task_id is not None:
            address = self._cluster_spec.task_address(task_type, task_id)
        else:
            address = self._master
        return format_master_url(address, self.rpc_layer if rpc_layer is None else rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        del task_type, task_id, config_proto
        return _Counts(self._num_accelerators)

    @property
    def environment(self) -> str:
        return self._environment


class TFConfigClusterResolver(ClusterResolver):
    """Reads the cluster and this task from the ``TF_CONFIG`` environment variable (JSON).

    ``{"cluster": {"ps": ["h:2222"], "worker": ["h:2223", "h:2224"]},
    "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc", "environment": "cloud"}``

    A job's tasks are a list (task ``i`` at position ``i``) or an object ``{"index": "host:port"}``
    for sparse task sets. Constructor arguments override the document's task and rpc layer. The
    variable is read on every call (as TensorFlow does), so it can be set after construction; a
    malformed document raises ValueError naming ``TF_CONFIG`` and the problem. An ``evaluator``
    task may lie outside the cluster (it evaluates checkpoints and takes no part in training).

    ``master()`` follows TensorFlow: ``session_master`` when the document has one, '' when the
    cluster has at most one task (a local session), else this task's address, prefixed by the rpc
    layer when one is set (``sparseflow launch`` and ``resolve_cluster`` set ``grpc``).

    Example:
        >>> import json, os
        >>> os.environ["TF_CONFIG"] = json.dumps({"cluster": {"chief": ["h:1"], "worker": {"3": "h:4"}},
        ...                                       "task": {"type": "worker", "index": 3}})
        >>> r = TFConfigClusterResolver(rpc_layer="grpc")
        >>> r.cluster_spec().as_dict(), r.task_type, r.task_id, r.master()
        ({'chief': ['h:1'], 'worker': {3: 'h:4'}}, 'worker', 3, 'grpc://h:4')
        >>> del os.environ["TF_CONFIG"]
    """

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None, *, environ=None):
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment
        self._environ = environ  # a mapping to read instead of os.environ (tests, resolve_cluster)

    def _config(self) -> dict:
        return load_tf_config(os.environ if self._environ is None else self._environ)

    @property
    def task_type(self):
        if self._task_type is not None:
            return str(self._task_type)
        return self._config().get("task", {}).get("type")

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        if self._task_id is not None:
            return int(self._task_id)
        return self._config().get("task", {}).get("index")

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def rpc_layer(self):
        if self._rpc_layer is not None:
            return self._rpc_layer
        return self._config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer

    @property
    def environment(self):
        """The constructor's ``environment``, else the document's (e.g. "cloud"), else None."""
        if self._environment is not None:
            return self._environment
        return self._config().get("environment")

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec(self._config().get("cluster", {}))

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        config = self._config()
        rpc_layer = self.rpc_layer if rpc_layer is None else rpc_layer
        if "session_master" in config:
            return format_master_url(config["session_master"], rpc_layer)
        cluster = ClusterSpec(config.get("cluster", {}))
        if sum(cluster.num_tasks(job) for job in cluster.jobs) <= 1:
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None or (task_type == "evaluator" and task_type not in cluster.jobs):
            return ""
        return format_master_url(cluster.task_address(task_type, task_id), rpc_layer)


def load_tf_config(environ=None) -> dict:
    """The ``TF_CONFIG`` document, checked: ``{}`` when unset or empty; ValueError when malformed.

    The returned dict has ``cluster`` as ``{job: [address] or {index: address}}`` with int indices,
    and ``task`` (when present) as ``{"type": str, "index": int}``.
    """
    environ = os.environ if environ is None else environ
    text = environ.get(TF_CONFIG, "")
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{TF_CONFIG} is not valid JSON ({e}): {_clip(text)}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{TF_CONFIG} must be a JSON object with 'cluster' and 'task', got {_clip(text)}")
    out = dict(doc)
    out["cluster"] = cluster = _checked_cluster(doc.get("cluster", {}))
    if "task" in doc:
        out["task"] = task = _checked_task(doc["task"])
        if cluster and task:
            _check_task_in_cluster(cluster, task)
    for key in ("rpc_layer", "environment", "session_master"):
        if key in doc and not isinstance(doc[key], str):
            raise ValueError(f"{TF_CONFIG}: '{key}' must be a string, got {doc[key]!r}.")
    return out


def _checked_cluster(cluster) -> dict:
    if not isinstance(cluster, dict):
        raise ValueError(f"{TF_CONFIG}: 'cluster' must be an object {{job: [\"host:port\", ...]}}, got {cluster!r}.")
    out = {}
    for job, tasks in cluster.items():
        if isinstance(tasks, str):
            tasks = [tasks]
        if isinstance(tasks, list):
            indexed = dict(enumerate(tasks))
        elif isinstance(tasks, dict):
            indexed = {_index(job, i): a for i, a in tasks.items()}
        else:
            raise ValueError(f"{TF_CONFIG}: the tasks of job {job!r} must be a list of \"host:port\" or an object "
                             f"{{\"index\": \"host:port\"}}, got {tasks!r}.")
        for i, address in indexed.items():
            if not isinstance(address, str) or not address:
                raise ValueError(f"{TF_CONFIG}: the address of task {i} of job {job!r} must be a \"host:port\" "
                                 f"string, got {address!r}.")
        out[job] = list(tasks) if isinstance(tasks, list) else indexed
    try:
        ClusterSpec(out)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{TF_CONFIG}: bad 'cluster': {e}") from None
    return out


def _index(job, i) -> int:
    try:
        index = int(i)
    except (TypeError, ValueError):
        index = -1
    if index < 0 or isinstance(i, bool):
        raise ValueError(f"{TF_CONFIG}: task indices of job {job!r} must be non-negative integers, got {i!r}.")
    return index


def _checked_task(task) -> dict:
    if not isinstance(task, dict):
        raise ValueError(f"{TF_CONFIG}: 'task' must be an object {{\"type\": job, \"index\": i}}, got {task!r}.")
    if not task:
        return {}
    if not isinstance(task.get("type"), str) or not task["type"]:
        raise ValueError(f"{TF_CONFIG}: 'task' needs a job name in 'type', got {task!r}.")
    out = dict(task)
    out["index"] = _index(task["type"], task.get("index", 0))
    return out


def _check_task_in_cluster(cluster: dict, task: dict) -> None:
    job, index = task["type"], task["index"]
    if job not in cluster:
        if job == "evaluator":
            return  # an evaluator may run outside the training cluster
        raise ValueError(f"{TF_CONFIG}: task type {job!r} is not a job of the cluster (jobs: {sorted(cluster)}).")
    tasks = cluster[job]
    indices = range(len(tasks)) if isinstance(tasks, list) else sorted(tasks)
    if index not in indices:
        raise ValueError(f"{TF_CONFIG}: task index {index} is out of range for job {job!r} "
                         f"(its task indices: {list(indices)}).")


def _clip(text: str, n: int = 80) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")
