"""``tf.Variable`` (TF1 reference variables) and the variable collections and initializers.

A variable is the ops ``<name>`` (VariableV2), ``<name>/initial_value`` (when built from a value),
``<name>/Assign`` (its initializer) and ``<name>/read`` (Identity: the value other ops use).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0], name="w")
    ...     [op.name for op in tf.get_default_graph().get_operations()]
    ['w/initial_value', 'w', 'w/Assign', 'w/read']
    >>> w.name, w.dtype.name, w.shape.as_list()
    ('w:0', 'float32_ref', [2])
"""

from __future__ import annotations

import contextlib
import functools
import inspect

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.op_def import get_op_def, input_arg_flags
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from sparseflow._src.framework.tensor_shape import as_shape, unknown_shape
from sparseflow._src.ops import state_ops

__all__ = [
    "Variable", "global_variables", "all_variables", "trainable_variables", "local_variables",
    "model_variables", "moving_average_variables", "global_variables_initializer", "initialize_all_variables",
    "local_variables_initializer", "initialize_local_variables", "variables_initializer",
    "initialize_variables", "report_uninitialized_variables", "assert_variables_initialized",
]


@contextlib.contextmanager
def init_scope():
    """Builds in the outermost graph (out of function bodies), under the current name scope,
    without the control dependencies in effect (TF's ``init_scope``)."""
    g = get_default_graph()
    scope = g.get_name_scope()
    outer = g
    while getattr(outer, "outer_graph", None) is not None:
        outer = outer.outer_graph
    with outer.as_default(), outer.name_scope(scope + "/" if scope else ""), outer.control_dependencies(None):
        yield


class _VariableMeta(type):
    """Routes ``Variable(...)`` through the graph's variable creators (``creator(next_creator, **kwargs)``,
    innermost first), as TensorFlow's ``variable_creator_scope`` does."""

    def __call__(cls, *args, **kwargs):
        stack = get_default_graph()._variable_creator_stack
        if not stack:
            return super().__call__(*args, **kwargs)
        kwargs = dict(inspect.signature(cls.__init__).bind(None, *args, **kwargs).arguments)
        kwargs.pop("self")

        def getter(**kw):
            return type.__call__(cls, **kw)

        for entry in stack:
            creator = entry[-1] if isinstance(entry, tuple) else entry
            getter = functools.partial(creator, getter)
        return getter(**kwargs)


class Variable(metaclass=_VariableMeta):
    """A TF1 reference variable: state that persists across ``Session.run`` calls.

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(3.0, name="v")
    ...     twice = v * 2.0
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(twice), sess.run(v.assign_add(1.0)))
    6.0 4.0
    """

    __array_priority__ = 100

    class SaveSliceInfo:
        """Where a partition of a partitioned variable sits in the full variable (for savers)."""

        def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None):
            self.full_name = full_name
            self.full_shape = list(full_shape or [])
            self.var_offset = list(var_offset or [])
            self.var_shape = list(var_shape or [])

        @property
        def spec(self) -> str:
            """TensorFlow's slice spec string: ``"<full shape> <offset>,<length>:..."``."""
            full = " ".join(str(int(d)) for d in self.full_shape) + " "
            return full + ":".join(f"{int(o)},{int(s)}" for o, s in zip(self.var_offset, self.var_shape))

    def __init__(self, initial_value=None, trainable=None, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None, synchronization=None,
                 aggregation=None, shape=None):
        self._save_slice_info = None
        self._caching_device = caching_device
        self._synchronization = synchronization
        self._aggregation = aggregation
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        self._init_from_args(initial_value, True if trainable is None else bool(trainable), collections,
                             validate_shape, name, dtype, constraint, shape)

    # ------------------------------------------------------------------ construction
    def _init_from_args(self, initial_value, trainable, collections, validate_shape, name, dtype, constraint,
                        shape):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        init_from_fn = callable(initial_value)
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError(f"collections argument to Variable constructor must be a list, tuple, or set. "
                             f"Got {collections} of type {type(collections)}")
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = trainable
        self._constraint = constraint
        with init_scope():
            g = get_default_graph()
            with g.name_scope(name if name else "Variable") as scope:
                if init_from_fn:
                    # As in TensorFlow: the initializer ops ignore the device scopes and are colocated
                    # with the variable (made next), so a variable on a ps is initialized on that ps.
                    first_new = len(g._nodes_in_order)
                    with g.name_scope("Initializer"), g.device(None):
                        self._initial_value = convert_to_tensor(initial_value(), name="initial_value",
                                                                dtype=dtype)
                    for op in g._nodes_in_order[first_new:]:
                        op._attrs.setdefault("_class", [f"loc:@{scope[:-1]}"])
                else:
                    self._initial_value = convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
                    if getattr(self._initial_value.graph, "outer_graph", None) is not None:
                        raise ValueError(f"Initializer for variable {scope[:-1]} is from inside a "
                                         f"control-flow construct, such as a loop or conditional. When "
                                         f"creating a variable inside a loop or conditional, use a lambda "
                                         f"as the initializer.")
                init_shape = self._initial_value.shape
                if shape is not None:
                    var_shape = as_shape(shape)
                    if not var_shape.is_compatible_with(init_shape):
                        raise ValueError(f"The initial value's shape ({init_shape}) is not compatible with "
                                         f"the explicitly supplied `shape` argument ({var_shape}).")
                else:
                    var_shape = init_shape if validate_shape else unknown_shape()
                if validate_shape and not init_shape.is_fully_defined():
                    raise ValueError(f"initial_value must have a shape specified: {self._initial_value}")
                self._variable = state_ops.variable_op_v2(var_shape, self._initial_value.dtype.base_dtype,
                                                          name=scope)
                guarded = _guard_uninitialized_dependencies(scope[:-1], self._initial_value)
                self._initializer_op = state_ops.assign(self._variable, guarded,
                                                        validate_shape=validate_shape).op
                place = g.device(self._caching_device) if self._caching_device is not None \
                    else g.colocate_with(self._variable.op)
                with place:
                    self._snapshot = apply_op("Identity", [self._variable], name="read").outputs[0]
            g.add_to_collections(collections, self)

    def _init_from_proto(self, variable_def, import_scope=None):
        """Rebuilds the Python object of a variable already in the graph, from a VariableDef."""
        g = get_default_graph()

        def lookup(name):
            if import_scope:
                name = import_scope + "/" + name
            return g.as_graph_element(name)

        self._variable = lookup(variable_def.variable_name)
        self._initializer_op = lookup(variable_def.initializer_name)
        init_name = getattr(variable_def, "initial_value_name", "")
        self._initial_value = lookup(init_name) if init_name else None
        self._snapshot = lookup(variable_def.snapshot_name)
        self._trainable = bool(getattr(variable_def, "trainable", True))
        self._constraint = None

    # ------------------------------------------------------------------ properties
    name = property(lambda self: self._variable.name)
    op = property(lambda self: self._variable.op)
    dtype = property(lambda self: self._variable.dtype)
    graph = property(lambda self: self._variable.graph)
    device = property(lambda self: self._variable.device)
    initializer = property(lambda self: self._initializer_op)
    initial_value = property(lambda self: self._initial_value)
    trainable = property(lambda self: self._trainable)
    constraint = property(lambda self: self._constraint)
    synchronization = property(lambda self: self._synchronization)
    aggregation = property(lambda self: self._aggregation)

    @property
    def shape(self):
        return self._variable.get_shape()

    def get_shape(self):
        return self._variable.get_shape()

    def set_shape(self, shape):
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def _ref(self) -> Tensor:
        """The VariableV2 output: the l-value that Assign-like ops take."""
        return self._variable

    def _as_graph_element(self) -> Tensor:
        return self._variable

    # ------------------------------------------------------------------ reading
    def value(self) -> Tensor:
        """The ``<name>/read`` tensor (the variable's value as other ops see it).

        Inside a ``control_dependencies`` block that waits for an update of this variable it is a
        new read made in the block, so it sees that update: TF1 reads alias the variable's buffer
        and observe in-place updates, while ours are snapshots taken when the read runs.
        """
        g = get_default_graph()
        if g._control_stack and _encloses(self.graph, g) and _updated_in_block(self.op, g):
            return self.read_value()
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new read of the variable, made where it is called (e.g. inside a cond branch)."""
        return apply_op("Identity", [self._variable], name="read").outputs[0]

    def initialized_value(self) -> Tensor:
        """The value if the variable is initialized, else its initial value: safe for initializing
        other variables from this one."""
        from sparseflow._src.ops import control_flow_ops

        with init_scope():
            return control_flow_ops.cond(state_ops.is_variable_initialized(self), self.read_value,
                                         lambda: self.initial_value)

    def eval(self, session=None):
        """The variable's value in ``session`` (default: the default session)."""
        return self._variable.eval(session=session)

    def load(self, value, session=None):
        """Writes ``value`` into the variable by running its initializer with ``value`` fed."""
        from sparseflow._src.framework.default_session import get_default_session

        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session should be "
                             "established")
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    # ------------------------------------------------------------------ writing
    def assign(self, value, use_locking=False, name=None, read_value=True):
        t = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        t = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        t = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def _sparse(self, fn, sparse_delta, use_locking, name):
        if not (hasattr(sparse_delta, "indices") and hasattr(sparse_delta, "values")):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")
        return fn(self._variable, sparse_delta.indices, sparse_delta.values, use_locking=use_locking,
                  name=name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_update, sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_add, sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_sub, sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_mul, sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_div, sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_min, sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_max, sparse_delta, use_locking, name)

    def scatter_nd_update(self, indices, updates, name=None):
        return state_ops.scatter_nd_update(self._variable, indices, updates, use_locking=True, name=name)

    def scatter_nd_add(self, indices, updates, name=None):
        return state_ops.scatter_nd_add(self._variable, indices, updates, use_locking=True, name=name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return state_ops.scatter_nd_sub(self._variable, indices, updates, use_locking=True, name=name)

    def count_up_to(self, limit):
        return state_ops.count_up_to(self._variable, limit=limit)

    def is_initialized(self, name=None):
        return state_ops.is_variable_initialized(self._variable, name=name)

    # ------------------------------------------------------------------ saving (partitioned variables)
    def _get_save_slice_info(self):
        return self._save_slice_info

    def _set_save_slice_info(self, save_slice_info):
        self._save_slice_info = save_slice_info

    # ------------------------------------------------------------------ Python protocol
    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.get_shape()} dtype={self.dtype.name}>"


def _encloses(outer, g) -> bool:
    while g is not None:
        if g is outer:
            return True
        g = getattr(g, "outer_graph", None)
    return False


def _var_key(op):
    return op._attrs.get("container", ""), op._attrs.get("shared_name") or op.name


def _ref_root(t):
    """The variable op behind ref tensor ``t`` (through ops that forward their ref input)."""
    while t.op.type not in ("VariableV2", "Variable") and t.op.inputs and t.op.inputs[0].dtype.is_ref_dtype:
        t = t.op.inputs[0]
    return t.op


def _updated_in_block(var_op, g) -> bool:
    """Does an op the active control-dependency blocks wait for write the variable ``var_op``?"""
    key = _var_key(var_op)
    root = g
    while getattr(root, "outer_graph", None) is not None:
        root = root.outer_graph
    seen: set = set()
    stack = [c for block in g._control_stack for c in block.control_ops]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.op_def is not None:
            flags = input_arg_flags(op.op_def, op._attrs)
            for is_ref, t in zip(flags, op.inputs):
                root_op = _ref_root(t) if is_ref else None
                if root_op is not None and root_op.type in ("VariableV2", "Variable") and \
                        _var_key(root_op) == key:
                    return True
        stack.extend(op.control_inputs)
        if op.type in ("Identity", "IdentityN"):
            stack.extend(t.op for t in op.inputs)
        for attr in ("then_branch", "else_branch", "body"):  # updates inside functional ops
            fn = root._functions.get(op._attrs.get(attr)) if op.type in ("If", "While") else None
            if fn is not None:
                stack.extend(fn.control_outputs)
    return False


def _delegate(method: str):
    def op(self, *args, **kwargs):
        return getattr(self.value(), method)(*args, **kwargs)

    op.__name__ = method
    return op


for _m in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
           "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
           "__rmatmul__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__", "__or__", "__ror__",
           "__xor__", "__rxor__", "__neg__", "__abs__", "__invert__", "__getitem__"):
    setattr(Variable, _m, _delegate(_m))


def _variable_to_tensor(v, dtype=None, name=None, as_ref=False):
    if dtype is not None and dtypes.as_dtype(dtype).base_dtype != v.dtype.base_dtype:
        raise ValueError(f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' "
                         f"for variable of type '{v.dtype.name}'")
    return v._ref() if as_ref else v.value()


register_tensor_conversion_function(Variable, _variable_to_tensor)


# ---------------------------------------------------------------------- initial values using other variables
def _initialized_value_of(variable_op):
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for v in variable_op.graph.get_collection(key):
            if isinstance(v, Variable) and v.op is variable_op:
                return v.initialized_value()
    return None


def _guard_uninitialized_dependencies(name, initial_value):
    """``initial_value`` with every read of another variable replaced by its ``initialized_value()``,
    so initializers may run in any order (what TF1's RefVariable does)."""
    stop, var_types = ("IsVariableInitialized", "If", "StatelessIf"), ("VariableV2", "Variable")
    order, seen, stack = [], set(), [(initial_value.op, False)]
    while stack:  # post-order over the ops the initial value depends on
        op, done = stack.pop()
        if done:
            order.append(op)
            continue
        if op in seen:
            continue
        seen.add(op)
        stack.append((op, True))
        if op.type not in stop and op.type not in var_types:
            stack.extend((t.op, False) for t in op.inputs if t.op not in seen)
    replaced: dict = {}

    def mapped(t):
        r = replaced.get(t.op)
        if r is None:
            return t
        return r.outputs[t.value_index] if isinstance(r, Operation) else r

    for op in order:
        if op.type in stop:
            continue
        if op.type in var_types:
            init = _initialized_value_of(op)
            if init is not None:
                replaced[op] = init
            continue
        new_inputs = [mapped(t) for t in op.inputs]
        if any(a is not b for a, b in zip(new_inputs, op.inputs)):
            replaced[op] = _clone(op, new_inputs, f"{op.name}_{name}".replace(":", "_"))
    return mapped(initial_value)


def _clone(op, inputs, name):
    """A copy of ``op`` with new flat ``inputs``, regrouped by its OpDef's argument lists."""
    op_def = get_op_def(op.type)
    grouped, i = [], 0
    for arg in op_def.input_args:
        if arg.number_attr:
            n = op._attrs[arg.number_attr]
        elif arg.type_list_attr:
            n = len(op._attrs[arg.type_list_attr])
        else:
            grouped.append(inputs[i])
            i += 1
            continue
        grouped.append(list(inputs[i:i + n]))
        i += n
    attrs = {k: v for k, v in op._attrs.items() if not k.startswith("_")}
    return apply_op(op.type, grouped, attrs, name=name + "/", graph=op.graph)


# ---------------------------------------------------------------------- collections
def _collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def global_variables(scope=None):
    """The variables of the GLOBAL_VARIABLES collection (optionally those whose name matches ``scope``)."""
    return _collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables():
    return global_variables()


def trainable_variables(scope=None):
    """The variables created with ``trainable=True`` (the optimizers' default ``var_list``)."""
    return _collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return _collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None):
    return _collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return _collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


# ---------------------------------------------------------------------- initializers
def variables_initializer(var_list, name="init"):
    """One op that runs the initializers of ``var_list`` (a NoOp when the list is empty).

    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     a, b = tf.Variable(1.0), tf.Variable(2.0)
    ...     init = tf.variables_initializer([a, b])
    >>> init.name, init.type, len(init.control_inputs)
    ('init', 'NoOp', 2)
    """
    from sparseflow._src.ops import core_ops

    if var_list:
        return core_ops.group(*[v.initializer for v in var_list], name=name)
    return core_ops.no_op(name=name)


def initialize_variables(var_list, name="init"):
    return variables_initializer(var_list, name=name)


def global_variables_initializer():
    """The op ``init`` that initializes every global variable."""
    return variables_initializer(global_variables())


def initialize_all_variables():
    return global_variables_initializer()


def local_variables_initializer():
    """The op that initializes every local variable (named ``init``, made unique)."""
    return variables_initializer(local_variables())


def initialize_local_variables():
    return local_variables_initializer()


def _default_var_list():
    var_list = global_variables() + local_variables()
    if not var_list:
        var_list = [op.outputs[0] for op in get_default_graph().get_operations()
                    if op.type in ("Variable", "VariableV2")]
    return var_list


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor with the names of the variables not yet initialized in the session."""
    from sparseflow._src.ops import array_ops, constant_op, math_ops

    if var_list is None:
        var_list = _default_var_list()
    g = get_default_graph()
    with g.name_scope(name):
        if not var_list:
            return constant_op.constant([], dtype=dtypes.string)
        flags = [state_ops.is_variable_initialized(v) for v in var_list]
        with g.device("/cpu:0"):
            mask = math_ops.logical_not(array_ops.stack(flags))
            names = constant_op.constant([v.op.name for v in var_list])
            return array_ops.boolean_mask(names, mask)


def assert_variables_initialized(var_list=None):
    """An op that fails (InvalidArgumentError) when run while a variable of ``var_list`` is uninitialized."""
    from sparseflow._src.ops import array_ops, control_flow_ops, math_ops

    if var_list is None:
        var_list = _default_var_list()
    if not var_list:
        return None
    g = get_default_graph()
    with g.name_scope("assert_variables_initialized"):
        flags = [state_ops.is_variable_initialized(v) for v in var_list]
        return control_flow_ops.Assert(math_ops.reduce_all(array_ops.stack(flags)),
                                       ["Not all variables are initialized"], name="Assert")
