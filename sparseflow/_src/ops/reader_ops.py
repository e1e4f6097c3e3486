"""TF1's queue-fed readers: ``tf.TextLineReader``, ``tf.TFRecordReader``, ``tf.WholeFileReader``,
``tf.FixedLengthRecordReader`` and ``tf.IdentityReader`` (``tf.ReaderBase``), with the ops
TextLineReaderV2, TFRecordReaderV2, WholeFileReaderV2, FixedLengthRecordReaderV2, IdentityReaderV2,
ReaderReadV2, ReaderReadUpToV2, ReaderNumRecordsProducedV2, ReaderNumWorkUnitsCompletedV2 and
ReaderResetV2.

A reader is a resource that takes work units (file names) from a queue of strings, such as the one
``tf.train.string_input_producer`` fills, and produces ``(key, value)`` records from each in turn;
when the queue is closed and drained, reading raises OutOfRangeError (what ends a
``tf.train.Coordinator`` loop). Keys are TensorFlow's: ``file:line`` (1-based, header lines
counted) for text lines, ``file:offset`` for TFRecords, ``file:index`` for fixed-length records,
the file name for whole files, and the work unit itself for the identity reader. Reader state
cannot be serialized (``serialize_state`` / ``restore_state`` raise NotImplementedError).

Example:
    >>> import os, tempfile
    >>> import sparseflow as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "w").write("x,1\\ny,2\\n")
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     queue = tf.FIFOQueue(2, tf.string)
    ...     _ = sess.run([queue.enqueue([path]), queue.close()])
    ...     key, value = tf.TextLineReader().read(queue)
    ...     print(sess.run(value), sess.run(value))
    b'x,1' b'y,2'
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_shape import TensorShape

__all__ = ["ReaderBase", "TextLineReader", "TFRecordReader", "WholeFileReader", "FixedLengthRecordReader",
           "IdentityReader"]

_SHARED = ["container: string = ''", "shared_name: string = ''"]


def _scalar(op):
    return [TensorShape([])]


register_op("TextLineReaderV2", outputs=["reader_handle: resource"], attrs=["skip_header_lines: int = 0"] + _SHARED,
            shape_fn=_scalar, is_stateful=True)
register_op("TFRecordReaderV2", outputs=["reader_handle: resource"],
            attrs=_SHARED + ["compression_type: string = ''"], shape_fn=_scalar, is_stateful=True)
register_op("WholeFileReaderV2", outputs=["reader_handle: resource"], attrs=_SHARED, shape_fn=_scalar,
            is_stateful=True)
register_op("IdentityReaderV2", outputs=["reader_handle: resource"], attrs=_SHARED, shape_fn=_scalar,
            is_stateful=True)
register_op("FixedLengthRecordReaderV2", outputs=["reader_handle: resource"],
            attrs=["header_bytes: int = 0", "record_bytes: int", "footer_bytes: int = 0", "hop_bytes: int = 0"]
            + _SHARED + ["encoding: string = ''"], shape_fn=_scalar, is_stateful=True)
register_op("ReaderReadV2", inputs=["reader_handle: resource", "queue_handle: resource"],
            outputs=["key: string", "value: string"], shape_fn=lambda op: [TensorShape([]), TensorShape([])],
            is_stateful=True)
register_op("ReaderReadUpToV2", inputs=["reader_handle: resource", "queue_handle: resource", "num_records: int64"],
            outputs=["keys: string", "values: string"],
            shape_fn=lambda op: [TensorShape([None]), TensorShape([None])], is_stateful=True)
register_op("ReaderNumRecordsProducedV2", inputs=["reader_handle: resource"], outputs=["records_produced: int64"],
            shape_fn=_scalar, is_stateful=True)
register_op("ReaderNumWorkUnitsCompletedV2", inputs=["reader_handle: resource"], outputs=["units_completed: int64"],
            shape_fn=_scalar, is_stateful=True)
register_op("ReaderResetV2", inputs=["reader_handle: resource"], shape_fn=lambda op: [], is_stateful=True)


def _queue_ref(queue):
    return queue if isinstance(queue, Tensor) else queue.queue_ref


class ReaderBase:
    """A reader of records from the work units (file names) of a queue: ``read`` one
    ``(key, value)``, ``read_up_to`` a batch, count what it produced, ``reset``."""

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return self._supports_serialize

    def read(self, queue, name=None):
        """``(key, value)``: the next record, taking a new work unit from ``queue`` when needed."""
        key, value = apply_op("ReaderReadV2", [self._reader_ref, _queue_ref(queue)], name=name).outputs
        return key, value

    def read_up_to(self, queue, num_records, name=None):
        """``(keys, values)``: up to ``num_records`` records of one work unit (fewer when it ends)."""
        keys, values = apply_op("ReaderReadUpToV2", [self._reader_ref, _queue_ref(queue),
                                                    _as_int64(num_records)], name=name).outputs
        return keys, values

    def num_records_produced(self, name=None):
        return apply_op("ReaderNumRecordsProducedV2", [self._reader_ref], name=name).outputs[0]

    def num_work_units_completed(self, name=None):
        return apply_op("ReaderNumWorkUnitsCompletedV2", [self._reader_ref], name=name).outputs[0]

    def reset(self, name=None):
        """Forgets the current work unit and the counts."""
        return apply_op("ReaderResetV2", [self._reader_ref], name=name)

    def serialize_state(self, name=None):
        raise NotImplementedError(f"{type(self).__name__}: sparseflow's readers cannot serialize their state; "
                                  f"checkpoint the input position another way (e.g. the queue's file list)")

    def restore_state(self, state, name=None):
        raise NotImplementedError(f"{type(self).__name__}: sparseflow's readers cannot restore a serialized state")


def _as_int64(value):
    from sparseflow._src.framework.tensor_conversion import convert_to_tensor
    from sparseflow._src.ops.math_cast_select import cast

    t = convert_to_tensor(value)
    return t if t.dtype.base_dtype == dtypes.int64 else cast(t, dtypes.int64)


def _compression_name(options) -> str:
    """'', 'ZLIB' or 'GZIP' from a ``TFRecordOptions`` (its ``compression_type``), a name or TF1's enum value."""
    kind = getattr(options, "compression_type", options)
    kind = {None: "", 0: "", 1: "ZLIB", 2: "GZIP"}.get(kind, kind)
    kind = kind.decode() if isinstance(kind, bytes) else str(kind).upper()
    kind = "" if kind == "NONE" else kind
    if kind not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"TFRecordReader: unsupported compression {options!r} (use '', 'ZLIB' or 'GZIP')")
    return kind


def _make(op_type, attrs, name):
    return apply_op(op_type, [], {k: v for k, v in attrs.items() if v is not None}, name=name).outputs[0]


class TextLineReader(ReaderBase):
    """Lines of text files (without their line end), after ``skip_header_lines`` of each file."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(_make("TextLineReaderV2", {"skip_header_lines": skip_header_lines}, name))


class TFRecordReader(ReaderBase):
    """The records of TFRecord files (``options``: a ``tf.python_io.TFRecordOptions`` or None)."""

    def __init__(self, name=None, options=None):
        compression = None if options is None else _compression_name(options)
        super().__init__(_make("TFRecordReaderV2", {"compression_type": compression}, name))


class WholeFileReader(ReaderBase):
    """Each file whole: its name as the key, its contents as the value."""

    def __init__(self, name=None):
        super().__init__(_make("WholeFileReaderV2", {}, name))


class IdentityReader(ReaderBase):
    """Each work unit itself, as both key and value."""

    def __init__(self, name=None):
        super().__init__(_make("IdentityReaderV2", {}, name))


class FixedLengthRecordReader(ReaderBase):
    """Records of ``record_bytes`` bytes between a header and a footer of each file, every
    ``hop_bytes`` bytes (default: back to back); ``encoding`` 'ZLIB' or 'GZIP' for compressed files."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None,
                 encoding=None):
        attrs = {"record_bytes": record_bytes, "header_bytes": header_bytes, "footer_bytes": footer_bytes,
                 "hop_bytes": hop_bytes, "encoding": encoding}
        super().__init__(_make("FixedLengthRecordReaderV2", attrs, name))
