"""TablePull / TablePush on one ps: raw-byte items decode to the table's rows, a push is applied at
most once, and malformed or misrouted requests are refused with messages that say what is wrong."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.distributed.proto import worker_pb2
from sparseflow._src.framework.proto.embedding_table_pb2 import EmbeddingTableConfig
from sparseflow._src.kernels.embedding_service import PullItem, PushItem
from sparseflow._src.kernels.embedding_table import EmbeddingTableResource, TableSpec
from tests.distributed.conftest import start_cluster

PS0 = "/job:ps/replica:0/task:0"


def _config(name="svc", dim=3, devices=(f"{PS0}/device:CPU:0",)):
    return EmbeddingTableConfig(name=name, dim=dim, optimizer="adagrad", optimizer_params=[0.1, 0.0],
                                initializer="uniform", initializer_params=[-0.5, 0.5], seed=7, min_count=1,
                                evict_max_age=-1, show_decay=1.0, num_shards=2,
                                shard_devices=list(devices)).SerializeToString()


@pytest.fixture(scope="module")
def ps():
    _, servers = start_cluster(ps=1, workers=1)
    yield servers, servers["worker:0"].remote_worker(PS0)
    for s in servers.values():
        s.stop(0)


def test_pull_and_push_over_the_wire_match_the_table_itself(ps):
    servers, remote = ps
    cfg = _config()
    keys = np.array([5, 2**63 + 11, 3, 99], np.uint64)
    grads = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    counts = np.array([2, 1, 1, 3], np.int32)
    rows = remote.table_pull_async([PullItem(cfg, 0, keys, counts, dim=3)]).result()[1][0]
    assert remote.table_push_async([PushItem(cfg, 0, keys[:2], grads[:2], learning_rate=0.5)]).result()[1] == [0]
    after = remote.table_pull_async([PullItem(cfg, 0, keys, dim=3, training=False)]).result()[1][0]
    local = EmbeddingTableResource("x", TableSpec(3, "adagrad", (0.1, 0.0), "uniform", (-0.5, 0.5), seed=7),
                                   num_shards=2)
    np.testing.assert_array_equal(rows, local.pull(keys, counts))
    local.push(keys[:2], grads[:2], learning_rate=0.5)
    np.testing.assert_array_equal(after, local.pull(keys, training=False))
    shard = servers["ps:0"].worker.devices.resources(f"{PS0}/device:CPU:0").lookup("", "svc")
    assert shard.size() == 4 and shard.step == 1


def test_a_retried_push_is_refused_and_not_applied_twice(ps):
    servers, remote = ps
    cfg = _config("once")
    keys = np.array([1, 2], np.uint64)
    remote.table_pull_async([PullItem(cfg, 0, keys, dim=3)]).result()
    req = worker_pb2.TablePushRequest(request_id=remote.next_request_id())
    req.tables.add(config=cfg, part=0, keys=keys.tobytes(), grads=np.ones((2, 3), np.float32).tobytes(),
                   learning_rate=0.1)
    remote._client.call("TablePush", req)
    with pytest.raises(tf.errors.AbortedError, match="already received"):
        remote._client.call("TablePush", req)
    assert servers["ps:0"].worker.devices.resources(f"{PS0}/device:CPU:0").lookup("", "once").step == 1


@pytest.mark.parametrize("item, message", [
    (dict(keys=b"\x00" * 7), "Malformed TablePull keys: 7 bytes"),
    (dict(keys=b"\x00" * 16, counts=b"\x00" * 4), "Malformed TablePull counts: 4 bytes, expected 2 x 4"),
    (dict(part=2), r"has 1 shard\(s\); there is no shard 2"),
    (dict(config=b"\xff\xff"), "Malformed embedding-table config"),
])
def test_malformed_pulls_are_refused(ps, item, message):
    _, remote = ps
    req = worker_pb2.TablePullRequest()
    req.tables.add(**{"config": _config("bad"), "part": 0, "keys": b"", "training": True, **item})
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        remote._client.call("TablePull", req)


def test_a_shard_routed_to_the_wrong_task_is_refused_naming_the_device(ps):
    _, remote = ps
    cfg = _config("elsewhere", devices=["/job:ps/replica:0/task:7/device:CPU:0"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="belongs to /job:ps/replica:0/task:7/device:CPU:0, which "
                                                             "is not a device of this task"):
        remote.table_pull_async([PullItem(cfg, 0, np.array([1], np.uint64), dim=3)]).result()


def test_gradients_of_the_wrong_size_are_refused(ps):
    _, remote = ps
    cfg = _config("gsize")
    keys = np.array([1, 2], np.uint64)
    remote.table_pull_async([PullItem(cfg, 0, keys, dim=3)]).result()
    req = worker_pb2.TablePushRequest(request_id=remote.next_request_id())
    req.tables.add(config=cfg, part=0, keys=keys.tobytes(), grads=np.ones(5, np.float32).tobytes())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Malformed TablePush gradients: 20 bytes, expected 6 x 4"):
        remote._client.call("TablePush", req)


def test_pulled_rows_are_a_read_only_view_of_the_reply_and_misaligned_bytes_are_copied():
    from sparseflow._src.distributed.table_service import decode

    raw = np.arange(6, dtype="<f4").tobytes()
    view = decode(raw, np.dtype("<f4"), "rows", 6, copy=False)
    assert not view.flags.writeable and view.base is not None  # no copy: the reply's bytes
    assert view.tolist() == [0, 1, 2, 3, 4, 5]
    owned = decode(raw, np.dtype("<f4"), "rows", 6)
    assert owned.flags.writeable and owned.tolist() == view.tolist()
    shifted = memoryview(b"x" + raw)[1:]  # not aligned for float32: copied into an aligned array
    assert decode(shifted, np.dtype("<f4"), "rows", 6, copy=False).flags.aligned
    with pytest.raises(tf.errors.InvalidArgumentError, match="Malformed rows: 24 bytes, expected 5 x 4"):
        decode(raw, np.dtype("<f4"), "rows", 5, copy=False)
