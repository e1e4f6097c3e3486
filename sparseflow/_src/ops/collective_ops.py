"""Collective ops (TensorFlow's names, inputs and attrs): all-reduce, all-gather and broadcast of a
tensor among the ``group_size`` member devices that run an op with the same ``group_key``.

=======================  ====================================================================
op                       meaning
=======================  ====================================================================
CollectiveReduce(V2)     every member gets the elementwise ``merge_op`` (Add, Mul, Min, Max)
                         of all members' inputs, then ``final_op`` (Id, or Div by group_size:
                         the mean); identical bits on every member
CollectiveGather(V2)     every member gets all inputs concatenated along dim 0, in rank order
CollectiveBcastSend(V2)  the root: sends its input to every other member (and returns it)
CollectiveBcastRecv(V2)  every other member: returns the root's tensor (``shape``, ``T`` given)
CollectiveReduceStart    starts an all-reduce of ``N`` tensors fused into one buffer (a gradient
                         bucket) and returns at once: a handle; the ring runs in the background
                         while the step goes on
CollectiveReduceDone     waits for the run its handle started; its ``N`` reduced tensors
=======================  ====================================================================

V1 ops take ``group_size``, ``group_key`` and ``instance_key`` as attrs, V2 ops as int32 inputs.
Members are ranked by job, task and device index. The n-th run of an ``instance_key`` on one member
meets the n-th run on every other, so an op that runs every step needs no per-step key. A run
waits at most ``timeout_seconds`` (0: ``SPARSEFLOW_COLLECTIVE_TIMEOUT``, 120 s by default) and
never beyond the step's deadline; a member that does not take part is named in the error.
The Start/Done pair (XLA's
``all-reduce-start`` / ``all-reduce-done``) lets an all-reduce overlap with the ops that run between
them: the master orders a Start as early as it can and a Done as late as it can (runtime/master.py,
``kernels.collective_kernels.STARTS_EARLY``).
Members in other processes are reached through the ``tf.train.Server`` of the session
(shared memory on the same host, gRPC otherwise; see docs/distributed.md). Like TensorFlow's,
these ops have no gradient.

Example (two devices of one process):
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     outs = []
    ...     for i in range(2):
    ...         with tf.device(f"/cpu:{i}"):
    ...             outs.append(all_reduce(tf.constant([1.0, 2.0]) * (i + 1), 2, 1, 1, final_op="Div"))
    ...     with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
    ...         print(sess.run(outs))
    [array([1.5, 3. ], dtype=float32), array([1.5, 3. ], dtype=float32)]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from sparseflow._src.ops.array_util import constant_value_as_shape

__all__ = ["all_reduce", "all_reduce_v2", "all_gather", "all_gather_v2", "broadcast_send", "broadcast_recv",
           "broadcast_send_v2", "broadcast_recv_v2", "all_reduce_start", "all_reduce_done", "COLLECTIVE_OP_TYPES"]

COLLECTIVE_OP_TYPES = ("CollectiveReduce", "CollectiveGather", "CollectiveBcastSend", "CollectiveBcastRecv",
                       "CollectiveReduceV2", "CollectiveGatherV2", "CollectiveBcastSendV2", "CollectiveBcastRecvV2",
                       "CollectiveReduceStart", "CollectiveReduceDone")

_REDUCE_T = "T: {bfloat16, float, half, double, int32, int64}"
_GATHER_T = "T: {float, half, double, int32, int64}"
_BCAST_T = "T: {bool, float, half, double, int32, int64}"
_KEYS_V1 = ["group_size: int", "group_key: int", "instance_key: int"]
_COMMON = ["communication_hint: string = 'auto'", "timeout_seconds: float = 0"]
_KEYS_V2 = ["group_size: int32", "group_key: int32", "instance_key: int32"]
_MERGE = ["merge_op: {'Min', 'Max', 'Mul', 'Add'}", "final_op: {'Id', 'Div'}"]


def _same_as_input(op):
    return [op.inputs[0].shape]


def _gathered(op):
    shape = op.inputs[0].shape
    if shape.rank is None:
        return [unknown_shape()]
    if shape.rank == 0:
        return [TensorShape([None])]
    return [TensorShape([None] + shape.as_list()[1:])]


def _from_shape_attr(op):
    return [as_shape(op.get_attr("shape"))]


def _from_shape_input(op):
    return [constant_value_as_shape(op.inputs[3])]


register_op("CollectiveReduce", inputs=["input: T"], outputs=["data: T"],
            attrs=[_REDUCE_T, *_KEYS_V1, *_MERGE, "subdiv_offsets: list(int)", "wait_for: list(int) = []", *_COMMON],
            shape_fn=_same_as_input, is_stateful=True)
register_op("CollectiveGather", inputs=["input: T"], outputs=["data: T"],
            attrs=[_GATHER_T, *_KEYS_V1, "shape: shape", *_COMMON], shape_fn=_gathered, is_stateful=True)
register_op("CollectiveBcastSend", inputs=["input: T"], outputs=["data: T"],
            attrs=[_BCAST_T, *_KEYS_V1, "shape: shape", *_COMMON], shape_fn=_same_as_input, is_stateful=True)
register_op("CollectiveBcastRecv", outputs=["data: T"], attrs=[_BCAST_T, *_KEYS_V1, "shape: shape", *_COMMON],
            shape_fn=_from_shape_attr, is_stateful=True)
register_op("CollectiveReduceV2", inputs=["input: T", *_KEYS_V2, "ordering_token: Nordering_token * resource"],
            outputs=["data: T"], attrs=[_REDUCE_T, *_MERGE, *_COMMON, "is_stateless: bool = false",
                                        "Nordering_token: int >= 0 = 0", "max_subdivs_per_device: int = -1"],
            shape_fn=_same_as_input, is_stateful=True)
register_op("CollectiveGatherV2", inputs=["input: T", *_KEYS_V2, "ordering_token: Nordering_token * resource"],
            outputs=["data: T"], attrs=[_GATHER_T, *_COMMON, "is_stateless: bool = false",
                                        "Nordering_token: int >= 0 = 0"],
            shape_fn=_gathered, is_stateful=True)
register_op("CollectiveBcastSendV2", inputs=["input: T", *_KEYS_V2], outputs=["data: T"], attrs=[_BCAST_T, *_COMMON],
            shape_fn=_same_as_input, is_stateful=True)
register_op("CollectiveBcastRecvV2", inputs=[*_KEYS_V2, "shape: Tshape"], outputs=["data: T"],
            attrs=[_BCAST_T, "Tshape: {int32, int64} = DT_INT32", *_COMMON], shape_fn=_from_shape_input,
            is_stateful=True)
register_op("CollectiveReduceStart", inputs=["input: N * T"], outputs=["handle: variant"],
            attrs=[_REDUCE_T, "N: int >= 1", *_KEYS_V1, *_MERGE, *_COMMON], shape_fn=lambda op: [TensorShape([])],
            is_stateful=True)
register_op("CollectiveReduceDone", inputs=["handle: variant"], outputs=["data: N * T"],
            attrs=[_REDUCE_T, "N: int >= 1", "shapes: list(shape)"],
            shape_fn=lambda op: [as_shape(s) for s in op.get_attr("shapes")], is_stateful=True)


def _v1_attrs(group_size, group_key, instance_key, communication_hint, timeout):
    return {"group_size": int(group_size), "group_key": int(group_key), "instance_key": int(instance_key),
            "communication_hint": communication_hint, "timeout_seconds": float(timeout)}


def all_reduce(t, group_size, group_key, instance_key, merge_op="Add", final_op="Id", subdiv_offsets=(0,),
               communication_hint="auto", timeout=0, name=None):
    """``CollectiveReduce``: ``merge_op`` of ``t`` over the group, then ``final_op`` ("Div": mean)."""
    attrs = _v1_attrs(group_size, group_key, instance_key, communication_hint, timeout)
    attrs.update(merge_op=merge_op, final_op=final_op, subdiv_offsets=list(subdiv_offsets))
    return apply_op("CollectiveReduce", [t], attrs, name=name or "CollectiveReduce").outputs[0]


def all_reduce_v2(t, group_size, group_key, instance_key, merge_op="Add", final_op="Id",
                  communication_hint="auto", timeout=0, ordering_token=None, name=None):
    """``CollectiveReduceV2``: ``group_size``, ``group_key`` and ``instance_key`` are int32 tensors."""
    tokens = list(ordering_token or [])
    attrs = {"merge_op": merge_op, "final_op": final_op, "communication_hint": communication_hint,
             "timeout_seconds": float(timeout)}
    return apply_op("CollectiveReduceV2", [t, _i32(group_size), _i32(group_key), _i32(instance_key), tokens],
                    attrs, name=name or "CollectiveReduceV2").outputs[0]


def all_gather(t, group_size, group_key, instance_key, communication_hint="auto", timeout=0, name=None):
    """``CollectiveGather``: the members' ``t`` concatenated along dim 0, in rank order."""
    attrs = _v1_attrs(group_size, group_key, instance_key, communication_hint, timeout)
    attrs["shape"] = _shape_of(t)
    return apply_op("CollectiveGather", [t], attrs, name=name or "CollectiveGather").outputs[0]


def all_gather_v2(t, group_size, group_key, instance_key, communication_hint="auto", timeout=0,
                  ordering_token=None, name=None):
    """``CollectiveGatherV2``."""
    attrs = {"communication_hint": communication_hint, "timeout_seconds": float(timeout)}
    return apply_op("CollectiveGatherV2", [t, _i32(group_size), _i32(group_key), _i32(instance_key),
                                           list(ordering_token or [])], attrs,
                    name=name or "CollectiveGatherV2").outputs[0]


def broadcast_send(t, shape, dtype, group_size, group_key, instance_key, communication_hint="auto", timeout=0,
                   name=None):
    """``CollectiveBcastSend``: the root's side of a broadcast (returns ``t``)."""
    attrs = _v1_attrs(group_size, group_key, instance_key, communication_hint, timeout)
    attrs.update(shape=as_shape(shape), T=dtypes.as_dtype(dtype))
    return apply_op("CollectiveBcastSend", [t], attrs, name=name or "CollectiveBcastSend").outputs[0]


def broadcast_recv(shape, dtype, group_size, group_key, instance_key, communication_hint="auto", timeout=0,
                   name=None):
    """``CollectiveBcastRecv``: a receiver's side of a broadcast (returns the root's tensor)."""
    attrs = _v1_attrs(group_size, group_key, instance_key, communication_hint, timeout)
    attrs.update(shape=as_shape(shape), T=dtypes.as_dtype(dtype))
    return apply_op("CollectiveBcastRecv", [], attrs, name=name or "CollectiveBcastRecv").outputs[0]


def broadcast_send_v2(t, group_size, group_key, instance_key, communication_hint="auto", timeout=0, name=None):
    """``CollectiveBcastSendV2``."""
    attrs = {"communication_hint": communication_hint, "timeout_seconds": float(timeout)}
    return apply_op("CollectiveBcastSendV2", [t, _i32(group_size), _i32(group_key), _i32(instance_key)], attrs,
                    name=name or "CollectiveBcastSendV2").outputs[0]


def broadcast_recv_v2(shape, dtype, group_size, group_key, instance_key, communication_hint="auto", timeout=0,
                      name=None):
    """``CollectiveBcastRecvV2``: ``shape`` is an int32/int64 vector tensor."""
    attrs = {"communication_hint": communication_hint, "timeout_seconds": float(timeout),
             "T": dtypes.as_dtype(dtype)}
    return apply_op("CollectiveBcastRecvV2", [_i32(group_size), _i32(group_key), _i32(instance_key), shape], attrs,
                    name=name or "CollectiveBcastRecvV2").outputs[0]


def _i32(v):
    from sparseflow._src.framework.tensor_conversion import convert_to_tensor

    return convert_to_tensor(v, dtype=dtypes.int32)


def _shape_of(t):
    from sparseflow._src.framework.tensor_conversion import convert_to_tensor

    return convert_to_tensor(t).shape


def all_reduce_start(tensors, group_size, group_key, instance_key, merge_op="Add", final_op="Id",
                     communication_hint="auto", timeout=0, name=None):
    """``CollectiveReduceStart``: starts one all-reduce of ``tensors`` (one dtype) fused into one
    flat buffer; returns its handle for :func:`all_reduce_done`."""
    from sparseflow._src.framework.tensor_conversion import convert_to_tensor

    tensors = [convert_to_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError("all_reduce_start needs at least one tensor.")
    if len({t.dtype.base_dtype for t in tensors}) != 1:
        raise ValueError(f"all_reduce_start fuses tensors of one dtype, got "
                         f"{sorted({t.dtype.base_dtype.name for t in tensors})}: start one run per dtype.")
    attrs = _v1_attrs(group_size, group_key, instance_key, communication_hint, timeout)
    attrs.update(merge_op=merge_op, final_op=final_op)
    return apply_op("CollectiveReduceStart", [tensors], attrs, name=name or "CollectiveReduceStart").outputs[0]


def all_reduce_done(handle, dtype, shapes, name=None) -> list:
    """``CollectiveReduceDone``: the reduced tensors of the run ``handle`` started (``shapes``: their
    static shapes, in order)."""
    shapes = [as_shape(s) for s in shapes]
    attrs = {"T": dtypes.as_dtype(dtype), "N": len(shapes), "shapes": shapes}
    return list(apply_op("CollectiveReduceDone", [handle], attrs, name=name or "CollectiveReduceDone").outputs)
