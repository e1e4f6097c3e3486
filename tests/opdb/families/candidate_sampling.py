"""Candidate samplers and ComputeAccidentalHits.

Seeded samplers are compared with TensorFlow's draws exactly (sparseflow draws TensorFlow's Philox
streams); each sample runs in a fresh session, so each draw is a first draw. Unique and repeated
draws, several true classes per row, drawing every id, an empty batch, true classes outside the
range, more unique draws than ids, malformed true classes; the fixed unigram sampler's weights,
distortion, reserved ids and shards.
"""

from __future__ import annotations

from tests.opdb.spec import OpEntry, Sample, i64

_SEEDS = {"seed": 7, "seed2": 11}
_NO_TYPE = (None,)


def _samples(range_max=10, extra=None):
    base = {**_SEEDS, **(extra or {})}
    if range_max is not None:
        base["range_max"] = range_max
    one = {**base, "num_true": 1}
    return [
        Sample("unique", {"true_classes": i64([[1], [7]])}, {**one, "num_sampled": 4, "unique": True}),
        Sample("repeats", {"true_classes": i64([[1], [7], [3]])}, {**one, "num_sampled": 6, "unique": False,
                                                                   "seed": 3, "seed2": 5}),
        Sample("two_true", {"true_classes": i64([[0, 9], [4, 4]])}, {**base, "num_true": 2, "num_sampled": 3,
                                                                     "unique": True}),
        Sample("every_id", {"true_classes": i64([[2]])}, {**one, "num_sampled": 10, "unique": True}),
        Sample("empty_batch", {"true_classes": i64([[]] * 0).reshape(0, 1)}, {**one, "num_sampled": 2,
                                                                              "unique": False}),
        Sample("true_out_of_range", {"true_classes": i64([[12], [-1]])}, {**one, "num_sampled": 2, "unique": False}),
        Sample("num_true_mismatch", {"true_classes": i64([[1, 2]])}, {**one, "num_sampled": 2, "unique": False}),
        Sample("rank1_true", {"true_classes": i64([1, 2])}, {**one, "num_sampled": 2, "unique": False}),
    ] + ([Sample("more_unique_than_ids", {"true_classes": i64([[1]])},
                 {**one, "num_sampled": 11, "unique": True})] if range_max is not None else [])


_UNIGRAMS = [1.0, 2.0, 3.0, 4.0, 0.5, 0.5, 8.0, 1.0, 1.0, 1.0]
ENTRIES = [
    OpEntry(op, _samples(), dtypes=_NO_TYPE, stateful=True)
    for op in ("UniformCandidateSampler", "LogUniformCandidateSampler", "LearnedUnigramCandidateSampler",
               "ThreadUnsafeUnigramCandidateSampler")
]
ENTRIES += [
    OpEntry("AllCandidateSampler", _samples(range_max=None), dtypes=_NO_TYPE, stateful=True),
    OpEntry("FixedUnigramCandidateSampler", _samples(extra={"unigrams": _UNIGRAMS}) + [
        Sample("distortion", {"true_classes": i64([[1], [6]])},
               {**_SEEDS, "num_true": 1, "num_sampled": 5, "unique": False, "range_max": 10, "unigrams": _UNIGRAMS,
                "distortion": 0.5}),
        Sample("reserved_ids", {"true_classes": i64([[1], [6]])},
               {**_SEEDS, "num_true": 1, "num_sampled": 4, "unique": True, "range_max": 10, "unigrams": _UNIGRAMS,
                "num_reserved_ids": 2}),
        Sample("shard", {"true_classes": i64([[1], [6]])},
               {**_SEEDS, "num_true": 1, "num_sampled": 3, "unique": True, "range_max": 10, "unigrams": _UNIGRAMS,
                "num_shards": 3, "shard": 1}),
        Sample("unigrams_length_mismatch", {"true_classes": i64([[1]])},
               {**_SEEDS, "num_true": 1, "num_sampled": 2, "unique": False, "range_max": 10,
                "unigrams": [1.0, 2.0]}),
        Sample("zero_weights", {"true_classes": i64([[1]])},
               {**_SEEDS, "num_true": 1, "num_sampled": 2, "unique": False, "range_max": 3,
                "unigrams": [0.0, 0.0, 0.0]}),
    ], dtypes=_NO_TYPE, stateful=True, differs={
        "zero_weights": "unigram weights summing to zero: TensorFlow draws anyway and returns NaN expected counts; "
                        "sparseflow raises InvalidArgumentError saying so"}),
    OpEntry("ComputeAccidentalHits", [
        Sample("hits", {"true_classes": i64([[1, 3], [2, 5]]), "sampled_candidates": i64([3, 2, 9, 1, 3])},
               {"num_true": 2}),
        Sample("no_hits", {"true_classes": i64([[1], [2]]), "sampled_candidates": i64([7, 8])}, {"num_true": 1}),
        Sample("empty_batch", {"true_classes": i64([[]] * 0).reshape(0, 2), "sampled_candidates": i64([1, 2])},
               {"num_true": 2}),
        Sample("no_sampled", {"true_classes": i64([[1, 2]]), "sampled_candidates": i64([])}, {"num_true": 2}),
        Sample("num_true_mismatch", {"true_classes": i64([[1, 2]]), "sampled_candidates": i64([1])},
               {"num_true": 1}),
        Sample("sampled_not_vector", {"true_classes": i64([[1]]), "sampled_candidates": i64([[1]])},
               {"num_true": 1}),
    ], dtypes=_NO_TYPE),
]
