"""From raw blocks (Arrow columns of one piece of one file) to coerced blocks, under the policy.

Sources cut their files into independent pieces; ``run_ordered`` parses and coerces pieces on
a pool of threads (Arrow and the hashing loops release the GIL) and hands the results back in
file order, so errors, the reject file and the output are deterministic.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import dataclasses
import os

import numpy as np
import pyarrow as pa

from sparseflow._src.data.readers import coerce
from sparseflow._src.data.readers.policy import BadRecord, BadRecordPolicy, CorruptFileError, DataError
from sparseflow._src.data.readers.schema import Schema
from sparseflow._src.kernels.jit_cache import cached_njit


@dataclasses.dataclass
class RawBlock:
    """Rows of one piece of one file, before coercion.

    ``columns`` maps schema names to Arrow arrays (a missing name: the column is absent from the
    file, every value missing). ``structural`` are records the parser already dropped (wrong
    field count, broken quoting, invalid JSON). ``locate(rows)`` gives ``(line, row, record
    text)`` of rows of the block, for error messages.
    """

    path: str
    columns: dict
    num_rows: int
    structural: list
    locate: object
    strip: bool = False
    nulls_done: bool = False  # empty texts are already null (CSV fast path)


@dataclasses.dataclass
class Block:
    values: dict  # schema name -> np.ndarray [rows] or SparseTensorValue
    rows_read: int
    rows_out: int
    filled: dict
    bad: list  # (BadRecord, action) in file order


class StackColumns:
    """A ``post`` for ``coerce_block`` that gathers groups of dense columns of one dtype into
    ``[rows, len(group)]`` arrays in C order (so that a run of rows, a batch, is one contiguous
    slice). ``coerce_block`` writes the columns straight into them; called on a dict of values
    (any other caller), it stacks them. Other columns pass through; the outputs keep the order of
    the columns (a group where its first column is).

    Example:
        >>> StackColumns({"xy": ["x", "y"]})({"x": np.zeros(2), "y": np.ones(2), "z": 3})["xy"].tolist()
        [[0.0, 1.0], [0.0, 1.0]]
    """

    def __init__(self, groups: dict):
        self.groups = {name: list(cols) for name, cols in groups.items()}
        self._group_of = {c: g for g, cols in self.groups.items() for c in cols}

    def allocate(self, schema: Schema, n: int) -> tuple[dict, dict]:
        """``({group: [n, k] array}, {column: its [n] column view})`` for a block of ``n`` rows."""
        arrays, views = {}, {}
        for g, cols in self.groups.items():
            specs = [schema[c] for c in cols]
            dtypes = {c.value_dtype for c in specs}
            if len(dtypes) != 1 or any(c.output != "dense" or c.multi_valued for c in specs):
                raise ValueError(f"Cannot stack {cols} into {g!r}: the columns must be dense and of one dtype")
            arrays[g] = np.empty((n, len(cols)), dtypes.pop())
            views.update((c, arrays[g][:, j]) for j, c in enumerate(cols))
        return arrays, views

    def pack(self, values: dict, arrays: dict) -> dict:
        """``values`` with each group's columns replaced by its array."""
        out = {}
        for k, v in values.items():
            g = self._group_of.get(k)
            if g is None:
                out[k] = v
            elif g not in out:
                out[g] = arrays[g]
        return out

    def __call__(self, values: dict) -> dict:
        arrays = {g: np.stack([values[c] for c in cols], axis=1) for g, cols in self.groups.items()}
        return self.pack(values, arrays)


def _order_key(rec: BadRecord):
    return (rec.line if rec.line is not None else rec.row if rec.row is not None else 0)


def coerce_block(raw: RawBlock, schema: Schema, policy: BadRecordPolicy, post=None) -> Block:
    """Coerces every column of ``raw``; applies the policy to the bad values (``DataError`` under
    ``error`` for the first bad record in file order); ``post(values)`` may reshape the result (a
    ``StackColumns`` is filled in place)."""
    n = raw.num_rows
    replace = policy is BadRecordPolicy.DEFAULT
    values, filled, found = {}, {}, []  # found: (row, column, text, reason, action)
    stacked, views = post.allocate(schema, n) if isinstance(post, StackColumns) else (None, {})
    for col in schema:
        arr = raw.columns.get(col.name)
        if arr is None:
            arr = pa.nulls(n, pa.string())
        try:
            c = coerce.coerce_column(arr, col, schema.nulls_of(col), replace, raw.strip, raw.nulls_done,
                                     views.get(col.name))
        except (TypeError, pa.ArrowNotImplementedError) as e:
            raise ValueError(f"{raw.path}: cannot read column {col.name!r} ({arr.type}) as {col.dtype}: {e}") from e
        values[col.name] = c.values
        filled[col.name] = c.filled
        found.extend((r, col.name, t, why, "skip") for r, t, why in zip(c.bad.rows, c.bad.texts, c.bad.reasons))
        found.extend((r, col.name, t, why, "default")
                     for r, t, why in zip(c.replaced.rows, c.replaced.texts, c.replaced.reasons))
    dropped = sorted({f[0] for f in found if f[4] == "skip"})
    if dropped:
        drop = set(dropped)
        found = [f for f in found if f[4] == "skip" or f[0] not in drop]
    bad = [(rec, "skip") for rec in raw.structural]
    if found:
        found.sort(key=lambda f: f[0])
        rows = sorted({f[0] for f in found})
        where = dict(zip(rows, raw.locate(rows)))
        skipped = {}  # a dropped row is one bad record, its other bad values listed with it
        for r, name, text, why, action in found:
            line, row, record = where[r]
            if action == "skip" and r in skipped:
                skipped[r].also.append((name, why, text))
                continue
            rec = BadRecord(raw.path, line, row, name, why, text, record)
            if action == "skip":
                skipped[r] = rec
            bad.append((rec, action))
        bad.sort(key=lambda b: _order_key(b[0]))
    if bad and policy is BadRecordPolicy.ERROR:
        raise DataError(bad[0][0])
    if stacked is not None:
        values = post.pack(values, stacked)
    if dropped:
        keep = np.setdiff1d(np.arange(n), np.asarray(dropped, np.int64))
        values = {k: coerce.take(v, keep) for k, v in values.items()}
    rows_out = n - len(dropped)
    if post is not None and stacked is None:
        values = post(values)
    return Block(values, n + len(raw.structural), rows_out, filled, bad)


# ---------------------------------------------------------------------- files and pieces
def open_stream(path: str, compression: str | None = "detect"):
    """A readable Arrow stream of ``path``, decompressed: ``detect`` looks at the file's first bytes
    (gzip, bz2, zstd) and its extension."""
    if compression == "detect":
        with open(path, "rb") as f:
            magic = f.read(4)
        compression = "gzip" if magic[:2] == b"\x1f\x8b" else "bz2" if magic[:3] == b"BZh" else \
            "zstd" if magic == b"\x28\xb5\x2f\xfd" else "detect"
    if compression in ("", "none", None):
        compression = None
    try:
        return pa.input_stream(path, compression=compression)
    except (pa.ArrowInvalid, ValueError) as e:
        raise ValueError(f"{path}: cannot open with compression {compression!r}: {e}") from e


def read_fully(stream, path: str, n: int) -> bytes:
    try:
        return stream.read(n)
    except (OSError, pa.ArrowInvalid) as e:
        raise CorruptFileError(None, None, f"{path}: the file cannot be read to its end (truncated or corrupt "
                                           f"compressed data?): {e}") from e


def line_pieces(stream, path: str, block_size: int, first_line: int = 1, head: bytes = b""):
    """``(piece, first_line_number, newline_count, ascii)`` of whole lines, about ``block_size``
    bytes each (a longer line makes a longer piece); ``ascii``: no byte of the piece is >= 0x80."""
    buf = head
    line = first_line
    while True:
        while len(buf) >= block_size:
            cut = buf.rfind(b"\n", 0, block_size)
            if cut < 0:
                cut = buf.find(b"\n", block_size)
                if cut < 0:
                    break
            piece, buf = buf[:cut + 1], buf[cut + 1:]
            n, ascii_only = scan_lines(piece)
            yield piece, line, n, ascii_only
            line += n
        data = read_fully(stream, path, block_size)
        if not data:
            if buf:
                yield (buf, line, *scan_lines(buf))
            return
        buf = buf + data if buf else data


_ONES = np.uint64(0x0101010101010101)
_LOW7 = np.uint64(0x7f7f7f7f7f7f7f7f)
_HIGH = np.uint64(0x8080808080808080)


@cached_njit(nogil=True)
def _scan(a, head, byte):
    """(occurrences of ``byte``, OR of all bytes) of ``a``, 8 bytes at a time from ``a[head:]``
    (``head`` aligns the words): a byte equal to ``byte`` is a zero byte of ``word ^ pattern``,
    found exactly by ``~(((x & 0x7f..) + 0x7f..) | x | 0x7f..)`` (its high bit only)."""
    n = np.uint64(0)
    acc = np.uint64(0)
    for i in range(head):
        acc |= np.uint64(a[i])
        n += np.uint64(a[i] == byte)
    n_words = (a.shape[0] - head) // 8
    if n_words:
        w = a[head:head + 8 * n_words].view(np.uint64)
        pattern = np.uint64(byte) * _ONES
        for i in range(n_words):
            v = w[i]
            acc |= v
            x = v ^ pattern
            t = ~(((x & _LOW7) + _LOW7) | x | _LOW7)
            n += ((t >> np.uint64(7)) * _ONES) >> np.uint64(56)  # the high bits, summed
    for i in range(head + 8 * n_words, a.shape[0]):
        acc |= np.uint64(a[i])
        n += np.uint64(a[i] == byte)
    return n, acc


@cached_njit(nogil=True)
def _find_newline(a, lo, hi, backwards):
    """Index of the last (``backwards``) or first newline in ``a[lo:hi]``, or -1."""
    if backwards:
        for i in range(hi - 1, lo - 1, -1):
            if a[i] == 10:
                return i
    else:
        for i in range(lo, hi):
            if a[i] == 10:
                return i
    return -1


def _scan_bytes(data, byte: int):
    a = np.frombuffer(data, np.uint8)
    return _scan(a, min((-a.ctypes.data) % 8, len(a)), np.uint8(byte))


def count_byte(data, byte: int) -> int:
    """How often ``byte`` occurs in ``data`` (bytes or an Arrow buffer), without the GIL."""
    return int(_scan_bytes(data, byte)[0]) if len(data) else 0


def scan_lines(data) -> tuple[int, bool]:
    """``(newlines, ascii)`` of ``data`` in one pass: its newline count, and whether every byte is
    below 0x80 (ASCII text is valid UTF-8, no need to check it again)."""
    if not len(data):
        return 0, True
    n, acc = _scan_bytes(data, 10)
    return int(n), not int(acc) & int(_HIGH)


def as_bytes(piece) -> bytes:
    return piece if isinstance(piece, bytes) else piece.to_pybytes()


def is_compressed(stream) -> bool:
    return isinstance(stream, pa.CompressedInputStream)


def mapped_line_pieces(path: str, block_size: int, first_line: int, offset: int):
    """Like ``line_pieces`` for an uncompressed file: zero-copy slices of a memory map (the pieces
    are ``pyarrow.Buffer``)."""
    buf = pa.memory_map(path, "r").read_buffer()
    arr = np.frombuffer(buf, np.uint8) if buf.size else np.zeros(0, np.uint8)
    size, pos, line = len(arr), offset, first_line
    while pos < size:
        end = pos + block_size
        cut = size - 1
        if end < size:
            cut = _find_newline(arr, pos, end, True)
            if cut < 0:
                cut = _find_newline(arr, end, size, False)
                cut = size - 1 if cut < 0 else cut
        n, ascii_only = scan_lines(arr[pos:cut + 1])
        yield buf.slice(pos, cut + 1 - pos), line, n, ascii_only
        line += n
        pos = cut + 1


def read_head_lines(stream, path: str, count: int) -> tuple[list[bytes], bytes]:
    """The first ``count`` lines (without their newline) and the bytes read after them."""
    buf, lines = b"", []
    while len(lines) < count:
        cut = buf.find(b"\n")
        if cut >= 0:
            lines.append(buf[:cut].rstrip(b"\r"))
            buf = buf[cut + 1:]
            continue
        data = read_fully(stream, path, 1 << 16)
        if not data:
            if buf:
                lines.append(buf.rstrip(b"\r"))
                buf = b""
            break
        buf += data
    return lines, buf


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def run_ordered(tasks, workers: int, cancelled=None):
    """Results of the callables of ``tasks`` (an iterator), in order, computed ``workers`` at a time.

    An error of the task iterator itself (a file that ends early) comes after the results of the
    tasks it had produced."""
    if workers <= 1:
        for task in tasks:
            if cancelled is not None and cancelled.is_set():
                return
            yield task()
        return
    pending: collections.deque = collections.deque()
    with cf.ThreadPoolExecutor(workers, thread_name_prefix="sparseflow-reader") as pool:
        try:
            source_error = None
            it = iter(tasks)
            while True:
                while len(pending) < workers + 1 and source_error is None:
                    try:
                        task = next(it)
                    except StopIteration:
                        source_error = StopIteration()
                        break
                    except (CorruptFileError, DataError, OSError, ValueError) as e:
                        source_error = e
                        break
                    pending.append(pool.submit(task))
                if not pending:
                    break
                if cancelled is not None and cancelled.is_set():
                    return
                yield pending.popleft().result()
            if source_error is not None and not isinstance(source_error, StopIteration):
                raise source_error
        finally:
            for f in pending:
                f.cancel()
