"""Fixtures for distributed tests: in-process servers on 127.0.0.1 (one gRPC port per task)."""

import socket

import pytest

import sparseflow as tf


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def start_cluster(ps=1, workers=1, **server_kw):
    """Servers for a cluster of ``ps`` and ``workers`` tasks; returns (ClusterSpec, {task: Server})."""
    for _attempt in range(5):
        ports = free_ports(ps + workers)
        spec = {"ps": [f"127.0.0.1:{p}" for p in ports[:ps]], "worker": [f"127.0.0.1:{p}" for p in ports[ps:]]}
        if not ps:
            del spec["ps"]
        cluster = tf.train.ClusterSpec(spec)
        servers = {}
        try:
            for job, i, _ in cluster.tasks():
                servers[f"{job}:{i}"] = tf.train.Server(cluster, job_name=job, task_index=i, **server_kw)
            return cluster, servers
        except tf.errors.UnavailableError:  # a port was taken in between: try others
            for s in servers.values():
                s.stop(0)
    raise RuntimeError("could not bind a local cluster")


@pytest.fixture
def cluster_2ps_2workers():
    cluster, servers = start_cluster(ps=2, workers=2)
    yield cluster, servers
    for s in servers.values():
        s.stop(0)
