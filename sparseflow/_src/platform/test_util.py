"""``tf.test``: ``TestCase`` with TensorFlow's session helpers and numeric assertions, and ``main``.

Each test starts on a fresh default graph whose seed is TensorFlow's default graph seed, so seeded
random ops repeat run to run. ``cached_session()`` keeps one session per test;
``session()`` makes a new one; both become the default session inside their ``with`` block.

Example:
    >>> import sparseflow as tf
    >>> class AddTest(tf.test.TestCase):
    ...     def test_add(self):
    ...         with self.cached_session() as sess:
    ...             self.assertAllClose(sess.run(tf.constant([1.0, 2.0]) + 1.0), [2.0, 3.0])
    >>> import unittest
    >>> unittest.TextTestRunner(stream=open("/dev/null", "w")).run(AddTest("test_add")).wasSuccessful()
    True
"""

from __future__ import annotations

import contextlib
import math
import random
import re
import tempfile
import unittest

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework.api_graph import DEFAULT_GRAPH_SEED
from sparseflow._src.framework.default_session import get_default_session
from sparseflow._src.framework.graph import Graph, get_default_graph
from sparseflow._src.framework.operation import Operation, Tensor

__all__ = ["TestCase", "main", "is_gpu_available", "gpu_device_name", "is_built_with_cuda", "get_temp_dir"]


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """False: sparseflow runs on CPUs."""
    return False


def gpu_device_name():
    """"" (no GPU device)."""
    return ""


def is_built_with_cuda():
    return False


_TEMP_DIR = None


def get_temp_dir():
    """A temporary directory for this process's tests (made once)."""
    global _TEMP_DIR
    if _TEMP_DIR is None:
        _TEMP_DIR = tempfile.mkdtemp(prefix="sparseflow_test_")
    return _TEMP_DIR


def main(argv=None):
    """Runs the tests of ``__main__`` (unittest's runner)."""
    unittest.main(argv=argv)


def _as_array(x):
    if hasattr(x, "_asdict"):
        x = x._asdict()
    if isinstance(x, (Tensor, Operation)):
        raise TypeError(f"Expected a value, got the graph element {x!r}: run it first (self.evaluate(x)).")
    return x


class TestCase(unittest.TestCase):
    """``unittest.TestCase`` with TensorFlow's graph-mode helpers."""

    def setUp(self):
        super().setUp()
        self._cached_session = None
        random.seed(DEFAULT_GRAPH_SEED)
        np.random.seed(DEFAULT_GRAPH_SEED)
        # A fresh default graph for the test (entered rather than reset, so it also works when the
        # test runs inside another graph's context).
        self._graph_context = contextlib.ExitStack()
        self._graph_context.enter_context(Graph().as_default())
        get_default_graph().seed = DEFAULT_GRAPH_SEED

    def tearDown(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None
        self._graph_context.close()
        super().tearDown()

    def get_temp_dir(self):
        """A fresh temporary directory for this test."""
        path = tempfile.mkdtemp(dir=get_temp_dir())
        return path

    # ------------------------------------------------------------------ sessions
    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new Session on ``graph`` (default graph), the default session inside the block."""
        from sparseflow._src.runtime.session import Session

        graph = graph or get_default_graph()
        with Session(graph=graph, config=config) as sess, graph.as_default(), sess.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """This test's one Session (made on first use), the default session inside the block."""
        from sparseflow._src.runtime.session import Session

        graph = graph or get_default_graph()
        if self._cached_session is None:
            self._cached_session = Session(graph=graph, config=config)
        elif self._cached_session.graph is not graph:
            raise ValueError("The graph used to get the cached session is different than the one that was used to "
                             "create the session. Maybe create a new session with self.session()")
        with graph.as_default(), self._cached_session.as_default():
            yield self._cached_session

    def test_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """Deprecated TF name of ``cached_session``."""
        return self.cached_session(graph, config, use_gpu, force_gpu)

    test_session.__test__ = False  # not a test of its own

    def evaluate(self, tensors):
        """Runs ``tensors`` (any nested structure) in the default session."""
        sess = get_default_session()
        if sess is None:
            with self.cached_session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    # ------------------------------------------------------------------ assertions
    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802 - TensorFlow's names
        self.assertTrue(f1 == f2 or math.fabs(f1 - f2) <= err,
                        f"{f1!r} != {f2!r} +/- {err!r}" + (f" ({msg})" if msg else ""))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def _assert_all_close(self, a, b, rtol, atol, path, msg):
        a, b = _as_array(a), _as_array(b)
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertIsInstance(a, dict, f"{path}: {a!r} is not a dict like {b!r}")
            self.assertIsInstance(b, dict, f"{path}: {b!r} is not a dict like {a!r}")
            self.assertEqual(set(a), set(b), f"{path}: mismatched keys {sorted(a)} vs {sorted(b)}")
            for k in a:
                self._assert_all_close(a[k], b[k], rtol, atol, f"{path}[{k!r}]", msg)
            return
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            try:
                a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
            except (TypeError, ValueError):
                self.assertEqual(len(a), len(b), f"{path}: length {len(a)} != {len(b)}")
                for i, (x, y) in enumerate(zip(a, b)):
                    self._assert_all_close(x, y, rtol, atol, f"{path}[{i}]", msg)
                return
            a, b = a_arr, b_arr
        a, b = np.asarray(a), np.asarray(b)
        self.assertEqual(a.shape, b.shape, f"{path}: shape mismatch: expected {a.shape}, got {b.shape}"
                         + (f" ({msg})" if msg else ""))
        if a.dtype == np.float16 or b.dtype == np.float16:
            rtol, atol = max(rtol, 1e-3), max(atol, 1e-3)
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
            where = np.argwhere(bad)[:5].tolist()
            self.fail(f"{path}: not close (rtol={rtol}, atol={atol}) at {where}: a={a[bad][:5]}, b={b[bad][:5]}"
                      + (f" ({msg})" if msg else ""))

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Elementwise ``|a - b| <= atol + rtol * |b|``, also over nested lists, tuples and dicts."""
        self._assert_all_close(a, b, rtol, atol, "", msg)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,  # noqa: N802
                                      half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        a, b = np.asarray(a), np.asarray(b)
        if np.float16 in (a.dtype, b.dtype):
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        elif np.float32 in (a.dtype, b.dtype):
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        self.fail(msg or "The two values are close at all elements.")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """Same shape and equal elements (strings and bools too)."""
        a, b = np.asarray(_as_array(a)), np.asarray(_as_array(b))
        if a.size and b.size or a.shape != b.shape:
            self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}"
                             + (f" ({msg})" if msg else ""))
        same = a == b
        if not np.all(same):
            where = np.argwhere(~np.asarray(same))[:5].tolist() if np.ndim(same) else []
            self.fail(f"Arrays are not equal at {where}: {a!r} vs {b!r}" + (f" ({msg})" if msg else ""))

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        self.fail(msg or "The two values are equal at all elements.")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertGreater(np.min(a), comparison_target)

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertLess(np.max(a), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertGreaterEqual(np.min(a), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertLessEqual(np.max(a), comparison_target)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        t = np.asarray(target)
        low_ok = t > lower_bound if open_lower_bound else t >= lower_bound
        high_ok = t < upper_bound if open_upper_bound else t <= upper_bound
        if not np.all(low_ok & high_ok):
            left, right = "(" if open_lower_bound else "[", ")" if open_upper_bound else "]"
            self.fail(f"{np.sum(~(low_ok & high_ok))} element(s) of {t!r} are outside the range "
                      f"{left}{lower_bound}, {upper_bound}{right}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        missing = set(np.asarray(target).ravel().tolist()) - set(expected_set)
        if missing:
            self.fail(f"{np.asarray(target)!r}, has {sorted(missing)} not in {set(expected_set)}")

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """The array's shape equals the tensor's static shape."""
        if not isinstance(tf_tensor, Tensor):
            raise TypeError("tf_tensor must be a Tensor")
        self.assertAllEqual(np.asarray(np_array).shape, tf_tensor.get_shape().as_list(), msg=msg)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        from sparseflow._src.framework.device_spec import DeviceSpec

        d1 = DeviceSpec.from_string(device1 or "").to_string()
        d2 = DeviceSpec.from_string(device2 or "").to_string()
        self.assertEqual(d1, d2, msg or f"Devices {device1} and {device2} are not equal.")

    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        """A context in which ``exception_type`` must be raised and match a regex or predicate."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                text = str(e.message) if isinstance(e, errors.OpError) else str(e)
                return re.search(expected_err_re_or_predicate, text) is not None

        @contextlib.contextmanager
        def checker():
            try:
                yield
            except exception_type as e:
                if not predicate(e):
                    raise AssertionError(f"Exception of type {type(e).__name__}: {e}") from e
            else:
                self.fail(f"{exception_type.__name__} not raised")

        return checker()

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

