"""Datasets of file contents, TensorFlow's: ``TextLineDataset``, ``TFRecordDataset`` and
``FixedLengthRecordDataset``; each element is one scalar ``tf.string``.

They are block sources: files are read in chunks of ``buffer_size`` bytes and each chunk becomes
an object array of lines or records, so ``batch``/``shuffle``/``skip`` move NumPy blocks.
``filenames`` is a file name, a list of them, a ``tf.string`` tensor of rank <= 1 (e.g. a
placeholder fed when the iterator is initialized) or a dataset of file names.
``compression_type`` is ``""``, ``"ZLIB"`` or ``"GZIP"``. With ``num_parallel_reads`` > 1 the
files are read ahead on threads and their elements interleaved one at a time, ``num_parallel_reads``
files at once, in TensorFlow's order (``interleave(cycle_length=num_parallel_reads)``).

Lines are split at ``\\n``, and every ``\\r`` is dropped, as TensorFlow's line reader does.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "wb").write(b"name\\r\\nada\\nbob")
    >>> [line for line in TextLineDataset(path).skip(1)]
    [b'ada', b'bob']
"""

from __future__ import annotations

import os

import numpy as np

from sparseflow._src.data import record_io
from sparseflow._src.data.dataset import AUTOTUNE, Dataset
from sparseflow._src.data.dataset_structure import TensorSpec
from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.operation import Tensor

__all__ = ["FixedLengthRecordDataset", "TFRecordDataset", "TextLineDataset"]

_ROWS_PER_BLOCK = 1024  # rows per block when files are interleaved


def _text(v) -> str:
    v = v.item() if isinstance(v, np.ndarray) else v
    return v.decode() if isinstance(v, bytes) else str(v)


class _FileDataset(Dataset):
    """The common part: file names (in several forms), compression, buffer size, parallel reads."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):
        self._names_dataset = None
        if isinstance(filenames, Dataset):
            spec = filenames.element_spec
            if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.string or spec.shape.ndims not in (0, None):
                raise TypeError(f"`filenames` must be a `tf.data.Dataset` of scalar `tf.string` elements, got "
                                f"{spec!r}.")
            self._names_dataset = filenames
            self._names = None
        else:
            if isinstance(filenames, Tensor) and (filenames.dtype.base_dtype != dtypes.string or
                                                  (filenames.shape.ndims or 0) > 1):
                raise TypeError("`filenames` must be a `tf.Tensor` of dtype `tf.string` and rank <= 1, got "
                                f"{filenames.dtype.name} of shape {filenames.shape}.")
            self._names = self._arg(filenames, dtypes.string)
            if not isinstance(self._names, Tensor) and np.ndim(self._names) > 1:
                raise TypeError(f"`filenames` must be a string or a list of strings (rank <= 1), got rank "
                                f"{np.ndim(self._names)}.")
        self._compression = self._arg("" if compression_type is None else compression_type, dtypes.string)
        if not isinstance(self._compression, Tensor):
            record_io.compression_name(_text(self._compression))
        if buffer_size is not None and not isinstance(buffer_size, Tensor) and int(buffer_size) < 0:
            raise ValueError(f"`buffer_size` must be >= 0, got {buffer_size}.")
        self._buffer = self._arg(0 if buffer_size is None else buffer_size, dtypes.int64)
        self._parallel = self._arg(1 if num_parallel_reads is None else num_parallel_reads, dtypes.int64)
        self._element_spec = TensorSpec([], dtypes.string)

    def _inputs(self):
        return [self._names_dataset] if self._names_dataset is not None else []

    # ------------------------------------------------------------------ subclass part
    def _reader(self, ctx):
        """``read(path, compression, buffer_size)``: object arrays of the elements of one file, in order."""
        raise NotImplementedError

    # ------------------------------------------------------------------ iteration
    def _paths(self, ctx):
        if self._names_dataset is not None:
            for name in ctx.iterate(self._names_dataset):
                yield _text(name)
            return
        for name in np.asarray(ctx.value(self._names), dtype=object).reshape(-1).tolist():
            yield _text(name)

    def _iter_batches(self, ctx):
        compression = record_io.compression_name(_text(ctx.value(self._compression)))
        buffer_size = int(ctx.value(self._buffer)) or record_io.DEFAULT_BUFFER
        parallel = int(ctx.value(self._parallel))
        if parallel == AUTOTUNE:
            parallel = os.cpu_count() or 1
        if parallel <= 0:
            raise errors.InvalidArgumentError(None, None, f"num_parallel_reads must be positive or AUTOTUNE, got "
                                                          f"{parallel}.")
        read = self._reader(ctx)
        if parallel == 1:
            for path in self._paths(ctx):
                for block in read(path, compression, buffer_size):
                    if ctx.cancelled.is_set():
                        return
                    if len(block):
                        yield block
            return
        yield from self._interleaved(ctx, read, compression, buffer_size, parallel)

    def _interleaved(self, ctx, read, compression, buffer_size, cycle):
        """TensorFlow's interleave order, one element per file in turn, ``cycle`` files open at once."""
        from sparseflow._src.data.dataset_transforms import background

        paths = self._paths(ctx)
        slots: list = [None] * cycle
        open_count, index, end_of_input = 0, 0, False
        out: list = []
        try:
            while not end_of_input or open_count > 0:
                it = slots[index]
                if it is not None:
                    row = next(it, _END)
                    if row is _END:
                        slots[index] = None
                        open_count -= 1
                    else:
                        out.append(row)
                        if len(out) == _ROWS_PER_BLOCK:
                            yield np.array(out, dtype=object)
                            out = []
                    index = (index + 1) % cycle
                elif not end_of_input:
                    path = next(paths, None)
                    if path is None:
                        end_of_input = True
                        continue
                    blocks = background(read(path, compression, buffer_size), 2, ctx.cancelled)
                    slots[index] = (row for block in blocks for row in block.tolist())
                    open_count += 1
                else:
                    index = (index + 1) % cycle
            if out:
                yield np.array(out, dtype=object)
        finally:
            for it in slots:
                if it is not None:
                    it.close()


_END = object()


def _as_block(items: list) -> np.ndarray:
    block = np.empty(len(items), dtype=object)
    block[:] = items
    return block


def _lines(path, compression, buffer_size):
    """Blocks of the lines of one file (every \\r dropped, as TensorFlow's line reader does)."""
    carry = b""
    for chunk in record_io.read_chunks(path, compression, buffer_size):
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r", b"")
        lines = (carry + chunk).split(b"\n") if carry else chunk.split(b"\n")
        carry = lines.pop()
        if lines:
            yield _as_block(lines)
    if carry:
        yield _as_block([carry])


class TextLineDataset(_FileDataset):
    """The lines of text files, without their line ends (``tf.data.TextLineDataset``)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        super().__init__(filenames, compression_type, buffer_size, num_parallel_reads)

    def _reader(self, ctx):
        return _lines


class TFRecordDataset(_FileDataset):
    """The records of TFRecord files (``tf.data.TFRecordDataset``); a damaged or truncated record is
    a ``DataLossError`` naming the file, the record and its offset."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        super().__init__(filenames, compression_type, buffer_size, num_parallel_reads)

    def _reader(self, ctx):
        return record_io.record_blocks


class FixedLengthRecordDataset(_FileDataset):
    """Records of ``record_bytes`` bytes after ``header_bytes`` and before ``footer_bytes`` of each
    file (``tf.data.FixedLengthRecordDataset``); the body must be a whole number of records."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,
                 compression_type=None, num_parallel_reads=None, name=None):
        super().__init__(filenames, compression_type, buffer_size, num_parallel_reads)
        self._record = self._arg(record_bytes, dtypes.int64)
        self._header = self._arg(header_bytes or 0, dtypes.int64)
        self._footer = self._arg(footer_bytes or 0, dtypes.int64)

    def _reader(self, ctx):
        record, header, footer = (int(ctx.value(a)) for a in (self._record, self._header, self._footer))
        if record <= 0 or header < 0 or footer < 0:
            raise errors.InvalidArgumentError(None, None, f"record_bytes must be positive and header_bytes / "
                                                          f"footer_bytes >= 0, got {record}, {header}, {footer}.")
        return lambda path, compression, buffer_size: _fixed_records(path, compression, buffer_size, record,
                                                                     header, footer)


def _fixed_records(path, compression, buffer_size, record, header, footer):
    """Blocks of the records of one file; an uneven body is an error naming the file."""
    if not compression:
        try:
            size = os.path.getsize(path)
        except OSError:
            raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
        body = size - header - footer
        if body < 0 or body % record:
            raise errors.InvalidArgumentError(None, None, _body_message(path, header, footer, body, record))
    chunk = max(buffer_size // record, 1) * record
    pending, skipped, body = b"", 0, 0
    for data in record_io.read_chunks(path, compression, chunk):
        if skipped < header:
            take = min(header - skipped, len(data))
            skipped += take
            data = data[take:]
        pending = pending + data if pending else data
        whole = (max(len(pending) - footer, 0) // record) * record
        if whole:
            body += whole
            yield _as_block([pending[i:i + record] for i in range(0, whole, record)])
            pending = pending[whole:]
    body += max(len(pending) - footer, 0)
    if skipped < header or len(pending) - footer != 0:
        raise errors.DataLossError(None, None, _body_message(path, header, footer, body, record))


def _body_message(path, header, footer, body, record) -> str:
    return (f"Excluding the header ({header} bytes) and footer ({footer} bytes), input file \"{path}\" has body "
            f"length {body} bytes, which is not an exact multiple of the record length ({record} bytes).")
