"""``tf.summary`` (TF1): summary ops, ``FileWriter``/``FileWriterCache`` and the event protos."""

# ruff: noqa: F401
from sparseflow._src.framework.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from sparseflow._src.framework.proto.summary_pb2 import Summary, SummaryDescription, SummaryMetadata
from sparseflow._src.ops.summary_ops import audio, histogram, image, merge, merge_all, scalar, tensor_summary, text
from sparseflow._src.training.summary.writer import FileWriter, FileWriterCache
