"""``tf.io``: graph writing and file helpers, and (TF1 endpoints) the queue classes."""

# ruff: noqa: F401
from sparseflow._src.framework.file_io import io_gfile as gfile
from sparseflow._src.framework.file_io import write_graph
from sparseflow._src.ops.queue_ops import PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue
