"""Collective ops (all-reduce, all-gather, broadcast; TensorFlow's V1 and V2 forms) across the two CPU
devices of one session: member 0 gets ``a``, member 1 gets ``b``, and each program returns both
members' results. Checked against NumPy (the sum, product, min, max or mean of the members, their
concatenation, member 0's value), in every input mode; a group key and instance key per build, so
that no run pairs with another sample's.
"""

from __future__ import annotations

import itertools

import numpy as np

from tests.opdb.spec import OpEntry, Sample, empty, regular

_NOT_TF = ("a collective runs across the members of a group (here the two CPU devices of one session); "
           "compared with NumPy's reduction, concatenation or copy of the members' inputs")
_KEYS = itertools.count(1000)
_TIMEOUT = 10.0  # seconds a member waits for the other (a sample whose other member failed ends there)
_MERGE = {"Add": np.add, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum}


def _members(tf, make):
    """``make(i)`` on /cpu:i for the two members; both results."""
    outs = []
    for i in range(2):
        with tf.device(f"/cpu:{i}"):
            outs.append(make(i))
    return outs


def _reduce(v2):
    def build(tf, a, b, merge_op="Add", final_op="Id"):
        from sparseflow.distribute import collectives as C

        group, instance = next(_KEYS), next(_KEYS)
        fn = C.all_reduce_v2 if v2 else _reduce_v1
        return _members(tf, lambda i: fn((a, b)[i], 2, group, instance, merge_op=merge_op, final_op=final_op,
                                         timeout=_TIMEOUT))
    return build


def _reduce_v1(t, group_size, group_key, instance_key, merge_op, final_op, timeout):
    from sparseflow._src.ops.collective_ops import all_reduce

    return all_reduce(t, group_size, group_key, instance_key, merge_op=merge_op, final_op=final_op, timeout=timeout)


def _reduce_start_done(second):
    """A bucket all-reduce (``CollectiveReduceStart`` + ``CollectiveReduceDone``, mean or sum): the
    member's input alone, or (``second``) after a constant of another size in the same bucket, so
    that the split after the run is checked too."""
    def build(tf, a, b, final_op="Id"):
        from sparseflow._src.ops import collective_ops as C

        group, instance = next(_KEYS), next(_KEYS)

        def member(i):
            x = (a, b)[i]
            parts = [tf.fill([3], tf.cast(5, x.dtype)), x] if second else [x]
            handle = C.all_reduce_start(parts, 2, group, instance, final_op=final_op, timeout=_TIMEOUT)
            return C.all_reduce_done(handle, x.dtype, [p.shape for p in parts])[-1]
        return _members(tf, member)
    return build


def _gather(v2):
    def build(tf, a, b):
        from sparseflow._src.ops.collective_ops import all_gather
        from sparseflow.distribute import collectives as C

        group, instance = next(_KEYS), next(_KEYS)
        fn = C.all_gather_v2 if v2 else all_gather
        return _members(tf, lambda i: fn((a, b)[i], 2, group, instance, timeout=_TIMEOUT))
    return build


def _broadcast(v2):
    def build(tf, a, b):
        from sparseflow.distribute import collectives as C

        group, instance = next(_KEYS), next(_KEYS)
        # the receiver's shape: a static attr (V1: the samples run with known shapes) or an input (V2)
        shape = tf.shape(b) if v2 else b.shape.as_list()

        def member(i):
            if i == 0:
                if v2:
                    return C.broadcast_send_v2(a, 2, group, instance, timeout=_TIMEOUT)
                return C.broadcast_send(a, shape, a.dtype, 2, group, instance, timeout=_TIMEOUT)
            if v2:
                return C.broadcast_recv_v2(shape, a.dtype, 2, group, instance, timeout=_TIMEOUT)
            return C.broadcast_recv(shape, a.dtype, 2, group, instance, timeout=_TIMEOUT)
        return _members(tf, member)
    return build


def _check_reduce(inputs, attrs, outs):
    a, b = np.asarray(inputs["a"]), np.asarray(inputs["b"])
    if outs is None:
        return "" if a.shape != b.shape else "raised on members of the same shape"
    if a.shape != b.shape:
        return f"reduced members of shapes {list(a.shape)} and {list(b.shape)}"
    want = _MERGE[attrs.get("merge_op", "Add")](a, b)
    if attrs.get("final_op", "Id") == "Div":  # integers: C's division, truncating toward zero (as TF's)
        want = np.fix(want / 2).astype(a.dtype) if np.issubdtype(a.dtype, np.integer) else want / 2
    for member, got in enumerate(outs):
        if got.dtype != a.dtype or not np.allclose(got, want, rtol=1e-6):
            return f"member {member} got {got.tolist()} ({got.dtype}), want {want.tolist()}"
    return ""


def _check_gather(inputs, attrs, outs):
    """Members concatenated along dim 0 (scalars: stacked into a vector)."""
    a, b = np.asarray(inputs["a"]), np.asarray(inputs["b"])
    ok = a.shape[1:] == b.shape[1:] and a.ndim == b.ndim
    if outs is None:
        return "" if not ok else "raised on members that concatenate"
    if not ok:
        return f"gathered members of shapes {list(a.shape)} and {list(b.shape)}"
    want = np.concatenate([a.reshape(-1) if a.ndim == 0 else a, b.reshape(-1) if b.ndim == 0 else b])
    bad = [m for m, got in enumerate(outs) if got.shape != want.shape or not np.array_equal(got, want)]
    return f"members {bad} got other than the concatenation {want.tolist()}" if bad else ""


def _check_broadcast(inputs, attrs, outs):
    a, b = np.asarray(inputs["a"]), np.asarray(inputs["b"])
    if outs is None:
        return "" if a.shape != b.shape else "raised on a receiver of the sender's shape"
    if a.shape != b.shape:
        return f"a receiver of shape {list(b.shape)} took a value of shape {list(a.shape)}"
    bad = [m for m, got in enumerate(outs) if not np.array_equal(got, a)]
    return f"members {bad} did not get the sender's value {a.tolist()}" if bad else ""


def _samples(check, ops=("Add",), means=False, modes=None):
    extra = {} if modes is None else {"modes": modes}
    out = [Sample("matrix", {"a": regular(2, 3), "b": regular(2, 3, seed=1)}, check=check, **extra),
           Sample("empty", {"a": empty(0, 3), "b": empty(0, 3)}, check=check, **extra),
           Sample("mismatched", {"a": regular(2, 3), "b": regular(3, 3, seed=1)}, check=check, **extra),
           Sample("scalar", {"a": regular(), "b": regular(seed=1)}, check=check, **extra)]
    for op in ops[1:]:
        out.append(Sample(f"merge_{op}", {"a": regular(4), "b": regular(4, seed=1)}, {"merge_op": op}, check=check))
    if means:
        out.append(Sample("mean", {"a": regular(5), "b": regular(5, seed=2)}, {"final_op": "Div"}, check=check))
    return out


_DTYPES = ("float32", "float64", "int32", "int64")
_COMMON = dict(dtypes=_DTYPES, tf=_NOT_TF, stateful=True, cpu_devices=2)
ENTRIES = [
    OpEntry("CollectiveReduce", _samples(_check_reduce, ("Add", "Mul", "Min", "Max"), means=True),
            build=_reduce(False), **_COMMON),
    OpEntry("CollectiveReduceV2", _samples(_check_reduce, ("Add", "Max"), means=True), build=_reduce(True), **_COMMON),
    OpEntry("CollectiveGather", _samples(_check_gather), build=_gather(False), **_COMMON),
    OpEntry("CollectiveGatherV2", _samples(_check_gather), build=_gather(True), **_COMMON),
]
ENTRIES += [
    OpEntry("CollectiveReduceStart", _samples(_check_reduce, means=True), build=_reduce_start_done(False), **_COMMON),
    OpEntry("CollectiveReduceDone", _samples(_check_reduce, means=True), build=_reduce_start_done(True), **_COMMON),
]
for _v2, _suffix in ((False, ""), (True, "V2")):
    for _op in ("CollectiveBcastSend", "CollectiveBcastRecv"):  # V1's receiver needs a static shape attr
        ENTRIES.append(OpEntry(_op + _suffix, _samples(_check_broadcast, modes=None if _v2 else ("const", "static")),
                               build=_broadcast(_v2), **_COMMON))
