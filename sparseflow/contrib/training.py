"""``tf.contrib.training``: the ps placement strategies for ``tf.train.replica_device_setter``."""

# ruff: noqa: F401
from sparseflow._src.training.device_setter import GreedyLoadBalancingStrategy, RandomStrategy, byte_size_load_fn
