"""TensorFlow's own tensor-bundle checkpoint format, for SavedModel ``variables/`` that TensorFlow reads.

``prefix.index`` is a LevelDB-format table (no compression) mapping ``""`` to a
BundleHeaderProto and each tensor name to a BundleEntryProto (dtype, shape, shard, offset, size,
masked CRC-32C of the bytes); ``prefix.data-00000-of-00001`` holds the tensors' little-endian
bytes back to back. Every block and tensor checksum is verified on reading; a damaged file raises
DataLossError naming it. Numeric and bool tensors only (string tensors are refused by name).

Example:
    >>> import os, tempfile, numpy as np
    >>> prefix = os.path.join(tempfile.mkdtemp(), "variables")
    >>> write_tf_bundle(prefix, {"w": np.arange(4, dtype=np.float32).reshape(2, 2), "b": np.zeros(2)})
    >>> sorted(read_tf_bundle(prefix).items())[1][1].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
"""

from __future__ import annotations

import os
import struct

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.framework.proto.tensor_bundle_pb2 import BundleEntryProto
from sparseflow._src.kernels.tfrecord_framing import masked_crc32c

__all__ = ["write_tf_bundle", "read_tf_bundle", "is_tf_bundle"]

TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_LEN = 48
_HEADER_KEY = b""
# BundleHeaderProto{num_shards: 1, endianness: LITTLE, version: {producer: 1}} as TensorFlow writes it
_HEADER = bytes([0x08, 0x01, 0x1A, 0x02, 0x08, 0x01])


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _read_varint(buf: bytes, pos: int, where: str) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise _corrupt(where, "a varint runs past its block")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _corrupt(path: str, what: str):
    return errors.DataLossError(None, None, f"TensorFlow checkpoint {path} is corrupt or truncated: {what}.")


def _data_path(prefix: str) -> str:
    return f"{prefix}.data-00000-of-00001"


# ---------------------------------------------------------------------------------------- writing
def _block(entries: list[tuple[bytes, bytes]]) -> bytes:
    """A table block: every entry is a restart point (no key sharing), then the restart array."""
    body, restarts = bytearray(), []
    for key, value in entries:
        restarts.append(len(body))
        body += _varint(0) + _varint(len(key)) + _varint(len(value)) + key + value
    if not restarts:
        restarts = [0]
    body += b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))
    return bytes(body)


def _with_trailer(block: bytes) -> bytes:
    return block + b"\x00" + struct.pack("<I", masked_crc32c(block + b"\x00"))


def _handle(offset: int, size: int) -> bytes:
    return _varint(offset) + _varint(size)


def write_tf_bundle(prefix: str, tensors: dict) -> None:
    """Writes ``{name: array}`` as the TensorFlow checkpoint ``prefix`` (index written last)."""
    data, entries = bytearray(), []
    for name in sorted(tensors, key=lambda n: n.encode("utf-8")):
        arr = np.asarray(tensors[name])
        if arr.dtype.kind in "OSU":
            raise TypeError(f"write_tf_bundle: tensor {name!r} holds strings; only numeric and bool tensors are "
                            f"written in TensorFlow's format.")
        dtype = dtypes.as_dtype(arr.dtype)
        raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        entry = BundleEntryProto(dtype=dtype.as_datatype_enum, shard_id=0, offset=len(data), size=len(raw),
                                 crc32=masked_crc32c(raw))
        for d in arr.shape:
            entry.shape.dim.add(size=int(d))
        entries.append((name.encode("utf-8"), entry.SerializeToString()))
        data += raw
    data_block = _with_trailer(_block([(_HEADER_KEY, _HEADER)] + entries))
    meta_block = _with_trailer(_block([]))
    last_key = entries[-1][0] if entries else _HEADER_KEY
    meta_offset = len(data_block)
    index_block = _with_trailer(_block([(last_key, _handle(0, len(data_block) - 5))]))
    index_offset = meta_offset + len(meta_block)
    footer = _handle(meta_offset, len(meta_block) - 5) + _handle(index_offset, len(index_block) - 5)
    footer = footer.ljust(_FOOTER_LEN - 8, b"\x00") + struct.pack("<Q", TABLE_MAGIC)
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    for path, contents in ((_data_path(prefix), bytes(data)),
                           (prefix + ".index", data_block + meta_block + index_block + footer)):
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(contents)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


# ---------------------------------------------------------------------------------------- reading
def is_tf_bundle(prefix: str) -> bool:
    """Whether ``prefix.index`` is a TensorFlow (LevelDB table) index."""
    try:
        with open(prefix + ".index", "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < _FOOTER_LEN:
                return False
            f.seek(-8, os.SEEK_END)
            return struct.unpack("<Q", f.read(8))[0] == TABLE_MAGIC
    except OSError:
        return False


def _read_block(buf: bytes, offset: int, size: int, path: str) -> bytes:
    if offset + size + 5 > len(buf):
        raise _corrupt(path, f"a block at {offset} (+{size}) runs past the end of the file")
    block, kind = buf[offset:offset + size], buf[offset + size]
    (crc,) = struct.unpack("<I", buf[offset + size + 1:offset + size + 5])
    if masked_crc32c(buf[offset:offset + size + 1]) != crc:
        raise _corrupt(path, f"the block at offset {offset} fails its checksum")
    if kind != 0:
        raise errors.UnimplementedError(None, None, f"TensorFlow checkpoint {path} uses block compression "
                                                    f"{kind}; only uncompressed indexes are read.")
    return block


def _block_entries(block: bytes, path: str):
    if len(block) < 4:
        raise _corrupt(path, "a block is shorter than its restart count")
    (n_restarts,) = struct.unpack("<I", block[-4:])
    end = len(block) - 4 - 4 * n_restarts
    if end < 0:
        raise _corrupt(path, "a block's restart array is larger than the block")
    pos, key = 0, b""
    while pos < end:
        shared, pos = _read_varint(block, pos, path)
        unshared, pos = _read_varint(block, pos, path)
        value_len, pos = _read_varint(block, pos, path)
        if shared > len(key) or pos + unshared + value_len > end:
            raise _corrupt(path, "an entry runs past its block")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + value_len]
        pos += value_len


def read_tf_bundle(prefix: str) -> dict:
    """``{name: array}`` of every tensor of the TensorFlow checkpoint ``prefix``."""
    index_path = prefix + ".index"
    with open(index_path, "rb") as f:
        buf = f.read()
    if len(buf) < _FOOTER_LEN or struct.unpack("<Q", buf[-8:])[0] != TABLE_MAGIC:
        raise _corrupt(index_path, "the index does not end with the table magic number")
    footer = buf[-_FOOTER_LEN:]
    _, pos = _read_varint(footer, 0, index_path)
    _, pos = _read_varint(footer, pos, index_path)
    index_offset, pos = _read_varint(footer, pos, index_path)
    index_size, pos = _read_varint(footer, pos, index_path)
    entries = {}
    for _, handle in _block_entries(_read_block(buf, index_offset, index_size, index_path), index_path):
        offset, p = _read_varint(handle, 0, index_path)
        size, _ = _read_varint(handle, p, index_path)
        for key, value in _block_entries(_read_block(buf, offset, size, index_path), index_path):
            if key != _HEADER_KEY:
                entries[key.decode("utf-8")] = BundleEntryProto.FromString(value)
    data_path = _data_path(prefix)
    with open(data_path, "rb") as f:
        data = f.read()
    out = {}
    for name, entry in entries.items():
        if entry.shard_id != 0:
            raise errors.UnimplementedError(None, None, f"Tensor {name} of {prefix} is in shard {entry.shard_id}; "
                                                        f"only single-shard TensorFlow checkpoints are read.")
        dtype = dtypes.as_dtype(entry.dtype)
        if dtype == dtypes.string:
            raise errors.UnimplementedError(None, None, f"Tensor {name} of {prefix} holds strings, which are not "
                                                        f"read from TensorFlow checkpoints.")
        raw = data[entry.offset:entry.offset + entry.size]
        if len(raw) != entry.size or masked_crc32c(raw) != entry.crc32:
            raise _corrupt(data_path, f"tensor {name!r} is truncated or fails its checksum")
        shape = [d.size for d in entry.shape.dim]
        out[name] = np.frombuffer(raw, dtype=np.dtype(dtype.as_numpy_dtype).newbyteorder("<")).reshape(shape).copy()
    return out
