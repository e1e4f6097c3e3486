"""einsum (values, static shapes, gradients), searchsorted, make_template and tf.linalg.transpose give
TensorFlow's results (recorded in einsum_template_expected.py by tests/record_tf_reference.py from
einsum_template_programs.py)."""

import numpy as np
import pytest

import sparseflow as tf
from tests.ops import einsum_template_expected as expected
from tests.ops import einsum_template_programs as programs

FAMILIES = {"einsums": expected.EINSUMS, "searchsorteds": expected.SEARCHSORTEDS, "templates": expected.TEMPLATES}


@pytest.fixture(scope="module")
def results():
    return {name: getattr(programs, name)(tf) for name in FAMILIES}


@pytest.mark.parametrize("family,key", [(f, k) for f, values in FAMILIES.items() for k in sorted(values)])
def test_matches_tensorflow(results, family, key):
    assert results[family][key] == FAMILIES[family][key]


def test_einsum_gradient_sums_over_the_ellipsis_dimensions_of_the_other_input():
    rs = np.random.RandomState(0)
    a, b = rs.randn(1, 2, 3), rs.randn(4, 3)
    x, y = tf.constant(a), tf.constant(b)
    z = tf.einsum("...ij,kj->...ik", x, y)
    ga, gb = tf.gradients(tf.reduce_sum(z * z), [x, y])
    with tf.Session() as sess:
        got_a, got_b = sess.run([ga, gb])
    za = np.einsum("...ij,kj->...ik", a, b)
    np.testing.assert_allclose(got_a, np.einsum("...ik,kj->...ij", 2 * za, b), rtol=1e-10)
    np.testing.assert_allclose(got_b, np.einsum("xik,xij->kj", 2 * za, a), rtol=1e-10)


def test_einsum_diagonal_gets_its_gradient_on_the_diagonal():
    a = np.arange(8.0).reshape(2, 2, 2)
    x = tf.constant(a)
    g = tf.gradients(tf.reduce_sum(tf.einsum("bii->b", x) ** 2), x)[0]
    with tf.Session() as sess:
        got = sess.run(g)
    want = np.zeros_like(a)
    for b in range(2):
        want[b] = np.eye(2) * 2 * np.trace(a[b])
    np.testing.assert_allclose(got, want)
