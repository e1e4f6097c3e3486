"""``tf.test``: ``TestCase`` (sessions, ``assertAllClose``, ``assertAllEqual``, ...) and ``main``."""

# ruff: noqa: F401, F403
from sparseflow._src.platform.test_util import *
