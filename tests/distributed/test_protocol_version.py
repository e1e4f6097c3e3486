"""Tasks of different sparseflow protocol versions refuse each other at the first call, naming both
versions and what to do, instead of failing later on a message one of them does not understand
(version 3 streams RunGraph's values and a batch of receives)."""

import pytest

import sparseflow as tf
from sparseflow._src.distributed.proto import worker_pb2, worker_service_pb2
from sparseflow._src.distributed.rpc import Client, Security
from sparseflow._src.distributed.worker_service import PROTOCOL_VERSION
from tests.distributed.conftest import start_cluster

_SERVICE = worker_service_pb2.DESCRIPTOR.services_by_name["WorkerService"]


@pytest.fixture
def one_ps():
    _, servers = start_cluster(ps=1, workers=0)
    yield servers["ps:0"]
    servers["ps:0"].stop(0)


def test_a_task_of_another_protocol_version_is_refused_naming_both(one_ps):
    client = Client(one_ps.target.replace("grpc://", ""), _SERVICE, Security())
    try:
        old = PROTOCOL_VERSION - 1
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match=f"version {old}, this task speaks {PROTOCOL_VERSION}: run the same sparseflow"):
            client.call("GetStatus", worker_pb2.GetStatusRequest(protocol_version=old), 10.0)
        with pytest.raises(tf.errors.FailedPreconditionError, match=r"The master /job:worker/replica:0/task:7 speaks"):
            client.call("CreateWorkerSession", worker_pb2.CreateWorkerSessionRequest(
                session_handle="00", master_task="/job:worker/replica:0/task:7", protocol_version=old), 10.0)
        status = client.call("GetStatus", worker_pb2.GetStatusRequest(protocol_version=PROTOCOL_VERSION), 10.0)
        assert status.protocol_version == PROTOCOL_VERSION == 3
    finally:
        client.close()
