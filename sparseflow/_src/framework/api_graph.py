"""Graph-level public functions of ``tf.*``: scopes, collections, seeds, v1 compatibility switches.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     tf.add_to_collection("things", 1)
    ...     tf.get_collection("things")
    [1]
"""

from __future__ import annotations

from sparseflow._src.framework.graph import get_default_graph

__all__ = [
    "add_to_collection", "add_to_collections", "get_collection", "get_collection_ref", "control_dependencies",
    "device", "colocate_with", "set_random_seed", "disable_v2_behavior", "enable_v2_behavior",
    "disable_eager_execution", "executing_eagerly", "get_seed", "container", "disable_resource_variables",
    "get_name_scope",
]


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def control_dependencies(control_inputs):
    """Ops created in the ``with`` block run after ``control_inputs``."""
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    """Ops created in the ``with`` block are placed on this device."""
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def get_name_scope() -> str:
    return get_default_graph().get_name_scope()


def container(container_name):
    """Resources created in the block live in this container (accepted; variables use the default)."""
    import contextlib

    return contextlib.nullcontext()


def set_random_seed(seed):
    """Sets the graph-level random seed of the default graph."""
    get_default_graph().seed = seed


DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


def get_seed(op_seed):
    """TensorFlow 2.x's (graph seed, op seed) derivation for random ops.

    With a graph seed and no op seed, op seeds count 0, 1, 2, ... per graph (not op ids), so the
    order in which other ops are created does not change random streams. Seeds are reduced
    modulo 2**31 - 1; (0, 0) becomes (0, 2**31 - 1) because (0, 0) means "nondeterministic".
    """
    g = get_default_graph()
    global_seed = g.seed
    if global_seed is not None:
        if op_seed is None:
            counter = getattr(g, "seed_counter_graph", g)  # a cond branch / loop body counts on its graph
            op_seed = counter._extra_state.get("seed_counter", 0)
            counter._extra_state["seed_counter"] = op_seed + 1
        seeds = (int(global_seed) % _MAXINT32, int(op_seed) % _MAXINT32)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, int(op_seed) % _MAXINT32)
    else:
        seeds = (None, None)
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def disable_v2_behavior():
    """sparseflow always has TF1 graph semantics; kept so TF1 programs run unchanged."""


def enable_v2_behavior():
    raise NotImplementedError("sparseflow implements the TF1 graph programming model only.")


def disable_eager_execution():
    """sparseflow is always in graph mode."""


def disable_resource_variables():
    """Variables are TF1 reference variables already."""


def executing_eagerly() -> bool:
    return False
