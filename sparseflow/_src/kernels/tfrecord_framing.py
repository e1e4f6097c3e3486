"""CRC-32C (Castagnoli) and TFRecord framing, as TensorFlow computes and writes them: the one
implementation behind TFRecord files (``data/record_io.py``), event files (``training/summary``)
and TensorFlow's tensor-bundle checkpoints (``training/saved_model/tf_tensor_bundle.py``).

A record is framed as ``uint64 length | uint32 masked_crc32c(length bytes) | data |
uint32 masked_crc32c(data)``, little-endian, where ``masked(c) = ((c >> 15) | (c << 17)) +
0xa282ead8`` (mod 2**32). The CRC runs compiled (slicing-by-8 tables), and ``scan_frames``
checks whole buffers of frames at once, never byte by byte in Python.

Example:
    >>> import io
    >>> buf = io.BytesIO()
    >>> write_record(buf, b"hello")
    >>> buf.getvalue().hex()  # the bytes TensorFlow writes for this record
    '0500000000000000eab2043e68656c6c6fbb1f1c19'
    >>> list(read_records(io.BytesIO(buf.getvalue()), "buf"))
    [b'hello']
    >>> hex(crc32c(b"123456789")), hex(masked_crc32c(b""))
    ('0xe3069283', '0xa282ead8')
"""

from __future__ import annotations

import struct

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.jit_cache import cached_njit

__all__ = ["crc32c", "masked_crc32c", "encode_record", "write_record", "read_records", "scan_frames"]

_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


def _crc_tables() -> np.ndarray:
    """Slicing-by-8 tables of the reflected Castagnoli polynomial 0x82f63b78."""
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(0x82F63B78), t >> 1).astype(np.uint32)
    tables = np.empty((8, 256), np.uint32)
    tables[0] = t
    for k in range(1, 8):
        tables[k] = (tables[k - 1] >> 8) ^ t[tables[k - 1] & 0xFF]
    return tables


TABLES = _crc_tables()


@cached_njit(nogil=True)
def _crc_update(crc, buf, start, end, t):  # pragma: no cover - compiled
    c = np.uint32(crc) ^ np.uint32(0xFFFFFFFF)
    i = start
    while i + 8 <= end:
        lo = c ^ (np.uint32(buf[i]) | (np.uint32(buf[i + 1]) << 8) | (np.uint32(buf[i + 2]) << 16)
                  | (np.uint32(buf[i + 3]) << 24))
        c = (t[7, lo & 0xFF] ^ t[6, (lo >> 8) & 0xFF] ^ t[5, (lo >> 16) & 0xFF] ^ t[4, lo >> 24]
             ^ t[3, buf[i + 4]] ^ t[2, buf[i + 5]] ^ t[1, buf[i + 6]] ^ t[0, buf[i + 7]])
        i += 8
    while i < end:
        c = t[0, (c ^ buf[i]) & 0xFF] ^ (c >> 8)
        i += 1
    return c ^ np.uint32(0xFFFFFFFF)


@cached_njit(nogil=True)
def _masked(crc):  # pragma: no cover - compiled
    c = np.uint32(crc)
    return np.uint32(((c >> 15) | (c << 17)) + np.uint32(0xA282EAD8))


@cached_njit(nogil=True)
def _u32(buf, i):  # pragma: no cover - compiled
    return np.uint32(buf[i]) | (np.uint32(buf[i + 1]) << 8) | (np.uint32(buf[i + 2]) << 16) | \
        (np.uint32(buf[i + 3]) << 24)


@cached_njit(nogil=True)
def _scan(buf, pos, end, check, t, offsets, lengths):  # pragma: no cover - compiled
    """Frames of whole records from ``pos``: (count, next position, status, bytes the next needs).

    status 0: stopped at ``end`` or when ``offsets`` is full; 1: bad length checksum; 2: bad data checksum."""
    n = 0
    while n < offsets.shape[0]:
        if end - pos < 12:
            return n, pos, 0, 12
        length = np.uint64(_u32(buf, pos)) | (np.uint64(_u32(buf, pos + 4)) << np.uint64(32))
        if check and _masked(_crc_update(0, buf, pos, pos + 8, t)) != _u32(buf, pos + 8):
            return n, pos, 1, 0
        need = np.int64(length) + 16
        if end - pos < need:
            return n, pos, 0, need
        if check and _masked(_crc_update(0, buf, pos + 12, pos + 12 + np.int64(length), t)) != \
                _u32(buf, pos + 12 + np.int64(length)):
            return n, pos, 2, 0
        offsets[n] = pos + 12
        lengths[n] = np.int64(length)
        n += 1
        pos += need
    return n, pos, 0, 0


def crc32c(data, crc: int = 0) -> int:
    """CRC-32C of ``data`` (bytes-like), continuing from ``crc``."""
    buf = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    return int(_crc_update(crc, buf, 0, len(buf), TABLES))


def masked_crc32c(data) -> int:
    """The masked CRC-32C stored in TFRecord frames."""
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def scan_frames(buf, pos, end, check, offsets, lengths):
    """Whole frames of ``buf[pos:end]`` (a uint8 array): fills ``offsets``/``lengths`` of their data;
    returns (count, next position, status, bytes the next frame needs); status 1: a bad length
    checksum, 2: a bad data checksum (at the next position)."""
    return _scan(buf, pos, end, check, TABLES, offsets, lengths)


def encode_record(data: bytes) -> bytes:
    """``data`` framed as one TFRecord."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + bytes(data) + struct.pack("<I", masked_crc32c(data))


def write_record(f, data: bytes) -> None:
    """Appends ``data`` as one TFRecord to the binary file object ``f``."""
    f.write(encode_record(data))


def read_records(f, name: str, check_crc: bool = True):
    """Yields the records of the binary file object ``f`` (``name`` is shown in errors). A record cut
    short at the end (a writer still writing) ends the iteration; a checksum that does not match
    raises DataLossError."""
    while True:
        header = f.read(12)
        if len(header) < 12:
            return
        length, header_crc = struct.unpack("<QI", header)
        if check_crc and masked_crc32c(header[:8]) != header_crc:
            raise errors.DataLossError(None, None, f"Corrupted record in {name}: the length's checksum does not "
                                                   f"match at offset {f.tell() - 12}.")
        data = f.read(length)
        footer = f.read(4)
        if len(data) < length or len(footer) < 4:
            return
        if check_crc and masked_crc32c(data) != struct.unpack("<I", footer)[0]:
            raise errors.DataLossError(None, None, f"Corrupted record in {name}: the data's checksum does not "
                                                   f"match (a {length}-byte record).")
        yield data
