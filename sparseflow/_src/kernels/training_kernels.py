"""CPU kernels of the fused optimizer updates (``ApplyAdam``, ``SparseApplyFtrl``, ...).

One kernel call updates a variable and all its slots under their locks, with one numba loop
(``training_update_fns``). Stored arrays are never written while anyone may hold them: each
kernel node keeps, per variable and slot, one *private* buffer (``var_buffers``). A dense update
writes the new values into that buffer, on all cores when the variable is large
(``intra_op.parallel_for``), and swaps it in; the array it replaces becomes the next private
buffer when nothing else references it. When nothing but the variable references its array, a
dense update writes that array in place instead (``var_buffers.claim_in_place``; readers
arriving meanwhile wait for the lock), a third less memory traffic than a buffer. A sparse
update first brings the private buffer up to date by copying the rows the previous update
changed, then updates the gradient's rows in place and swaps: a step costs O(rows), not
O(variable).

Sparse gradients may repeat indices: rows with equal indices are summed first, so each row gets
exactly one update with the total gradient (nothing is dropped, nothing applied twice).
Variables of dtype half/bfloat16 are updated in float32 and rounded back.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import training_update_fns as fns
from sparseflow._src.kernels.intra_op import parallel_for
from sparseflow._src.kernels.registry import register_kernel
from sparseflow._src.kernels.var_buffers import Buffers, claim_in_place, finish_in_place, publish, retire, take_spare

PARALLEL_MIN_ELEMENTS = 1 << 16  # elements per thread below which a dense update runs on one thread


def _bad(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _fmt(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


# ---------------------------------------------------------------------- per-op tables
# op base name -> (ref input names, scalar input names, dense loop, sparse loop, hyper-parameter fn).
# The hyper-parameter fn gets a dtype constructor ``t``, the scalar inputs in order and the node's
# attrs, and returns the loop's trailing arguments.
def _hp_gd(t, s, a):
    return (t(s[0]),)


def _hp_proximal(t, s, a):
    lr, l1, l2 = (t(x) for x in s)
    return lr, t(lr * l1), t(t(1) + lr * l2), t(0)


def _hp_momentum(t, s, a):
    return t(s[0]), t(s[1]), bool(a.get("use_nesterov", False))


def _hp_adagrad(t, s, a):
    return t(s[0]), bool(a.get("update_slots", True))


def _hp_adam(t, s, a):
    b1p, b2p, lr, b1, b2, eps = (t(x) for x in s)
    alpha = t(lr * np.sqrt(t(1) - b2p) / (t(1) - b1p))
    return alpha, b1, t(t(1) - b1), t(t(1) - b2), eps, bool(a.get("use_nesterov", False))


def _hp_ftrl(t, s, a):
    if len(s) == 5:
        lr, l1, l2, shrink, power = (t(x) for x in s)
    else:
        (lr, l1, l2, power), shrink = (t(x) for x in s), t(0)
    if lr <= 0:
        raise _bad(f"lr must be a positive scalar: {lr}")
    if l1 < 0 or l2 < 0 or shrink < 0:
        raise _bad(f"l1, l2 and l2_shrinkage regularization strengths must be >= 0, got {l1}, {l2}, {shrink}")
    if power > 0:
        raise _bad(f"lr_power must be a non-positive scalar: {power}")
    return (lr, l1, t(2 * l2), t(2 * shrink), t(-power), bool(power == t(-0.5)),
            bool(a.get("multiply_linear_by_lr", False)), t(0))


def _hp_rmsprop(t, s, a):
    lr, rho, momentum, eps = (t(x) for x in s)
    return lr, t(t(1) - rho), momentum, eps


def _hp_adadelta(t, s, a):
    lr, rho, eps = (t(x) for x in s)
    return lr, rho, t(t(1) - rho), eps


_OPS = {
    "GradientDescent": ((), ("alpha",), fns.dense_gd, None, _hp_gd),
    "ProximalGradientDescent": ((), ("alpha", "l1", "l2"), fns.dense_proximal_gd, fns.sparse_proximal_gd,
                                _hp_proximal),
    "Momentum": (("accum",), ("lr", "momentum"), fns.dense_momentum, fns.sparse_momentum, _hp_momentum),
    "Adagrad": (("accum",), ("lr",), fns.dense_adagrad, fns.sparse_adagrad, _hp_adagrad),
    "Adam": (("m", "v"), ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"), fns.dense_adam, None,
             _hp_adam),
    "Ftrl": (("accum", "linear"), ("lr", "l1", "l2", "lr_power"), fns.dense_ftrl, fns.sparse_ftrl, _hp_ftrl),
    "FtrlV2": (("accum", "linear"), ("lr", "l1", "l2", "l2_shrinkage", "lr_power"), fns.dense_ftrl,
               fns.sparse_ftrl, _hp_ftrl),
    "RMSProp": (("ms", "mom"), ("lr", "rho", "momentum", "epsilon"), fns.dense_rmsprop, fns.sparse_rmsprop,
                _hp_rmsprop),
    "CenteredRMSProp": (("mg", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"), fns.dense_centered_rmsprop,
                        fns.sparse_centered_rmsprop, _hp_rmsprop),
    "Adadelta": (("accum", "accum_update"), ("lr", "rho", "epsilon"), fns.dense_adadelta, fns.sparse_adadelta,
                 _hp_adadelta),
}
# Position of the gradient among the non-ref inputs, as in TensorFlow's OpDefs ("first", "last", after a name).
_GRAD_AT = {"Momentum": "lr", "Ftrl": "first", "FtrlV2": "first"}


def _layout(base: str, sparse: bool):
    """(ref names, positions of the scalars, of the gradient, of the indices) in the op's inputs."""
    refs, scalars = _OPS[base][:2]
    names = ["grad", "indices"] if sparse else ["grad"]
    where = _GRAD_AT.get(base, "last")
    rest = list(scalars)
    if where == "first":
        rest = names + rest
    elif where == "last":
        rest = rest + names
    else:
        at = rest.index(where) + 1
        rest = rest[:at] + names + rest[at:]
    n = 1 + len(refs)
    pos = {name: n + i for i, name in enumerate(rest)}
    return ("var",) + refs, [pos[s] for s in scalars], pos["grad"], pos.get("indices")


# ---------------------------------------------------------------------- storage (kernels/var_buffers.py)
def _lock(refs):
    locks = sorted({id(r.lock): r.lock for r in refs}.items())
    for _, lk in locks:
        lk.acquire()
    return [lk for _, lk in locks]


def _unlock(locks):
    for lk in reversed(locks):
        lk.release()


def _read(refs, ref_names, op_type) -> list:
    olds = []
    for ref, name in zip(refs, ref_names):
        v = ref.value
        if v is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized variables: {ref.name} ({name} of {op_type})")
        olds.append(v)
    shape = np.shape(olds[0])
    for v, name in zip(olds[1:], ref_names[1:]):
        if np.shape(v) != shape:
            raise _bad(f"var and {name} do not have the same shape {_fmt(shape)} {_fmt(np.shape(v))}")
    return olds


def _scalars(args, positions, names) -> list:
    out = []
    for p, name in zip(positions, names):
        x = args[p]
        if np.ndim(x) != 0:
            raise _bad(f"{name} is not a scalar: {_fmt(np.shape(x))}")
        out.append(x)
    return out


def _work_dtype(node):
    dt = np.dtype(node.attrs["T"].as_numpy_dtype)
    if dt in (np.dtype(np.float32), np.dtype(np.float64)):
        return dt, dt
    if dt.kind == "f" or node.attrs["T"].name == "bfloat16":  # half, bfloat16: update in float32
        return dt, np.dtype(np.float32)
    raise errors.UnimplementedError(
        None, None, f"{node.op_type} supports half, bfloat16, float and double variables, not {node.attrs['T'].name}")


# ---------------------------------------------------------------------- kernels
def _factory(base: str, sparse: bool):
    """The kernel factory of ``Apply<base>`` or ``SparseApply<base>``: under the variables' locks,
    compute the new values into private buffers, publish them, and recycle the old arrays."""
    ref_names, scalar_pos, grad_pos, idx_pos = _layout(base, sparse=sparse)
    scalar_names = _OPS[base][1]
    loop, hyper = _OPS[base][3 if sparse else 2], _OPS[base][4]
    n = len(ref_names)
    op_type = ("SparseApply" if sparse else "Apply") + base

    def factory(node):
        dtype, work = _work_dtype(node)
        t = work.type
        attrs = node.attrs
        storages: dict = {}

        def compute(*args):
            refs = args[:n]
            hp = hyper(t, _scalars(args, scalar_pos, scalar_names), attrs)
            locks = _lock(refs)
            try:
                st = storages.get(refs[0])
                if st is None:
                    st = storages[refs[0]] = Buffers(n)
                olds = _read(refs, ref_names, op_type)
                if sparse:
                    rows, grad = _sparse_rows(np.shape(olds[0]), args[idx_pos], args[grad_pos], work)
                    if not rows.size:
                        return refs[0]
                    news = _update_sparse(st, refs, olds, rows, grad, work, loop, hp)
                    in_place = ()
                else:
                    news, in_place = _update_dense(st, refs, olds, args[grad_pos], work, loop, hp)
                publish(refs, st, news, dtype)
                _finish(refs, in_place)
                del news
                st.rows = rows if sparse else None
                retire(st, olds)  # an array updated in place is the value still: never made a buffer
            finally:
                _unlock(locks)
            return refs[0]

        return compute

    return factory


def _outputs(st: Buffers, refs, olds: list, work) -> tuple[list, list]:
    """Where a dense update writes the new values of ``refs``: the current array itself when no one else
    holds it (``claim_in_place``; its index in the second list), else a private buffer. Called before any
    view of ``olds`` is made (a view holds its array)."""
    news, in_place = [], []
    for i in range(len(olds)):
        if claim_in_place(st, i, refs[i], olds, work):
            news.append(olds[i])
            in_place.append(i)
        else:
            news.append(take_spare(st, i, refs[i], olds[i], work, rows_valid=False, fill=False))
    return news, in_place


def _finish(refs, in_place: list) -> None:
    for i in in_place:
        finish_in_place(refs[i])


def _dense_loop(loop, ins: list, outs: list):
    """``(loop, arrays before the gradient, arrays after it)``: the in-place loop over ``outs`` when
    each output is its input's memory (``training_update_fns.IN_PLACE``: it vectorizes), else
    ``loop`` over ``ins`` and ``outs``."""
    if all(a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.dtype == b.dtype
           for a, b in zip(ins, outs)):
        return fns.IN_PLACE[loop], outs, []
    return loop, ins, outs


def _update_dense(st: Buffers, refs, olds: list, grad, work, loop, hp) -> tuple[list, list]:
    shape = np.shape(olds[0])
    if np.shape(grad) != shape:
        raise _bad(f"var and grad do not have the same shape {_fmt(shape)} {_fmt(np.shape(grad))}")
    news, in_place = _outputs(st, refs, olds, work)
    try:
        ins = [np.ascontiguousarray(v, dtype=work).reshape(-1) for v in olds]
        g = np.ascontiguousarray(grad, dtype=work).reshape(-1)
        run, before, after = _dense_loop(loop, ins, [a.reshape(-1) for a in news])
        parallel_for(lambda lo, hi: run(*[a[lo:hi] for a in before], g[lo:hi], *[a[lo:hi] for a in after], *hp),
                     g.size, PARALLEL_MIN_ELEMENTS)
    except BaseException:
        _finish(refs, in_place)
        raise
    return news, in_place


# ---------------------------------------------------------------------- sparse rows
def _sparse_rows(shape, indices, grad, work):
    """Validated unique row indices and their summed gradient rows as a 2-D array."""
    if len(shape) < 1:
        raise _bad("var must be at least 1 dimensional")
    indices = np.asarray(indices)
    if indices.ndim != 1:
        raise _bad(f"indices must be one-dimensional, got shape {_fmt(indices.shape)}")
    grad = np.asarray(grad)
    if grad.ndim != len(shape):
        raise _bad(f"var and grad do not have the same rank: {_fmt(shape)} {_fmt(grad.shape)}")
    for d in range(1, len(shape)):
        if grad.shape[d] != shape[d]:
            raise _bad(f"var and grad must match in dimension {d}: {_fmt(shape)} {_fmt(grad.shape)}")
    if grad.shape[0] != indices.shape[0]:
        raise _bad(f"grad must be the same size as indices in the first dimension: {_fmt(grad.shape)} "
                   f"{_fmt(indices.shape)}")
    bad = np.flatnonzero((indices < 0) | (indices >= shape[0]))
    if bad.size:
        raise _bad(f"Index {int(indices[bad[0]])} at offset {int(bad[0])} in indices is out of range "
                   f"[0, {shape[0]})")
    width = int(np.prod(shape[1:], dtype=np.int64))
    g = np.ascontiguousarray(grad, dtype=work).reshape(indices.shape[0], width)
    rows = indices.astype(np.intp)
    if rows.size > 1:
        unique, inverse = np.unique(rows, return_inverse=True)
        if unique.size < rows.size:  # duplicates: one update per row with the summed gradient
            summed = np.zeros((unique.size, width), work)
            fns.sum_rows(g, inverse.reshape(-1), summed)
            return unique, summed
    return rows, g


def _update_sparse(st: Buffers, refs, olds: list, rows, grad, work, loop, hp) -> list:
    shape = np.shape(olds[0])
    width = grad.shape[1]
    bufs = [take_spare(st, i, refs[i], old, work, rows_valid=True) for i, old in enumerate(olds)]
    loop(*[b.reshape(shape[0], width) for b in bufs], grad, rows, *hp)
    return bufs


def _sweep(loop, views, starts, hp):
    """``loop`` over the concatenation of the variables' elements, in chunks on all cores."""
    calls = [(*_dense_loop(loop, ins, outs), g) for ins, g, outs in views]

    def chunk(lo, hi):
        for (run, before, after, g), a in zip(calls, starts):
            s, e = max(lo - a, 0), min(hi - a, g.size)
            if s < e:
                run(*[x[s:e] for x in before], g[s:e], *[x[s:e] for x in after], *hp)

    parallel_for(chunk, starts[-1], PARALLEL_MIN_ELEMENTS)


@register_kernel("_GroupedApply")
def _grouped_apply(node):
    """The dense updates of ``N`` variables (``R`` refs each) sharing their scalars, as one parallel sweep
    over all their elements (made by the group_updates pass)."""
    base, count, per = node.attrs["base"], node.attrs["N"], node.attrs["R"]
    if base not in _OPS or len(_OPS[base][0]) + 1 != per:
        raise errors.UnimplementedError(None, None, f"_GroupedApply of Apply{base} with {per} refs per variable is "
                                                    f"not supported.")
    ref_names, scalar_names = ("var",) + _OPS[base][0], _OPS[base][1]
    loop, hyper = _OPS[base][2], _OPS[base][4]
    dtype, work = _work_dtype(node)
    t, attrs, members = work.type, node.attrs, list(node.attrs.get("members", []))
    storages: dict = {}

    def compute(*args):
        all_refs, grads = args[:count * per], args[count * per:count * per + count]
        hp = hyper(t, _scalars(args, range(count * per + count, len(args)), scalar_names), attrs)
        locks = _lock(all_refs)
        try:
            olds, news, views, claimed = [], [], [], []  # per variable; views (inputs, gradient, outputs) first
            for i in range(count):
                refs = all_refs[i * per:(i + 1) * per]
                what = f"Apply{base} ({members[i]})" if i < len(members) else f"Apply{base}"
                olds.append(_read(refs, ref_names, what))
                shape = np.shape(olds[i][0])
                if np.shape(grads[i]) != shape:
                    raise _bad(f"var and grad do not have the same shape {_fmt(shape)} {_fmt(np.shape(grads[i]))} "
                               f"in {what}")
                st = storages.get(refs[0])
                if st is None:
                    st = storages[refs[0]] = Buffers(per)
                new, in_place = _outputs(st, refs, olds[i], work)
                news.append(new)
                claimed.append(in_place)
                views.append(([np.ascontiguousarray(v, dtype=work).reshape(-1) for v in olds[i]],
                              np.ascontiguousarray(grads[i], dtype=work).reshape(-1),
                              [x.reshape(-1) for x in new]))
                del new
            starts = np.cumsum([0] + [v[1].size for v in views]).tolist()
            _sweep(loop, views, starts, hp)
            del views  # the old arrays' only holders are now ``olds``: they can become the next buffers
            for i in range(count):
                refs = all_refs[i * per:(i + 1) * per]
                st = storages[refs[0]]
                publish(refs, st, news[i], dtype)
                _finish(refs, claimed[i])
                claimed[i] = ()
                st.rows = None
                news[i] = None
                retire(st, olds[i])  # an array updated in place is the value still: never made a buffer
        finally:
            for i, in_place in enumerate(claimed):  # an error before the values were published
                _finish(all_refs[i * per:(i + 1) * per], in_place)
            _unlock(locks)

    return compute


for _base, _spec in _OPS.items():
    register_kernel("Apply" + _base)(_factory(_base, sparse=False))
    if _spec[3] is not None:
        register_kernel("SparseApply" + _base)(_factory(_base, sparse=True))
