"""``tf.train.replica_device_setter``: the devices TF gives a typical model (variables round robin or
by strategy over ps tasks, slots and updates with their variable, the rest on the worker), the
merge rules with inner device scopes, and a placed model still training in a local Session.

The expected devices were recorded with TensorFlow 2.21 by ``tests/record_tf_reference.py``
running the same programs (``device_setter_programs.py``) with ``tensorflow.compat.v1``; for the
greedy and random strategies (TF1 contrib, gone from TF 2.21) TensorFlow ran with the contrib
rules written out in that module.
"""

import numpy as np
import pytest

import sparseflow as tf
from tests.training import device_setter_expected as expected
from tests.training import device_setter_programs as programs


@pytest.fixture(scope="module")
def placements():
    return programs.placements(tf, sparseflow=True)


def _by_name(by_device):
    return {name: dev for dev, names in by_device.items() for name in names}


@pytest.mark.parametrize("case", programs.CASES)
def test_devices_match_tensorflow(placements, case):
    want, got = _by_name(expected.PLACEMENTS[case]), _by_name(placements[case])
    missing = sorted(set(want) - set(got))
    assert not missing, f"ops TensorFlow makes but sparseflow does not: {missing}"
    wrong = {name: (got[name], want[name]) for name in want if got[name] != want[name]}
    assert not wrong, f"(sparseflow, tensorflow) devices differ: {wrong}"
    extra = set(got) - set(want)  # only gradient internals TF builds differently may be extra
    assert all(name.startswith("gradients/") for name in extra), sorted(extra)


def test_edge_cases_match_tensorflow():
    assert programs.setter_edge_cases(tf) == expected.SETTER_EDGE_CASES


def test_slots_and_updates_live_with_their_variable():
    g, _ = programs.build_model(tf, tf.train.replica_device_setter(ps_tasks=3), "adam")
    variables = {op.name: op.device for op in g.get_operations() if op.type == "VariableV2"}
    slots = {name: dev for name, dev in variables.items() if name.endswith(("/Adam", "/Adam_1"))}
    assert len(slots) == 2 * 7  # emb (3 shards), w1, b1, w2, b2 ("side" gets no gradient)
    for name, dev in slots.items():
        assert dev == variables[name.rsplit("/", 1)[0]], name
    for op in g.get_operations():
        if op.type.startswith(("Apply", "SparseApply", "ScatterAdd")):
            assert op.device == op.inputs[0].op.device, op.name


def test_model_placed_on_ps_tasks_trains_in_a_local_session():
    g, train = programs.build_model(tf, tf.train.replica_device_setter(ps_tasks=2), "adagrad")
    with g.as_default():
        loss = g.get_tensor_by_name("Mean:0")
        # y = 1: even when the unseeded init leaves every relu unit dead (1 time in 32) the loss is
        # positive and b2 still learns, so the loss must fall.
        feed = {"x:0": np.ones([3, 4], np.float32), "y:0": np.ones([3, 1], np.float32), "ids:0": [0, 5, 9]}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss, feed)
            for _ in range(5):
                sess.run(train, feed)
            assert sess.run(loss, feed) < first
            assert sess.run(tf.train.get_global_step()) == 5


def test_greedy_strategy_balances_bytes():
    strategy = tf.train.GreedyLoadBalancingStrategy(3, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=strategy)):
        sizes = [100, 10, 10, 60, 30, 5]
        vs = [tf.Variable(tf.zeros([n]), name=f"v{n}_{i}") for i, n in enumerate(sizes)]
    # loads (bytes) after each: [400,0,0] [400,40,0] [400,40,40] [400,280,40] [400,280,160] [400,280,180]
    assert [v.device[-1] for v in vs] == ["0", "1", "2", "1", "2", "2"]


def test_byte_size_load_fn_needs_one_output_of_known_size():
    assert tf.train.byte_size_load_fn(tf.Variable(tf.zeros([3, 4], tf.float64)).op) == 96
    two = tf.unique([1, 2])[0].op
    with pytest.raises(ValueError, match="single output"):
        tf.train.byte_size_load_fn(two)
    unknown = tf.placeholder(tf.float32, [None, 3]).op
    with pytest.raises(ValueError, match="not fully defined"):
        tf.train.byte_size_load_fn(unknown)


def test_random_strategy_hashes_the_op_name():
    a = tf.train.RandomStrategy(5, seed=3)
    with tf.device(tf.train.replica_device_setter(ps_tasks=5, ps_strategy=a)):
        v = tf.Variable(1.0, name="some_variable")
    assert v.device == f"/job:ps/task:{programs.ContribRandom(5, seed=3)(v.op)}"


def test_public_names_and_arguments():
    from sparseflow.contrib import training as contrib_training

    assert tf.contrib.training.GreedyLoadBalancingStrategy is tf.train.GreedyLoadBalancingStrategy
    assert contrib_training.byte_size_load_fn is tf.train.byte_size_load_fn
    assert tf.contrib.training.RandomStrategy is tf.train.RandomStrategy
    assert tf.compat.v1.train.replica_device_setter is tf.train.replica_device_setter
    assert tf.train.ClusterSpec({"ps": ["a:1"]}).num_tasks("ps") == 1
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_docstring_examples():
    import doctest

    from sparseflow._src.training import device_setter

    result = doctest.testmod(device_setter, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
