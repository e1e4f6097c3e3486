"""``tf.version``: sparseflow's version and the GraphDef versions it writes.

Example:
    >>> import sparseflow as tf
    >>> tf.version.VERSION == tf.__version__
    True
"""

# ruff: noqa: F401
from sparseflow._src.platform.build_info import (
    COMPILER_VERSION,
    GIT_VERSION,
    GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER,
    VERSION,
)
