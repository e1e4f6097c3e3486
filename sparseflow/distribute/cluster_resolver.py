"""``tf.distribute.cluster_resolver``: how a task finds its cluster (TF_CONFIG, mpiexec, flags)."""

# ruff: noqa: F401
from sparseflow._src.distributed.cluster_resolver import (
    ClusterResolver,
    SimpleClusterResolver,
    TFConfigClusterResolver,
)
from sparseflow._src.distributed.mpi_cluster_resolver import MPIClusterResolver
from sparseflow._src.distributed.resolve import add_cluster_flags, cluster_resolver_from_flags, resolve_cluster
