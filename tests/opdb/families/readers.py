"""The queue-fed readers: TextLineReaderV2, TFRecordReaderV2, WholeFileReaderV2, FixedLengthRecordReaderV2,
IdentityReaderV2 and ReaderReadV2, ReaderReadUpToV2, ReaderNumRecordsProducedV2,
ReaderNumWorkUnitsCompletedV2, ReaderResetV2.

Each sample writes its files (relative names in a fresh working directory), fills a closed queue with
their names and reads everything in one run: header lines, CRLF line ends and a last line without its
end, empty files, several files in turn, a missing file, and reading past the end (OutOfRangeError).
"""

from __future__ import annotations

import numpy as np

from tests.opdb.spec import OpEntry, Sample

_TEXT = np.array([b"h1\nab\r\ncd", b"", b"x\ny\n"], dtype=object)
_BIN = np.array([b"HH0123456789F", b"HHabcdefF"], dtype=object)


def _files(tf, contents):
    """Writes contents[i] to f{i}.dat; a closed FIFO queue of those names."""
    names = [f"f{i}.dat" for i in range(int(contents.shape[0].value))]
    writes = [tf.raw_ops.WriteFile(filename=n, contents=contents[i]) for i, n in enumerate(names)]
    queue = tf.FIFOQueue(10, tf.string)
    with tf.control_dependencies(writes):
        fill = queue.enqueue_many([names])
    with tf.control_dependencies([fill]):
        close = queue.close()
    return queue, close


def _read_all(tf, reader, contents, batch, extra=False):
    queue, close = _files(tf, contents)
    with tf.control_dependencies([close]):
        keys, values = reader.read_up_to(queue, batch)
    with tf.control_dependencies([keys, values]):
        counts = [reader.num_records_produced(), reader.num_work_units_completed()]
    out = [keys, values] + counts
    if extra:  # one more read after the queue ran out: OutOfRangeError
        with tf.control_dependencies(counts):
            out.append(reader.read(queue)[1])
    return out


def _text(tf, contents, skip=0, batch=10, extra=False):
    return _read_all(tf, tf.TextLineReader(skip_header_lines=skip), contents, batch, extra)


def _whole(tf, contents, batch=10):
    return _read_all(tf, tf.WholeFileReader(), contents, batch)


def _identity(tf, contents):
    return _read_all(tf, tf.IdentityReader(), contents, 10)


def _fixed(tf, contents, hop=0):
    reader = tf.FixedLengthRecordReader(record_bytes=4, header_bytes=2, footer_bytes=1, hop_bytes=hop)
    return _read_all(tf, reader, contents, 10)


# Three TFRecord frames (b"hello", b"", b"tf1 records"), and the same file cut short.
_FRAMES = bytes.fromhex("0500000000000000eab2043e68656c6c6fbb1f1c19" "000000000000000029039807d8ea82a2"
                        "0b000000000000008615f504746631207265636f726473b2f276e8")
_RECORDS = np.array([_FRAMES], dtype=object)
_TRUNCATED = np.array([_FRAMES[:-3]], dtype=object)


def _tf_records(tf, contents):
    return _read_all(tf, tf.TFRecordReader(), contents, 10)


def _reset(tf, contents):
    reader = tf.TextLineReader()
    queue, close = _files(tf, contents)
    with tf.control_dependencies([close]):
        first = reader.read(queue)[1]
    with tf.control_dependencies([first]):
        reset = reader.reset()
    with tf.control_dependencies([reset]):
        counts = [reader.num_records_produced(), reader.num_work_units_completed()]
    with tf.control_dependencies(counts):
        after = reader.read(queue)[1]
    return [first] + counts + [after]


def _missing(tf):
    queue = tf.FIFOQueue(2, tf.string)
    fill = queue.enqueue_many([["no_such_file.txt"]])
    with tf.control_dependencies([fill]):
        return [tf.TextLineReader().read(queue)[1]]


_T = {"contents": _TEXT}
ENTRIES = [
    OpEntry("TextLineReaderV2", [
        Sample("lines", _T, {"skip": 0}), Sample("header", _T, {"skip": 1}), Sample("batches_of_two", _T, {"batch": 2}),
        Sample("past_the_end", _T, {"extra": True}),
    ], dtypes=(None,), build=_text, workdir=True, stateful=True),
    OpEntry("ReaderReadUpToV2", [Sample("lines", _T)], dtypes=(None,), build=_text, workdir=True, stateful=True),
    OpEntry("ReaderReadV2", [Sample("past_the_end", _T, {"extra": True}), Sample("missing_file", {})],
            dtypes=(None,), build=lambda tf, contents=None, extra=False: _missing(tf) if contents is None
            else _text(tf, contents, extra=extra), workdir=True, stateful=True),
    OpEntry("ReaderNumRecordsProducedV2", [Sample("lines", _T)], dtypes=(None,), build=_text, workdir=True,
            stateful=True),
    OpEntry("ReaderNumWorkUnitsCompletedV2", [Sample("lines", _T)], dtypes=(None,), build=_text, workdir=True,
            stateful=True),
    OpEntry("ReaderResetV2", [Sample("reset", _T)], dtypes=(None,), build=_reset, workdir=True, stateful=True),
    OpEntry("WholeFileReaderV2", [Sample("files", _T), Sample("one_at_a_time", _T, {"batch": 1})], dtypes=(None,),
            build=_whole, workdir=True, stateful=True),
    OpEntry("IdentityReaderV2", [Sample("names", _T)], dtypes=(None,), build=_identity, workdir=True, stateful=True),
    OpEntry("TFRecordReaderV2", [Sample("records", {"contents": _RECORDS}),
                                 Sample("truncated", {"contents": _TRUNCATED})],
            dtypes=(None,), build=_tf_records, workdir=True, stateful=True),
    OpEntry("FixedLengthRecordReaderV2", [
        Sample("back_to_back", {"contents": _BIN}), Sample("hops", {"contents": _BIN}, {"hop": 3}),
    ], dtypes=(None,), build=_fixed, workdir=True, stateful=True),
]
