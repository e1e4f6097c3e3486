"""``tf.spectral``: TF1's name for the Fourier transforms of ``tf.signal``.

Example:
    >>> import sparseflow as tf
    >>> tf.spectral.rfft is tf.signal.rfft
    True
"""

# ruff: noqa: F401, F403
from sparseflow.signal import *
