"""CPU kernels of TopKV2, InTopKV2, FusedBatchNormV3 and FusedBatchNormGradV3."""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def _invalid(msg):
    return errors.InvalidArgumentError(None, None, msg)


def _shape_str(shape):
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def top_k_indices(x, k):
    """Indices of the ``k`` largest entries of each row (last axis), largest first, ties by index."""
    n = x.shape[-1]
    # A stable ascending sort of the reversed row puts equal values in decreasing index order;
    # reading it backwards gives descending values with equal values in increasing index order.
    order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    return (n - 1) - order


@register_kernel("TopKV2")
def _top_k(node):
    index_type = node.attrs.get("index_type")
    idx_dtype = index_type.as_numpy_dtype if index_type is not None else np.int32

    def compute(inp, k):
        if np.ndim(k) != 0:
            raise _invalid(f"k must be scalar, got shape {_shape_str(np.shape(k))}")
        k = int(k)
        if k < 0:
            raise _invalid(f"Need k >= 0, got {k}")
        x = np.asarray(inp)
        if x.ndim < 1:
            raise _invalid(f"input must be >= 1-D, got shape {_shape_str(x.shape)}")
        if x.shape[-1] < k:
            raise _invalid(f"input must have at least k columns. Had {x.shape[-1]}, needed {k}")
        if k == 0 or x.size == 0:
            shape = x.shape[:-1] + (k,)
            return np.zeros(shape, x.dtype), np.zeros(shape, idx_dtype)
        idx = top_k_indices(x, k)
        return np.take_along_axis(x, idx, axis=-1), idx.astype(idx_dtype)

    return compute


@register_kernel("ApproxTopK")
def _approx_top_k(node):
    k = int(node.attrs["k"])
    dim = int(node.attrs.get("reduction_dimension", -1))
    largest = bool(node.attrs.get("is_max_k", True))

    def compute(inp):
        x = np.asarray(inp)
        if not -x.ndim <= dim < x.ndim:
            raise _invalid(f"ApproxTopK: reduction_dimension {dim} is out of range for shape {_shape_str(x.shape)}")
        moved = np.moveaxis(x, dim, -1)
        if moved.shape[-1] < k:
            raise _invalid(f"ApproxTopK: the reduction dimension has {moved.shape[-1]} entries, fewer than k = {k}")
        if k == 0 or moved.size == 0:
            shape = moved.shape[:-1] + (k,)
            values, idx = np.zeros(shape, x.dtype), np.zeros(shape, np.int32)
        else:
            idx = top_k_indices(moved if largest else -moved, k)
            values = np.take_along_axis(moved, idx, axis=-1)
        return np.moveaxis(values, -1, dim), np.moveaxis(idx.astype(np.int32), -1, dim)

    return compute


@register_kernel("InTopKV2")
def _in_top_k(node):
    def compute(predictions, targets, k):
        pred, tgt = np.asarray(predictions), np.asarray(targets)
        if pred.ndim != 2:
            raise _invalid(f"predictions must be 2-dimensional, got {_shape_str(pred.shape)}")
        if tgt.ndim != 1:
            raise _invalid(f"targets must be 1-dimensional, got {_shape_str(tgt.shape)}")
        if pred.shape[0] != tgt.shape[0]:
            raise _invalid(f"First dimension of predictions {pred.shape[0]} must match length of targets "
                           f"{tgt.shape[0]}")
        if np.ndim(k) != 0:
            raise _invalid(f"k must be 0-D, got shape {_shape_str(np.shape(k))}")
        k = int(k)
        batch, classes = pred.shape
        valid = (tgt >= 0) & (tgt < classes)
        safe = np.where(valid, tgt, 0)
        target_pred = pred[np.arange(batch), safe] if batch else np.zeros(0, pred.dtype)
        finite_row = np.isfinite(pred).all(axis=1)
        more = (pred > target_pred[:, None]).sum(axis=1)
        return valid & finite_row & np.isfinite(target_pred) & (more < k)

    return compute


def _bn_axes(fmt, ndim):
    channel = 1 if fmt.startswith("NC") else ndim - 1
    return channel, tuple(i for i in range(ndim) if i != channel)


def _bcast(v, channel, ndim):
    return v.reshape([-1 if i == channel else 1 for i in range(ndim)])


@register_kernel("FusedBatchNormV3")
def _fused_batch_norm(node):
    eps = float(node.attrs.get("epsilon", 1e-4))
    factor = float(node.attrs.get("exponential_avg_factor", 1.0))
    fmt = node.attrs.get("data_format", "NHWC")
    training = node.attrs.get("is_training", True)
    u_dtype = node.attrs["U"].as_numpy_dtype

    def compute(x, scale, offset, mean, variance):
        x = np.asarray(x)
        if x.ndim not in (4, 5):
            raise _invalid(f"input must be 4 or 5-dimensional{_shape_str(x.shape)}")
        channel, reduce_axes = _bn_axes(fmt, x.ndim)
        depth = x.shape[channel]
        scale, offset = np.asarray(scale, np.float32), np.asarray(offset, np.float32)
        mean, variance = np.asarray(mean, np.float32), np.asarray(variance, np.float32)
        for what, v in (("scale", scale), ("offset", offset)):
            if v.shape != (depth,):
                raise _invalid(f"{what} must have the same number of elements as the channels of x, got "
                               f"{v.size} and {depth}")
        if not training or factor != 1.0:
            for what, v in (("mean", mean), ("variance", variance)):
                if v.shape != (depth,):
                    raise _invalid(f"When is_training=false or exponential_avg_factor != 1, {what} must "
                                   f"have the same number of elements as the channels of x, got {v.size} "
                                   f"and {depth}")
        xf = x.astype(np.float32)
        if training:
            count = x.size // max(depth, 1)
            with np.errstate(invalid="ignore", divide="ignore"):
                batch_mean = xf.mean(axis=reduce_axes) if count else np.full(depth, np.nan, np.float32)
                batch_var = (np.square(xf - _bcast(batch_mean, channel, x.ndim)).mean(axis=reduce_axes)
                             if count else np.full(depth, np.nan, np.float32))
            use_mean, use_var = batch_mean, batch_var
            adjust = count / (count - 1) if count > 1 else 1.0
            if factor == 1.0:
                new_mean, new_var = batch_mean, batch_var * adjust
            else:
                new_mean = (1 - factor) * mean + factor * batch_mean
                new_var = (1 - factor) * variance + factor * adjust * batch_var
            saved_mean, saved_var = (batch_mean, batch_var) if count else (np.zeros(depth, np.float32),) * 2
        else:
            use_mean, use_var = mean, variance
            new_mean, new_var = mean, variance
            saved_mean, saved_var = mean, variance
        inv = scale / np.sqrt(use_var + np.float32(eps))
        nd = x.ndim
        y = (xf - _bcast(use_mean, channel, nd)) * _bcast(inv, channel, nd) + _bcast(offset, channel, nd)
        outs = [new_mean, new_var, saved_mean, saved_var]
        # reserve_space_3 is unused on the CPU: an empty vector, as TensorFlow's.
        return (y.astype(x.dtype),) + tuple(np.asarray(o, u_dtype) for o in outs) + (np.zeros(0, u_dtype),)

    return compute


@register_kernel("FusedBatchNormGradV3")
def _fused_batch_norm_grad(node):
    eps = float(node.attrs.get("epsilon", 1e-4))
    fmt = node.attrs.get("data_format", "NHWC")
    training = node.attrs.get("is_training", True)
    u_dtype = node.attrs["U"].as_numpy_dtype

    def compute(dy, x, scale, mean, var, _reserve3):
        dy, x = np.asarray(dy), np.asarray(x)
        if dy.shape != x.shape:
            raise _invalid(f"x and y_backprop must have same shape, but x has shape {_shape_str(x.shape)} "
                           f"and y_backprop has shape {_shape_str(dy.shape)}")
        channel, axes = _bn_axes(fmt, x.ndim)
        nd = x.ndim
        dyf, xf = dy.astype(np.float32), x.astype(np.float32)
        scale, mean, var = (np.asarray(v, np.float32) for v in (scale, mean, var))
        rstd = 1.0 / np.sqrt(var + np.float32(eps))
        x_hat = (xf - _bcast(mean, channel, nd)) * _bcast(rstd, channel, nd)
        d_offset = dyf.sum(axis=axes)
        d_scale = (dyf * x_hat).sum(axis=axes)
        if training:
            count = max(x.size // max(x.shape[channel], 1), 1)
            dx = _bcast(scale * rstd, channel, nd) * (
                dyf - _bcast(d_offset / count, channel, nd) - x_hat * _bcast(d_scale / count, channel, nd))
        else:
            dx = dyf * _bcast(scale * rstd, channel, nd)
        unused = np.zeros((), u_dtype)  # reserve_space_4/5: scalars, as TensorFlow's kernel returns
        return dx.astype(x.dtype), d_scale.astype(u_dtype), d_offset.astype(u_dtype), unused, unused

    return compute


@register_kernel("LRN")
def _lrn(node):
    radius = int(node.attrs.get("depth_radius", 5))
    attrs = node.attrs
    bias, alpha = float(attrs.get("bias", 1.0)), float(attrs.get("alpha", 1.0))
    beta = float(attrs.get("beta", 0.5))

    def compute(x):
        x = np.asarray(x)
        if x.ndim != 4:
            raise _invalid(f"in must be 4-dimensional{_shape_str(x.shape)}")
        xf = x.astype(np.float32)
        sq = np.square(xf)
        csum = np.concatenate([np.zeros(x.shape[:3] + (1,), np.float32), np.cumsum(sq, axis=-1)], axis=-1)
        depth = x.shape[-1]
        hi = np.minimum(np.arange(depth) + radius + 1, depth)
        lo = np.maximum(np.arange(depth) - radius, 0)
        sqr_sum = csum[..., hi] - csum[..., lo]
        return (xf / np.power(bias + alpha * sqr_sum, beta)).astype(x.dtype)

    return compute
