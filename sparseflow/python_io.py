"""``tf.python_io`` (TF1): TFRecord files — ``TFRecordWriter``, ``tf_record_iterator``, ``TFRecordOptions``."""

# ruff: noqa: F401
from sparseflow._src.data.record_io import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator
