"""The remap pass: dense layers' MatMul+BiasAdd(+Relu) and ReluGrad+BiasAddGrad become one node
each, only when no other value is lost; the fused graphs compute what the unfused ones do."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.remap import FUSED_MATMUL, FUSED_RELU_GRAD_BIAS_GRAD, SLICED_MATMUL, remap

F32, I32 = dtypes.float32, dtypes.int32
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def feed(name, shape, dtype=F32):
    return NodeIR(name, "_Feed", [], CPU0, {"T": dtype}, [dtype], [TensorShape(shape)])


def op(name, op_type, inputs, shape, dtype=F32, device=CPU0, outs=1, **attrs):
    attrs.setdefault("T", dtype)
    return NodeIR(name, op_type, list(inputs), device, attrs, [dtype] * outs, [TensorShape(shape)] * outs)


def fetch(i, tensor):
    return NodeIR(f"_fetch_{i}", "_Fetch", [tensor], CPU0, {"index": i, "T": F32})


def dense_layer(add="BiasAdd", device=CPU0):
    return [feed("x", [None, 3]), feed("w", [3, 2]), feed("b", [2]),
            op("m", "MatMul", ["x", "w"], [None, 2], transpose_a=False, transpose_b=False),
            op("a", add, ["m", "b"], [None, 2], device=device), op("r", "Relu", ["a"], [None, 2])]


def run(nodes, **ctx):
    out = remap(GraphIR(nodes), PassContext(**ctx))
    seen = set()
    for n in out:
        for i in n.inputs:
            assert parse_input(i)[0] in seen, f"{n.name} comes before its input {i}"
        seen.add(n.name)
    return out


@pytest.mark.parametrize("add", ["BiasAdd", "AddV2", "Add"])
def test_matmul_bias_relu_becomes_one_node_named_after_the_relu(add):
    out = run(dense_layer(add) + [fetch(0, "r:0")])
    assert [n.name for n in out] == ["x", "w", "b", "r", "_fetch_0"]
    r = out.node("r")
    assert r.op == FUSED_MATMUL and r.inputs == ["x", "w", "b"] and r.attrs["fused_ops"] == ["BiasAdd", "Relu"]


def test_bias_add_without_relu_and_shape_readers_are_rewired():
    nodes = dense_layer()[:5] + [op("s", "Shape", ["m"], [2], dtype=I32), fetch(0, "a:0"), fetch(1, "s:0")]
    out = run(nodes)
    assert out.node("a").op == FUSED_MATMUL and out.node("a").attrs["fused_ops"] == ["BiasAdd"]
    assert out.node("s").inputs == ["a:0"]


@pytest.mark.parametrize("blocker", ["fetched", "other_reader", "other_device"])
def test_values_used_elsewhere_or_other_devices_block_the_rewrite(blocker):
    nodes = dense_layer(device=CPU1 if blocker == "other_device" else CPU0) + [fetch(0, "r:0")]
    if blocker == "fetched":
        nodes.append(fetch(1, "m:0"))
    if blocker == "other_reader":
        nodes.append(op("n", "Neg", ["m"], [None, 2]))
    out = run(nodes)
    assert out.node("m").op == "MatMul" and out.node("r").op == "Relu"


def test_a_bias_add_read_elsewhere_is_fused_without_the_relu():
    out = run(dense_layer() + [op("n", "Neg", ["a"], [None, 2]), fetch(0, "r:0"), fetch(1, "n:0")])
    assert "m" not in out and out.node("a").attrs["fused_ops"] == ["BiasAdd"] and out.node("r").op == "Relu"


def test_a_bias_vector_of_another_length_is_not_a_bias_add():
    nodes = dense_layer("AddV2")
    nodes[2] = feed("b", [1])  # broadcasts, but is not one bias per column
    assert run(nodes + [fetch(0, "r:0")]).node("r").op == "Relu"


def test_relu_grad_and_bias_add_grad_become_one_node_with_two_outputs():
    nodes = [feed("g", [None, 4]), feed("y", [None, 4]), feed("c", []),
             op("rg", "ReluGrad", ["g", "y"], [None, 4]), op("bg", "BiasAddGrad", ["rg", "^c"], [4]),
             op("use", "Neg", ["bg"], [4]), NodeIR("n", "NoOp", ["^bg"], CPU0),
             fetch(0, "rg:0"), fetch(1, "use:0")]
    out = run(nodes, targets=["n"])
    fused = out.node("rg")
    assert fused.op == FUSED_RELU_GRAD_BIAS_GRAD and fused.inputs == ["g", "y", "^c"]
    assert "bg" not in out and out.node("use").inputs == ["rg:1"] and out.node("n").inputs == ["^rg"]


def sliced_product(*extra):
    return [feed("x", [None, 3]), feed("w", [4, 3]), feed("begin", [2], I32), feed("size", [2], I32),
            NodeIR("c", "NoOp", [], CPU0),
            op("m", "MatMul", ["x", "w", "^c"], [None, 4], transpose_a=False, transpose_b=True),
            op("s", "Slice", ["m", "begin", "size"], [None, None], Index=I32), fetch(0, "s:0"), *extra]


def test_a_slice_of_a_product_read_only_there_computes_only_the_slice():
    out = run(sliced_product())
    s = out.node("s")
    assert "m" not in out and s.op == SLICED_MATMUL and s.inputs == ["x", "w", "begin", "size", "^c"]
    assert s.attrs["transpose_b"] and not s.attrs["transpose_a"]


@pytest.mark.parametrize("blocker", ["fetched", "other_reader", "shape_reader"])
def test_a_product_read_elsewhere_is_not_sliced(blocker):
    extra = {"fetched": fetch(1, "m:0"), "other_reader": op("n", "Neg", ["m"], [None, 4]),
             "shape_reader": op("n", "Shape", ["m"], [2], dtype=I32)}[blocker]
    out = run(sliced_product(extra, *([fetch(1, "n:0")] if blocker != "fetched" else [])))
    assert out.node("m").op == "MatMul" and out.node("s").op == "Slice"


def test_the_first_layer_input_gradient_is_computed_for_the_concatenated_inputs_that_need_it():
    """``concat([e, x]) @ w``, differentiated for ``e`` only: the product ``g @ w^T`` is made for
    ``e``'s columns alone (its Reshape then a view), and equals the slice of the full product."""
    rng = np.random.default_rng(2)
    es, xs = rng.standard_normal((300, 8)).astype(np.float32), rng.standard_normal((300, 3)).astype(np.float32)
    ws = rng.standard_normal((11, 5)).astype(np.float32)
    with tf.Graph().as_default():
        e, x = tf.placeholder(tf.float32, [None, 8]), tf.placeholder(tf.float32, [None, 3])
        y = tf.matmul(tf.concat([e, x], 1), tf.constant(ws))
        (ge,) = tf.gradients(tf.reduce_sum(tf.sin(y)), [e])
        ge = tf.reshape(ge, [-1, 4])
        with tf.Session() as sess:
            got = sess.run(ge, {e: es, x: xs})
            explained = sess.explain(ge, {e: es, x: xs})
    assert SLICED_MATMUL in explained
    want = (np.cos(np.concatenate([es, xs], 1).astype(np.float64) @ ws) @ ws.T)[:, :8].reshape(-1, 4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _mlp(x, labels, add_bias):
    rng = np.random.default_rng(0)
    h = x
    for i, n in enumerate([16, 8, 3]):
        w = tf.Variable(rng.standard_normal((h.shape[1], n)).astype(np.float32) * 0.5, name=f"w{i}")
        b = tf.Variable(rng.standard_normal(n).astype(np.float32) * 0.1, name=f"b{i}")
        h = tf.nn.bias_add(tf.matmul(h, w), b) if add_bias == "bias_add" else tf.matmul(h, w) + b
        if i < 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=h))
    return loss, tf.gradients(loss, tf.trainable_variables())


@pytest.mark.parametrize("add_bias", ["bias_add", "plus"])
def test_fused_training_graph_matches_numpy(add_bias):
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((5000, 7)).astype(np.float32)  # large enough for several chunks
    ys = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 5000)]
    with tf.Graph().as_default():
        x, labels = tf.placeholder(tf.float32, [None, 7]), tf.placeholder(tf.float32, [None, 3])
        loss, grads = _mlp(x, labels, add_bias)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(tf.trainable_variables())
            got = sess.run([loss] + grads, {x: xs, labels: ys})
            explained = sess.explain([loss] + grads, {x: xs, labels: ys})
    assert "_FusedMatMul" in explained
    if add_bias == "bias_add":
        assert "_FusedReluGradBiasAddGrad" in explained
    ws, bs = values[0::2], values[1::2]
    acts, pre = [xs.astype(np.float64)], []
    for i in range(3):
        z = acts[-1] @ ws[i] + bs[i]
        pre.append(z)
        acts.append(np.maximum(z, 0) if i < 2 else z)
    p = np.exp(acts[-1] - acts[-1].max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    want_loss = -np.mean(np.sum(ys * np.log(p), 1))
    dz = (p - ys) / len(xs)
    want = []
    for i in (2, 1, 0):
        want = [acts[i].T @ dz, dz.sum(0)] + want
        if i:
            dz = (dz @ ws[i].T) * (pre[i - 1] > 0)
    np.testing.assert_allclose(got[0], want_loss, rtol=1e-5)
    for g, w in zip(got[1:], want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=1e-6)
