"""``tf.train.Optimizer``: the TF1 base class (``minimize``, ``compute_gradients``, ``apply_gradients``).

``apply_gradients`` builds, inside the name scope of the optimizer (``Adam``, ``Momentum``, ...), one
fused update op per variable named ``<Opt>/update_<var>/<OpType>`` and colocated with it, then
groups them into the op ``<Opt>`` (or ``<Opt>/update``, followed by the ``<Opt>`` assign_add of the
global step). Slots are created once per variable (see ``slot_creator``). Gradients that are
IndexedSlices take the sparse path: their duplicate indices are summed first (by the update kernel
when it does so itself, otherwise by Unique + UnsortedSegmentSum as TensorFlow does).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0], name="w")
    ...     opt = tf.train.GradientDescentOptimizer(0.5)
    ...     train = opt.apply_gradients([(tf.constant([2.0, 2.0]), w)])
    ...     with tf.Session() as sess:
    ...         _ = sess.run(w.initializer)
    ...         _ = sess.run(train)
    ...         print(train.name, sess.run(w))
    GradientDescent [0. 1.]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.sparse_tensor import IndexedSlices
from sparseflow._src.framework.tensor_conversion import convert_to_tensor, convert_to_tensor_or_indexed_slices
from sparseflow._src.ops import array_index_ops, array_shape_ops, core_ops, math_ops, nn_segment_ops, state_ops
from sparseflow._src.ops.variables import Variable, init_scope, trainable_variables
from sparseflow._src.training.optimizer import slot_creator

__all__ = ["Optimizer"]


def _var_key(var):
    """The key of ``var`` in the slot dicts: (graph, op name)."""
    return var.op.graph, var.op.name


def _deduplicate_indexed_slices(values, indices):
    """(summed values, unique indices): rows with equal indices added together."""
    unique_indices, new_index_positions = array_index_ops.unique(indices)
    summed = nn_segment_ops.unsorted_segment_sum(values, new_index_positions,
                                                 array_shape_ops.shape(unique_indices)[0])
    return summed, unique_indices


class _RefVariableProcessor:
    """Updates a ``tf.Variable``: dense gradients through ``_apply_dense``, IndexedSlices through
    ``_apply_sparse_duplicate_indices``; a variable's constraint is applied after a dense update."""

    def __init__(self, v):
        self._v = v

    def target(self):
        return self._v._ref()

    def update_op(self, optimizer, g):
        if isinstance(g, Tensor):
            update_op = optimizer._apply_dense(g, self._v)
            if self._v.constraint is not None:
                with get_default_graph().control_dependencies([update_op]):
                    return self._v.assign(self._v.constraint(self._v))
            return update_op
        if self._v.constraint is not None:
            raise RuntimeError("Cannot use a constraint function on a sparse variable.")
        return optimizer._apply_sparse_duplicate_indices(g, self._v)


class _TensorProcessor:
    """A plain tensor in ``var_list``: gradients can be computed for it, but it cannot be updated."""

    def __init__(self, v):
        self._v = v

    def target(self):
        return self._v

    def update_op(self, optimizer, g):
        raise NotImplementedError(f"Trying to update a Tensor {self._v}")


def _get_processor(v):
    if isinstance(v, Variable):
        return _RefVariableProcessor(v)
    if isinstance(v, Tensor):
        return _TensorProcessor(v)
    if hasattr(v, "_get_variable_list"):  # a PartitionedVariable: TF also refuses it, say what to pass
        raise NotImplementedError(f"Trying to optimize unsupported type {v!r}: a partitioned variable is "
                                  f"optimized through its shards; pass var_list=list({v.name}) (or its shards).")
    raise NotImplementedError(f"Trying to optimize unsupported type {v!r}")


def _flatten(x) -> list:
    if isinstance(x, (list, tuple)):
        return [y for item in x for y in _flatten(item)]
    if isinstance(x, dict):
        return [y for k in sorted(x) for y in _flatten(x[k])]
    return [x]


class Optimizer:
    """Base class of the TF1 optimizers. Subclasses implement ``_create_slots``, ``_prepare``,
    ``_apply_dense`` and ``_apply_sparse`` (and optionally ``_finish``)."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2
    # True when the sparse update kernel sums rows with equal indices itself (no Unique/segment-sum ops).
    _sparse_kernel_sums_duplicates = False

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict = {}  # slot name -> {_var_key(var): slot variable}
        self._non_slot_dict: dict = {}  # (name, graph) -> variable

    def get_name(self):
        return self._name

    # ------------------------------------------------------------------ the three entry points
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """``compute_gradients`` + ``apply_gradients``: an op that updates ``var_list`` (and increments
        ``global_step`` when given)."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients, aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                f"No gradients provided for any variable, check your graph for ops that do not support "
                f"gradients, between variables {[str(v) for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """A list of (gradient, variable) pairs; a gradient is a Tensor, an IndexedSlices or None."""
        from sparseflow._src.grad.gradients_impl import gradients

        if callable(loss):  # graph mode: the callable just builds the loss here
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             f"Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = trainable_variables() + get_default_graph().get_collection(
                GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        else:
            var_list = _flatten(var_list)
        processors = [_get_processor(v) for v in var_list]
        if not var_list:
            raise ValueError("No variables to optimize.")
        var_refs = [p.target() for p in processors]
        grads = gradients(loss, var_refs, grad_ys=grad_loss, gate_gradients=(gate_gradients == Optimizer.GATE_OP),
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _gate_all(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """An op applying each (gradient, variable) pair; it also increments ``global_step`` if given."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                try:
                    g = convert_to_tensor_or_indexed_slices(g)
                except (TypeError, ValueError):
                    raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}") \
                        from None
                if not isinstance(g, (Tensor, IndexedSlices)):
                    raise TypeError(f"Gradient must be a Tensor, IndexedSlices, or None: {g}")
            converted.append((g, v, _get_processor(v)))
        var_list = [v for g, v, _ in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: {[str(v) for _, v, _ in converted]}.")
        with init_scope():
            self._create_slots(var_list)
        update_ops = []
        graph = get_default_graph()
        with graph.name_scope(name or self._name) as scope:
            self._prepare()
            for grad, var, processor in converted:
                if grad is None:
                    continue
                with graph.name_scope("update_" + var.op.name), graph.colocate_with(var):
                    update_ops.append(processor.update_op(self, grad))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with graph.control_dependencies([self._finish(update_ops, "update")]):
                    with graph.colocate_with(global_step):
                        apply_updates = state_ops.assign_add(global_step, 1, name=scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_op = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_op:
                train_op.append(apply_updates)
            return apply_updates

    # ------------------------------------------------------------------ slots and optimizer variables
    def get_slot(self, var, name):
        """The slot variable ``name`` made for ``var``, or None."""
        named_slots = self._slots.get(name)
        if not named_slots:
            return None
        return named_slots.get(_var_key(var))

    def get_slot_names(self):
        """The sorted names of the slots this optimizer creates (e.g. ``['m', 'v']`` for Adam)."""
        return sorted(self._slots)

    def variables(self):
        """This optimizer's variables in the default graph (slots and non-slot variables), by name."""
        g = get_default_graph()
        out = [v for v in self._non_slot_dict.values() if v.op.graph is g]
        for slots in self._slots.values():
            out.extend(v for v in slots.values() if v.op.graph is g)
        return sorted(out, key=lambda v: v.name)

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        named_slots = self._slot_dict(slot_name)
        if _var_key(var) not in named_slots:
            named_slots[_var_key(var)] = slot_creator.create_slot(var, val, op_name)
        return named_slots[_var_key(var)]

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name, op_name):
        named_slots = self._slot_dict(slot_name)
        if _var_key(var) not in named_slots:
            named_slots[_var_key(var)] = slot_creator.create_slot_with_initializer(var, initializer, shape, dtype,
                                                                                   op_name)
        return named_slots[_var_key(var)]

    def _zeros_slot(self, var, slot_name, op_name):
        named_slots = self._slot_dict(slot_name)
        if _var_key(var) not in named_slots:
            named_slots[_var_key(var)] = slot_creator.create_zeros_slot(var, op_name)
        return named_slots[_var_key(var)]

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        """A variable of the optimizer itself (Adam's ``beta1_power``), one per graph."""
        key = (name, colocate_with.graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with colocate_with.graph.colocate_with(colocate_with):
                v = Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph))

    def _non_slot_variables(self):
        return self._non_slot_dict.values()

    # ------------------------------------------------------------------ for subclasses
    def _valid_dtypes(self):
        return {dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64}

    def _assert_valid_dtypes(self, tensors):
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: "
                                 f"{sorted(valid, key=lambda d: d.name)}.")

    def _call_if_callable(self, param):
        return param() if callable(param) else param

    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError()

    def _apply_sparse_duplicate_indices(self, grad, var):
        """Sums the rows of ``grad`` with equal indices, then ``_apply_sparse``. Optimizers whose
        sparse update kernel sums duplicates itself override this to skip the extra ops."""
        if self._sparse_kernel_sums_duplicates:
            return self._apply_sparse(grad, var)
        summed, unique = _deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed, unique, grad.dense_shape), var)

    def _apply_sparse(self, grad, var):
        raise NotImplementedError()

    def _finish(self, update_ops, name_scope):
        return core_ops.group(*update_ops, name=name_scope)

    def _cast(self, t, var):
        """A hyper-parameter tensor in ``var``'s dtype (no op when it already is)."""
        return math_ops.cast(t, var.dtype.base_dtype)


def _gate_all(grads):
    """GATE_GRAPH: every gradient becomes available only after all of them are computed."""
    g = get_default_graph()
    parts = [x for grad in grads if grad is not None
             for x in ((grad.values, grad.indices) if isinstance(grad, IndexedSlices) else (grad,))]
    with g.name_scope("tuple"):
        gate = core_ops.group(*parts)
        out = []
        for grad in grads:
            with g.control_dependencies([gate]):
                if grad is None:
                    out.append(None)
                elif isinstance(grad, IndexedSlices):
                    out.append(IndexedSlices(core_ops.identity(grad.values), grad.indices, grad.dense_shape))
                else:
                    out.append(core_ops.identity(convert_to_tensor(grad)))
    return out

