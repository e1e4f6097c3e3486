"""Sampled losses for large output vocabularies: ``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss``.

Both score each example's true class(es) and ``num_sampled`` candidate classes drawn by a sampler
(log-uniform by default) instead of every class; only the looked-up rows of ``weights`` get
gradients (IndexedSlices), so training touches ``batch * num_true + num_sampled`` rows per step.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     w, b = tf.ones([50, 4]), tf.zeros([50])
    ...     loss = tf.nn.nce_loss(w, b, labels=[[3], [7]], inputs=tf.ones([2, 4]), num_sampled=5,
    ...                           num_classes=50)
    >>> loss.shape.as_list()
    [2]
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import name_scope
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops import array_ops, math_ops
from sparseflow._src.ops.candidate_sampling_ops import compute_accidental_hits, log_uniform_candidate_sampler
from sparseflow._src.ops.core_ops import stop_gradient
from sparseflow._src.ops.nn_embedding_ops import embedding_lookup
from sparseflow._src.ops.nn_softmax_ops import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2
from sparseflow._src.ops.sparse_ops import sparse_to_dense

__all__ = ["nce_loss", "sampled_softmax_loss"]


def _sum_rows(x):
    """Row sums as a matmul with a ones column (TensorFlow's formulation, for equal rounding)."""
    cols = array_ops.shape(x)[1]
    ones = array_ops.ones(array_ops.stack([cols, 1]), x.dtype)
    return array_ops.reshape(math_ops.matmul(x, ones), [-1])


def _as_weight_list(weights):
    if hasattr(weights, "_get_variable_list"):  # PartitionedVariable
        return list(weights)
    return list(weights) if isinstance(weights, (list, tuple)) else [weights]


def compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                           sampled_values=None, subtract_log_q=True, remove_accidental_hits=False,
                           partition_strategy="mod", name=None, seed=None):
    """``(logits [batch, num_true + num_sampled], labels)`` of the true and sampled classes."""
    weights = _as_weight_list(weights)
    with name_scope(name, "compute_sampled_logits", weights + [biases, inputs, labels]):
        labels = convert_to_tensor(labels)
        if labels.dtype.base_dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        inputs = convert_to_tensor(inputs, name="inputs")
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(true_classes=labels, num_true=num_true,
                                                           num_sampled=num_sampled, unique=True,
                                                           range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (stop_gradient(s) for s in sampled_values)
        sampled = math_ops.cast(sampled, dtypes.int64)
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype.base_dtype != inputs.dtype.base_dtype:
            all_w = math_ops.cast(all_w, inputs.dtype)
        n_true = array_ops.shape(labels_flat)[0]
        true_w = array_ops.slice(all_w, [0, 0], array_ops.stack([n_true, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([n_true, 0]), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype.base_dtype != inputs.dtype.base_dtype:
            all_b = math_ops.cast(all_b, inputs.dtype)
        true_b = array_ops.slice(all_b, [0], array_ops.shape(labels_flat))
        sampled_b = array_ops.slice(all_b, array_ops.shape(labels_flat), [-1])
        dim = array_ops.shape(true_w)[1:2]
        row_wise_dots = math_ops.multiply(array_ops.expand_dims(inputs, 1),
                                          array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0)))
        dots_as_matrix = array_ops.reshape(row_wise_dots, array_ops.concat([[-1], dim], 0))
        true_logits = array_ops.reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_logits += array_ops.reshape(true_b, [-1, num_true])
        sampled_logits += sampled_b
        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
            sparse_indices = array_ops.concat([array_ops.reshape(acc_indices, [-1, 1]),
                                               array_ops.reshape(math_ops.cast(acc_ids, dtypes.int32), [-1, 1])],
                                              1, "sparse_indices")
            shape = array_ops.concat([array_ops.shape(labels)[:1], array_ops.expand_dims(num_sampled, 0)], 0)
            if sampled_logits.dtype.base_dtype != acc_weights.dtype.base_dtype:
                acc_weights = math_ops.cast(acc_weights, sampled_logits.dtype)
            sampled_logits += sparse_to_dense(sparse_indices, shape, acc_weights, default_value=0.0,
                                              validate_indices=False)
        if subtract_log_q:
            true_logits -= math_ops.log(true_expected_count)
            sampled_logits -= math_ops.log(sampled_expected_count)
        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat([array_ops.ones_like(true_logits) / num_true,
                                       array_ops.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss"):
    """Noise-contrastive estimation loss per example, ``[batch]``: a logistic loss telling the true
    classes (label ``1 / num_true``) from ``num_sampled`` sampled ones (label 0), each logit
    corrected by ``log`` of its expected sample count.

    ``weights``: ``[num_classes, dim]`` (or a list of shards / a PartitionedVariable),
    ``biases``: ``[num_classes]``, ``labels``: int ``[batch, num_true]``, ``inputs``: ``[batch, dim]``.
    ``sampled_values``: a sampler's 3-tuple to use instead of the default log-uniform sampler.
    """
    logits, labels = compute_sampled_logits(weights=weights, biases=biases, labels=labels, inputs=inputs,
                                            num_sampled=num_sampled, num_classes=num_classes, num_true=num_true,
                                            sampled_values=sampled_values, subtract_log_q=True,
                                            remove_accidental_hits=remove_accidental_hits,
                                            partition_strategy=partition_strategy, name=name)
    sampled_losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True, partition_strategy="mod",
                         name="sampled_softmax_loss", seed=None):
    """Softmax cross-entropy over the true class(es) and ``num_sampled`` sampled classes, per example
    ``[batch]``; sampled candidates equal to a true class are masked out by default. Arguments as
    for ``nce_loss``; ``seed`` seeds the default sampler."""
    logits, labels = compute_sampled_logits(weights=weights, biases=biases, labels=labels, inputs=inputs,
                                            num_sampled=num_sampled, num_classes=num_classes, num_true=num_true,
                                            sampled_values=sampled_values, subtract_log_q=True,
                                            remove_accidental_hits=remove_accidental_hits,
                                            partition_strategy=partition_strategy, name=name, seed=seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
