"""CPU kernels of the queue-fed readers: a reader resource (per node, or shared by ``shared_name``)
keeps its current work unit's records and its counts under a lock; a read that needs a new work
unit dequeues one (blocking like any dequeue: cancellation and deadlines end it).

Example:
    >>> [k for k, _ in _text_lines("f", b"h\\na\\r\\nb", skip=1)]
    [b'f:2', b'f:3']
"""

from __future__ import annotations

import gzip
import itertools
import struct
import threading
import zlib

import numpy as np

from sparseflow._src.framework import errors, file_io
from sparseflow._src.kernels.array_shape_kernels import invalid
from sparseflow._src.kernels.registry import register_kernel
from sparseflow._src.kernels.tfrecord_framing import masked_crc32c

_private_ids = itertools.count()


def _read(path: str) -> bytes:
    try:
        with open(file_io._path(path), "rb") as f:
            return f.read()
    except OSError as e:
        raise file_io._os_error(e, path) from None


def _decompress(data: bytes, kind: str, path: str) -> bytes:
    try:
        if kind == "ZLIB":
            return zlib.decompress(data)
        if kind == "GZIP":
            return gzip.decompress(data)
    except (zlib.error, OSError, EOFError) as e:
        raise errors.DataLossError(None, None, f"{path}: not valid {kind} data ({e})") from None
    return data


def _text_lines(name: str, data: bytes, skip: int):
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the line end of the last line, not an empty line
    for number, line in enumerate(lines, 1):
        if number > skip:
            yield f"{name}:{number}".encode(), line[:-1] if line.endswith(b"\r") else line


def _tf_records(name: str, data: bytes):
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise errors.DataLossError(None, None, f"truncated record at {pos} in {name}")
        length, = struct.unpack_from("<Q", data, pos)
        length_crc, = struct.unpack_from("<I", data, pos + 8)
        if masked_crc32c(data[pos:pos + 8]) != length_crc:
            raise errors.DataLossError(None, None, f"corrupted record at {pos} in {name}")
        end = pos + 12 + length
        if end + 4 > len(data):
            raise errors.DataLossError(None, None, f"truncated record at {pos} in {name}")
        record = data[pos + 12:end]
        data_crc, = struct.unpack_from("<I", data, end)
        if masked_crc32c(record) != data_crc:
            raise errors.DataLossError(None, None, f"corrupted record at {pos} in {name}")
        yield f"{name}:{pos}".encode(), record
        pos = end + 4


def _fixed_length(name: str, data: bytes, header: int, record: int, footer: int, hop: int):
    body = data[header:len(data) - footer if footer else len(data)]
    step = hop if hop > 0 else record
    for i in itertools.count():
        start = i * step
        if start + record > len(body):
            return
        yield f"{name}:{i}".encode(), body[start:start + record]


class ReaderResource:
    """One reader: the record iterator of its current work unit and its counts."""

    def __init__(self, name: str, records, one_record_per_unit=False):
        self.name = name
        self._records = records  # records(work: str) -> iterator of (key, value)
        # Whole-file and identity readers finish a work unit with its one record (TensorFlow counts it done
        # then); the others find out when they try to read past its end.
        self._one_record = one_record_per_unit
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        self._current = None
        self.produced = 0
        self.completed = 0

    def _start(self, ctx, queue):
        element = queue.dequeue(ctx)  # OutOfRangeError once the queue is closed and empty
        work = np.asarray(element[0], dtype=object).item()
        work = work.decode("utf-8") if isinstance(work, bytes) else str(work)
        self._current = iter(self._records(work))

    def read_up_to(self, ctx, queue, n: int) -> list:
        """Up to ``n`` records of one work unit (TensorFlow's ReadUpTo): the current one, or the next
        that has records; fewer than ``n`` when that unit ends."""
        with self._lock:
            out = []
            while not out:
                if self._current is None:
                    self._start(ctx, queue)
                ended = True
                for record in self._current:
                    out.append(record)
                    if self._one_record:
                        break
                    if len(out) == n:
                        ended = False
                        break
                if ended:
                    self._current = None
                    self.completed += 1
            self.produced += len(out)
            return out

    def read(self, ctx, queue):
        return self.read_up_to(ctx, queue, 1)[0]


def _reader_factory(make_records, one_record_per_unit=False):
    def factory(node):
        a = node.attrs
        name = a.get("shared_name") or f"_{next(_private_ids)}_{node.name}"
        records = make_records(a)
        reader = node.resources.lookup_or_create(
            a.get("container", ""), name, lambda _name: ReaderResource(name, records, one_record_per_unit))
        return lambda: reader

    return factory


def _text_line_records(attrs):
    skip = int(attrs.get("skip_header_lines", 0))
    return lambda work: _text_lines(work, _read(work), skip)


def _tf_record_records(attrs):
    kind = attrs.get("compression_type", "")
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind not in ("", "ZLIB", "GZIP"):
        raise invalid(f"Unsupported compression_type: {kind}")
    return lambda work: _tf_records(work, _decompress(_read(work), kind, work))


def _whole_file_records(attrs):
    return lambda work: iter([(work.encode(), _read(work))])


def _identity_records(attrs):
    return lambda work: iter([(work.encode(), work.encode())])


def _fixed_length_records(attrs):
    sizes = [int(attrs.get(k, 0)) for k in ("header_bytes", "record_bytes", "footer_bytes", "hop_bytes")]
    if sizes[1] <= 0:
        raise invalid(f"record_bytes must be > 0, got {sizes[1]}")
    kind = attrs.get("encoding", "")
    kind = kind.decode() if isinstance(kind, bytes) else kind
    return lambda work: _fixed_length(work, _decompress(_read(work), kind, work), *sizes)


register_kernel("TextLineReaderV2", stateful=True)(_reader_factory(_text_line_records))
register_kernel("TFRecordReaderV2", stateful=True)(_reader_factory(_tf_record_records))
register_kernel("WholeFileReaderV2", stateful=True)(_reader_factory(_whole_file_records, True))
register_kernel("IdentityReaderV2", stateful=True)(_reader_factory(_identity_records, True))
register_kernel("FixedLengthRecordReaderV2", stateful=True)(_reader_factory(_fixed_length_records))


def _scalar_bytes(b: bytes) -> np.ndarray:
    return np.asarray(b, dtype=object)


@register_kernel("ReaderReadV2", needs_context=True)
def _reader_read(node):
    def compute(ctx, reader, queue):
        key, value = reader.read(ctx, queue)
        return _scalar_bytes(key), _scalar_bytes(value)

    return compute


@register_kernel("ReaderReadUpToV2", needs_context=True)
def _reader_read_up_to(node):
    def compute(ctx, reader, queue, num_records):
        n = int(num_records)
        if n <= 0:
            raise invalid(f"num_records must be > 0, got {n}")
        records = reader.read_up_to(ctx, queue, n)
        keys, values = [k for k, _ in records], [v for _, v in records]
        out_k, out_v = np.empty(len(keys), dtype=object), np.empty(len(values), dtype=object)
        out_k[:], out_v[:] = keys, values
        return out_k, out_v

    return compute


register_kernel("ReaderNumRecordsProducedV2")(lambda node: lambda reader: np.int64(reader.produced))
register_kernel("ReaderNumWorkUnitsCompletedV2")(lambda node: lambda reader: np.int64(reader.completed))
register_kernel("ReaderResetV2")(lambda node: lambda reader: reader.reset())
