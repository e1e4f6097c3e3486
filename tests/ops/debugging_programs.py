"""Debugging ops and Python functions built and run with any TF1-style module ``tf``:
tests/record_tf_reference.py records TensorFlow's results into debugging_expected.py,
test_debugging_ops.py runs them with sparseflow. Printed text is captured at the file-descriptor
level (TensorFlow's kernels write to the process's stdout/stderr, not to Python's streams)."""

import contextlib
import os
import re
import sys
import tempfile

import numpy as np


@contextlib.contextmanager
def captured(fd):
    """Collects what is written to file descriptor ``fd`` (1 or 2), and to ``sys.stdout``/``sys.stderr``
    (which a test runner may have replaced), into ``out[0]``."""
    out = [""]
    name = "stdout" if fd == 1 else "stderr"
    old = getattr(sys, name)
    old.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), fd)
        stream = open(fd, "w", closefd=False)  # noqa: SIM115 - closed below
        setattr(sys, name, stream)
        try:
            yield out
        finally:
            stream.flush()
            stream.close()
            setattr(sys, name, old)
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            out[0] = tmp.read().decode()


def error_line(e) -> str:
    """The line that states the problem (TensorFlow wraps it in others); py_func tokens numbered N."""
    for line in str(getattr(e, "message", e)).splitlines():
        if line and not line.startswith(("Graph execution error", "Detected at", " ", "\t", "Node:")):
            return re.sub(r"pyfunc_\d+", "pyfunc_N", line)
    return ""


def _outcome(fn):
    """``ok`` (with the value) or the error's type and first line."""
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - the error is the result
        return [type(e).__name__, error_line(e)]
    if value is None:
        return ["ok"]
    return ["ok", np.asarray(value).tolist()]


def assertions(tf):
    out = {}
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        i = tf.placeholder(tf.int32, [None], name="i")
        checks = {
            "equal": tf.assert_equal(x, [1.0, 2.0]),
            "equal_message": tf.assert_equal(x, [1.0, 2.0], message="custom", summarize=1),
            "none_equal": tf.assert_none_equal(x, 0.0),
            "less": tf.assert_less(x, 2.0),
            "less_equal": tf.assert_less_equal(x, 2.0),
            "greater": tf.assert_greater(x, 0.0),
            "greater_equal": tf.assert_greater_equal(x, 1.0),
            "positive": tf.assert_positive(x),
            "negative": tf.assert_negative(x, message="neg"),
            "non_negative": tf.assert_non_negative(x),
            "non_positive": tf.assert_non_positive(x),
            "near": tf.assert_near(x, [1.0, 2.0001], rtol=1e-3, atol=0.0),
            "rank": tf.assert_rank(i, 1),
            "debugging_equal": tf.debugging.assert_equal(i, 3),
        }
        # The scope of each check (TensorFlow guards its Assert with a cond; sparseflow runs it directly).
        out["names"] = {k: op.name.split("/Assert/")[0] for k, op in checks.items()}
        with tf.Session() as sess:
            for feed in ([1.0, 2.0], [1.0, 3.0], [-1.0, 0.5]):
                for k, op in sorted(checks.items()):
                    fd = {x: feed, i: [3, 3]}
                    out[f"run_{k}_{feed}"] = _outcome(lambda op=op, fd=fd: sess.run(op, fd))
        # Checks decided while building the graph: static values, static ranks and dtypes.
        static = {
            "equal_static_fail": lambda: tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3])),
            "less_static_fail": lambda: tf.assert_less(tf.constant(3.0), 2.0, message="too big"),
            "rank_static_fail": lambda: tf.assert_rank(tf.zeros([2, 3]), 1, message="m"),
            "rank_at_least_static_fail": lambda: tf.assert_rank_at_least(tf.zeros([2]), 2),
            "rank_in_static_fail": lambda: tf.assert_rank_in(tf.zeros([2]), (0, 2)),
            "type_fail": lambda: tf.assert_type(tf.zeros([2]), tf.int32),
            "integer_fail": lambda: tf.assert_integer(tf.zeros([2])),
            "scalar_fail": lambda: tf.assert_scalar(tf.zeros([2])),
            "proper_iterable_fail": lambda: tf.assert_proper_iterable("abc"),
        }
        for k, fn in sorted(static.items()):
            out[k] = _outcome(fn)
        out["static_ok_names"] = [tf.assert_rank(tf.zeros([2, 3]), 2).name,
                                  tf.assert_type(tf.zeros([2]), tf.float32).name,
                                  tf.assert_integer(tf.zeros([2], tf.int64)).name,
                                  tf.assert_scalar(tf.constant(1.0)).name]
        with tf.Session() as sess:
            checks = [tf.is_non_decreasing([1, 2, 2]), tf.is_non_decreasing([3, 1]),
                      tf.is_strictly_increasing([1, 2, 2]), tf.is_strictly_increasing([1.0, 2.5])]
            out["is_non_decreasing"] = [bool(v) for v in sess.run(checks)]
        out["is_numeric_tensor"] = [tf.is_numeric_tensor(tf.constant(1.0)), tf.is_numeric_tensor(tf.constant("a")),
                                    tf.is_numeric_tensor(3.0)]
    return out


def numerics(tf):
    out = {}
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.log(x, name="log")
        z = tf.reduce_sum(y * 2.0, name="total")
        check = tf.add_check_numerics_ops()
        out["check_name"] = [check.name, check.type]
        out["check_ops"] = sorted(op.name for op in tf.get_default_graph().get_operations()
                                  if op.type == "CheckNumerics")
        g = tf.gradients(tf.check_numerics(y, "y bad"), x)[0]
        with tf.Session() as sess:
            out["ok"] = _outcome(lambda: sess.run([z, check], {x: [1.0, 2.0]})[0])
            out["nan"] = _outcome(lambda: sess.run([z, check], {x: [-1.0, 2.0]}))
            out["inf"] = _outcome(lambda: sess.run([z, check], {x: [0.0, 2.0]}))
            out["grad_nan"] = _outcome(lambda: sess.run(g, {x: [0.0, 2.0]}))
    return out


def printing(tf):
    out = {}
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None], name="x")
        p = tf.Print(x, [x, tf.shape(x), "text"], message="x is ", summarize=4)
        p2 = tf.Print(x, [x], message="first: ", first_n=2)
        out["print_names"] = [p.name, p.op.type, p2.name]
        with tf.Session() as sess:
            with captured(2) as err:
                value = sess.run(p, {x: [[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]]})
                for _ in range(3):
                    sess.run(p2, {x: [[7.0]]})
            out["print_value"] = value.tolist()
            out["print_stderr"] = err[0]
            g = tf.gradients(tf.reduce_sum(p * 3.0), x)[0]
            out["print_grad"] = sess.run(g, {x: [[1.0, 2.0]]}).tolist()

        ints = tf.constant(np.arange(12).reshape(3, 4))
        ops = {
            "stderr": tf.print("a", tf.constant([1.5, 2.0]), 7, {"k": tf.constant(3)}),
            "stdout": tf.print(ints, output_stream=sys.stdout),
            "summarize": tf.print(tf.range(10), summarize=2, output_stream=sys.stdout),
            "summarize_all": tf.print(tf.range(10), summarize=-1, output_stream=sys.stdout),
            "sep_end": tf.print("x", tf.constant(True), tf.constant("s"), sep="|", end="!\n",
                                output_stream=sys.stdout),
            "floats": tf.print(tf.constant([[0.1, -2.25e-5], [1e10, 3.0]]), output_stream=sys.stdout),
            "scalar": tf.print(tf.constant(2.5, tf.float64), tf.constant(-3, tf.int64), output_stream=sys.stdout),
        }
        out["print_v2_names"] = {k: [op.name, op.type] for k, op in ops.items()}
        with tf.Session() as sess:
            for k, op in sorted(ops.items()):
                with captured(1) as o, captured(2) as e:
                    sess.run(op)
                out[f"print_v2_{k}"] = [o[0], e[0]]
            path = os.path.join(tempfile.mkdtemp(), "printed.txt")
            sess.run(tf.print("to file", tf.constant([1, 2]), output_stream="file://" + path))
            out["print_v2_file"] = open(path).read()
    return out


def python_functions(tf):
    out = {}
    calls = []

    def scale(a, b):
        calls.append(a.dtype.name)
        return (a * b).astype(np.float32), np.int64(a.size)

    def to_upper(s):
        return np.array([w.upper() for w in s.ravel()], dtype=object).reshape(s.shape)

    def fail(a):
        raise ValueError(f"bad value {int(a)}")

    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None], name="a")
        y, n = tf.py_func(scale, [a, 2.0], [tf.float32, tf.int64], name="scale")
        single = tf.py_func(lambda v: v + 1, [tf.constant([1, 2], tf.int32)], tf.int32)
        strings = tf.numpy_function(to_upper, [tf.constant(["ab", "c"])], tf.string)
        bad = tf.py_func(fail, [tf.constant(3)], tf.int32, stateful=False)
        wrong = tf.py_func(lambda v: v.astype(np.float64), [tf.constant([1.0])], tf.float32)
        count = tf.numpy_function(lambda v: np.int32(len(v)), [a], tf.int32)
        out["names"] = [y.name, n.name, y.op.type, single.op.type, strings.op.type, bad.op.type]
        out["shapes"] = [str(y.shape), str(single.shape)]
        out["single_is_tensor"] = hasattr(single, "op")
        with tf.Session() as sess:
            out["values"] = [v.tolist() for v in sess.run([y, n, single, count], {a: [1.0, 2.5]})]
            out["strings"] = [s.decode() for s in sess.run(strings)]
            out["bad"] = _outcome(lambda: sess.run(bad))
            out["wrong_dtype"] = _outcome(lambda: sess.run(wrong))
            out["grad"] = _outcome(lambda: tf.gradients(tf.reduce_sum(y), a))
        out["calls"] = calls
    return out
