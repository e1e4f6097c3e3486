"""``tf.app``: ``tf.app.run(main)`` parses flags and exits with ``main(argv)``; ``tf.app.flags``."""

# ruff: noqa: F401
from sparseflow import flags
from sparseflow._src.platform.flags import run
