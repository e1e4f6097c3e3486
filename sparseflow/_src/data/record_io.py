"""TFRecord files, byte-compatible with TensorFlow's: ``TFRecordWriter``, ``tf_record_iterator``,
``TFRecordOptions`` and the block reader behind ``TFRecordDataset``; GZIP/ZLIB files as TF's zlib
streams (framing and CRC-32C: ``kernels/tfrecord_framing.py``).

A record is framed as ``uint64 length | uint32 masked_crc32c(length bytes) | data |
uint32 masked_crc32c(data)``, little-endian, where ``masked(c) = ((c >> 15) | (c << 17)) +
0xa282ead8`` (mod 2**32). Reading checks both checksums; a damaged or truncated record is a
``DataLossError`` naming the file, the record's index and its byte offset.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
    >>> with TFRecordWriter(path, "GZIP") as w:
    ...     w.write(b"first")
    ...     w.write(b"second")
    >>> list(tf_record_iterator(path, TFRecordOptions("GZIP")))
    [b'first', b'second']
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.tfrecord_framing import encode_record, scan_frames

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]

_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")
DEFAULT_BUFFER = 256 * 1024  # TensorFlow's default read buffer of record files


# ---------------------------------------------------------------------------------------- options
class TFRecordCompressionType:
    """The compression of a record file (TF1's enum)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_TYPE_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
               TFRecordCompressionType.GZIP: "GZIP"}


def compression_name(compression_type, what="compression_type") -> str:
    """``""``, ``"ZLIB"`` or ``"GZIP"`` from a name, an enum value, None or ``TFRecordOptions``."""
    if isinstance(compression_type, TFRecordOptions):
        return compression_type.compression_type
    if compression_type is None:
        return ""
    if isinstance(compression_type, bytes):
        compression_type = compression_type.decode()
    if isinstance(compression_type, (int, np.integer)) and int(compression_type) in _TYPE_NAMES:
        return _TYPE_NAMES[int(compression_type)]
    name = str(compression_type).upper()
    if name not in ("", "ZLIB", "GZIP"):
        raise errors.InvalidArgumentError(None, None, f"Unsupported {what}: {compression_type!r} (use '', 'ZLIB' or "
                                                      f"'GZIP').")
    return name


class TFRecordOptions:
    """Options of record files: the compression and TF's zlib settings (``compression_level`` 0-9,
    ``mem_level``, ``window_bits``, ``compression_strategy``; the defaults are TF's)."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        self.compression_type = compression_name(compression_type)
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        return compression_name(options)

    def _compressor(self):
        if not self.compression_type:
            return None
        bits = self.window_bits if self.window_bits is not None else zlib.MAX_WBITS
        if self.compression_type == "GZIP":
            bits += 16
        level = -1 if self.compression_level is None else int(self.compression_level)
        return zlib.compressobj(level, zlib.DEFLATED if self.compression_method is None else self.compression_method,
                                bits, 9 if self.mem_level is None else int(self.mem_level),
                                zlib.Z_DEFAULT_STRATEGY if self.compression_strategy is None
                                else int(self.compression_strategy))


def _options(options) -> TFRecordOptions:
    return options if isinstance(options, TFRecordOptions) else TFRecordOptions(options)


# ---------------------------------------------------------------------------------------- writing
def frame(record: bytes) -> bytes:
    """One record framed as in a TFRecord file."""
    return encode_record(record)


class TFRecordWriter:
    """Writes records to a TFRecord file (``tf.io.TFRecordWriter``): ``write(record)``, ``flush()``,
    ``close()``; a context manager. ``options``: a ``TFRecordOptions`` or a compression name."""

    def __init__(self, path, options=None):
        self._path = path.decode() if isinstance(path, bytes) else str(path)
        self._options = _options(options)
        try:
            self._file = open(self._path, "wb")
        except OSError as e:
            raise errors.NotFoundError(None, None, f"{self._path}: cannot create the record file: {e}") from None
        self._zip = self._options._compressor()

    def _out(self, data: bytes):
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, f"{self._path}: the TFRecordWriter is closed.")
        self._file.write(self._zip.compress(data) if self._zip is not None else data)

    def write(self, record):
        """Appends one record (bytes, or a str written as UTF-8)."""
        if isinstance(record, str):
            record = record.encode("utf-8")
        self._out(frame(bytes(record)))

    def flush(self):
        if self._zip is not None:
            self._out_raw(self._zip.flush(zlib.Z_SYNC_FLUSH))
        if self._file is not None:
            self._file.flush()

    def _out_raw(self, data: bytes):
        if self._file is not None and data:
            self._file.write(data)

    def close(self):
        if self._file is None:
            return
        if self._zip is not None:
            self._out_raw(self._zip.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


# ---------------------------------------------------------------------------------------- reading
def read_chunks(path: str, compression: str, chunk: int = DEFAULT_BUFFER):
    """The (decompressed) bytes of ``path`` in chunks of about ``chunk`` bytes."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    except OSError as e:
        raise errors.NotFoundError(None, None, f"{path}: cannot open the file: {e}") from None
    with f:
        if not compression:
            while True:
                data = f.read(chunk)
                if not data:
                    return
                yield data
        bits = zlib.MAX_WBITS + (16 if compression == "GZIP" else 0)
        unzip = zlib.decompressobj(bits)
        fed = False  # the current stream has had input
        while True:
            data = f.read(chunk)
            if not data:
                break
            try:
                while data:
                    out = unzip.decompress(data)
                    fed = True
                    if out:
                        yield out
                    data = b""
                    if unzip.eof:  # concatenated streams (e.g. appended gzip members)
                        data, fed = unzip.unused_data, False
                        unzip = zlib.decompressobj(bits)
            except zlib.error as e:
                raise errors.DataLossError(None, None, f"{path}: the {compression} data is corrupt ({e}); is the "
                                                       f"file compressed with {compression}?") from None
        if fed and not unzip.eof:
            raise errors.DataLossError(None, None, f"{path}: the {compression} stream is truncated (the file ends "
                                                   f"before the end of its compressed data).")


def record_blocks(path: str, compression: str = "", buffer_size: int | None = None, max_records: int = 8192):
    """The records of a TFRecord file as object arrays of bytes (a few thousand per block)."""
    chunk = max(int(buffer_size or DEFAULT_BUFFER), 16)
    pending = b""
    base = 0  # file offset (of the decompressed stream) of pending[0]
    index = 0
    offsets = np.empty(max_records, np.int64)
    lengths = np.empty(max_records, np.int64)
    need = 0
    for data in read_chunks(path, compression, chunk):
        pending = pending + data if pending else data
        if len(pending) < need:
            continue
        while True:
            buf = np.frombuffer(pending, np.uint8)
            n, pos, status, need = scan_frames(buf, 0, len(buf), True, offsets, lengths)
            if n:
                ends = (offsets[:n] + lengths[:n]).tolist()
                yield np.array([pending[a:b] for a, b in zip(offsets[:n].tolist(), ends)], dtype=object)
            if status:
                kind = "length" if status == 1 else "data"
                hint = "" if compression else " (compressed?)"
                raise errors.DataLossError(None, None, f"{path}: corrupted record {index + n} at byte {base + pos}: "
                                                       f"the checksum of its {kind} does not match (a damaged file, "
                                                       f"or not a TFRecord file{hint}).")
            index += n
            base += pos
            pending = pending[pos:]
            if n < max_records:
                break
    if pending:
        size = f"of its {need} bytes (framing included)" if need > 12 else "of its 12-byte header"
        raise errors.DataLossError(None, None, f"{path}: truncated record {index} at byte {base}: the file holds "
                                               f"only {len(pending)} {size}.")


def tf_record_iterator(path, options=None):
    """The records of a TFRecord file, one bytes object at a time (TF1's ``tf_record_iterator``)."""
    path = path.decode() if isinstance(path, bytes) else str(path)
    for block in record_blocks(path, _options(options).compression_type):
        yield from block.tolist()
