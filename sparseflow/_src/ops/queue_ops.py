"""Queues (TensorFlow's ``data_flow_ops``): ``tf.FIFOQueue``, ``tf.PaddingFIFOQueue``,
``tf.RandomShuffleQueue``, ``tf.PriorityQueue`` and their ops.

A queue lives across steps on its device, holding elements (tuples of tensors). Its ops are
TensorFlow's (FIFOQueueV2 ... QueueEnqueueV2, QueueDequeueManyV2, QueueCloseV2, ...), named as
TensorFlow names them (``fifo_queue_enqueue``, ``fifo_queue_Dequeue``, ...). Queues made with the
same ``shared_name`` on one device are one queue, across graphs and sessions of the process.
Enqueues block while the queue is full, dequeues while it is empty; both end with CancelledError
when their session is closed and DeadlineExceededError at the step's deadline. A dequeue from a
closed queue that cannot be filled raises OutOfRangeError, the end-of-input signal of queue
runners and monitored sessions.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     q = tf.FIFOQueue(capacity=3, dtypes=[tf.int32, tf.string], shapes=[[], []])
    ...     fill = q.enqueue_many([[1, 2, 3], ["a", "b", "c"]])
    ...     batch = q.dequeue_many(2)
    ...     with tf.Session() as sess:
    ...         sess.run(fill)
    ...         print(sess.run(batch), sess.run(q.size()))
    [array([1, 2], dtype=int32), array([b'a', b'b'], dtype=object)] 1
"""

from __future__ import annotations

import collections.abc
import hashlib

from sparseflow._src.framework import dtypes as _dtypes
from sparseflow._src.framework.api_graph import get_seed
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import Dimension, TensorShape, as_shape, dimension_value, unknown_shape
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.ops.variables import init_scope

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"]

QUEUE_OP_TYPES = ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2",
                  "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
                  "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2")


def _scalar(op):
    return [TensorShape([])]


def _no_outputs(op):
    return []


def _unknown_components(op):
    return [unknown_shape() for _ in op._attrs["component_types"]]


_QUEUE_ATTRS = ["component_types: list(type) >= 1", "shapes: list(shape) >= 0 = []", "capacity: int = -1",
                "container: string = ''", "shared_name: string = ''"]
register_op("FIFOQueueV2", outputs=["handle: resource"], attrs=_QUEUE_ATTRS, shape_fn=_scalar, is_stateful=True)
register_op("PaddingFIFOQueueV2", outputs=["handle: resource"], attrs=_QUEUE_ATTRS, shape_fn=_scalar,
            is_stateful=True)
register_op("RandomShuffleQueueV2", outputs=["handle: resource"],
            attrs=_QUEUE_ATTRS[:3] + ["min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"]
            + _QUEUE_ATTRS[3:], shape_fn=_scalar, is_stateful=True)
register_op("PriorityQueueV2", outputs=["handle: resource"],
            attrs=["component_types: list(type) >= 0 = []", "shapes: list(shape) >= 0", "capacity: int = -1",
                   "container: string = ''", "shared_name: string = ''"], shape_fn=_scalar, is_stateful=True)
for _name in ("QueueEnqueueV2", "QueueEnqueueManyV2"):
    register_op(_name, inputs=["handle: resource", "components: Tcomponents"],
                attrs=["Tcomponents: list(type) >= 1", "timeout_ms: int = -1"], shape_fn=_no_outputs,
                is_stateful=True)
register_op("QueueDequeueV2", inputs=["handle: resource"], outputs=["components: component_types"],
            attrs=["component_types: list(type) >= 1", "timeout_ms: int = -1"], shape_fn=_unknown_components,
            is_stateful=True)
for _name in ("QueueDequeueManyV2", "QueueDequeueUpToV2"):
    register_op(_name, inputs=["handle: resource", "n: int32"], outputs=["components: component_types"],
                attrs=["component_types: list(type) >= 1", "timeout_ms: int = -1"],
                shape_fn=_unknown_components, is_stateful=True)
register_op("QueueCloseV2", inputs=["handle: resource"], attrs=["cancel_pending_enqueues: bool = false"],
            shape_fn=_no_outputs, is_stateful=True)
register_op("QueueSizeV2", inputs=["handle: resource"], outputs=["size: int32"], shape_fn=_scalar, is_stateful=True)
register_op("QueueIsClosedV2", inputs=["handle: resource"], outputs=["is_closed: bool"], shape_fn=_scalar,
            is_stateful=True)


# ---------------------------------------------------------------------------- argument helpers
def _as_type_list(dtypes):
    if isinstance(dtypes, (list, tuple)):
        return [_dtypes.as_dtype(d) for d in dtypes]
    return [_dtypes.as_dtype(dtypes)]


def _as_shape_list(shapes, unknown_dim_allowed=False):
    """A list of TensorShapes (None when ``shapes`` is None); one shape may be given bare."""
    if unknown_dim_allowed and (not isinstance(shapes, collections.abc.Sequence) or not shapes
                                or any(s is None or isinstance(s, int) for s in shapes)):
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (tuple, list)):
        raise TypeError(f"Shapes must be a TensorShape or a list or tuple of TensorShapes, got {type(shapes)} "
                        f"instead.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape such as [2, 3] or ()
    shapes = [as_shape(s) for s in shapes]
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    if any(s.ndims is None for s in shapes):
        raise ValueError(f"All shapes must have a defined rank: {shapes}")
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError(f"List of names must have the same length as the list of dtypes, received "
                         f"len(names)={len(names)}, len(dtypes)={len(dtypes)}")
    return list(names)


# ---------------------------------------------------------------------------- the queue classes
class QueueBase:
    """A queue of elements (tuples of tensors of ``dtypes``); the base of the concrete queues."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError(f"Queue shapes must have the same length as dtypes, received "
                                 f"len(shapes)={len(shapes)}, len(dtypes)={len(dtypes)}")
            self._shapes = [TensorShape(s) for s in shapes]
        else:
            self._shapes = [unknown_shape() for _ in dtypes]
        if names is not None and len(names) != len(dtypes):
            raise ValueError(f"Queue names must have the same length as dtypes, received len(names)={len(names)}, "
                             f"len {len(dtypes)}")
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    queue_ref = property(lambda self: self._queue_ref, doc="The queue's resource handle.")
    name = property(lambda self: self._queue_ref.op.name, doc="The name of the queue op.")
    dtypes = property(lambda self: self._dtypes, doc="The dtypes of an element's components.")
    shapes = property(lambda self: self._shapes, doc="The shapes of an element's components.")
    names = property(lambda self: self._names, doc="The names of an element's components, or None.")

    def _check_enqueue_dtypes(self, vals):
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  Dictionary: "
                                 f"{sorted(vals.keys())},Queue: {sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"{self.name} holds elements of {len(self._dtypes)} components; got {len(vals)} "
                             f"values to enqueue.")
        return [convert_to_tensor(v, dtype=d, name=f"component_{i}")
                for i, (v, d) in enumerate(zip(vals, self._dtypes))]

    @staticmethod
    def _scope_vals(vals):
        if isinstance(vals, (list, tuple)):
            return vals
        if isinstance(vals, dict):
            return list(vals.values())
        return [vals]

    def enqueue(self, vals, name=None):
        """The op that adds one element (blocks while the queue is full; CancelledError once closed)."""
        with name_scope(name, f"{self._name}_enqueue", self._scope_vals(vals)) as scope:
            vals = self._check_enqueue_dtypes(vals)
            for val, shape in zip(vals, self._shapes):
                val.shape.assert_is_compatible_with(shape)
            return apply_op("QueueEnqueueV2", [self._queue_ref, vals], name=scope)

    def enqueue_many(self, vals, name=None):
        """The op that adds the slices of ``vals`` along their first dimension, as elements."""
        with name_scope(name, f"{self._name}_EnqueueMany", self._scope_vals(vals)) as scope:
            vals = self._check_enqueue_dtypes(vals)
            batch_dim = Dimension(dimension_value(vals[0].shape.with_rank_at_least(1)[0]))
            for val, shape in zip(vals, self._shapes):
                batch_dim = batch_dim.merge_with(dimension_value(val.shape.with_rank_at_least(1)[0]))
                val.shape[1:].assert_is_compatible_with(shape)
            return apply_op("QueueEnqueueManyV2", [self._queue_ref, vals], name=scope)

    def _dequeue_return_value(self, tensors):
        if self._names:
            return {n: tensors[i] for i, n in enumerate(self._names)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    def _outputs(self, op):
        return list(op.outputs)

    def dequeue(self, name=None):
        """One element (blocks while empty; OutOfRangeError once closed and empty)."""
        op = apply_op("QueueDequeueV2", [self._queue_ref], {"component_types": self._dtypes},
                      name=name or f"{self._name}_Dequeue")
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(shape)
        return self._dequeue_return_value(self._outputs(op))

    def dequeue_many(self, n, name=None):
        """``n`` elements, each component stacked along a new first dimension."""
        op = apply_op("QueueDequeueManyV2", [self._queue_ref, n], {"component_types": self._dtypes},
                      name=name or f"{self._name}_DequeueMany")
        batch = constant_value(op.inputs[1])
        batch_dim = Dimension(None if batch is None else int(batch))
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(TensorShape([batch_dim]).concatenate(shape))
        return self._dequeue_return_value(self._outputs(op))

    def dequeue_up_to(self, n, name=None):
        """Like dequeue_many, but once the queue is closed returns the remaining (fewer than ``n``)
        elements instead of raising OutOfRangeError (raised when none remain)."""
        op = apply_op("QueueDequeueUpToV2", [self._queue_ref, n], {"component_types": self._dtypes},
                      name=name or f"{self._name}_DequeueUpTo")
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(TensorShape([None]).concatenate(shape))
        return self._dequeue_return_value(self._outputs(op))

    def close(self, cancel_pending_enqueues=False, name=None):
        """The op that closes the queue: later enqueues fail, dequeues drain what is left; pending
        enqueues are cancelled too with ``cancel_pending_enqueues=True``."""
        return apply_op("QueueCloseV2", [self._queue_ref], {"cancel_pending_enqueues": cancel_pending_enqueues},
                        name=name or f"{self._name}_Close")

    def is_closed(self, name=None):
        """A bool scalar: whether the queue is closed."""
        return apply_op("QueueIsClosedV2", [self._queue_ref], name=name or f"{self._name}_Is_Closed").outputs[0]

    def size(self, name=None):
        """An int32 scalar: the number of elements in the queue."""
        return apply_op("QueueSizeV2", [self._queue_ref], name=name or f"{self._name}_Size").outputs[0]


def _queue_attrs(dtypes, shapes, capacity, shared_name):
    return {"component_types": dtypes, "shapes": shapes or [], "capacity": capacity,
            "shared_name": shared_name or ""}


class FIFOQueue(QueueBase):
    """A queue whose elements leave in the order they came (``capacity`` elements at most)."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        with init_scope():
            ref = apply_op("FIFOQueueV2", [], _queue_attrs(dtypes, shapes, capacity, shared_name), name=name)
        super().__init__(dtypes, shapes, names, ref.outputs[0])


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose components may vary along dimensions given as None in ``shapes``;
    ``dequeue_many`` pads them with zeros to the largest element of the batch."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError(f"Shapes must be provided for all components, but received {len(dtypes)} dtypes and "
                             f"{len(shapes)} shapes.")
        ref = apply_op("PaddingFIFOQueueV2", [], _queue_attrs(dtypes, shapes, capacity, shared_name), name=name)
        super().__init__(dtypes, shapes, names, ref.outputs[0])


class RandomShuffleQueue(QueueBase):
    """A queue whose elements leave in random order, keeping ``min_after_dequeue`` elements in it
    (for mixing) until it is closed. With a graph or op seed the order is TensorFlow's."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None, shared_name=None,
                 name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            # Queues shared by name get a seed of their own even when only the graph seed is set.
            digest = hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()  # noqa: S324 - not security
            seed2 = int(digest[:8], 16) & 0x7FFFFFFF
        attrs = _queue_attrs(dtypes, shapes, capacity, shared_name)
        attrs.update(min_after_dequeue=min_after_dequeue, seed=seed1, seed2=seed2)
        ref = apply_op("RandomShuffleQueueV2", [], attrs, name=name)
        super().__init__(dtypes, shapes, names, ref.outputs[0])


class PriorityQueue(QueueBase):
    """A queue whose elements leave lowest priority first. Every element starts with its priority,
    an int64 scalar (a vector for ``enqueue_many``), followed by components of ``types``."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes)
        ref = apply_op("PriorityQueueV2", [], _queue_attrs(types, shapes, capacity, shared_name), name=name)
        priority_dtypes = [_dtypes.int64] + types
        priority_shapes = [TensorShape([])] + shapes if shapes else shapes
        super().__init__(priority_dtypes, priority_shapes, names, ref.outputs[0])
