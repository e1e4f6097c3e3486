"""Summary ops give TensorFlow's tags, node names and bytes (recorded in summary_expected.py by
tests/record_tf_reference.py from summary_programs.py), and TensorFlow's errors."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.kernels.summary_encoding import DEFAULT_BUCKET_LIMITS, histogram_proto
from tests.ops import summary_expected as expected
from tests.ops import summary_programs as programs


@pytest.fixture(scope="module")
def results():
    return programs.summaries(tf)


@pytest.mark.parametrize("key", sorted(expected.SUMMARIES))
def test_summary_matches_tensorflow(results, key):
    assert results[key] == expected.SUMMARIES[key]


def test_histogram_buckets_are_tensorflows_default_limits():
    limits = DEFAULT_BUCKET_LIMITS
    assert limits.size == 1551 and limits[775] == 0.0 and limits[776] == 1e-12
    assert np.all(np.diff(limits) > 0) and limits[-1] == np.finfo(np.float64).max
    h = histogram_proto(np.array([0.0, 1e-12, -1e-12]))
    # 0 and -1e-12 fall in the buckets ending at 1e-12 and 0 (a value equal to a limit goes right).
    pairs = list(zip(h.bucket_limit, h.bucket))
    assert pairs[:3] == [(-1e-12, 0.0), (0.0, 1.0), (1e-12, 1.0)] and pairs[3][1] == 1.0  # the rest collapse
    assert pairs[4:] == [(np.finfo(np.float64).max, 0.0)]


def test_summary_names_are_cleaned_and_scalar_needs_string_tags():
    s = tf.summary.scalar("bad name!", 1.0)
    assert s.op.name == "bad_name_"
    with pytest.raises(ValueError, match="dtype string"):
        tf.summary.text("t", tf.constant([1.0]))


def test_merge_all_is_none_without_summaries_and_keeps_collections_apart():
    assert tf.summary.merge_all() is None
    a = tf.summary.scalar("a", 1.0, collections=["mine"])
    assert tf.summary.merge_all() is None
    merged = tf.summary.merge_all(key="mine")
    with tf.Session() as sess:
        assert [v.tag for v in tf.Summary.FromString(sess.run(merged)).value] == ["a"]
    assert tf.get_collection("mine") == [a]
