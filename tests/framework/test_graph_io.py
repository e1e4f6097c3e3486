"""Conversions between Python values and protos (tensors, shapes, attrs), NodeDef/GraphDef export,
GraphIR conversion, function libraries and text format."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes, graph_io
from sparseflow._src.framework.function import FuncGraph, GraphFunction
from sparseflow._src.framework.graph_io import (
    FuncRef,
    attr_for_get_attr,
    attr_value_from_python,
    attr_value_to_python,
    make_ndarray,
    make_tensor_proto,
    shape_from_proto,
    shape_to_proto,
)
from sparseflow._src.framework.ir import GraphIR
from sparseflow._src.framework.proto import attr_value_pb2, tensor_pb2, types_pb2

NUMERIC = [dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16, dtypes.int32,
           dtypes.int64, dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.complex64,
           dtypes.complex128, dtypes.bool]


def _random(dt, shape, rng):
    np_dt = np.dtype(dt.as_numpy_dtype)
    if dt.is_bool:
        return rng.random(shape) > 0.5
    if dt.is_complex:
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np_dt)
    if dt.is_floating:
        return rng.normal(size=shape).astype(np_dt)
    info = np.iinfo(np_dt)
    return rng.integers(info.min, info.max, size=shape, dtype=np_dt, endpoint=True)


# ---------------------------------------------------------------------------------------- tensors
@pytest.mark.parametrize("dt", NUMERIC, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (0, 2), (2, 1, 3)])
def test_tensor_round_trip_every_dtype(dt, shape):
    value = _random(dt, shape, np.random.default_rng(7))
    proto = make_tensor_proto(value)
    assert proto.dtype == dt.as_datatype_enum
    assert [d.size for d in proto.tensor_shape.dim] == list(shape)
    back = make_ndarray(proto)
    assert back.dtype == value.dtype and back.shape == value.shape
    np.testing.assert_array_equal(back, value)
    # TensorFlow's layout: raw bytes for numeric arrays of more than one element.
    uses_content = dt not in (dtypes.bool, dtypes.complex64, dtypes.complex128) and value.size > 1
    assert bool(proto.tensor_content) == uses_content


def test_tensor_content_is_little_endian_raw_bytes():
    value = np.array([[1, -2], [3, 70000]], dtype=np.int32)
    assert make_tensor_proto(value).tensor_content == value.astype("<i4").tobytes()


def test_strings_and_bytes_round_trip():
    value = np.array([[b"a", b"\xff\x00raw"], ["h\u00e9", b""]], dtype=object)
    proto = make_tensor_proto(value)
    assert proto.dtype == types_pb2.DT_STRING
    assert list(proto.string_val) == [b"a", b"\xff\x00raw", b"h\xc3\xa9", b""]
    back = make_ndarray(proto)
    assert back.dtype == object and back.tolist() == [[b"a", b"\xff\x00raw"], [b"h\xc3\xa9", b""]]


def test_half_and_bfloat16_use_16_bit_patterns():
    p = make_tensor_proto(np.float16(1.5))
    assert list(p.half_val) == [np.float16(1.5).view(np.uint16)]
    assert make_ndarray(p) == np.float16(1.5)
    b = make_tensor_proto(np.float32([1.0, -2.5, 3.140625]), dtype=tf.bfloat16)
    assert list(b.half_val) == [0x3F80, 0xC020, 0x4049]
    np.testing.assert_array_equal(make_ndarray(b), np.float32([1.0, -2.5, 3.140625]))


def test_single_value_fills_shape_and_typed_fields_are_padded_with_last_value():
    p = make_tensor_proto(7.0, shape=[2, 3])
    assert list(p.float_val) == [7.0] and not p.tensor_content
    np.testing.assert_array_equal(make_ndarray(p), np.full((2, 3), 7.0, np.float32))
    # A proto written by TensorFlow with fewer typed values than elements repeats the last value.
    tf_written = tensor_pb2.TensorProto(dtype=types_pb2.DT_INT64, int64_val=[1, 2])
    tf_written.tensor_shape.dim.add(size=4)
    assert make_ndarray(tf_written).tolist() == [1, 2, 2, 2]
    empty = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT)
    empty.tensor_shape.dim.add(size=3)
    assert make_ndarray(empty).tolist() == [0.0, 0.0, 0.0]


def test_tensor_proto_errors():
    with pytest.raises(ValueError, match="Too many elements"):
        make_tensor_proto([1, 2, 3], shape=[2])
    with pytest.raises(TypeError, match="shape"):
        make_tensor_proto([1, 2], shape=[1, 2], verify_shape=True)
    with pytest.raises(TypeError):
        make_tensor_proto([1.5], dtype=tf.int32)
    bad = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_content=b"\0" * 8)
    bad.tensor_shape.dim.add(size=3)
    with pytest.raises(ValueError, match="has 8 bytes, but its shape .3. of float32 needs 12"):
        make_ndarray(bad)
    with pytest.raises(TypeError, match="DT_QINT8"):
        make_ndarray(tensor_pb2.TensorProto(dtype=types_pb2.DT_QINT8))


def test_public_make_tensor_proto_and_make_ndarray():
    p = tf.make_tensor_proto([[1, 2], [3, 4]], dtype=tf.int64)
    assert p.dtype == types_pb2.DT_INT64
    assert tf.make_ndarray(p).tolist() == [[1, 2], [3, 4]]


# ---------------------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("shape", [None, [], [3], [None, 3], [None, None], [0, 5, None]])
def test_shape_round_trip_with_unknown_dims(shape):
    proto = shape_to_proto(tf.TensorShape(shape))
    assert proto.unknown_rank == (shape is None)
    if shape is not None:
        assert [d.size for d in proto.dim] == [-1 if d is None else d for d in shape]
    assert shape_from_proto(proto).as_tuple() == (None if shape is None else tuple(shape))


# ---------------------------------------------------------------------------------------- attrs
@pytest.mark.parametrize("value, kind, field", [
    ("SAME", "string", "s"), (b"\xff", "string", "s"), (3, "int", "i"), (-1, None, "i"), (0.5, "float", "f"),
    (True, "bool", "b"), (False, None, "b"), (tf.int64, "type", "type"),
    (tf.TensorShape([None, 2]), "shape", "shape"),
    (tf.TensorShape(None), None, "shape"), (FuncRef("body_fn"), "func", "func"),
])
def test_scalar_attrs_round_trip(value, kind, field):
    av = attr_value_from_python(value, kind)
    assert av.WhichOneof("value") == field
    back = attr_value_to_python(av, kind)
    if isinstance(value, tf.TensorShape):
        assert back.as_tuple() == value.as_tuple()
    else:
        assert back == (value.decode() if value == b"SAME" else value) and type(back) is type(value)
    again = attr_value_from_python(back, kind)
    assert again.SerializeToString(deterministic=True) == av.SerializeToString(deterministic=True)


@pytest.mark.parametrize("value, kind, field", [
    ([1, 2, 3], "list(int)", "i"), ([0.5, 2.0], "list(float)", "f"), (["a", "b"], "list(string)", "s"),
    ([True, False], "list(bool)", "b"), ([tf.float32, tf.int32], "list(type)", "type"),
    ([tf.TensorShape([1]), tf.TensorShape(None)], "list(shape)", "shape"),
    ([FuncRef("f"), FuncRef("g")], "list(func)", "func"),
])
def test_list_attrs_round_trip(value, kind, field):
    av = attr_value_from_python(value, kind)
    assert len(getattr(av.list, field)) == len(value)
    back = attr_value_to_python(av, kind)
    assert [getattr(x, "as_tuple", lambda x=x: x)() for x in back] == \
        [getattr(x, "as_tuple", lambda x=x: x)() for x in value]
    assert attr_value_to_python(av) is not None  # kind inferred from the set field


def test_empty_list_attr_keeps_its_oneof():
    av = attr_value_from_python([], "list(int)")
    assert av.WhichOneof("value") == "list"
    assert attr_value_to_python(attr_value_pb2.AttrValue.FromString(av.SerializeToString())) == []


def test_tensor_attr_is_read_only_array():
    av = attr_value_from_python(np.arange(4, dtype=np.int32))
    arr = attr_value_to_python(av, "tensor")
    assert arr.tolist() == [0, 1, 2, 3] and not arr.flags.writeable


def test_attr_kind_mismatch_is_an_error():
    with pytest.raises(ValueError, match="'string' when 'int' expected"):
        attr_value_to_python(attr_value_from_python("x"), "int")
    with pytest.raises(ValueError, match="no value"):
        attr_value_to_python(attr_value_pb2.AttrValue(), "type")
    empty = attr_value_pb2.AttrValue()
    assert attr_value_to_python(empty) is empty  # undeclared attr: kept untouched for the round trip


def test_attr_for_get_attr_matches_tensorflow_types():
    assert attr_for_get_attr("NHWC") == b"NHWC"
    assert attr_for_get_attr(tf.float32) is tf.float32
    shape = attr_for_get_attr(tf.TensorShape([None, 3]))
    assert [d.size for d in shape.dim] == [-1, 3]
    assert isinstance(attr_for_get_attr(np.float32([1.0])), tensor_pb2.TensorProto)
    assert attr_for_get_attr(["loc:@a", "loc:@b"]) == [b"loc:@a", b"loc:@b"]
    assert attr_for_get_attr(FuncRef("f")).name == "f"
    assert attr_for_get_attr([1, 2]) == [1, 2] and attr_for_get_attr(True) is True


def test_get_attr_on_graph_ops():
    x = tf.placeholder(tf.float32, [None, 3], name="input")
    k = tf.constant(3.0, name="k")
    assert [d.size for d in x.op.get_attr("shape").dim] == [-1, 3]
    assert tf.as_dtype(k.op.get_attr("dtype")).name == "float32"
    assert tf.make_ndarray(k.op.get_attr("value")) == np.float32(3.0)


# ---------------------------------------------------------------------------------------- export
def _sample_graph():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [None, 2], name="x")
        c = tf.constant([[1.0, 2.0]], name="c")
        pair = tf.identity_n([x, c], name="pair")
        with tf.control_dependencies([c]):
            y = tf.identity(pair[1], name="y")
        with g.colocate_with(x.op):
            z = tf.identity(x, name="z")
    return g, x, c, y, z


def test_node_defs_use_tensorflow_input_strings_devices_and_colocation():
    g, x, c, y, z = _sample_graph()
    gd = g.as_graph_def()
    nodes = {n.name: n for n in gd.node}
    assert [n.name for n in gd.node] == [op.name for op in g.get_operations()]  # creation order
    assert list(nodes["pair"].input) == ["x", "c"]
    assert list(nodes["y"].input) == ["pair:1", "^c"]  # "n:k" for k > 0, controls last
    assert nodes["x"].device == "/device:CPU:0"
    assert list(nodes["z"].attr["_class"].list.s) == [b"loc:@x"]
    assert z.op.get_attr("_class") == [b"loc:@x"]
    assert gd.versions.producer == g.graph_def_versions.producer
    assert y.op.node_def == nodes["y"]
    assert x.op.node_def.attr["dtype"].type == types_pb2.DT_FLOAT


def test_control_inputs_come_after_data_inputs():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([b]):
        y = tf.identity(a, name="y")
    assert list(y.op.node_def.input) == ["a", "^b"]


def test_add_shapes():
    _, x, c, y, _ = _sample_graph()
    gd = x.graph.as_graph_def(add_shapes=True)
    shapes = {n.name: [[d.size for d in s.dim] for s in n.attr["_output_shapes"].list.shape] for n in gd.node}
    assert shapes["x"] == [[-1, 2]] and shapes["c"] == [[1, 2]]
    tf.no_op(name="nothing_out")
    gd = x.graph.as_graph_def(add_shapes=True)
    assert gd.node[-1].attr["_output_shapes"].WhichOneof("value") == "list"  # an empty list, not unset
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")  # the recorded shapes are read back, then dropped
    assert g2.as_graph_def() == x.graph.as_graph_def()


def test_graph_def_serialization_is_deterministic_and_parses_back():
    g, *_ = _sample_graph()
    gd = g.as_graph_def()
    blob = gd.SerializeToString(deterministic=True)
    assert g.as_graph_def().SerializeToString(deterministic=True) == blob
    assert tf.GraphDef.FromString(blob) == gd


def test_text_format_round_trip():
    g, *_ = _sample_graph()
    gd = g.as_graph_def()
    text = graph_io.message_to_text(gd)
    assert text.startswith("node {") and 'name: "x"' in text
    assert graph_io.text_to_message(text, tf.GraphDef()) == gd
    assert graph_io.text_to_message(text.encode(), tf.GraphDef()) == gd


def test_graph_ir_round_trip():
    g, *_ = _sample_graph()
    gd = g.as_graph_def()
    ir = GraphIR.from_graph(g)
    ir.versions = gd.versions
    assert graph_io.ir_to_graph_def(ir) == gd
    back = graph_io.graph_def_to_ir(gd)
    assert [n.name for n in back] == [n.name for n in ir]
    y = back.node("y")
    assert y.out_dtypes == [tf.float32] and all(i.count(":") == 1 for i in y.inputs if not i.startswith("^"))
    assert graph_io.ir_to_graph_def(back).SerializeToString(deterministic=True) == \
        gd.SerializeToString(deterministic=True)


# ---------------------------------------------------------------------------------------- functions
def _graph_with_function():
    outer = tf.Graph()
    with outer.as_default():
        offset = tf.constant(10.0, name="offset")
        body = FuncGraph("add_offset", outer)
        with body.as_default():
            v = tf.placeholder(tf.float32, [2], name="v")
            out = tf.identity(v, name="out")
            w = tf.identity(offset, name="w")  # uses an outer tensor: captured as a placeholder
            side = tf.no_op(name="side")
        fn = GraphFunction("add_offset", body, [v], [out, w], [side])
        outer._add_function(fn)
    return outer, fn


def test_function_library_is_written_as_function_defs():
    outer, fn = _graph_with_function()
    gd = outer.as_graph_def()
    assert [f.signature.name for f in gd.library.function] == ["add_offset"]
    fdef = gd.library.function[0]
    assert [a.name for a in fdef.signature.input_arg] == ["v", "w_capture_offset"]
    assert [a.type for a in fdef.signature.input_arg] == [types_pb2.DT_FLOAT, types_pb2.DT_FLOAT]
    assert list(fdef.signature.control_output) == ["side"]
    assert fdef.ret[fdef.signature.output_arg[0].name] == "out:output:0"
    assert fdef.ret[fdef.signature.output_arg[1].name] == "w:output:0"
    assert list(next(n for n in fdef.node_def if n.name == "w").input) == ["w_capture_offset"]
    assert "v" not in [n.name for n in fdef.node_def]  # args are not body nodes
    assert [d.size for d in fdef.arg_attr[0].attr["_output_shapes"].list.shape[0].dim] == [2]


def test_function_library_round_trips_through_import():
    outer, fn = _graph_with_function()
    gd = outer.as_graph_def()
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
    assert sorted(g2._functions) == ["add_offset"]
    fn2 = g2._functions["add_offset"]
    assert [t.op.name for t in fn2.inputs] == ["v", "w_capture_offset"]
    assert [t.op.name for t in fn2.outputs] == ["out", "w"]
    assert [op.name for op in fn2.control_outputs] == ["side"]
    assert fn2.inputs[0].shape.as_list() == [2]
    assert g2.as_graph_def().SerializeToString(deterministic=True) == gd.SerializeToString(deterministic=True)
    ir = graph_io.graph_def_to_ir(gd)
    assert sorted(ir.library) == ["add_offset"]
