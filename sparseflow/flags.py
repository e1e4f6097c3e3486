"""``tf.flags`` (also ``tf.app.flags``): absl flags with TF1's lazy parse and keyword names."""

# ruff: noqa: F401, F403
from sparseflow._src.platform.flags import *
