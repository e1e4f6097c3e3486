"""Tensor bundles: a checkpoint's named tensors on disk, written atomically and checksummed.

A bundle at ``prefix`` is ``prefix.index`` plus data files ``prefix.data-SSSSS-of-NNNNN``. It
knows nothing of Variables: anything that can name its tensors (variables, optimizer slots,
embedding-table shards) is saved with :class:`BundleWriter` and read back with :class:`BundleReader`.

Data file::

    "SFBNDDAT" | u32 format version | u32 0 | 16-byte random shard id | tensor bytes ...

Each tensor's bytes (see tensor_codec) start at an 8-byte aligned offset.

Index file (written last; its presence is what makes the checkpoint exist)::

    "SFBNDIDX" | u32 format version
    record: u32 length | u32 CRC-32 of payload | payload      (BundleHeaderProto, then one
            ...                                                 BundleEntryProto per tensor or
                                                               slice, sorted by name)
    "SFBNDEND" | u64 bytes before this footer | u32 CRC-32 of those bytes

Every entry holds the tensor's name, dtype, full shape, optional slice, data file, offset, size
and the CRC-32 of its bytes; the header lists each data file's shard id. Reading verifies every
checksum: a truncated or corrupt file raises DataLossError naming the file and the tensor. Nothing
read is unpickled or executed: the index is protobuf records, the data raw little-endian bytes.

Saving is atomic as a whole, also onto an existing prefix (see :func:`_commit`): data and index
are written under temporary names and fsynced; a data file about to be replaced is first renamed
to ``<data file>.prev-<its shard id>``; then the new data files and last the index are renamed
into place. The old index reads its data from the ``.prev`` file when the data file no longer
carries its shard id, so after a crash at any point either the old or the new bundle restores
completely. Once the new index is in place, data files of the prefix it does not use are deleted.

Example:
    >>> import os, tempfile, numpy as np
    >>> prefix = os.path.join(tempfile.mkdtemp(), "ckpt")
    >>> with BundleWriter(prefix) as w:
    ...     w.add("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    ...     w.add("names", np.array([b"a", b"bc"], dtype=object))
    >>> with BundleReader(prefix) as r:
    ...     print(r.names(), r.shape("w"), r.read("names").tolist())
    ['names', 'w'] [2, 3] [b'a', b'bc']
"""

from __future__ import annotations

import os
import struct
import uuid

import numpy as np

from sparseflow._src.framework import dtypes, errors, tensor_codec
from sparseflow._src.framework.bundle_index import FORMAT_VERSION, crc32, data_loss, parse_index, serialize_index
from sparseflow._src.framework.file_io import fsync_dir
from sparseflow._src.framework.graph_io import shape_from_proto, shape_to_proto
from sparseflow._src.framework.proto.tensor_bundle_pb2 import BundleEntryProto, BundleHeaderProto

__all__ = ["BundleWriter", "BundleReader", "merge_bundles", "index_path", "data_path", "bundle_exists",
           "bundle_files", "previous_data_path", "parse_index", "FORMAT_VERSION"]

MAGIC_DATA = b"SFBNDDAT"
_DATA_HEADER = struct.Struct("<8sII16s")
_ALIGN = 8


def _str(path) -> str:
    path = os.fspath(path)
    return path.decode("utf-8") if isinstance(path, bytes) else path


def index_path(prefix) -> str:
    return _str(prefix) + ".index"


def data_path(prefix, shard: int, num_shards: int) -> str:
    return f"{_str(prefix)}.data-{shard:05d}-of-{num_shards:05d}"


def bundle_exists(prefix) -> bool:
    """True when ``prefix.index`` exists (the index is written last, so the bundle is complete)."""
    return os.path.isfile(index_path(prefix))


def bundle_files(prefix) -> list[str]:
    """The existing files of the bundle at ``prefix`` (index and data files)."""
    prefix = _str(prefix)
    d, base = os.path.split(prefix)
    try:
        names = os.listdir(d or ".")
    except OSError:
        return []
    out = [os.path.join(d, n) for n in names
           if n == base + ".index" or (n.startswith(base + ".data-") and ".tempstate" not in n)]
    return sorted(out)


def _temp_name(final: str) -> str:
    return f"{final}.tempstate{uuid.uuid4().hex}"


def _write_durably(path: str, payload: bytes):
    """Writes a new file ``path`` and fsyncs it (removed again when writing fails)."""
    try:
        with open(path, "xb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _remove_quietly(path)
        raise


def previous_data_path(path: str, shard_id: bytes) -> str:
    """Where a committed data file is kept while a save onto its prefix replaces it."""
    return f"{path}.prev-{shard_id.hex()}"


def _data_shard_id(path: str) -> bytes | None:
    """The shard id in the header of the data file ``path`` (None: missing or not a data file)."""
    try:
        with open(path, "rb") as f:
            head = f.read(_DATA_HEADER.size)
    except OSError:
        return None
    if len(head) < _DATA_HEADER.size:
        return None
    magic, _, _, shard_id = _DATA_HEADER.unpack(head)
    return shard_id if magic == MAGIC_DATA else None


def _commit(prefix: str, moves: list, header: BundleHeaderProto, entries: list):
    """Makes the bundle at ``prefix`` the one whose data files are the ``(source, destination)``
    renames ``moves`` and whose index holds ``entries``, so that a crash at any point leaves the
    previous bundle at ``prefix`` (if any) or the new one readable in full.

    Order: the index is written to a temporary file and fsynced; each destination data file that
    exists is renamed to its ``.prev-<shard id>`` name (the old index finds it there); the new
    data files are renamed into place; the index is renamed into place (the commit point); the
    directory is fsynced; then data files of ``prefix`` that the new index does not use are
    deleted. A failure before the commit puts the old data files back.
    """
    directory = os.path.dirname(prefix)
    final_index = index_path(prefix)
    tmp_index = _temp_name(final_index)
    _write_durably(tmp_index, serialize_index(header, entries))
    set_aside = []
    try:
        for _, dst in moves:
            shard_id = _data_shard_id(dst)
            if shard_id is not None:
                os.replace(dst, previous_data_path(dst, shard_id))
                set_aside.append((previous_data_path(dst, shard_id), dst))
        for src, dst in moves:
            os.replace(src, dst)
        fsync_dir(directory)
        os.replace(tmp_index, final_index)
    except BaseException:
        _remove_quietly(tmp_index)
        for prev, dst in set_aside:
            try:
                os.replace(prev, dst)
            except OSError:
                pass  # the old index still finds its data under the .prev name
        raise
    fsync_dir(directory)
    keep = {dst for _, dst in moves} | {final_index}
    for path in bundle_files(prefix):
        if path not in keep:
            _remove_quietly(path)


def _remove_quietly(path: str):
    try:
        os.remove(path)
    except OSError:
        pass


def _entry_key(e: BundleEntryProto):
    return e.name, tuple(x.start for x in e.slice.extent)


def _check_parent(prefix: str):
    parent = os.path.dirname(prefix)
    if parent and not os.path.isdir(parent):
        raise errors.NotFoundError(None, None, f"{parent}; No such directory (parent directory of checkpoint "
                                               f"prefix {prefix}); create it before saving.")


class BundleWriter:
    """Writes one bundle (one data file) at ``prefix``; :meth:`finish` makes it visible atomically.

    Use as a context manager: the bundle is committed when the block exits normally and every
    temporary file is removed when it raises.
    """

    def __init__(self, prefix):
        self.prefix = _str(prefix)
        _check_parent(self.prefix)
        self._shard_id = os.urandom(16)
        self._data_final = data_path(self.prefix, 0, 1)
        self._data_tmp = _temp_name(self._data_final)
        self._entries: dict[tuple, BundleEntryProto] = {}
        self._kinds: dict[str, tuple] = {}  # name -> (sliced, dtype enum, full shape, [extents])
        self._state = "open"
        try:
            self._f = open(self._data_tmp, "xb")
        except OSError as e:
            raise errors.UnknownError(None, None, f"Cannot create checkpoint data file {self._data_tmp}: "
                                                  f"{e.strerror}") from e
        self._f.write(_DATA_HEADER.pack(MAGIC_DATA, FORMAT_VERSION, 0, self._shard_id))
        self._pos = _DATA_HEADER.size

    # ------------------------------------------------------------------ adding tensors
    def add(self, name: str, value, dtype=None):
        """Adds the whole tensor ``value`` (array-like) under ``name``."""
        self._add(name, value, dtype, None, None)

    def add_slice(self, name: str, full_shape, extents, value, dtype=None):
        """Adds ``value``, the slice ``extents`` (a spec string or ``[(start, length), ...]``) of the
        tensor ``name`` of shape ``full_shape``. Slices of one name must not overlap."""
        if isinstance(extents, (str, bytes)):
            parsed_full, extents = tensor_codec.parse_shape_and_slice(extents)
            if parsed_full is not None and list(parsed_full) != [int(d) for d in full_shape]:
                raise ValueError(f"Slice spec full shape {parsed_full} differs from full_shape {list(full_shape)}.")
        self._add(name, value, dtype, [int(d) for d in full_shape], [(int(s), int(n)) for s, n in extents])

    def _add(self, name, value, dtype, full_shape, extents):
        if self._state != "open":
            raise ValueError(f"Bundle writer of {self.prefix} is already {self._state}.")
        if not isinstance(name, str) or not name:
            raise ValueError(f"Tensor names in a checkpoint must be non-empty strings, got {name!r}.")
        dt = dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        arr = np.asarray(value, dtype=object) if dt == dtypes.string else np.asarray(value)
        if dt is None:
            dt = dtypes.string if arr.dtype.kind in "OSU" else dtypes.as_dtype(arr.dtype)
        shape = list(arr.shape)
        sliced = extents is not None
        if sliced:
            if len(extents) != len(full_shape) or [n for _, n in extents] != shape:
                raise ValueError(f"Slice {extents} of '{name}' (full shape {full_shape}) does not match the value's "
                                 f"shape {shape}.")
        else:
            full_shape = shape
        self._check_consistent(name, sliced, dt, full_shape, extents)
        data = tensor_codec.encode(arr, dt)
        pad = (-self._pos) % _ALIGN
        if pad:
            self._f.write(b"\0" * pad)
            self._pos += pad
        size = data.nbytes if isinstance(data, memoryview) else len(data)
        entry = BundleEntryProto(name=name, dtype=dt.as_datatype_enum, shard_id=0, offset=self._pos,
                                 size=size, crc32=crc32(data))
        entry.shape.CopyFrom(shape_to_proto(full_shape))
        if sliced:
            for s, n in extents:
                entry.slice.extent.add(start=s, length=n)
        self._f.write(data)
        self._pos += size
        self._entries[_entry_key(entry)] = entry

    def _check_consistent(self, name, sliced, dt, full_shape, extents):
        prev = self._kinds.get(name)
        if prev is None:
            self._kinds[name] = (sliced, dt.as_datatype_enum, list(full_shape), [extents] if sliced else [])
            return
        if not (sliced and prev[0]):
            raise ValueError(f"Tensor '{name}' is added to the checkpoint twice.")
        if prev[1] != dt.as_datatype_enum or prev[2] != list(full_shape):
            raise ValueError(f"Slices of '{name}' disagree on dtype or full shape.")
        for other in prev[3]:
            if all(max(a, b) < min(a + la, b + lb) for (a, la), (b, lb) in zip(extents, other)):
                raise ValueError(f"Slices {other} and {extents} of '{name}' overlap.")
        prev[3].append(extents)

    # ------------------------------------------------------------------ committing
    def finish(self) -> str:
        """Commits the bundle (atomically, see :func:`_commit`). Returns the prefix."""
        if self._state != "open":
            raise ValueError(f"Bundle writer of {self.prefix} is already {self._state}.")
        try:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()
            header = BundleHeaderProto(num_shards=1, endianness=BundleHeaderProto.LITTLE,
                                       shard_ids=[self._shard_id])
            _commit(self.prefix, [(self._data_tmp, self._data_final)], header,
                    [self._entries[k] for k in sorted(self._entries)])
        except BaseException:
            self.abort()
            raise
        self._state = "finished"
        return self.prefix

    def abort(self):
        """Drops the bundle being written: closes and deletes the temporary data file."""
        if self._state == "finished":
            return
        self._state = "aborted"
        try:
            self._f.close()
        except OSError:
            pass
        _remove_quietly(self._data_tmp)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finish()
        else:
            self.abort()
        return False


class BundleReader:
    """Reads the bundle at ``prefix``: names, dtypes and shapes from the index; tensors on demand.

    The index is verified when the reader is made; each tensor's bytes are verified (length, CRC-32,
    data file id) when it is read.
    """

    def __init__(self, prefix):
        self.prefix = _str(prefix)
        self.index_file = index_path(self.prefix)
        try:
            with open(self.index_file, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find "
                                                   f"any matching files for {self.prefix}") from None
        self.header, entries = parse_index(self.index_file, raw)
        self._by_name: dict[str, list[BundleEntryProto]] = {}
        for e in entries:
            if e.shard_id < 0 or e.shard_id >= self.header.num_shards:
                raise data_loss(f"Checkpoint index {self.index_file} is corrupt: tensor '{e.name}' is in data file "
                                 f"{e.shard_id}, but the bundle has {self.header.num_shards}.")
            self._by_name.setdefault(e.name, []).append(e)
        self._files: dict[int, object] = {}

    # ------------------------------------------------------------------ metadata
    def names(self) -> list[str]:
        return sorted(self._by_name)

    def has(self, name: str) -> bool:
        return name in self._by_name

    def _entries(self, name: str) -> list[BundleEntryProto]:
        found = self._by_name.get(name)
        if found is None:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint")
        return found

    def dtype(self, name: str) -> dtypes.DType:
        return dtypes.as_dtype(int(self._entries(name)[0].dtype))

    def shape(self, name: str) -> list[int]:
        return shape_from_proto(self._entries(name)[0].shape).as_list()

    def is_sliced(self, name: str) -> bool:
        return self._entries(name)[0].HasField("slice")

    def slices(self, name: str) -> list[list[tuple[int, int]]]:
        """The stored slices of ``name`` as extents (``[]`` for a tensor stored whole)."""
        return [[(x.start, x.length) for x in e.slice.extent] for e in self._entries(name) if e.HasField("slice")]

    # ------------------------------------------------------------------ tensors
    def read(self, name: str) -> np.ndarray:
        """The whole tensor ``name`` (assembled from its slices if it was saved in slices)."""
        return self.read_slice(name, "")

    def read_slice(self, name: str, shape_and_slice="") -> np.ndarray:
        """The part ``shape_and_slice`` (TensorFlow slice spec; "" = all) of tensor ``name``."""
        entries = self._entries(name)
        full = self.shape(name)
        spec_full, want = tensor_codec.parse_shape_and_slice(shape_and_slice)
        if spec_full is not None and list(spec_full) != full:
            raise errors.InvalidArgumentError(None, None, f"Tensor '{name}' has shape {full} in the checkpoint, but "
                                                          f"the slice spec '{shape_and_slice}' is of a {spec_full}.")
        if want is None:
            want = [(0, d) for d in full]
        if not entries[0].HasField("slice"):
            value = self._read_entry(entries[0])
            return value if spec_full is None else value[tuple(slice(s, s + n) for s, n in want)].copy()
        dt = self.dtype(name)
        out = np.empty([n for _, n in want], dtype=object if dt == dtypes.string else dt.as_numpy_dtype)
        covered = 0
        for e in entries:
            ext = [(x.start, x.length) for x in e.slice.extent]
            if all(max(a, b) < min(a + la, b + lb) for (a, la), (b, lb) in zip(want, ext)):
                covered += tensor_codec.copy_overlap(out, want, self._read_entry(e), ext)
        if covered != out.size:
            raise errors.NotFoundError(None, None, f"The saved slices of '{name}' do not cover the requested slice "
                                                   f"'{tensor_codec.format_slice(full, want)}' of the checkpoint "
                                                   f"{self.prefix}.")
        return out

    def _data_file(self, shard: int, tensor: str):
        f = self._files.get(shard)
        if f is not None:
            return f
        path = data_path(self.prefix, shard, self.header.num_shards)
        want = self.header.shard_ids[shard]
        try:
            f = self._open_data(path, want, tensor)
        except errors.DataLossError:
            # A save onto this prefix that did not commit its index keeps our data file aside.
            try:
                f = self._open_data(previous_data_path(path, want), want, tensor)
            except errors.DataLossError:
                f = None
            if f is None:
                raise
        self._files[shard] = f
        return f

    def _open_data(self, path: str, want: bytes, tensor: str):
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            raise data_loss(f"Checkpoint data file {path} is missing (needed for tensor '{tensor}').") from None
        head = f.read(_DATA_HEADER.size)
        if len(head) < _DATA_HEADER.size:
            f.close()
            raise data_loss(f"Checkpoint data file {path} is truncated: its header is incomplete (reading tensor "
                             f"'{tensor}').")
        magic, version, reserved, shard_id = _DATA_HEADER.unpack(head)
        if magic != MAGIC_DATA or version > FORMAT_VERSION or reserved or shard_id != want:
            f.close()
            raise data_loss(f"Checkpoint data file {path} does not belong to index {self.index_file} (its header "
                             f"is corrupt or it comes from another save); cannot read tensor '{tensor}'.")
        return f

    def _read_entry(self, e: BundleEntryProto) -> np.ndarray:
        f = self._data_file(e.shard_id, e.name)
        path = f.name
        f.seek(e.offset)
        buf = bytearray(e.size)
        got = f.readinto(buf)
        if got != e.size:
            raise data_loss(f"Checkpoint data file {path} is truncated: tensor '{e.name}' needs bytes "
                             f"[{e.offset}, {e.offset + e.size}) but the file ends at {e.offset + got}.")
        if crc32(buf) != e.crc32:
            raise data_loss(f"Checkpoint data file {path} is corrupt: tensor '{e.name}' fails its CRC-32 check "
                             f"(stored {e.crc32:#010x}, computed {crc32(buf):#010x}).")
        dt = dtypes.as_dtype(int(e.dtype))
        shape = [n for _, n in ((x.start, x.length) for x in e.slice.extent)] if e.HasField("slice") \
            else shape_from_proto(e.shape).as_list()
        try:
            return tensor_codec.decode(bytes(buf) if dt == dtypes.string else buf, dt, shape)
        except (ValueError, TypeError) as exc:
            raise data_loss(f"Checkpoint data file {path} is corrupt: tensor '{e.name}' does not decode as "
                             f"{dt.name}{shape}: {exc}.") from None

    def close(self):
        for f in self._files.values():
            f.close()
        self._files.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


# ---------------------------------------------------------------------------- merging
def merge_bundles(src_prefixes, dst_prefix, delete_old_dirs: bool = True) -> str:
    """Merges bundles (e.g. one per device or parameter server) into one bundle at ``dst_prefix``.

    Data files are renamed (never copied) to ``dst_prefix.data-SSSSS-of-NNNNN``, then the merged
    index is written atomically and the source indexes are removed; with ``delete_old_dirs`` the
    sources' directories are removed when left empty. Tensor names must not clash across sources
    (slices of one tensor may come from different sources).
    """
    dst_prefix = _str(dst_prefix)
    srcs = [_str(p) for p in src_prefixes]
    if not srcs:
        raise ValueError("merge_bundles needs at least one source bundle.")
    if dst_prefix in srcs:
        raise ValueError(f"Cannot merge bundle {dst_prefix} into itself.")
    _check_parent(dst_prefix)
    parsed = []
    for p in srcs:
        with BundleReader(p) as r:
            parsed.append((p, r.header, [e for name in r.names() for e in r._by_name[name]]))
    total = sum(h.num_shards for _, h, _ in parsed)
    header = BundleHeaderProto(num_shards=total, endianness=BundleHeaderProto.LITTLE)
    merged, base, moves = {}, 0, []
    for p, h, entries in parsed:
        for s in range(h.num_shards):
            moves.append((data_path(p, s, h.num_shards), data_path(dst_prefix, base + s, total)))
            header.shard_ids.append(h.shard_ids[s])
        for e in entries:
            e = BundleEntryProto.FromString(e.SerializeToString())
            e.shard_id += base
            key = _entry_key(e)
            if key in merged or (e.name in {k[0] for k in merged} and not e.HasField("slice")):
                raise errors.InvalidArgumentError(None, None, f"Tensor '{e.name}' is in more than one of the bundles "
                                                              f"merged into {dst_prefix}.")
            merged[key] = e
        base += h.num_shards
    _commit(dst_prefix, moves, header, [merged[k] for k in sorted(merged)])
    for p in srcs:
        _remove_quietly(index_path(p))
        if delete_old_dirs:
            d = os.path.dirname(p)
            if d and os.path.abspath(d) != os.path.abspath(os.path.dirname(dst_prefix) or "."):
                try:
                    os.rmdir(d)
                except OSError:
                    pass
    return dst_prefix
