"""constant_fold: constant subgraphs become Consts named like the node they replace."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.ir import GraphIR, NodeIR, parse_input
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.passes.constant_fold import MAX_CONSTANT_BYTES, constant_fold
from sparseflow._src.passes.context import PassContext
from sparseflow._src.runtime.master import evaluate_constant_subgraph as _evaluate_constant_subgraph

F32, I32 = dtypes.float32, dtypes.int32

# Fusion would replace the nodes these tests read in explain(); TF users turn it off the same way.
_NO_FUSION = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.OFF)))


def const(name, value, dtype=F32, inputs=()):
    arr = np.asarray(value, dtype=dtype.as_numpy_dtype)
    return NodeIR(name, "Const", list(inputs), "", {"value": arr, "dtype": dtype}, [dtype],
                  [TensorShape(arr.shape)])


def op(name, op_type, inputs, dtype=F32, shape=(), **attrs):
    return NodeIR(name, op_type, list(inputs), "", {"T": dtype, **attrs}, [dtype],
                  [TensorShape(shape) if shape is not None else TensorShape(None)])


def placeholder(name, shape, dtype=F32):
    return NodeIR(name, "Placeholder", [], "", {"dtype": dtype, "shape": TensorShape(shape)}, [dtype],
                  [TensorShape(shape)])



class FakeEvaluator:
    """A NumPy interpreter of the few op types these tests fold; records each call."""

    FNS = {"Identity": lambda x: x, "StopGradient": lambda x: x, "IdentityN": lambda *xs: xs,
           "AddV2": np.add, "Neg": np.negative}

    def __init__(self, fail=()):
        self.calls = []
        self.fail = set(fail)

    def __call__(self, ir, fetches):
        self.calls.append(list(fetches))
        needed, stack = set(), [parse_input(f)[0] for f in fetches]
        while stack:  # only what the fetches need, like the runtime's evaluator
            name = stack.pop()
            if name not in needed:
                needed.add(name)
                stack.extend(parse_input(i)[0] for i in ir.node(name).inputs)
        vals = {}
        for n in ir.topological_order():
            if n.name not in needed:
                continue
            if n.name in self.fail:
                raise ValueError(f"cannot compute {n.name}")
            if n.op == "Const":
                out = (n.attrs["value"],)
            else:
                res = self.FNS[n.op](*[vals[i] for i in n.data_inputs])
                out = res if isinstance(res, tuple) else (res,)
            for k, v in enumerate(out):
                vals[f"{n.name}:{k}"] = v
        return [vals[f] for f in fetches]


def ctx_with(evaluate, fetches=(), targets=()):
    return PassContext(fetches=list(fetches), targets=list(targets), evaluate=evaluate)


def test_constant_chain_becomes_one_const_with_the_fetched_name():
    g = GraphIR([const("c", [1.0, 2.0]), op("i1", "Identity", ["c:0"], shape=[2]),
                 op("y", "StopGradient", ["i1:0"], shape=[2])])
    out = constant_fold(g, ctx_with(_evaluate_constant_subgraph, ["y:0"]))
    assert [n.name for n in out] == ["y"]
    y = out.node("y")
    assert y.op == "Const" and y.out_dtypes == [F32] and y.out_shapes[0].as_list() == [2]
    np.testing.assert_array_equal(y.attrs["value"], [1.0, 2.0])
    assert not y.attrs["value"].flags.writeable


def test_folded_node_keeps_device_site_and_colocation():
    y = op("y", "Identity", ["c:0"], _class=["loc:@c"]).copy(device="/cpu:1", site="model.py:7")
    out = constant_fold(GraphIR([const("c", 3.0), y]), ctx_with(FakeEvaluator(), ["y:0"]))
    folded = out.node("y")
    assert (folded.op, folded.device, folded.site) == ("Const", "/cpu:1", "model.py:7")
    assert folded.attrs["_class"] == ["loc:@c"]


def test_only_the_frontier_is_evaluated_in_one_call():
    ev = FakeEvaluator()
    p = placeholder("p", [])
    g = GraphIR([const("c", 1.0), p, op("a", "Identity", ["c:0"]), op("b", "Neg", ["a:0"]),
                 op("y", "IdentityN", ["b:0", "p:0"], T=[F32, F32])])
    out = constant_fold(g, ctx_with(ev, ["y:0"]))
    assert ev.calls == [["b:0"]]
    assert [n.name for n in out] == ["p", "b", "y"]
    assert out.node("b").op == "Const"


def test_control_inputs_of_the_folded_subgraph_are_kept():
    n1, n2 = NodeIR("n1", "NoOp", []), NodeIR("n2", "NoOp", [])
    g = GraphIR([n1, n2, const("c", 1.0, inputs=["^n1"]), op("a", "Identity", ["c:0", "^n2"]),
                 op("y", "Identity", ["a:0"])])
    out = constant_fold(g, ctx_with(FakeEvaluator(), ["y:0"]))
    assert out.node("y").op == "Const"
    assert sorted(out.node("y").control_inputs) == ["n1", "n2"]
    assert "a" not in out and "c" not in out


def test_control_edge_to_a_dropped_interior_node_moves_to_what_it_waited_for():
    n1 = NodeIR("n1", "NoOp", [])
    g = GraphIR([n1, const("c", 1.0), op("a", "Identity", ["c:0", "^n1"]), op("y", "Identity", ["a:0"]),
                 NodeIR("t", "NoOp", ["^a"])])
    out = constant_fold(g, ctx_with(FakeEvaluator(), ["y:0"], ["t"]))
    assert "a" not in out
    assert out.node("t").inputs == ["^n1"]


def test_shape_size_rank_of_known_static_shapes_are_materialized_with_a_control_edge():
    p = placeholder("p", [2, 3])
    q = placeholder("q", [None, 3])
    g = GraphIR([p, q, op("s", "Shape", ["p:0"], I32, [2], out_type=I32),
                 op("n", "Size", ["p:0"], I32, out_type=I32), op("r", "Rank", ["q:0"], I32),
                 op("sq", "Shape", ["q:0"], I32, [2], out_type=I32)])
    ev = FakeEvaluator()
    out = constant_fold(g, ctx_with(ev, ["s:0", "n:0", "r:0", "sq:0"]))
    assert ev.calls == []  # materialized from static shapes, nothing evaluated
    np.testing.assert_array_equal(out.node("s").attrs["value"], [2, 3])
    assert out.node("s").attrs["value"].dtype == np.int32 and out.node("s").inputs == ["^p"]
    assert out.node("n").attrs["value"] == 6 and out.node("r").attrs["value"] == 2
    assert out.node("sq").op == "Shape"  # [None, 3] is not fully known


def test_placeholders_stateful_and_random_ops_are_not_folded():
    g = GraphIR([placeholder("p", []), op("a", "Identity", ["p:0"]), const("c", 1.0),
                 op("b", "Identity", ["c:0"])])
    ev = FakeEvaluator()
    out = constant_fold(g, PassContext(fetches=["a:0", "b:0"], evaluate=ev, stateful_ops={"Identity"}))
    assert out is g and ev.calls == []


def test_random_op_with_constant_shape_is_not_folded():
    r = NodeIR("r", "RandomUniform", ["shape:0"], "", {"T": I32, "dtype": F32, "seed": 0, "seed2": 0}, [F32],
               [TensorShape([2])])
    g = GraphIR([const("shape", [2], I32), r])
    assert constant_fold(g, ctx_with(FakeEvaluator(), ["r:0"])) is g


def test_a_failing_node_is_left_for_the_kernel_and_the_rest_still_folds():
    g = GraphIR([const("c", 1.0), op("bad", "Identity", ["c:0"]), op("good", "StopGradient", ["c:0"])])
    ev = FakeEvaluator(fail={"bad"})
    out = constant_fold(g, ctx_with(ev, ["bad:0", "good:0"]))
    assert out.node("bad").op == "Identity" and out.node("good").op == "Const"
    assert out.node("bad").inputs == ["c:0"] and "c" in out


def test_one_failure_among_many_is_found_with_few_evaluations():
    goods = [op(f"g{i}", "Identity", ["c:0"]) for i in range(15)]
    g = GraphIR([const("c", 1.0), *goods[:7], op("bad", "Identity", ["c:0"]), *goods[7:]])
    ev = FakeEvaluator(fail={"bad"})
    out = constant_fold(g, ctx_with(ev, [f"{n.name}:0" for n in g if n.name != "c"]))
    assert all(out.node(n.name).op == "Const" for n in goods) and out.node("bad").op == "Identity"
    assert len(ev.calls) <= 1 + 2 * 4 + 1  # bisection over 16, then the refold round


def test_outputs_larger_than_the_limit_are_not_folded():
    n = MAX_CONSTANT_BYTES // 4 + 1
    big_static = op("big", "Identity", ["z:0"], shape=[n])
    g = GraphIR([const("z", np.zeros(n, np.float32)), big_static])
    ev = FakeEvaluator()
    assert constant_fold(g, ctx_with(ev, ["big:0"])) is g and ev.calls == []
    # unknown static shape: evaluated, found too large, left alone
    g2 = GraphIR([const("z", np.zeros(n, np.float32)), op("big", "Identity", ["z:0"], shape=None)])
    out = constant_fold(g2, ctx_with(FakeEvaluator(), ["big:0"]))
    assert out.node("big").op == "Identity"


def test_multi_output_node_folds_per_used_output_and_keeps_a_fetched_name():
    p = placeholder("p", [])
    n = NodeIR("n", "IdentityN", ["a:0", "b:0"], "", {"T": [F32, I32]}, [F32, I32],
               [TensorShape([]), TensorShape([])])
    y = op("y", "IdentityN", ["n:1", "p:0"], T=[I32, F32])
    g = GraphIR([const("a", 1.5), const("b", 7, I32), p, n, y])
    out = constant_fold(g, ctx_with(FakeEvaluator(), ["y:0"]))
    assert "n" not in out and out.node("y").inputs == ["n/_folded_1:0", "p:0"]
    assert out.node("n/_folded_1").attrs["value"] == 7
    out2 = constant_fold(g, ctx_with(FakeEvaluator(), ["y:0", "n:0"]))
    assert out2.node("n").op == "IdentityN"
    assert out2.node("n").inputs == ["n/_folded_0:0", "n/_folded_1:0"]


def test_without_an_evaluator_nothing_changes():
    g = GraphIR([const("c", 1.0), op("y", "Identity", ["c:0"])])
    assert constant_fold(g, PassContext(fetches=["y:0"])) is g


def test_real_evaluator_folds_arithmetic():
    g = GraphIR([const("a", [1.0, 2.0]), const("b", 3.0), op("m", "Mul", ["a:0", "b:0"], shape=[2]),
                 op("y", "AddV2", ["m:0", "b:0"], shape=[2])])
    out = constant_fold(g, ctx_with(_evaluate_constant_subgraph, ["y:0"]))
    assert [n.name for n in out] == ["y"]
    np.testing.assert_array_equal(out.node("y").attrs["value"], [6.0, 9.0])


# ---------------------------------------------------------------------------- end to end
def test_session_folds_constants_and_keeps_results():
    x = tf.placeholder(tf.float32, [2], name="x")
    k = tf.constant(2.0) * 3.0 + 1.0
    y = tf.identity(x * k, name="y")
    with tf.Session(config=_NO_FUSION) as sess:
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [7.0, 14.0])
        np.testing.assert_allclose(sess.run(k), 7.0)
        text = sess.explain(y, {x: [1.0, 2.0]})
    assert f"%{k.op.name} = Const[" in text
    assert "constant_fold(" in text


def test_session_folded_node_still_runs_after_its_control_dependency():
    v = tf.placeholder(tf.float32, [], name="v")
    side = tf.identity(v, name="side")
    with tf.control_dependencies([side]):
        c = tf.add(tf.constant(1.0), 2.0, name="c")
    with tf.Session() as sess:
        text = sess.explain(c, {v: 1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed"):
            sess.run(c)  # the folded Const still waits for `side`, which needs the placeholder
        assert sess.run(c, {v: 1.0}) == 3.0
    line = next(li for li in text.splitlines() if li.startswith("%c = "))
    assert line.startswith("%c = Const[") and "^side" in line
