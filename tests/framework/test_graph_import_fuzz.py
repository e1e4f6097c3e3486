"""Malformed GraphDefs: every one is refused with sparseflow's error classes or a ValueError/TypeError
that names a node, within a memory cap, and a refused import leaves the graph as it was.

The property test mutates GraphDefs of real graphs (inputs rewired to themselves or to missing
outputs, op types swapped, attrs of the wrong kind or with extreme values, constants with lying
shapes, dtypes and contents); the examples below pin the cases that once escaped as KeyError,
AttributeError, OverflowError or MemoryError.
"""

from __future__ import annotations

import contextlib
import resource
import tracemalloc

import numpy as np
import pytest
from google.protobuf import text_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sparseflow as tf
from sparseflow._src.framework import errors
from sparseflow._src.framework.proto import graph_pb2, tensor_pb2

MEMORY_CAP = 256 << 20  # bytes an import may allocate at its peak
EXTREME_INTS = [-(2**63), -(2**40), -3, -1, 0, 1, 2, 3, 7, 255, 256, 2**31 - 1, 2**31, 2**40, 2**63 - 1]
OP_TYPES = ["Const", "Identity", "AddN", "MatMul", "Reshape", "Split", "Unpack", "Pack", "ConcatV2", "Cast",
            "Placeholder", "Fill", "Tile", "Transpose", "Sum", "Add", "NoOp", "Shape", "StridedSlice",
            "GatherV2", "Select", "ExpandDims", "Squeeze", "OneHot", "Range", "NotAnOp"]


def _seed_graph_defs():
    out = []
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        c = tf.constant([[1.0, 2.0, 3.0]], name="c")
        y = tf.add(x, c, name="y")
        m = tf.matmul(y, tf.transpose(c), name="m")
        parts = tf.split(y, 3, axis=1, name="split")
        total = tf.add_n(parts, name="addn")
        with tf.control_dependencies([m.op]):
            tf.identity(total, name="out")
        tf.reduce_sum(tf.reshape(y, [-1]), name="sum")
        u = tf.unstack(c, axis=1, name="unstack")
        tf.stack(u, name="stack")
        tf.concat([c, c], 0, name="concat")
        tf.cast(tf.constant([1, 2, 250], tf.uint8, name="bytes"), tf.int64, name="cast")
        tf.fill([2, 2], 0.5, name="fill")
        tf.constant(["a", "bc"], name="strings")
    out.append(g.as_graph_def())
    with tf.Graph().as_default() as g:
        a = tf.constant(np.arange(6, dtype=np.int32).reshape(2, 3), name="a")
        tf.gather(a, tf.constant([1, 0]), axis=0, name="gather")
        tf.tile(a, [2, 1], name="tile")
        tf.expand_dims(a, 0, name="expand")
        tf.one_hot(tf.constant([0, 2]), 3, name="onehot")
    out.append(g.as_graph_def())
    return out


SEEDS = _seed_graph_defs()


def _tensor(draw):
    t = tensor_pb2.TensorProto(dtype=draw(st.sampled_from([1, 2, 3, 4, 5, 6, 7, 9, 10, 17, 19, 22, 23, 0, 101])))
    for d in draw(st.lists(st.sampled_from([-5, -1, 0, 1, 2, 3, 2**20, 2**31, 2**40, 2**62]), max_size=3)):
        t.tensor_shape.dim.add(size=d)
    kind = draw(st.sampled_from(["int", "int64", "float", "content", "string", "empty", "uint64"]))
    if kind == "int":
        t.int_val.extend(draw(st.lists(st.sampled_from([v for v in EXTREME_INTS if -2**31 <= v < 2**31]),
                                       max_size=4)))
    elif kind == "int64":
        t.int64_val.extend(draw(st.lists(st.sampled_from(EXTREME_INTS), max_size=4)))
    elif kind == "uint64":
        t.uint64_val.extend(draw(st.lists(st.sampled_from([0, 1, 2**63, 2**64 - 1]), max_size=4)))
    elif kind == "float":
        t.float_val.extend(draw(st.lists(st.sampled_from([0.0, -1.5, 1e30, float("nan")]), max_size=4)))
    elif kind == "content":
        t.tensor_content = draw(st.binary(max_size=40))
    elif kind == "string":
        t.string_val.extend(draw(st.lists(st.binary(max_size=5), max_size=3)))
    return t


@st.composite
def malformed_graph_defs(draw):
    gd = graph_pb2.GraphDef()
    gd.CopyFrom(draw(st.sampled_from(SEEDS)))
    names = [n.name for n in gd.node]
    consts = [n for n in gd.node if n.op == "Const"]
    for _ in range(draw(st.integers(1, 3))):
        what = draw(st.sampled_from(["tensor"] * 4 + ["attr"] * 4 + ["input"] * 3 + ["op"] * 2 +
                                    ["drop_attr", "add_input", "device", "duplicate", "rename"]))
        pool = consts if what == "tensor" else gd.node
        node = pool[draw(st.integers(0, len(pool) - 1))]
        if what in ("input", "add_input"):
            target = draw(st.sampled_from(names + [node.name, "missing"]))
            ref = draw(st.sampled_from([target, f"{target}:1", f"{target}:99", f"^{target}", f"{target}:-1",
                                        "", ":", f"{target}:x:1"]))
            if what == "input" and node.input:
                node.input[draw(st.integers(0, len(node.input) - 1))] = ref
            else:
                node.input.append(ref)
        elif what == "op":
            node.op = draw(st.sampled_from(OP_TYPES))
        elif what == "attr":
            key = draw(st.sampled_from(sorted(node.attr) + ["N", "T", "dtype", "value", "shape", "num_split",
                                                             "num", "axis"]))
            av = node.attr[key]
            av.Clear()
            kind = draw(st.sampled_from(["i", "list_i", "list_tensor", "tensor", "s", "type", "shape", "b", "f"]))
            if kind == "i":
                av.i = draw(st.sampled_from(EXTREME_INTS))
            elif kind == "list_i":
                av.list.i.extend(draw(st.lists(st.sampled_from(EXTREME_INTS), max_size=3)))
            elif kind == "list_tensor":
                av.list.tensor.add().CopyFrom(_tensor(draw))
            elif kind == "tensor":
                av.tensor.CopyFrom(_tensor(draw))
            elif kind == "s":
                av.s = draw(st.binary(max_size=6))
            elif kind == "type":
                av.type = draw(st.sampled_from([0, 1, 3, 4, 7, 9, 20, 21, 99, 101, 120]))
            elif kind == "shape":
                for d in draw(st.lists(st.sampled_from([-7, -1, 0, 3, 2**40, 2**63 - 1]), max_size=3)):
                    av.shape.dim.add(size=d)
            elif kind == "b":
                av.b = True
            else:
                av.f = float("inf")
        elif what == "tensor" and "value" in node.attr:
            node.attr["value"].tensor.CopyFrom(_tensor(draw))
        elif what == "drop_attr" and node.attr:
            del node.attr[draw(st.sampled_from(sorted(node.attr)))]
        elif what == "duplicate":
            gd.node.add().CopyFrom(node)
        elif what == "rename":
            node.name = draw(st.sampled_from(["", "a b", "bad^name", "_lead", "ok/name", names[0]]))
        elif what == "device":
            node.device = draw(st.sampled_from(["/job:x/task:-1", "/device:GPU:99", "garbage", "/cpu:0"]))
    return gd


@contextlib.contextmanager
def _address_space_cap(extra: int = 1 << 30):
    """Lets the process grow by at most ``extra`` bytes of data (a larger allocation is a MemoryError,
    not a machine out of memory); the old limit is back afterwards."""
    with open("/proc/self/status") as f:
        vm_data = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = vm_data + extra
    resource.setrlimit(resource.RLIMIT_DATA, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _snapshot(g):
    ops = g.get_operations()
    return ([op.name for op in ops], [[c.name for t in op.outputs for c in t.consumers()] for op in ops],
            [[c.name for c in op._control_outputs] for op in ops], dict(g._names_in_use), sorted(g._functions))


def _import_checked(gd):
    """Imports ``gd`` into a graph with two ops of its own; checks what escapes, the memory peak,
    and that a refused import leaves the graph as it was."""
    names = {n.name for n in gd.node}
    with tf.Graph().as_default() as g:
        pre = tf.constant(1.0, name="pre")
        tf.identity(pre, name="pre_id")
        before = _snapshot(g)
        tracemalloc.start()
        failed = None
        try:
            with _address_space_cap():
                tf.import_graph_def(gd, name="")
                g.as_graph_def()  # and the imported graph can be written out again
        except errors.OpError as e:
            failed = e
        except (ValueError, TypeError) as e:
            msg = str(e)
            assert any(n and n in msg for n in names) or "''" in msg, f"{type(e).__name__} names no node: {msg}"
            failed = e
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert peak < MEMORY_CAP, f"the import allocated {peak} bytes"
        if failed is not None:
            assert _snapshot(g) == before, f"a refused import ({failed}) changed the graph"
    return failed


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(malformed_graph_defs())
def test_malformed_graph_defs_are_refused_cleanly(gd):
    _import_checked(gd)


def _parse(text):
    gd = graph_pb2.GraphDef()
    text_format.Parse(text, gd)
    return gd


_FLOAT = 'attr { key: "T" value { type: DT_FLOAT } }'
_X = 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }'


@pytest.mark.parametrize("text, kind, pattern", [
    (f'node {{ name: "a" op: "Identity" input: "a" {_FLOAT} }}', ValueError, r"Node 'a' is its own input"),
    ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
     'attr { key: "value" value { list { i: 1 } } } }', ValueError,
     r"Node 'c' \(op Const\): attr 'value': AttrValue had value with type 'list' when 'tensor' expected"),
    ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_UINT8 } } attr { key: "value" value { '
     'tensor { dtype: DT_UINT8 tensor_shape { dim { size: 1 } } int_val: -3 } } } }', ValueError,
     r"Node 'c'.*uint8 holds the value -3, outside the range of uint8"),
    (f'{_X} node {{ name: "s" op: "AddN" input: "x" attr {{ key: "N" value {{ i: 1099511627776 }} }} {_FLOAT} }}',
     ValueError, r"Node 's' \(op AddN\).*'N' = 1099511627776.*must be an int in \[0, 65536\]"),
    ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { '
     'tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1099511627776 } } float_val: 1.0 float_val: 2.0 } } } }',
     ValueError, r"Node 'c'.*2 values of float32 for shape \[1099511627776\].*store it in tensor_content"),
    (f'{_X} node {{ name: "u" op: "Unpack" input: "x" attr {{ key: "num" value {{ i: 1099511627776 }} }} {_FLOAT} }}',
     ValueError, r"Node 'u' \(op Unpack\).*'num' = 1099511627776"),
])
def test_known_malformed_graph_defs(text, kind, pattern):
    with pytest.raises(kind, match=pattern):
        tf.import_graph_def(_parse(text), name="")
    assert isinstance(_import_checked(_parse(text)), kind)


def test_a_one_value_constant_of_a_huge_shape_is_imported_without_expanding_it():
    gd = _parse('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" '
                'value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1099511627776 } } float_val: 1.0 } } } }')
    assert _import_checked(gd) is None
    with tf.Graph().as_default() as g:
        (c,) = tf.import_graph_def(gd, name="", return_elements=["c:0"])
        assert c.shape.as_list() == [2**40]
        assert g.as_graph_def().node[0].attr["value"].tensor.float_val == [1.0]  # written out compact again
        with tf.Session() as sess:
            assert sess.run(c[5]) == 1.0  # a run that needs one element reads one element


def test_a_failed_shape_function_leaves_no_consumer_behind():
    with tf.Graph().as_default() as g:
        a = tf.constant([[1.0, 2.0]], name="a")
        before = _snapshot(g)
        gd = _parse('node { name: "m" op: "MatMul" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }')
        with pytest.raises(ValueError, match="'m'"):
            tf.import_graph_def(gd, input_map={"a:0": a}, name="")
        assert _snapshot(g) == before and a.consumers() == []
