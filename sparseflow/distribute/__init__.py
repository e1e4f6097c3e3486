"""``tf.distribute``: cluster resolvers, a local ps/worker cluster for one machine, the training
strategies (``ParameterServerStrategy``: separate ps tasks, async or sync; ``PsStrategy``: every
worker serves a shard, async; ``MultiWorkerMirroredStrategy``: dense variables mirrored and
all-reduced, tables sharded over the workers, all sync; ``HybridStrategy``: the same with the
tables' rows pushed asynchronously, bounded staleness), and collectives
(``sparseflow.distribute.collectives``: all-reduce, all-gather, broadcast across tasks).

``launch_local_cluster`` is the Python side of ``sparseflow launch`` (see ``LocalCluster``).
"""

# ruff: noqa: F401
from sparseflow._src.distributed.launcher import LocalCluster, launch_local_cluster
from sparseflow._src.distributed.resolve import resolve_cluster
from sparseflow._src.training.distribute import (
    HybridStrategy,
    MultiWorkerMirroredStrategy,
    ParameterServerStrategy,
    PsStrategy,
    Strategy,
)
from sparseflow.distribute import cluster_resolver, collectives
