"""Gradients of the FFT family against finite differences (the op database compares only real
inputs and outputs): each transform sits between real tensors (``complex(x, y)`` in, a weighted
sum of the real and imaginary parts out), so that the finite difference sees every path."""

import numpy as np
import pytest

import sparseflow as tf

RS = np.random.RandomState(0)


def _check(build, shapes, eps=1e-6):
    with tf.Graph().as_default(), tf.Session() as sess:
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        loss = build(*xs)
        grads = tf.gradients(loss, xs)
        values = [RS.randn(*s) for s in shapes]
        feed = dict(zip(xs, values))
        analytic = sess.run(grads, feed)
        for i, v in enumerate(values):
            direction = RS.randn(*v.shape)
            up = {**feed, xs[i]: v + eps * direction}
            down = {**feed, xs[i]: v - eps * direction}
            numeric = (sess.run(loss, up) - sess.run(loss, down)) / (2 * eps)
            np.testing.assert_allclose(np.sum(analytic[i] * direction), numeric, rtol=1e-6, atol=1e-8)


def _weighted(z):
    shape = [d.value for d in z.shape]
    w1, w2 = (tf.constant(RS.randn(*shape)) for _ in range(2))
    return tf.reduce_sum(tf.real(z) * w1) + tf.reduce_sum(tf.imag(z) * w2)


@pytest.mark.parametrize("name,rank", [("fft", 1), ("ifft", 1), ("fft2d", 2), ("ifft2d", 2), ("fft3d", 3),
                                       ("ifft3d", 3)])
def test_complex_transforms(name, rank):
    shape = [2, 3, 4, 2][: rank + 1]
    _check(lambda x, y: _weighted(getattr(tf.signal, name)(tf.complex(x, y))), [shape, shape])


@pytest.mark.parametrize("name,rank,shape,lengths", [
    ("rfft", 1, [2, 6], None), ("rfft", 1, [2, 5], [8]), ("rfft", 1, [3, 7], [4]),
    ("rfft2d", 2, [2, 4, 6], None), ("rfft2d", 2, [3, 5], [4, 6]), ("rfft3d", 3, [2, 3, 4], None)])
def test_real_to_spectrum(name, rank, shape, lengths):
    _check(lambda x: _weighted(getattr(tf.signal, name)(x, fft_length=lengths)), [shape])


@pytest.mark.parametrize("name,rank,shape,lengths", [
    ("irfft", 1, [2, 4], None), ("irfft", 1, [2, 4], [7]), ("irfft", 1, [2, 5], [4]),
    ("irfft2d", 2, [3, 4], [3, 6]), ("irfft3d", 3, [2, 2, 3], [2, 2, 4])])
def test_spectrum_to_real(name, rank, shape, lengths):
    def build(x, y):
        out = getattr(tf.signal, name)(tf.complex(x, y), fft_length=lengths)
        w = tf.constant(RS.randn(*[d.value for d in out.shape]))
        return tf.reduce_sum(out * w)

    _check(build, [shape, shape])
