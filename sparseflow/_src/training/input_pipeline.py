"""TF1 queue-based input pipelines (``tf.train.slice_input_producer``, ``tf.train.batch``, ...).

Producers put (optionally shuffled) slices of their input into a FIFOQueue, epoch after epoch
(``num_epochs`` epochs, then OutOfRangeError, counted by a local variable), and batchers gather
single examples (or batches, with ``enqueue_many``) into a FIFOQueue / PaddingFIFOQueue /
RandomShuffleQueue and dequeue ``batch_size`` at a time. Each adds a QueueRunner to the
QUEUE_RUNNERS collection, so ``tf.train.start_queue_runners`` (or a MonitoredSession) keeps them
filled; when the input ends, the queues close in turn and the training loop sees OutOfRangeError.
Names, arguments and defaults are TensorFlow's. SparseTensor inputs and ``keep_input`` filtering
(``maybe_batch``) are not supported; the fraction-full summaries are not written.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x, y = slice_input_producer([[1, 2, 3, 4], [10, 20, 30, 40]], num_epochs=1, shuffle=False)
    ...     xb, yb = batch([x, y], batch_size=2)
    ...     with tf.train.MonitoredSession() as sess:
    ...         while not sess.should_stop():
    ...             print(sess.run([xb, yb]))
    [array([1, 2], dtype=int32), array([10, 20], dtype=int32)]
    [array([3, 4], dtype=int32), array([30, 40], dtype=int32)]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import GraphKeys, get_default_graph, name_scope
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import as_shape
from sparseflow._src.ops import array_fill_ops, array_index_ops, array_shape_ops, control_flow_ops, core_ops, math_ops
from sparseflow._src.ops.queue_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from sparseflow._src.ops.random_ops import random_shuffle
from sparseflow._src.ops.variables import Variable
from sparseflow._src.training.session.queue_runner import QueueRunner, add_queue_runner

__all__ = ["limit_epochs", "input_producer", "string_input_producer", "range_input_producer", "slice_input_producer",
           "batch", "batch_join", "shuffle_batch", "shuffle_batch_join"]


# ---------------------------------------------------------------------------- producers
def limit_epochs(tensor, num_epochs=None, name=None):
    """``tensor``, but OutOfRangeError after it was evaluated ``num_epochs`` times (None: forever)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = convert_to_tensor(0, dtype=dtypes.int64)
        epochs = Variable(zero64, name="epochs", trainable=False, collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with get_default_graph().control_dependencies([counter]):
            return core_ops.identity(tensor, name=scope)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFOQueue filled with the rows of ``input_tensor`` (shuffled per epoch with ``shuffle``)."""
    del summary_name  # sparseflow writes no summaries
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(as_shape(element_shape) if element_shape is not None
                                                         else input_tensor.shape[1:])
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or `element_shape` must be "
                             "specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype], shapes=[element_shape],
                      shared_name=shared_name, name=name)
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                          name=None, cancel_op=None):
    """A queue of the strings of ``string_tensor`` (e.g. file names), epoch after epoch."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not string_tensor:
        raise ValueError(not_null_err)
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        check = control_flow_ops.Assert(math_ops.greater(array_shape_ops.size(string_tensor), 0), [not_null_err])
        with get_default_graph().control_dependencies([check]):
            string_tensor = core_ops.identity(string_tensor)
        return input_producer(string_tensor, element_shape=[], num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                              capacity=capacity, shared_name=shared_name, name=scope, cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    """A queue of the integers ``0 .. limit - 1``, epoch after epoch."""
    with name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = array_fill_ops.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity, shared_name, None, scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """One row of every tensor of ``tensor_list`` at a time (the same row index for all)."""
    with name_scope(name, "input_producer", tensor_list):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_shape_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                     capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [array_index_ops.gather(t, index) for t in tensor_list]


# ---------------------------------------------------------------------------- batchers
def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    return tensors


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if len(original) == 1:
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _validate(tensor_list, what):
    if any(isinstance(t, SparseTensor) for t in tensor_list):
        raise NotImplementedError(f"{what}: SparseTensor inputs are not supported by sparseflow's queue "
                                  f"batching; batch their dense components, or use tf.data.")
    tensor_list = [convert_to_tensor(t) for t in tensor_list]
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {what}().")
    return tensor_list


def _dtypes(tensor_list_list):
    types = [t.dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        if [t.dtype for t in other] != types:
            raise TypeError(f"Expected types to be consistent: {', '.join(x.name for x in types)} vs. "
                            f"{', '.join(t.dtype.name for t in other)}.")
    return [t.base_dtype for t in types]


def _shapes(tensor_list_list, shapes, enqueue_many):
    if shapes is not None:
        return shapes
    out = []
    for i in range(len(tensor_list_list[0])):
        merged = None
        for tl in tensor_list_list:
            s = tl[i].shape
            if s.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tl[i]}")
            if enqueue_many:
                s = s.with_rank_at_least(1)[1:]
            merged = s if merged is None else merged.merge_with(s)
        out.append(merged.as_list())
    return out


def _check_keep_input(keep_input):
    if keep_input is not True:
        raise NotImplementedError("keep_input (tf.train.maybe_batch) is not supported by sparseflow.")


def _add_runner(queue, enqueue_ops):
    add_queue_runner(QueueRunner(queue, enqueue_ops))


def _dequeue(queue, batch_size, allow_smaller_final_batch, name):
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch(tensors, batch_size, keep_input, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
           dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    _check_keep_input(keep_input)
    tensor_list = _as_tensor_list(tensors)
    with name_scope(name, "batch", list(tensor_list)) as scope:
        tensor_list = _validate(tensor_list, "batch")
        types, shapes = _dtypes([tensor_list]), _shapes([tensor_list], shapes, enqueue_many)
        queue_cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = queue_cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        enqueue = queue.enqueue_many(tensor_list) if enqueue_many else queue.enqueue(tensor_list)
        _add_runner(queue, [enqueue] * num_threads)
        return _as_original_type(tensors, _dequeue(queue, batch_size, allow_smaller_final_batch, scope))


def _batch_join(tensors_list, batch_size, keep_input, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    _check_keep_input(keep_input)
    lists = [_as_tensor_list(t) for t in tensors_list]
    if not lists:
        raise ValueError("Expected at least one set of tensors")
    with name_scope(name, "batch_join", [t for tl in lists for t in tl]) as scope:
        lists = [_validate(tl, "batch_join") for tl in lists]
        types, shapes = _dtypes(lists), _shapes(lists, shapes, enqueue_many)
        queue_cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = queue_cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        _add_runner(queue, [queue.enqueue_many(tl) if enqueue_many else queue.enqueue(tl) for tl in lists])
        return _as_original_type(tensors_list[0], _dequeue(queue, batch_size, allow_smaller_final_batch, scope))


def _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                   enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    _check_keep_input(keep_input)
    tensor_list = _as_tensor_list(tensors)
    with name_scope(name, "shuffle_batch", list(tensor_list)) as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        tensor_list = _validate(tensor_list, "shuffle_batch")
        types, shapes = _dtypes([tensor_list]), _shapes([tensor_list], shapes, enqueue_many)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
                                   shapes=shapes, shared_name=shared_name)
        enqueue = queue.enqueue_many(tensor_list) if enqueue_many else queue.enqueue(tensor_list)
        _add_runner(queue, [enqueue] * num_threads)
        return _as_original_type(tensors, _dequeue(queue, batch_size, allow_smaller_final_batch, scope))


def _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                        name=None):
    _check_keep_input(keep_input)
    lists = [_as_tensor_list(t) for t in tensors_list]
    if not lists:
        raise ValueError("Expected at least one set of tensors")
    with name_scope(name, "shuffle_batch_join", [t for tl in lists for t in tl]) as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        lists = [_validate(tl, "shuffle_batch_join") for tl in lists]
        types, shapes = _dtypes(lists), _shapes(lists, shapes, enqueue_many)
        queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed, dtypes=types,
                                   shapes=shapes, shared_name=shared_name)
        _add_runner(queue, [queue.enqueue_many(tl) if enqueue_many else queue.enqueue(tl) for tl in lists])
        return _as_original_type(tensors_list[0], _dequeue(queue, batch_size, allow_smaller_final_batch, scope))


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of ``batch_size`` examples, filled by ``num_threads`` threads (a list or dict of tensors
    in, the same structure out; a one-tensor list gives a tensor). ``dynamic_pad`` pads dimensions
    given as None; ``allow_smaller_final_batch`` returns the rest at the end of the input."""
    return _batch(tensors, batch_size, True, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """Like ``batch``, with one thread per element of ``tensors_list`` (lists of like tensors)."""
    return _batch_join(tensors_list, batch_size, True, capacity, enqueue_many, shapes, dynamic_pad,
                       allow_smaller_final_batch, shared_name, name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of examples drawn at random from a RandomShuffleQueue of ``capacity`` that keeps at
    least ``min_after_dequeue`` examples (until its input ends) for mixing."""
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, True, num_threads, seed, enqueue_many,
                          shapes, allow_smaller_final_batch, shared_name, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Like ``shuffle_batch``, with one thread per element of ``tensors_list``."""
    return _shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, True, seed, enqueue_many,
                               shapes, allow_smaller_final_batch, shared_name, name)
