"""The table's row initializers (kernels/embedding_init.py, written by embedding_hash.pull): each
value is the documented function of its own draw (checked against Python's exact normal quantile),
the distributions are the named ones, and uniform rows are those of earlier versions."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy import stats

from sparseflow._src.kernels import embedding_hash as H
from sparseflow._src.kernels import embedding_init as I

SEED = np.uint64(11)
KEYS = (np.arange(2000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(3)
PHI = statistics.NormalDist()


def _draws(keys, dim, seed=SEED):
    streams = [np.uint64(I.row_stream(seed, k)) for k in keys]
    return np.array([[I.uniform01(s, j) for j in range(dim)] for s in streams])


def test_each_value_is_the_quantile_of_its_own_draw():
    dim = 5
    u = _draws(KEYS[:400], dim)
    lo, hi = PHI.cdf(-2.0), PHI.cdf(2.0)
    trunc = H.init_rows(KEYS[:400], dim, H.INIT_TRUNCATED_NORMAL, 0.5, 3.0, SEED)
    want = 0.5 + 3.0 * np.vectorize(PHI.inv_cdf)(lo + (hi - lo) * u)
    np.testing.assert_allclose(trunc, want.astype(np.float32), rtol=2e-7, atol=2e-7)
    normal = H.init_rows(KEYS[:400], dim, H.INIT_NORMAL, -1.0, 2.0, SEED)
    want = -1.0 + 2.0 * np.vectorize(PHI.inv_cdf)(u + 2.0**-54)
    np.testing.assert_allclose(normal, want.astype(np.float32), rtol=2e-7, atol=2e-7)
    assert np.sum(np.abs(want + 1.0) > 2.0 * 1.97) > 0  # the tail formula was exercised


def test_uniform_rows_are_unchanged_from_earlier_versions():
    """Rows of uniform tables (Wide&Deep's deep rows) keep their values: lo + (hi - lo) u, u from the
    53 high bits of the column's draw (values pinned from the previous implementation)."""
    keys = np.array([0, 12345, 2**64 - 1], np.uint64)
    rows = H.init_rows(keys, 3, H.INIT_UNIFORM, -0.05, 0.05, np.uint64(7))
    np.testing.assert_array_equal(rows, (-0.05 + 0.1 * _draws(keys, 3, np.uint64(7))).astype(np.float32))
    assert rows.tolist() == [[0.02169742062687874, 0.002434594091027975, -0.01978609710931778],
                             [0.020084716379642487, 0.030141286551952362, 0.03703825920820236],
                             [0.04176284745335579, 0.014736462384462357, 0.04319732263684273]]
    rows = H.init_rows(np.array([5], np.uint64), 4, H.INIT_UNIFORM, -1.0, 3.0, np.uint64(2**63 + 1))
    assert rows.tolist() == [[1.6933956146240234, 0.26376473903656006, 2.91231107711792, -0.8556954264640808]]


@pytest.mark.parametrize("kind,dist", [(H.INIT_TRUNCATED_NORMAL, stats.truncnorm(-2.0, 2.0)),
                                       (H.INIT_NORMAL, stats.norm()), (H.INIT_UNIFORM, stats.uniform(0.0, 1.0))])
def test_values_follow_their_distribution(kind, dist):
    p = (0.0, 1.0)
    values = H.init_rows(KEYS, 16, kind, *p, SEED).astype(np.float64)
    assert stats.kstest(values.reshape(-1), dist.cdf).pvalue > 1e-3
    for j in range(16):  # every column on its own too, and columns are not correlated
        assert stats.kstest(values[:, j], dist.cdf).pvalue > 1e-4
    corr = np.corrcoef(values.T) - np.eye(16)
    assert np.abs(corr).max() < 0.1


def test_truncated_rows_stay_within_two_standard_deviations_at_the_extremes():
    # the extreme draws: u = 0 and u just below 1
    lo, hi = PHI.cdf(-2.0), PHI.cdf(2.0)
    for u in (0.0, 1.0 - 2.0**-53):
        z = I._central_quantile(lo + (hi - lo) * u)
        assert abs(z) <= 2.0 and abs(abs(z) - 2.0) < 1e-7
