"""Graph construction: names, scopes, devices, control dependencies, collections, finalize."""

import pytest

import sparseflow as tf


def test_unique_names_and_name_scopes():
    a = tf.constant(1.0, name="c")
    b = tf.constant(2.0, name="c")
    assert (a.op.name, b.op.name) == ("c", "c_1")
    with tf.name_scope("block"):
        c = tf.constant(3.0, name="c")
        with tf.name_scope("inner"):
            d = tf.constant(4.0)
    with tf.name_scope("block"):
        e = tf.constant(5.0, name="c")
    assert c.name == "block/c:0"
    assert d.name == "block/inner/Const:0"
    assert e.name == "block_1/c:0"
    with tf.name_scope("block/"):
        f = tf.constant(6.0, name="again")
    assert f.name == "block/again:0"


def test_names_are_case_insensitive_for_uniqueness():
    a = tf.constant(1.0, name="Add")
    b = tf.constant(1.0, name="add")
    assert a.op.name == "Add" and b.op.name == "add_1"


def test_device_scopes_merge_and_canonicalize():
    with tf.device("/job:ps/task:1"):
        with tf.device("/cpu:0"):
            a = tf.constant(1.0)
        b = tf.constant(1.0)
    with tf.device("/device:CPU:0"):
        c = tf.constant(1.0)
        with tf.device(None):
            d = tf.constant(1.0)
    assert a.device == "/job:ps/task:1/device:CPU:0"
    assert b.device == "/job:ps/task:1"
    assert c.device == "/device:CPU:0"
    assert d.device == ""


def test_device_function():
    with tf.device(lambda op: "/cpu:1" if op.type == "Const" else None):
        a = tf.constant(1.0)
        b = tf.placeholder(tf.float32)
    assert a.device == "/device:CPU:1"
    assert b.device == ""


def test_device_stack_runs_innermost_first_like_tensorflow():
    seen = []

    def outer(op):
        seen.append((op.name, op.device, op.outputs[0].shape.as_list() if op.outputs else None))
        return "/job:ps/task:0" if not op.device else op.device

    with tf.device("/job:w/task:9"), tf.device(outer):
        with tf.device("/cpu:1"):
            a = tf.matmul(tf.zeros([2, 3], name="z"), tf.zeros([3, 4]), name="a")
        b = tf.zeros([5], name="b")
        with tf.device(None):
            c = tf.zeros([1], name="c")
    # the function sees what the inner scopes set (and the static shape); outer strings fill gaps
    assert ("a", "/device:CPU:1", [2, 4]) in seen and ("b", "", [5]) in seen
    assert a.device == "/job:w/task:9/device:CPU:1"
    assert b.device == "/job:ps/task:0"
    assert c.device == ""


def test_ops_taking_a_ref_are_colocated_with_the_variable():
    with tf.device("/job:ps/task:1"):
        v = tf.Variable([1.0, 2.0], name="v")
    with tf.device("/job:worker"):
        up = tf.assign_add(v, [1.0, 1.0], name="up")
        read = tf.identity(v, name="r")
    assert up.op.device == "/job:ps/task:1" and up.op.get_attr("_class") == [b"loc:@v"]
    assert read.device == "/job:worker"
    init_ops = [op for op in tf.get_default_graph().get_operations() if op.name.startswith("v/")]
    assert {op.device for op in init_ops} == {"/job:ps/task:1"}


def test_control_dependencies():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        c = tf.identity(b, name="c")
        d = tf.identity(c, name="d")  # its input already depends on a
        with tf.control_dependencies(None):
            e = tf.identity(b, name="e")
    assert [o.name for o in c.op.control_inputs] == ["a"]
    assert d.op.control_inputs == []
    assert e.op.control_inputs == []


def test_colocate_with_sets_class_and_device():
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.colocate_with(a):
        b = tf.identity(a, name="b")
    assert b.op.attrs["_class"] == ["loc:@a"]
    assert b.device == a.device


def test_collections_with_scope_filter():
    a = tf.constant(1.0, name="x/a")
    b = tf.constant(1.0, name="y/b")
    tf.add_to_collection("things", a)
    tf.add_to_collections(["things", "more"], b)
    assert tf.get_collection("things") == [a, b]
    assert tf.get_collection("things", scope="y") == [b]
    tf.get_collection_ref("things").append(1)
    assert len(tf.get_collection("things")) == 3
    assert tf.get_default_graph().get_collection("none") == []


def test_lookup_by_name_and_errors():
    g = tf.get_default_graph()
    a = tf.constant(1.0, name="a")
    assert g.get_tensor_by_name("a:0") is a
    assert g.get_operation_by_name("a") is a.op
    with pytest.raises(KeyError, match="does not exist"):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(ValueError):
        g.get_tensor_by_name("a")
    with pytest.raises(KeyError):
        g.get_tensor_by_name("a:3")


def test_finalize_blocks_new_ops_and_version_counts():
    g = tf.Graph()
    with g.as_default():
        v0 = g.version
        tf.constant(1.0)
        assert g.version == v0 + 1
        g.finalize()
        assert g.finalized
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)


def test_default_graph_stack():
    outer = tf.get_default_graph()
    g = tf.Graph()
    with g.as_default():
        assert tf.get_default_graph() is g
        t = tf.constant(1.0)
    assert tf.get_default_graph() is outer
    assert t.graph is g


def test_mixing_graphs_is_an_error():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0)
    with g2.as_default():
        b = tf.constant(2.0)
        assert tf.identity(a).graph is g1  # like TF1: an op goes to its inputs' graph
        with pytest.raises(ValueError, match="same graph"):
            tf.identity_n([b, a])


def test_creation_site_points_at_user_code():
    c = tf.constant(1.0, name="here")
    site = c.op.creation_site
    assert site.filename == __file__
    assert site.function == "test_creation_site_points_at_user_code"


def test_tensor_is_hashable_and_not_bool():
    a = tf.constant(1.0)
    assert {a: 1}[a] == 1
    with pytest.raises(TypeError):
        bool(a)


def test_graph_prints_stably():
    g = tf.Graph()
    with g.as_default():
        tf.identity(tf.constant(2.0, name="two"), name="out")
    assert str(g).splitlines() == ["%two = Const[dtype=float32, value=float32[][2.]]()",
                                   "%out = Identity[T=float32](two:0)"]
