"""Assertions, numerics checks, Print/print and py_func give TensorFlow's results, names, printed
text and errors (recorded in debugging_expected.py by tests/record_tf_reference.py from
debugging_programs.py); py_func runs only in the client's process."""

import numpy as np
import pytest

import sparseflow as tf
from tests.ops import debugging_expected as expected
from tests.ops import debugging_programs as programs

FAMILIES = {"assertions": expected.ASSERTIONS, "numerics": expected.NUMERICS, "printing": expected.PRINTING,
            "python_functions": expected.PYTHON_FUNCTIONS}


@pytest.fixture(scope="module")
def results():
    return {name: getattr(programs, name)(tf) for name in FAMILIES}


@pytest.mark.parametrize("family,key", [(f, k) for f, values in FAMILIES.items() for k in sorted(values)])
def test_matches_tensorflow(results, family, key):
    assert results[family][key] == FAMILIES[family][key]


def test_print_and_asserts_summarize_nested_tensors_like_tensorflow(capsys):
    x = tf.constant(np.arange(8).reshape(2, 2, 2))
    p = tf.Print(x, [x, tf.constant("a\nb")], summarize=5)
    with tf.Session() as sess:
        sess.run(p)
        assert capsys.readouterr().err == "[[[0 1][2 3]][[4...]]...][a\\nb]\n"
        sess.run(tf.print(x, tf.constant([True, False]), output_stream=tf.logging.info))


def test_print_rejects_unknown_streams_and_string_format_counts_placeholders():
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print("x", output_stream="stdout")
    with pytest.raises(ValueError, match="2 placeholders"):
        tf.strings.format("{} and {}", [tf.constant(1)])
    with tf.Session() as sess:
        assert sess.run(tf.strings.format("v={}!", tf.constant([1.5, 2.0]))) == b"v=[1.5 2]!"


def test_py_func_errors_map_to_tensorflows_and_carry_the_traceback():
    def raise_(kind):
        def f():
            raise kind("boom")
        return f

    cases = [(StopIteration, tf.errors.OutOfRangeError), (NotImplementedError, tf.errors.UnimplementedError),
             (KeyError, tf.errors.UnknownError), (TypeError, tf.errors.InvalidArgumentError)]
    with tf.Session() as sess:
        for kind, error in cases:
            with pytest.raises(error) as info:
                sess.run(tf.py_func(raise_(kind), [], tf.int32))
            assert info.value.message.startswith(f"{kind.__name__}: ") and "Traceback" in info.value.message
        with pytest.raises(tf.errors.InvalidArgumentError, match="returns 1 values, but expects to see 2"):
            sess.run(tf.py_func(lambda: np.int32(1), [], [tf.int32, tf.int32]))
        op = tf.py_func(lambda: None, [], [])
        assert op.type == "PyFunc" and sess.run(op) is None


def test_py_func_is_refused_on_another_task_and_in_a_process_without_its_function():
    from sparseflow._src.framework import py_function_registry as script_ops
    from sparseflow._src.framework.ir import GraphIR
    from sparseflow._src.runtime.master import _refuse_client_only_nodes

    y = tf.py_func(lambda a: a * 2, [tf.constant([1.0])], tf.float32, name="doubler")
    node = tf.get_default_graph().as_graph_def()
    ir = GraphIR.from_graph(tf.get_default_graph())
    remote = ir.node("doubler").copy(device="/job:ps/replica:0/task:0/device:CPU:0")
    with pytest.raises(tf.errors.InvalidArgumentError, match="PyFunc node 'doubler' is placed on /job:ps.*client"):
        _refuse_client_only_nodes({"/job:ps/replica:0/task:0": [remote]}, "/job:worker/replica:0/task:0")
    # The same GraphDef in a graph (or process) that never registered the function: refused by name.
    with tf.Graph().as_default():
        token = [n for n in node.node if n.name == "doubler"][0].attr["token"].s.decode()
        func = script_ops._FUNCTIONS.pop(token)
        try:
            tf.import_graph_def(node, name="")
            with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="not registered in this"):
                sess.run("doubler:0")
        finally:
            script_ops._FUNCTIONS[token] = func
    with tf.Session() as sess:
        assert sess.run(y).tolist() == [2.0]
