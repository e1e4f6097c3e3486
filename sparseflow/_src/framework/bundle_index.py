"""The index file of a tensor bundle: checksummed protobuf records between a magic and a footer.

Layout (see tensor_bundle.py for the whole bundle)::

    "SFBNDIDX" | u32 format version
    record: u32 length | u32 CRC-32 of payload | payload      (BundleHeaderProto, then one
            ...                                                 BundleEntryProto per tensor or
                                                               slice, sorted by name)
    "SFBNDEND" | u64 bytes before this footer | u32 CRC-32 of those bytes

:func:`parse_index` verifies every checksum and raises DataLossError naming the file and the
tensor whose record is damaged; nothing read is unpickled or executed.
"""

from __future__ import annotations

import struct
import zlib

from sparseflow._src.framework import errors
from sparseflow._src.framework.proto.tensor_bundle_pb2 import BundleEntryProto, BundleHeaderProto

__all__ = ["FORMAT_VERSION", "serialize_index", "parse_index", "crc32", "data_loss"]

FORMAT_VERSION = 1
MAGIC_INDEX = b"SFBNDIDX"
MAGIC_END = b"SFBNDEND"
_RECORD = struct.Struct("<II")
_FOOTER = struct.Struct("<8sQI")
_MAX_RECORD = 1 << 26  # an index record is a small proto; a larger length means corruption


def crc32(data) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def data_loss(msg: str):
    return errors.DataLossError(None, None, msg)


def _record(message) -> bytes:
    payload = message.SerializeToString()
    return _RECORD.pack(len(payload), crc32(payload)) + payload


def serialize_index(header: BundleHeaderProto, entries: list) -> bytes:
    header.num_entries = len(entries)
    header.format_version = FORMAT_VERSION
    parts = [MAGIC_INDEX, struct.pack("<I", FORMAT_VERSION), _record(header)]
    parts.extend(_record(e) for e in entries)
    body = b"".join(parts)
    return body + _FOOTER.pack(MAGIC_END, len(body), crc32(body))


def _guess_name(payload: bytes, prev: str | None) -> str:
    try:
        name = BundleEntryProto.FromString(payload).name
        if name:
            return f"'{name}' (as read from the damaged record)"
    except Exception:  # noqa: BLE001 - any parse failure: the record is garbage
        pass
    return f"the one after '{prev}'" if prev else "the first tensor"


def parse_index(path: str, data: bytes):
    """(header, entries) of the index file bytes ``data``; DataLossError naming the file and tensor."""
    n_total = len(data)
    if n_total < 12 or data[:8] != MAGIC_INDEX:
        raise data_loss(f"Checkpoint index {path} is not a sparseflow bundle index (bad magic bytes; "
                         f"the file is truncated or corrupt).")
    (version,) = struct.unpack_from("<I", data, 8)
    if version > FORMAT_VERSION:
        raise data_loss(f"Checkpoint index {path} has format version {version}; this sparseflow reads "
                         f"versions up to {FORMAT_VERSION} (or the file is corrupt).")
    pos, records, expected, prev = 12, [], None, None
    while expected is None or len(records) < expected + 1:
        k = len(records)
        what = "the header record" if k == 0 else f"tensor entry {k} of {expected}"
        if pos + _RECORD.size > n_total:
            raise _truncated(path, k, expected, prev)
        length, crc = _RECORD.unpack_from(data, pos)
        if length > _MAX_RECORD or pos + _RECORD.size + length > n_total:
            raise _truncated(path, k, expected, prev)
        payload = data[pos + _RECORD.size:pos + _RECORD.size + length]
        if crc32(payload) != crc:
            who = "" if k == 0 else f" (tensor {_guess_name(payload, prev)})"
            raise data_loss(f"Checkpoint index {path} is corrupt: {what}{who} fails its CRC-32 check.")
        try:
            msg = (BundleHeaderProto if k == 0 else BundleEntryProto).FromString(payload)
        except Exception as e:  # noqa: BLE001 - a checksummed record that does not parse
            raise data_loss(f"Checkpoint index {path} is corrupt: {what} does not parse ({e}).") from None
        if k == 0:
            expected = int(msg.num_entries)
        else:
            prev = msg.name
        records.append(msg)
        pos += _RECORD.size + length
    if pos + _FOOTER.size > n_total:
        raise _truncated(path, len(records), expected, prev, footer=True)
    magic, body_len, body_crc = _FOOTER.unpack_from(data, pos)
    if magic != MAGIC_END or body_len != pos or crc32(data[:pos]) != body_crc:
        raise data_loss(f"Checkpoint index {path} is corrupt: its footer checksum does not match (last tensor "
                         f"'{prev}').")
    if pos + _FOOTER.size != n_total:
        raise data_loss(f"Checkpoint index {path} is corrupt: {n_total - pos - _FOOTER.size} unexpected bytes "
                         f"after the footer.")
    header = records[0]
    if header.num_shards < 1 or len(header.shard_ids) != header.num_shards:
        raise data_loss(f"Checkpoint index {path} is corrupt: {header.num_shards} data files but "
                         f"{len(header.shard_ids)} shard ids.")
    return header, records[1:]


def _truncated(path, k, expected, prev, footer=False):
    if k == 0:
        return data_loss(f"Checkpoint index {path} is truncated or corrupt: its header record is incomplete.")
    where = f"after tensor '{prev}'" if prev else "before the first tensor"
    got = k - 1
    if footer:
        return data_loss(f"Checkpoint index {path} is truncated: its footer is missing ({where}, all {got} "
                          f"entries read).")
    return data_loss(f"Checkpoint index {path} is truncated or corrupt {where}: read {got} of {expected} tensor "
                      f"entries; the next one is incomplete.")
