"""tf.import_graph_def: naming, input_map, return_elements, OpDef defaults, ordering, devices,
errors on bad GraphDefs (which leave the graph unchanged) and byte-stable round trips."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def import op_registry, register_op
from sparseflow._src.framework.proto import attr_value_pb2, op_def_pb2, types_pb2


def _rank2(op):
    if op.inputs[0].shape.ndims not in (None, 2):
        raise ValueError(f"Shape must be rank 2 but is rank {op.inputs[0].shape.ndims}")
    return [op.inputs[0].shape]


@pytest.fixture(scope="module", autouse=True)
def _test_ops():
    """Two import-only op types, registered for this module's tests and removed afterwards so
    that the registry-completeness tests (every op has a kernel) do not see them."""
    names = ["H1TestDefaults", "H1TestRank2"]
    register_op(names[0], inputs=["x: T"], outputs=["y: T"],
                attrs=["T: {float, int32}", "mode: {'a', 'b'} = 'a'", "k: int = 3",
                       "sizes: list(int) = [1, 2]"],
                shape_fn=lambda op: [op.inputs[0].shape])
    register_op(names[1], inputs=["x: float"], outputs=["y: float"], shape_fn=_rank2)
    yield
    registry = op_registry()
    for name in names:
        registry.unregister(name)


def _graph():
    """x (placeholder) -> y = Identity(x); c const; z = Identity(y) with ^c."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.identity(x, name="y")
        c = tf.constant([[1.0, 2.0]], name="c")
        with tf.control_dependencies([c]):
            tf.identity(y, name="z")
    return g


def _node(gd, name, op, inputs=(), **attrs):
    n = gd.node.add(name=name, op=op)
    n.input.extend(inputs)
    for k, v in attrs.items():
        n.attr[k].CopyFrom(v)
    return n


def _float_attr():
    return attr_value_pb2.AttrValue(type=types_pb2.DT_FLOAT)


def _placeholder_node(gd, name, shape=None):
    n = _node(gd, name, "Placeholder", dtype=_float_attr())
    if shape is not None:
        n.attr["shape"].shape.dim.extend([n.attr["shape"].shape.Dim(size=s) for s in shape])
    return n


# ---------------------------------------------------------------------------------------- naming
def test_default_prefix_and_unique_scopes(_fresh_default_graph):
    gd = _graph().as_graph_def()
    tf.import_graph_def(gd)
    tf.import_graph_def(gd)
    names = [op.name for op in _fresh_default_graph.get_operations()]
    assert names == ["import/x", "import/y", "import/c", "import/z", "import_1/x", "import_1/y", "import_1/c",
                     "import_1/z"]
    z = _fresh_default_graph.get_operation_by_name("import_1/z")
    assert [t.name for t in z.inputs] == ["import_1/y:0"]
    assert [c.name for c in z.control_inputs] == ["import_1/c"]


def test_named_imports_twice_and_nested_scope():
    gd = _graph().as_graph_def()
    a = tf.import_graph_def(gd, return_elements=["z:0"], name="net")[0]
    b = tf.import_graph_def(gd, return_elements=["z:0"], name="net")[0]
    assert (a.name, b.name) == ("net/z:0", "net_1/z:0")
    with tf.name_scope("outer"):
        (c,) = tf.import_graph_def(gd, return_elements=["z:0"], name="inner")
    assert c.name == "outer/inner/z:0"


def test_empty_name_imports_without_prefix_and_uniquifies_clashes():
    gd = _graph().as_graph_def()
    tf.constant(0.0, name="y")
    x, y, z = tf.import_graph_def(gd, return_elements=["x", "y:0", "z"], name="")
    assert (x.name, y.name, z.name) == ("x", "y_1:0", "z")
    assert [t.name for t in z.inputs] == ["y_1:0"]


def test_colocation_follows_renamed_nodes():
    src = tf.Graph()
    with src.as_default():
        x = tf.placeholder(tf.float32, name="x")
        with src.colocate_with(x.op):
            tf.identity(x, name="near")
    tf.constant(0.0, name="x")
    (near,) = tf.import_graph_def(src.as_graph_def(), return_elements=["near"], name="")
    assert near.get_attr("_class") == [b"loc:@x_1"]


# ---------------------------------------------------------------------------------------- input_map
def test_input_map_replaces_tensors_and_control_inputs():
    gd = _graph().as_graph_def()
    feed = tf.constant(np.float32([[3, 4], [5, 6]]), name="feed")
    gate = tf.no_op(name="gate")
    z, y, mapped = tf.import_graph_def(gd, input_map={"x:0": feed, "^c": gate},
                                       return_elements=["z", "y:0", "x:0"])
    assert [t.name for t in y.op.inputs] == ["feed:0"]
    assert [c.name for c in z.control_inputs] == ["gate"]
    assert mapped is feed  # a mapped return element is the replacement, like TensorFlow
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(z.outputs[0]), [[3, 4], [5, 6]])


def test_input_map_key_without_index_and_python_values():
    gd = _graph().as_graph_def()
    (y,) = tf.import_graph_def(gd, input_map={"x": [[1.0, 2.0]]}, return_elements=["y:0"], name="p")
    src = y.op.inputs[0]
    assert src.op.type == "Const" and src.op.name.startswith("p/_inputs/")
    with pytest.raises(ValueError, match="non-empty `name`"):
        tf.import_graph_def(gd, input_map={"x:0": [[1.0, 2.0]]}, name="")


def test_input_map_errors():
    gd = _graph().as_graph_def()
    ok = tf.constant(np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match=r"not found in graph_def: \[nope:0\]"):
        tf.import_graph_def(gd, input_map={"nope:0": ok})
    with pytest.raises(ValueError, match="passed int32 from .* incompatible with expected float32"):
        tf.import_graph_def(gd, input_map={"x:0": tf.constant([1, 2])})
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="must be in the graph"):
        tf.import_graph_def(gd, input_map={"x:0": other})
    with pytest.raises(TypeError, match="dictionary"):
        tf.import_graph_def(gd, input_map=[("x:0", ok)])


# ---------------------------------------------------------------------------------------- contents
def test_topological_order_regardless_of_graph_def_order():
    gd = tf.GraphDef()
    _node(gd, "b", "Identity", ["a"], T=_float_attr())
    _node(gd, "a", "Identity", ["p"], T=_float_attr())
    _placeholder_node(gd, "p", [3])
    b, p = tf.import_graph_def(gd, return_elements=["b:0", "p"], name="")
    assert b.shape.as_list() == [3] and p.type == "Placeholder"
    assert [op.name for op in tf.get_default_graph().get_operations()] == ["p", "a", "b"]


def test_attrs_missing_in_node_def_take_op_def_defaults_and_extra_attrs_are_kept():
    gd = tf.GraphDef()
    _placeholder_node(gd, "p", [2])
    n = _node(gd, "d", "H1TestDefaults", ["p"], T=_float_attr())
    n.attr["grad_a"].b = False  # an attr a newer TensorFlow has and our OpDef lacks
    n.attr["_has_manual_control_dependencies"].b = True
    (d,) = tf.import_graph_def(gd, return_elements=["d"], name="")
    assert d.get_attr("mode") == b"a" and d.get_attr("k") == 3 and d.get_attr("sizes") == [1, 2]
    assert d.get_attr("grad_a") is False and d.get_attr("_has_manual_control_dependencies") is True
    out = d.node_def
    assert out.attr["k"].i == 3 and out.attr["grad_a"].b is False


def test_producer_op_list_drops_default_valued_unknown_attrs():
    gd = tf.GraphDef()
    _placeholder_node(gd, "p", [2])
    n = _node(gd, "d", "H1TestDefaults", ["p"], T=_float_attr())
    n.attr["new_flag"].b = False
    producer = op_def_pb2.OpList()
    producer.op.add(name="H1TestDefaults").attr.add(name="new_flag", type="bool").default_value.b = False
    (d,) = tf.import_graph_def(gd, return_elements=["d"], producer_op_list=producer, name="")
    assert "new_flag" not in d.attrs


def test_output_shapes_attr_refines_static_shapes_and_is_dropped():
    gd = tf.GraphDef()
    _placeholder_node(gd, "p")
    n = _node(gd, "y", "Identity", ["p"], T=_float_attr())
    n.attr["_output_shapes"].list.shape.add().dim.add(size=5)
    (y,) = tf.import_graph_def(gd, return_elements=["y:0"], name="")
    assert y.shape.as_list() == [5] and "_output_shapes" not in y.op.attrs


def test_devices_kept_merged_with_device_scope_and_colocation():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, name="x")
        with g.colocate_with(x.op):
            tf.identity(x, name="near_x")
        tf.identity(x, name="free")
    gd = g.as_graph_def()
    gd.node[1].device = ""  # colocation alone must bring it next to x
    x2, near, free = tf.import_graph_def(gd, return_elements=["x", "near_x", "free"], name="m")
    assert x2.device == "/device:CPU:0" and near.device == "/device:CPU:0" and free.device == ""
    assert near.get_attr("_class") == [b"loc:@m/x"]
    with tf.device("/job:worker/task:1"):
        (free2,) = tf.import_graph_def(gd, return_elements=["free"], name="d")
    assert free2.device == "/job:worker/task:1"


def test_control_dependencies_context_applies_to_imported_roots():
    gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        x, y = tf.import_graph_def(_graph().as_graph_def(), return_elements=["x", "y"])
    assert [c.name for c in x.control_inputs] == ["gate"]
    assert y.control_inputs == []  # depends on gate through x already


def test_variable_outputs_are_ref_typed():
    gd = tf.GraphDef()
    v = _node(gd, "v", "VariableV2", dtype=_float_attr())
    v.attr["shape"].shape.dim.add(size=2)
    _node(gd, "read", "Identity", ["v"], T=_float_attr())
    v_op, read = tf.import_graph_def(gd, return_elements=["v", "read:0"], name="")
    assert v_op.outputs[0].dtype == tf.float32._as_ref and read.dtype == tf.float32


# ---------------------------------------------------------------------------------------- errors
def _assert_rejected(gd, exc, pattern):
    g = tf.get_default_graph()
    before = [op.name for op in g.get_operations()]
    with pytest.raises(exc, match=pattern):
        tf.import_graph_def(gd, name="")
    assert [op.name for op in g.get_operations()] == before  # nothing half-imported


def test_unregistered_op_names_the_op_type():
    gd = tf.GraphDef()
    _placeholder_node(gd, "p")
    _node(gd, "weird", "FancyNewTFOp", ["p"])
    _assert_rejected(gd, tf.errors.NotFoundError, "FancyNewTFOp.*'weird'")


@pytest.mark.parametrize("build, pattern", [
    (lambda gd: _node(gd, "y", "Identity", ["ghost"], T=_float_attr()), "'y'.*'ghost'"),
    (lambda gd: _node(gd, "y", "Identity", ["p:3"], T=_float_attr()), "'y'.*p:3"),
    (lambda gd: _node(gd, "y", "Identity", ["p", "^ghost"], T=_float_attr()), "'y'.*ghost"),
    (lambda gd: _node(gd, "y", "Identity", ["^p", "p"], T=_float_attr()), "'y'.*control input"),
    (lambda gd: _node(gd, "y", "Identity", ["p"]), "'y'.*missing attr 'T'"),
    (lambda gd: _node(gd, "y", "Identity", ["p", "p"], T=_float_attr()), "'y'.*2 data inputs"),
    (lambda gd: _node(gd, "p", "Identity", ["p"], T=_float_attr()), "Duplicate node name.*'p'"),
    (lambda gd: _node(gd, "bad name!", "NoOp"), "not valid"),
    (lambda gd: _node(gd, "y", "Identity", ["p"], T=attr_value_pb2.AttrValue(i=1)), "'y'.*attr 'T'"),
    (lambda gd: _node(gd, "y", "H1TestDefaults", ["p"], T=attr_value_pb2.AttrValue(type=types_pb2.DT_INT64)),
     "'y'.*int64.*allowed"),
])
def test_malformed_graph_defs_are_rejected_naming_the_node(build, pattern):
    gd = tf.GraphDef()
    _placeholder_node(gd, "p", [2])
    build(gd)
    _assert_rejected(gd, ValueError, pattern)


def test_cycle_is_rejected_naming_its_nodes():
    gd = tf.GraphDef()
    _node(gd, "a", "Identity", ["b"], T=_float_attr())
    _node(gd, "b", "Identity", ["a"], T=_float_attr())
    _assert_rejected(gd, ValueError, "cycle through nodes: a, b")


def test_shape_error_while_adding_takes_back_added_ops():
    gd = tf.GraphDef()
    _placeholder_node(gd, "p", [3])
    _node(gd, "q", "Identity", ["p"], T=_float_attr())
    _node(gd, "r", "H1TestRank2", ["q"])
    _assert_rejected(gd, ValueError, "rank 2")
    tf.constant(1.0, name="p")  # the failed import left no node behind...
    assert tf.get_default_graph().get_operation_by_name("p").type == "Const"


def test_bad_return_elements_and_arguments():
    gd = _graph().as_graph_def()
    _assert_rejected_return = pytest.raises(ValueError, match="'nope:0' not found in graph_def")
    with _assert_rejected_return:
        tf.import_graph_def(gd, return_elements=["nope:0"])
    assert tf.get_default_graph().get_operations() == []
    with pytest.raises(TypeError, match="list of strings"):
        tf.import_graph_def(gd, return_elements=[1])
    with pytest.raises(TypeError, match="GraphDef"):
        tf.import_graph_def("node {}")


# ---------------------------------------------------------------------------------------- round trips
def test_import_then_export_is_byte_stable():
    g = _graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            s = tf.constant(["a", "b"], name="s")
        tf.identity_n([s, tf.constant(3, dtype=tf.int64)], name="pair")
        tf.placeholder(tf.int32, None, name="unknown_rank")
    blob = g.as_graph_def().SerializeToString(deterministic=True)
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(tf.GraphDef.FromString(blob), name="")
    assert g2.as_graph_def().SerializeToString(deterministic=True) == blob
    with tf.Graph().as_default() as g3:
        tf.import_graph_def(g2.as_graph_def(), name="")
    assert g3.as_graph_def().SerializeToString(deterministic=True) == blob


def test_imported_graph_runs():
    gd = _graph().as_graph_def()
    (z,) = tf.import_graph_def(gd, return_elements=["z:0"], name="run")
    with tf.Session() as sess:
        out = sess.run(z, {"run/x:0": np.float32([[1, 2]])})
    np.testing.assert_array_equal(out, [[1, 2]])


# ---------------------------------------------------------------------------------------- functions
def test_bad_function_library_names_the_function_and_leaves_graph_unchanged():
    gd = _graph().as_graph_def()
    fdef = gd.library.function.add()
    fdef.signature.name = "broken_fn"
    fdef.signature.input_arg.add(name="a", type=types_pb2.DT_FLOAT)
    fdef.node_def.add(name="n", op="FancyNewTFOp", input=["a"])
    g = tf.get_default_graph()
    with pytest.raises(tf.errors.NotFoundError, match="broken_fn.*FancyNewTFOp"):
        tf.import_graph_def(gd)
    assert g.get_operations() == [] and g._functions == {}


def test_cond_and_while_loop_graphs_round_trip_and_run():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        k = tf.constant(3.0, name="k")
        y = tf.cond(x > 0, lambda: x * k, lambda: -x, name="c")
        _, r = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 2.0), [tf.constant(0), x], name="w")
        tf.identity(r + y, name="out")
    gd = g.as_graph_def()
    assert len(gd.library.function) == 4  # two branches, cond and body
    with tf.Graph().as_default() as g2:
        (out,) = tf.import_graph_def(gd, return_elements=["out:0"], name="")
        with tf.Session() as sess:
            assert sess.run(out, {"x:0": 2.0}) == 2.0 * 32 + 6.0
            assert sess.run(out, {"x:0": -1.0}) == -32.0 + 1.0
    assert g2.as_graph_def().SerializeToString(deterministic=True) == gd.SerializeToString(deterministic=True)
