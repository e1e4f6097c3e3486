"""``tf.config``: the devices of this (CPU-only) process and the switches that apply to it.

Example:
    >>> import sparseflow as tf
    >>> [d.name for d in tf.config.list_logical_devices("CPU")]
    ['/device:CPU:0']
"""

# ruff: noqa: F401, F403
from sparseflow._src.platform.device_config import *
