"""Graph: an append-only, versioned set of Operations with name, device, control-dependency and
colocation scopes, and named collections.

Example:
    >>> import sparseflow as tf
    >>> g = tf.Graph()
    >>> with g.as_default(), g.name_scope("block"):
    ...     c = tf.constant(1.0, name="c")
    >>> c.name, g.version
    ('block/c:0', 1)
"""

from __future__ import annotations

import contextlib
import re
import threading

from sparseflow._src.framework import device_spec
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.user_frames import user_site

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


class GraphKeys:
    """Standard collection names, as TensorFlow spells them."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"


class _ControlDependencies:
    """One ``control_dependencies`` block: its control ops and the ops created inside it."""

    def __init__(self, control_ops):
        self.control_ops = control_ops
        self.created: set[int] = set()


class Graph:
    """A TensorFlow-1.x-style dataflow graph."""

    def __init__(self):
        self._lock = threading.RLock()
        self._nodes_by_name: dict[str, Operation] = {}
        self._nodes_in_order: list[Operation] = []
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._device_stack: list = []
        self._control_stack: list[_ControlDependencies] = []
        self._colocation_stack: list[Operation] = []
        self._collections: dict[str, list] = {}
        self._version = 0
        self._mutations = 0  # changes to existing ops (invalidate cached plans)
        self._finalized = False
        self._last_id = 0
        self._seed = None
        self._functions: dict = {}
        self._unfeedable: set = set()
        self._unfetchable: set = set()
        self._gradient_override_map: dict[str, str] = {}
        self._variable_creator_stack: list = []
        self._extra_state: dict = {}
        self.building_function = False

    # ------------------------------------------------------------------ properties
    @property
    def version(self) -> int:
        return self._version

    @property
    def finalized(self) -> bool:
        return self._finalized

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    @property
    def graph_def_versions(self):
        from sparseflow._src.framework.proto import versions_pb2

        return versions_pb2.VersionDef(producer=27, min_consumer=0)

    def finalize(self):
        """Makes the graph read-only: creating an op afterwards raises RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified. (Ops created inside a training "
                               "loop grow the graph on every step; build them once before the loop.)")

    def _bump_version(self):
        self._version += 1

    def _mutated(self):
        self._mutations += 1
        self._version += 1

    # ------------------------------------------------------------------ default graph
    @contextlib.contextmanager
    def as_default(self):
        _default_stack().append(self)
        try:
            yield self
        finally:
            stack = _default_stack()
            if stack and stack[-1] is self:
                stack.pop()

    # ------------------------------------------------------------------ names
    def get_name_scope(self) -> str:
        return self._name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """``name`` under the current name scope, suffixed ``_N`` if already taken."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens scope ``name`` (made unique); ``name/`` re-enters exactly; None or "" resets."""
        old = self._name_stack
        if name is None or name == "":
            new = ""
        elif isinstance(name, str) and name.endswith("/"):
            new = name[:-1]
        else:
            if not _VALID_SCOPE_NAME.match(str(name)):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield "" if not new else new + "/"
        finally:
            self._name_stack = old

    # ------------------------------------------------------------------ devices
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Ops created inside are placed on this device (a string, DeviceSpec or function(op))."""
        entry = device_name_or_function
        if entry is not None and not callable(entry):
            entry = entry if isinstance(entry, str) else entry.to_string()
            entry = device_spec.canonical_name(entry)
        self._device_stack.append(entry)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _apply_device(self, op: Operation):
        """Sets ``op``'s device from the device stack, as TensorFlow does: innermost entry first; a
        device string fills only the fields still unset, a function gets the op with the device so
        far and returns the new one, and a ``device(None)`` entry hides everything outside it."""
        dev = op._device or ""
        for entry in reversed(self._device_stack):
            if entry is None:
                break
            if callable(entry):
                op._device = dev
                got = entry(op)
                if got is not None and not isinstance(got, str):
                    got = got.to_string()
                dev = device_spec.canonical_name(got or "")
            else:
                dev = device_spec.merge_device(entry, dev)
        op._device = dev

    # ------------------------------------------------------------------ control dependencies
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run only after ``control_inputs``; None clears the outer blocks."""
        if control_inputs is None:
            saved = self._control_stack
            self._control_stack = []
            try:
                yield
            finally:
                self._control_stack = saved
            return
        ops = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element"):
                c = c._as_graph_element()
            if isinstance(c, Tensor):
                c = c.op
            elif hasattr(c, "op") and isinstance(c.op, Operation) and not isinstance(c, Operation):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be an Operation or a Tensor: {c!r}")
            self._check_same_graph(c)
            if c not in ops:
                ops.append(c)
        self._control_stack.append(_ControlDependencies(ops))
        try:
            yield
        finally:
            self._control_stack.pop()

    def _control_inputs_for(self, input_ops: list[Operation]) -> list[Operation]:
        out = []
        for block in self._control_stack:
            if any(id(o) in block.created for o in input_ops):
                continue  # an input already depends on this block's controls
            for c in block.control_ops:
                if c not in out and c not in input_ops:
                    out.append(c)
        return out

    # ------------------------------------------------------------------ colocation
    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False):
        """Ops created inside share ``op``'s colocation group and device."""
        if op is None:
            saved, self._colocation_stack = self._colocation_stack, []
            try:
                yield
            finally:
                self._colocation_stack = saved
            return
        if hasattr(op, "_as_graph_element"):
            op = op._as_graph_element()
        if isinstance(op, Tensor):
            op = op.op
        saved = self._colocation_stack
        self._colocation_stack = ([] if ignore_existing else list(saved)) + [op]
        try:
            yield
        finally:
            self._colocation_stack = saved

    # ------------------------------------------------------------------ op creation
    def _check_same_graph(self, op_or_tensor):
        if op_or_tensor.graph is not self:
            raise ValueError(f"{op_or_tensor!r} must be from the same graph as the other ops "
                             f"(it belongs to another tf.Graph).")

    def _capture(self, tensor: Tensor) -> Tensor:
        """A tensor of another graph used here: only function graphs may capture it."""
        raise ValueError(f"Tensor {tensor.name} must be from the same graph as the op that uses it. "
                         f"Build every op of one model inside one `with graph.as_default():` block.")

    def _next_op_id(self) -> int:
        self._last_id += 1
        return self._last_id

    def _create_op_internal(self, op_type, inputs, output_dtypes, attrs, name, op_def,
                            extra_control_inputs=()) -> Operation:
        """Creates and adds an op. Callers pass converted inputs and inferred output dtypes."""
        with self._lock:
            self._check_not_finalized()
            inputs = [t if t.graph is self else self._capture(t) for t in inputs]
            if name is None:
                name = self.unique_name(op_type)
            elif name.endswith("/"):
                name = name[:-1]
            else:
                if not _VALID_OP_NAME.match(name):
                    raise ValueError(f"'{name}' is not a valid node name")
                name = self.unique_name(name)
            if name in self._nodes_by_name:
                raise ValueError(f"Duplicate node name in graph: '{name}'")
            input_ops = [t.op for t in inputs]
            control = self._control_inputs_for(input_ops)
            for c in extra_control_inputs:
                if c not in control:
                    control.append(c)
            attrs = dict(attrs)
            override = self._gradient_override_map.get(op_type)
            if override is not None:
                attrs["_gradient_op_type"] = override
            if self._colocation_stack:
                groups = set()
                for c in self._colocation_stack:
                    groups.update(g.decode() for g in c.colocation_groups())
                attrs["_class"] = sorted(groups)
            op = Operation(self, name, op_type, inputs, output_dtypes, attrs, "", control, user_site(3),
                           op_def, self._next_op_id())
            try:
                # Shapes first: a device function (e.g. a load-balancing ps strategy) may read them.
                if op_def is not None and op_def.shape_fn is not None:
                    self._infer_shapes(op)
                if self._colocation_stack:
                    op._device = self._colocation_stack[-1].device
                    saved, self._device_stack = self._device_stack, [op._device or None]
                    try:
                        self._apply_device(op)
                    finally:
                        self._device_stack = saved
                else:
                    self._apply_device(op)
            except BaseException:
                detach_op(op)  # an op that is not added leaves no trace in its inputs
                raise
            self._add_op(op)
            return op

    def _infer_shapes(self, op: Operation):
        from sparseflow._src.framework.tensor_shape import as_shape

        try:
            shapes = op.op_def.shape_fn(op)
        except (ValueError, TypeError, IndexError) as e:
            shapes_in = ", ".join(str(t.shape) for t in op._inputs)
            raise ValueError(f"{e} for '{op.name}' (op: '{op.type}') with input shapes: [{shapes_in}]"
                             f"{', created at ' + str(op.creation_site) if op.creation_site else ''}.") from e
        if shapes is None:
            return
        if len(shapes) != len(op._outputs):
            raise AssertionError(f"Shape function of {op.type} returned {len(shapes)} shapes for "
                                 f"{len(op._outputs)} outputs")
        for t, s in zip(op._outputs, shapes):
            t._shape = as_shape(s)

    def _add_op(self, op: Operation):
        self._nodes_by_name[op.name] = op
        self._nodes_in_order.append(op)
        for block in self._control_stack:
            block.created.add(id(op))
        self._version += 1

    def create_op(self, op_type, inputs, dtypes=None, input_types=None, name=None, attrs=None,
                  op_def=None, compute_shapes=True, compute_device=True):
        """TF's low-level op constructor: inputs are Tensors, attrs are Python values."""
        from sparseflow._src.framework.op_def_library import apply_op

        return apply_op(op_type, list(inputs), dict(attrs or {}), name=name, graph=self,
                        output_dtypes=dtypes)

    # ------------------------------------------------------------------ lookups
    def get_operations(self) -> list[Operation]:
        return list(self._nodes_in_order)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def _get_operation_by_name_unsafe(self, name: str) -> Operation:
        return self._nodes_by_name[name]

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """Resolves a Tensor, Operation, or name (``op`` or ``op:k``) in this graph."""
        if hasattr(obj, "_as_graph_element") and not isinstance(obj, (Tensor, Operation)):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                op_name, _, idx = obj.rpartition(":")
                try:
                    idx = int(idx)
                except ValueError:
                    raise ValueError(f"The name {obj!r} looks like a Tensor name, but is not a valid one. "
                                     f"Tensor names must be of the form \"<op_name>:<output_index>\".") from None
                op = self._nodes_by_name.get(op_name)
                if op is None:
                    raise KeyError(f"The name {obj!r} refers to a Tensor which does not exist. The operation, "
                                   f"{op_name!r}, does not exist in the graph.")
                if idx >= len(op._outputs):
                    raise KeyError(f"The name {obj!r} refers to a Tensor which does not exist. The operation, "
                                   f"{op_name!r}, exists but only has {len(op._outputs)} outputs.")
                return op._outputs[idx]
            if ":" in obj:
                raise ValueError(f"Name {obj!r} appears to refer to a Tensor, not an Operation.")
            op = self._nodes_by_name.get(obj)
            if op is None:
                raise KeyError(f"The name {obj!r} refers to an Operation not in the graph.")
            if not allow_operation:
                raise ValueError(f"The name {obj!r} refers to an Operation, not a Tensor. Tensor names must "
                                 f"be of the form \"<op_name>:<output_index>\".")
            return op
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj.name} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj.name} is not an element of this graph.")
            return obj
        kinds = " or ".join(k for k, a in (("Tensor", allow_tensor), ("Operation", allow_operation)) if a)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {kinds}.")

    # ------------------------------------------------------------------ collections
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        names = (names,) if isinstance(names, str) else set(names)
        for n in names:
            self.add_to_collection(n, value)

    def get_collection_ref(self, name) -> list:
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None) -> list:
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        regex = re.compile(scope)
        return [i for i in items if hasattr(i, "name") and regex.match(i.name)]

    def get_all_collection_keys(self) -> list:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # ------------------------------------------------------------------ feeding / fetching
    def prevent_feeding(self, tensor):
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor) -> bool:
        return tensor not in self._unfeedable

    def prevent_fetching(self, op):
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op) -> bool:
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # ------------------------------------------------------------------ serialization
    def as_graph_def(self, from_version=None, add_shapes=False):
        from sparseflow._src.framework.graph_io import graph_to_graph_def

        return graph_to_graph_def(self, add_shapes=add_shapes)

    def _add_function(self, function):
        self._functions[function.name] = function
        self._bump_version()

    def __repr__(self):
        return f"<sparseflow.Graph with {len(self._nodes_in_order)} ops>"

    def __str__(self):
        from sparseflow._src.framework.graph_printer import format_graph

        return format_graph(self)


# ---------------------------------------------------------------------- default graph stack
class _DefaultGraph(threading.local):
    def __init__(self):
        self.stack: list[Graph] = []


_global_default = [Graph()]
_local = _DefaultGraph()


def _default_stack() -> list[Graph]:
    return _local.stack


def get_default_graph() -> Graph:
    """The innermost ``as_default`` graph of this thread, else the global default graph."""
    stack = _local.stack
    return stack[-1] if stack else _global_default[0]


def reset_default_graph():
    """Replaces the global default graph with a new empty one (not inside a graph block)."""
    if _local.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If you need a "
                             "cleared graph, exit the nesting and create a new graph.")
    _global_default[0] = Graph()


def name_scope(name, default_name=None, values=None):
    """TF1's ``tf.name_scope(name, default_name, values)`` on the graph of ``values`` or the default."""
    graph = _graph_of(values) if values else get_default_graph()
    n = name if name is not None and name != "" else default_name
    if name is None and default_name is None:
        n = None
    if isinstance(name, str) and name.endswith("/"):
        n = name
    return graph.name_scope(n)


def _graph_of(values):
    default = get_default_graph()
    if default.building_function:
        return default
    for v in values or ():
        g = getattr(v, "graph", None)
        if isinstance(g, Graph):
            return g
    return default


def detach_op(op):
    """Takes ``op`` out of the consumer lists of its inputs and control inputs."""
    for t in op._inputs:
        if op in t._consumers:
            t._consumers.remove(op)
    for c in op._control_inputs:
        if op in c._control_outputs:
            c._control_outputs.remove(op)
