"""TFRecord framing, as TensorFlow writes it (event files, ``.tfrecord`` files).

Each record is::

    u64 length (little-endian) | u32 masked CRC-32C of those 8 bytes | data | u32 masked CRC-32C of data

where the mask is TensorFlow's: ``((crc >> 15 | crc << 17) + 0xa282ead8) mod 2**32``. CRC-32C (the
Castagnoli polynomial) is computed here in Python, eight bytes per step (slicing-by-8 tables).

Example:
    >>> import io
    >>> buf = io.BytesIO()
    >>> write_record(buf, b"hello")
    >>> buf.getvalue().hex()  # the bytes TensorFlow writes for this record
    '0500000000000000eab2043e68656c6c6fbb1f1c19'
    >>> list(read_records(io.BytesIO(buf.getvalue()), "buf"))
    [b'hello']
    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
"""

from __future__ import annotations

import struct

from sparseflow._src.framework import errors

__all__ = ["crc32c", "masked_crc32c", "write_record", "read_records", "encode_record"]

_POLY = 0x82F63B78  # CRC-32C, reflected
_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


def _tables():
    t0 = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        t0.append(c)
    tables = [t0]
    for _ in range(7):
        prev = tables[-1]
        tables.append([(prev[n] >> 8) ^ t0[prev[n] & 0xFF] for n in range(256)])
    return tables


_T = _tables()


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC-32C of ``data`` (continuing from ``crc``)."""
    t0, t1, t2, t3, t4, t5, t6, t7 = _T
    c = crc ^ _U32
    mv = memoryview(data).cast("B")
    n = len(mv)
    end8 = n - n % 8
    if end8:
        words = struct.unpack_from(f"<{end8 // 4}I", mv, 0)
        for i in range(0, len(words), 2):
            lo = words[i] ^ c
            hi = words[i + 1]
            c = (t7[lo & 0xFF] ^ t6[(lo >> 8) & 0xFF] ^ t5[(lo >> 16) & 0xFF] ^ t4[lo >> 24]
                 ^ t3[hi & 0xFF] ^ t2[(hi >> 8) & 0xFF] ^ t1[(hi >> 16) & 0xFF] ^ t0[hi >> 24])
    for b in mv[end8:]:
        c = t0[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ _U32


def masked_crc32c(data: bytes) -> int:
    """TensorFlow's masked CRC-32C of ``data`` (what TFRecord files store)."""
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + _MASK_DELTA) & _U32


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
