"""tf.py_func runs in the client's process only: on the client's task it runs, placed on another task
it is refused by name before anything is registered there."""

import numpy as np
import pytest

import sparseflow as tf
from tests.distributed.conftest import start_cluster


def test_py_func_runs_on_the_clients_task_and_is_refused_on_another():
    _, servers = start_cluster(ps=1, workers=1)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable([1.0, 2.0], name="v")
            with tf.device("/job:worker/task:0"):
                here = tf.py_func(lambda a: (a * 10).astype(np.float32), [v], tf.float32, name="here")
            with tf.device("/job:ps/task:0"):
                there = tf.py_func(lambda a: a, [v], tf.float32, name="there")
            with tf.Session(servers["worker:0"].target) as sess:
                sess.run(v.initializer)
                assert sess.run(here).tolist() == [10.0, 20.0]
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match="PyFunc node 'there' is placed on /job:ps/replica:0/task:0.*client"):
                    sess.run(there)
    finally:
        for s in servers.values():
            s.stop(0)
