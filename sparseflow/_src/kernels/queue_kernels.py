"""CPU kernels of the queue ops: a queue-creating node owns a queue resource of its device, found
by ``shared_name`` (graphs and sessions of one process that use the same name share it) or
private to the node; the other ops take the queue through its resource handle.

Enqueues and dequeues may block, so they get the step context and wait with ``blocking.wait_until``
(CancelledError when the step is cancelled, DeadlineExceededError when its deadline passes).
"""

from __future__ import annotations

import itertools

from sparseflow._src.framework import errors
from sparseflow._src.kernels import queue_resources as Q
from sparseflow._src.kernels.registry import register_kernel

_private_ids = itertools.count()


def _queue_factory(cls, *extra_attrs):
    def factory(node):
        a = node.attrs
        # Without a shared_name the queue belongs to this node of this session only (TensorFlow's
        # private "_<n>_<node name>" resource names).
        name = a.get("shared_name") or f"_{next(_private_ids)}_{node.name}"
        extra = {k: a[k] for k in extra_attrs if k in a}
        requested = cls(name, a.get("component_types") or [], a.get("shapes") or [], a.get("capacity", -1), **extra)
        queue = node.resources.lookup_or_create(a.get("container", ""), name, lambda _name: requested)
        if queue is not requested:
            try:
                if not isinstance(queue, Q.QueueResource):
                    raise errors.InvalidArgumentError(None, None, (
                        f"Resource '{name}' of {node.device} is a {type(queue).__name__}, not a queue; another "
                        f"op created it under the same shared_name."))
                queue.check_compatible(requested)
            except errors.OpError as e:
                return _raise(e)  # when the node runs, so that the error names it
        return lambda: queue

    return factory


register_kernel("FIFOQueueV2", stateful=True)(_queue_factory(Q.FIFOQueue))
register_kernel("PaddingFIFOQueueV2", stateful=True)(_queue_factory(Q.PaddingFIFOQueue))
register_kernel("RandomShuffleQueueV2", stateful=True)(
    _queue_factory(Q.RandomShuffleQueue, "min_after_dequeue", "seed", "seed2"))


@register_kernel("PriorityQueueV2", stateful=True)
def _priority_queue(node):
    from sparseflow._src.framework import dtypes

    # The op's component_types leave out the priority; the queue's elements start with it.
    attrs = dict(node.attrs)
    attrs["component_types"] = [dtypes.int64] + list(attrs.get("component_types") or [])
    shapes = list(attrs.get("shapes") or [])
    attrs["shapes"] = [()] + shapes if shapes else []
    node.attrs = attrs
    return _queue_factory(Q.PriorityQueue)(node)


def _raise(error):
    def compute():
        raise type(error)(None, None, error.message)

    return compute


def _check_types(queue, types, what):
    if list(types) != queue.component_types:
        raise errors.InvalidArgumentError(None, None, (
            f"{what} of {queue.kind} '{queue.name}' has component types "
            f"{[d.name for d in types]} but the queue holds {[d.name for d in queue.component_types]}."))


@register_kernel("QueueEnqueueV2", needs_context=True)
def _enqueue(node):
    types = node.attrs["Tcomponents"]

    def compute(ctx, queue, *components):
        _check_types(queue, types, "An enqueue")
        queue.enqueue(ctx, components)

    return compute


@register_kernel("QueueEnqueueManyV2", needs_context=True)
def _enqueue_many(node):
    types = node.attrs["Tcomponents"]

    def compute(ctx, queue, *components):
        _check_types(queue, types, "An enqueue_many")
        queue.enqueue_many(ctx, components)

    return compute


def _outputs(values):
    return values[0] if len(values) == 1 else tuple(values)


@register_kernel("QueueDequeueV2", needs_context=True)
def _dequeue(node):
    types = node.attrs["component_types"]

    def compute(ctx, queue):
        _check_types(queue, types, "A dequeue")
        return _outputs(queue.dequeue(ctx))

    return compute


def _dequeue_many_factory(allow_small_batch):
    def factory(node):
        types = node.attrs["component_types"]

        def compute(ctx, queue, n):
            _check_types(queue, types, "A dequeue_up_to" if allow_small_batch else "A dequeue_many")
            return _outputs(queue.dequeue_many(ctx, n, allow_small_batch))

        return compute

    return factory


register_kernel("QueueDequeueManyV2", needs_context=True)(_dequeue_many_factory(False))
register_kernel("QueueDequeueUpToV2", needs_context=True)(_dequeue_many_factory(True))


@register_kernel("QueueCloseV2")
def _close(node):
    cancel = bool(node.attrs.get("cancel_pending_enqueues", False))
    return lambda queue: queue.close(cancel)


@register_kernel("QueueSizeV2")
def _size(node):
    return lambda queue: queue.size()


@register_kernel("QueueIsClosedV2")
def _is_closed(node):
    return lambda queue: queue.is_closed()
