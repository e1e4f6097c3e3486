"""``tf.signal``: discrete Fourier transforms (complex and real, over 1-3 innermost dimensions).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.signal.ifft(tf.signal.fft([1 + 0j, 2 + 0j]))))
    [1.+0.j 2.+0.j]
"""

# ruff: noqa: F401
from sparseflow._src.ops.spectral_ops import (
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
