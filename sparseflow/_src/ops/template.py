"""TF1's ``tf.make_template``: a function whose variables are created by its first call and shared
by every later call (``get_variable`` under one variable scope, reused after the first call).

The scope is ``name_`` made unique when the template is first called (or when it is made, with
``create_scope_now_=True``); each call opens its own name scope for the ops (``lin``, ``lin_1``, ...).
A later call that would create a new trainable variable (``tf.Variable`` instead of
``tf.get_variable``) is an error, as in TensorFlow.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     def scale(x):
    ...         w = tf.get_variable("w", [1], initializer=tf.ones_initializer())
    ...         return x * w
    ...     t = tf.make_template("lin", scale)
    ...     a, b = t(tf.constant([2.0])), t(tf.constant([3.0]))
    ...     print(a.name, b.name, [v.name for v in t.variables])
    lin/mul:0 lin_1/mul:0 ['lin/w:0']
"""

from __future__ import annotations

import functools

from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.ops.variable_scope import _get_unique_variable_scope, _pure_variable_scope, variable_scope

__all__ = ["make_template", "Template"]


class Template:
    """A function wrapped so that its variables are shared between calls (see ``make_template``)."""

    def __init__(self, name, func, create_scope_now=False, unique_name=None, custom_getter=None):
        if name is None:
            raise ValueError("name cannot be None.")
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope = None
        if create_scope_now:
            with _pure_variable_scope(unique_name or _get_unique_variable_scope(name),
                                      custom_getter=custom_getter) as vs:
                self._variable_scope = vs
        self._variables_created = False

    def _call_func(self, args, kwargs):
        graph = get_default_graph()
        trainable_at_start = len(graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        vars_at_start = len(graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
        result = self._func(*args, **kwargs)
        if self._variables_created:
            trainable = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
            if len(trainable) != trainable_at_start:
                raise ValueError(f"Trainable variable created when calling a template after the first time, "
                                 f"perhaps you used tf.Variable when you meant tf.get_variable: "
                                 f"{trainable[trainable_at_start:]}")
            created = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)[vars_at_start:]
            if created:
                logging.info("New variables created when calling a template after the first time, perhaps you used "
                             "tf.Variable when you meant tf.get_variable: %s", created)
        else:
            self._variables_created = True
        return result

    def __call__(self, *args, **kwargs):
        if self._variable_scope is not None:
            with variable_scope(self._variable_scope, reuse=True if self._variables_created else None):
                return self._call_func(args, kwargs)
        with variable_scope(self._unique_name, self._name, custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            return self._call_func(args, kwargs)

    name = property(lambda self: self._name)
    func = property(lambda self: self._func)
    variable_scope = property(lambda self: self._variable_scope)

    @property
    def variable_scope_name(self):
        return self._variable_scope.name if self._variable_scope is not None else None

    def _collection(self, key):
        if self._variable_scope is None:
            return []
        return get_default_graph().get_collection(key, scope=self._variable_scope.name + "/")

    variables = property(lambda self: self._collection(GraphKeys.GLOBAL_VARIABLES))
    global_variables = variables
    trainable_variables = property(lambda self: self._collection(GraphKeys.TRAINABLE_VARIABLES))
    local_variables = property(lambda self: self._collection(GraphKeys.LOCAL_VARIABLES))

    @property
    def non_trainable_variables(self):
        trainable = set(map(id, self.trainable_variables))
        return [v for v in self.variables if id(v) not in trainable]

    weights = variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables


def make_template(name_, func_, create_scope_now_=False, unique_name_=None, custom_getter_=None, **kwargs):
    """``func_`` (with ``kwargs`` bound) as a Template: its first call creates the variables it gets with
    ``tf.get_variable`` under scope ``name_`` (made unique, or ``unique_name_``), later calls reuse them."""
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)
