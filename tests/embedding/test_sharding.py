"""Which tables are sharded over tasks, and the config their shards are created from: device
forms, float32-exact settings that survive a GraphDef, replica_device_setter placement."""

import numpy as np
import pytest
from google.protobuf import text_format

import sparseflow as tf
from sparseflow import embedding as E
from sparseflow._src.embedding.sharding import shard_devices
from sparseflow._src.framework.graph_io import graph_def_to_ir
from sparseflow._src.framework.proto.embedding_table_pb2 import EmbeddingTableConfig
from sparseflow._src.kernels.embedding_kernels import spec_from_attrs
from sparseflow._src.kernels.embedding_service import parse_config


def test_devices_naming_tasks_shard_the_table_and_local_devices_do_not():
    assert shard_devices(["/job:ps/task:1", "/job:ps/replica:0/task:0/device:CPU:0"]) == [
        "/job:ps/replica:0/task:1/device:CPU:0", "/job:ps/replica:0/task:0/device:CPU:0"]
    assert shard_devices(["/cpu:0", "/device:CPU:1"]) is None and shard_devices(None) is None
    with pytest.raises(ValueError, match="name a job but no task"):
        shard_devices(["/job:ps"])
    with pytest.raises(ValueError, match="mix tasks and local devices"):
        shard_devices(["/job:ps/task:0", "/cpu:0"])
    with pytest.raises(ValueError, match="twice"):
        shard_devices(["/job:ps/task:0", "/job:ps/task:0/cpu:0"])


def test_the_config_and_the_graph_attrs_describe_one_table_exactly():
    """Float settings are float32 values: the ps-side handle op (attrs through a GraphDef) and the
    pulls' config build equal specs, so the shard is found, not refused as another table."""
    with tf.Graph().as_default() as g:
        t = E.EmbeddingTable("cfg", 3, optimizer=E.Adam(0.001, 0.9, 0.999, 1e-8), initializer=("normal", [0.1, 0.3]),
                             admission=3, eviction=E.Eviction(max_age=5, min_show=0.3, every_n_steps=7, show_decay=0.9),
                             num_shards=2, devices=["/job:ps/task:0", "/job:ps/task:1"])
    msg = EmbeddingTableConfig()
    text_format.Parse(t.config, msg)
    table = parse_config(msg.SerializeToString())
    ir = graph_def_to_ir(g.as_graph_def())
    for p, h in enumerate(t.handles):
        attrs = ir.node(h.op.name).attrs
        assert spec_from_attrs(attrs) == table.spec
        assert (attrs["part"], attrs["num_parts"], h.device) == (p, 2, table.shard_devices[p])
    assert table.num_shards == 2 and table.spec.optimizer_params == tuple(float(np.float32(x)) for x in
                                                                         (0.9, 0.999, 1e-8))
    assert len(t.saveables) == 2 and t.saveable == t.saveables


def test_a_table_made_under_replica_device_setter_gets_one_shard_per_ps_task():
    if not hasattr(tf.train, "replica_device_setter"):
        pytest.skip("tf.train.replica_device_setter is not in this build")
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            t = E.EmbeddingTable("auto", 4)
            v = tf.Variable(1.0)
        with tf.device("/job:worker/task:0"):
            local = E.EmbeddingTable("not_sharded", 4)
    assert t.shard_devices == [f"/job:ps/replica:0/task:{i}/device:CPU:0" for i in range(3)]
    assert "/job:ps" in v.device and local.shard_devices is None


def test_shards_on_devices_of_the_sessions_own_task_train_in_a_plain_session():
    """Shards on the local task's devices are served in-process: same numbers as one table."""
    batches = [np.random.default_rng(i).integers(0, 30, (6, 2)) for i in range(3)]

    def run(devices):
        with tf.Graph().as_default():
            t = E.EmbeddingTable("local_shards", 3, optimizer=E.Adagrad(0.5), devices=devices)
            ids = tf.placeholder(tf.int64, [None, 2])
            loss = tf.reduce_sum(tf.square(t.lookup(ids) - 1.0))
            train = E.apply_gradients(loss)
            with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
                return [sess.run([loss, train], {ids: b})[0] for b in batches], t.stats(sess)["keys"]

    sharded = run([f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(2)])
    single = run(None)
    np.testing.assert_allclose(sharded[0], single[0], rtol=1e-6)
    assert sharded[1] == single[1] > 0
