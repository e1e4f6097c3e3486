"""Gradients of the gamma family that a finite difference of the op itself cannot check: a gamma
sample's derivative in alpha (at a fixed seed the sampler's rejections make samples jump), checked
against the derivative of the quantile function at the sample's CDF value."""

import numpy as np
import scipy.special as sp

import sparseflow as tf


def _quantile_derivative(alpha, sample, h=1e-6):
    u = sp.gammainc(alpha, sample)
    return (sp.gammaincinv(alpha + h, u) - sp.gammaincinv(alpha - h, u)) / (2 * h)


def test_random_gamma_grad_is_the_quantile_derivative():
    alpha = np.array([0.3, 0.8, 2.0, 7.5, 30.0])
    sample = np.array([0.05, 1.2, 2.5, 5.0, 33.0])
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.raw_ops.RandomGammaGrad(alpha=alpha, sample=sample))
    np.testing.assert_allclose(got, _quantile_derivative(alpha, sample), rtol=1e-6)


def test_gradient_of_random_gamma_sums_each_alpha_over_its_samples():
    with tf.Graph().as_default(), tf.Session() as sess:
        alpha = tf.constant([1.5, 4.0], tf.float64)
        samples = tf.random_gamma([3], alpha, dtype=tf.float64, seed=5)
        grad = tf.gradients(tf.reduce_sum(samples), alpha)[0]
        s, g = sess.run([samples, grad])
    want = _quantile_derivative(np.array([1.5, 4.0])[None, :], s).sum(axis=0)
    np.testing.assert_allclose(g, want, rtol=1e-5)
