"""``tf.contrib``: the few TF1 contrib APIs sparseflow keeps (``tf.contrib.training``)."""

# ruff: noqa: F401
from sparseflow.contrib import training
