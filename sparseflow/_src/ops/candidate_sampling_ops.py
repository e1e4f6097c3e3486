"""Candidate samplers (``tf.nn.*_candidate_sampler``) and ``compute_accidental_hits``.

Each sampler op draws ``num_sampled`` class ids for a batch from its distribution (uniform,
log-uniform / Zipfian, a fixed unigram table, or a unigram learned from the true classes seen so
far) and returns ``(sampled_candidates, true_expected_count, sampled_expected_count)``, the
expected counts the sampled losses subtract. The kernels draw TensorFlow's random streams, so
seeded samplers give TensorFlow's candidates.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     s = tf.nn.log_uniform_candidate_sampler([[1], [7]], num_true=1, num_sampled=4, unique=True,
    ...                                           range_max=100, seed=3)
    ...     with tf.Session() as sess:
    ...         sampled, true_count, sampled_count = sess.run(s)
    >>> sampled.shape, true_count.shape, len(set(sampled.tolist()))
    ((4,), (2, 1), 4)
"""

from __future__ import annotations

import collections

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.api_graph import get_seed
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape

__all__ = ["uniform_candidate_sampler", "log_uniform_candidate_sampler", "learned_unigram_candidate_sampler",
           "fixed_unigram_candidate_sampler", "all_candidate_sampler", "compute_accidental_hits"]

_BASE_ATTRS = ["num_true: int >= 1", "num_sampled: int >= 1", "unique: bool", "seed: int = 0", "seed2: int = 0"]
_OUTPUTS = ["sampled_candidates: int64", "true_expected_count: float", "sampled_expected_count: float"]

CandidateSamplerOutput = collections.namedtuple(
    "CandidateSamplerOutput", ["sampled_candidates", "true_expected_count", "sampled_expected_count"])


def _sampler_shape(op):
    true_classes = op.inputs[0].shape.with_rank(2)
    batch = true_classes.as_list()[0] if true_classes.ndims == 2 else None
    n = op._attrs["num_sampled"]
    return [TensorShape([n]), TensorShape([batch, op._attrs["num_true"]]), TensorShape([n])]


for _name, _extra in (("UniformCandidateSampler", ["range_max: int >= 1"]),
                      ("LogUniformCandidateSampler", ["range_max: int >= 1"]),
                      ("LearnedUnigramCandidateSampler", ["range_max: int >= 1"]),
                      ("ThreadUnsafeUnigramCandidateSampler", ["range_max: int >= 1"]),
                      ("FixedUnigramCandidateSampler",
                       ["range_max: int >= 1", "vocab_file: string = ''", "distortion: float = 1",
                        "num_reserved_ids: int = 0", "num_shards: int >= 1 = 1", "shard: int >= 0 = 0",
                        "unigrams: list(float) = []"]),
                      ("AllCandidateSampler", [])):
    register_op(_name, inputs=["true_classes: int64"], outputs=_OUTPUTS, attrs=_BASE_ATTRS + _extra,
                shape_fn=_sampler_shape, is_stateful=True)

def _accidental_hits_shape(op):
    """``true_classes`` is ``[batch, num_true]``, ``sampled_candidates`` a vector (checked when the graph is built)."""
    true_classes = op.inputs[0].shape.with_rank(2)
    columns = true_classes.as_list()[1] if true_classes.ndims == 2 else None
    if columns is not None and columns != op._attrs["num_true"]:
        raise ValueError(f"ComputeAccidentalHits op {op.name!r}: true_classes has {columns} columns, but num_true "
                         f"is {op._attrs['num_true']}.")
    op.inputs[1].shape.with_rank(1)
    return [TensorShape([None])] * 3


register_op("ComputeAccidentalHits", inputs=["true_classes: int64", "sampled_candidates: int64"],
            outputs=["indices: int32", "ids: int64", "weights: float"],
            attrs=["num_true: int", "seed: int = 0", "seed2: int = 0"],
            shape_fn=_accidental_hits_shape)


def _seeds(seed):
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _sample(op_type, true_classes, attrs, seed, name):
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    attrs = dict(attrs, **_seeds(seed))
    op = apply_op(op_type, [true_classes], attrs, name=name or op_type)
    return CandidateSamplerOutput(*op.outputs)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Samples ids uniformly from ``[0, range_max)`` (without repeats when ``unique``)."""
    return _sample("UniformCandidateSampler", true_classes,
                   {"num_true": num_true, "num_sampled": num_sampled, "unique": unique, "range_max": range_max},
                   seed, name)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Samples ids from the log-uniform (Zipfian) distribution
    ``P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)``: small ids (frequent words) more often."""
    return _sample("LogUniformCandidateSampler", true_classes,
                   {"num_true": num_true, "num_sampled": num_sampled, "unique": unique, "range_max": range_max},
                   seed, name)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                                      name=None):
    """Samples ids by how often they were seen as true classes by this op (each id starts at count 1)."""
    return _sample("LearnedUnigramCandidateSampler", true_classes,
                   {"num_true": num_true, "num_sampled": num_sampled, "unique": unique, "range_max": range_max},
                   seed, name)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, vocab_file="",
                                    distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0, unigrams=(),
                                    seed=None, name=None):
    """Samples ids from fixed weights (``unigrams``, or the last CSV column of ``vocab_file``) raised
    to ``distortion``; the first ``num_reserved_ids`` ids have weight 0; ``num_shards``/``shard``
    keep every ``num_shards``-th id."""
    return _sample("FixedUnigramCandidateSampler", true_classes,
                   {"num_true": num_true, "num_sampled": num_sampled, "unique": unique, "range_max": range_max,
                    "vocab_file": vocab_file, "distortion": float(distortion),
                    "num_reserved_ids": num_reserved_ids, "num_shards": num_shards, "shard": shard,
                    "unigrams": [float(u) for u in unigrams]}, seed, name)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """"Samples" every id ``0 .. num_sampled - 1`` (for tests against the full softmax)."""
    return _sample("AllCandidateSampler", true_classes,
                   {"num_true": num_true, "num_sampled": num_sampled, "unique": unique}, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """The ``(row indices, sampled positions, -FLT_MAX weights)`` where a sampled candidate equals
    one of the row's true classes, for removing such hits from sampled logits."""
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    sampled_candidates = convert_to_tensor(sampled_candidates, dtype=dtypes.int64, name="sampled_candidates")
    op = apply_op("ComputeAccidentalHits", [true_classes, sampled_candidates],
                  dict({"num_true": num_true}, **_seeds(seed)), name=name or "ComputeAccidentalHits")
    return tuple(op.outputs)
