"""tf.graph_util: extract_sub_graph, remove_training_nodes, tensor_shape_from_node_def_name and
convert_variables_to_constants (freezing)."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.proto import attr_value_pb2, types_pb2


def _node(gd, name, op, inputs=(), **attrs):
    n = gd.node.add(name=name, op=op)
    n.input.extend(inputs)
    for k, v in attrs.items():
        n.attr[k].CopyFrom(v)
    return n


def _chain():
    """a -> b -> c, d (unused) -> e, with ^a on c."""
    gd = tf.GraphDef()
    gd.versions.producer = 27
    _node(gd, "a", "Placeholder")
    _node(gd, "d", "Placeholder")
    _node(gd, "b", "Identity", ["a"])
    _node(gd, "c", "Identity", ["b:0", "^a"])
    _node(gd, "e", "Identity", ["d"])
    return gd


def test_extract_sub_graph_keeps_needed_nodes_in_order():
    sub = tf.graph_util.extract_sub_graph(_chain(), ["c"])
    assert [n.name for n in sub.node] == ["a", "b", "c"]
    assert sub.versions.producer == 27
    both = tf.graph_util.extract_sub_graph(_chain(), ["c", "e:0"])
    assert [n.name for n in both.node] == ["a", "d", "b", "c", "e"]


def test_extract_sub_graph_errors():
    with pytest.raises(AssertionError, match="zz is not in graph"):
        tf.graph_util.extract_sub_graph(_chain(), ["zz"])
    with pytest.raises(TypeError, match="list"):
        tf.graph_util.extract_sub_graph(_chain(), "c")
    with pytest.raises(TypeError, match="GraphDef"):
        tf.graph_util.extract_sub_graph("not a graph", ["c"])


def test_remove_training_nodes_splices_identities_and_drops_check_numerics():
    gd = tf.GraphDef()
    _node(gd, "x", "Placeholder")
    _node(gd, "check", "CheckNumerics", ["x"])
    _node(gd, "id1", "Identity", ["x"])
    _node(gd, "id2", "Identity", ["id1"])
    _node(gd, "keep_me", "Identity", ["id2"])
    _node(gd, "gated", "Identity", ["x", "^check"])
    _node(gd, "ctrl_src", "Identity", ["x"])
    _node(gd, "uses_ctrl", "Add", ["id2", "x", "^ctrl_src"])
    loc = _node(gd, "coloc_target", "Identity", ["x"])
    _node(gd, "colocated", "Neg", ["coloc_target"]).attr["_class"].list.s.append(b"loc:@coloc_target")
    del loc
    out = tf.graph_util.remove_training_nodes(gd, protected_nodes=["keep_me"])
    nodes = {n.name: list(n.input) for n in out.node}
    assert "check" not in nodes and "id1" not in nodes and "id2" not in nodes
    assert nodes["keep_me"] == ["x"]
    assert "gated" not in nodes  # lost its only control input with CheckNumerics, then was spliced
    assert nodes["uses_ctrl"] == ["x", "x", "^ctrl_src"]
    assert "ctrl_src" in nodes and "coloc_target" in nodes  # control source and colocation target stay


def test_tensor_shape_from_node_def_name():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    g = x.graph
    assert tf.graph_util.tensor_shape_from_node_def_name(g, "x").as_list() == [None, 4]
    assert tf.graph_util.tensor_shape_from_node_def_name(g, "x:0").as_list() == [None, 4]


def test_convert_variables_to_constants_freezes_values_and_keeps_reads():
    g = tf.Graph()
    inputs = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]], np.float32)
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="input")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) * 0.25, name="weights")
        unused = tf.Variable(1.0, name="unused")
        out = tf.identity(tf.matmul(x, w), name="output")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(w.assign(w * 2.0))  # frozen values are the session's, not the initial ones
            want = sess.run(out, {x: inputs})
            frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["output"])
    del unused
    nodes = {n.name: n for n in frozen.node}
    assert nodes["weights"].op == "Const" and "unused" not in nodes
    assert all(n.op not in ("VariableV2", "Assign") for n in frozen.node)
    assert nodes["weights/read"].op == "Identity" and list(nodes["weights/read"].input) == ["weights"]
    np.testing.assert_array_equal(tf.make_ndarray(nodes["weights"].attr["value"].tensor),
                                  np.arange(6, dtype=np.float32).reshape(3, 2) * 0.5)
    assert nodes["weights"].attr["dtype"].type == types_pb2.DT_FLOAT
    blob = frozen.SerializeToString()
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(tf.GraphDef.FromString(blob), return_elements=["output:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {"input:0": inputs}), want, rtol=1e-6)


def test_convert_variables_to_constants_white_and_black_lists():
    g = tf.Graph()
    with g.as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        tf.identity_n([a, b], name="out")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            only_a = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["out"],
                                                                  variable_names_whitelist=["a"])
            not_a = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["out"],
                                                                 variable_names_blacklist=["a"])
    ops = {n.name: n.op for n in only_a.node}
    assert ops["a"] == "Const" and ops.get("b", "VariableV2") == "VariableV2"
    ops = {n.name: n.op for n in not_a.node}
    assert ops["a"] == "VariableV2" and ops.get("b", "Const") == "Const"


def test_freeze_keeps_attr_values_exact():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.array([[1, 2], [3, 4]], np.int64), name="v")
        tf.identity(v, name="out")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["out"])
    const = {n.name: n for n in frozen.node}["v"]
    assert const.attr["dtype"] == attr_value_pb2.AttrValue(type=types_pb2.DT_INT64)
    assert tf.make_ndarray(const.attr["value"].tensor).tolist() == [[1, 2], [3, 4]]
