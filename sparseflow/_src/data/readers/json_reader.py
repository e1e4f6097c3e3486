"""JSON lines files (one object per line) on ``pyarrow.json``, streamed in pieces of whole lines.

Each piece is parsed by ``pyarrow.json`` (types inferred per piece; the coercion rules then apply
the schema, so numbers written as strings, ``"12"``, are read like ``12``). When Arrow rejects a
piece (a malformed line, a field whose type changes between lines, more than one object on a
line), the piece is parsed line by line with Python's ``json``: malformed lines become bad
records with their line numbers, and values of mixed types are all read through their text.
A piece where Arrow read an integer column's numbers as floats (a value beyond int64 makes the
whole column double) is parsed line by line too, so that integers stay exact: there numbers
keep their decimal text (``json`` with ``parse_float=Decimal``; its integers are exact).
"""

from __future__ import annotations

import decimal
import io
import json

import pyarrow as pa
import pyarrow.json as pajson

from sparseflow._src.data.readers.blocks import RawBlock, line_pieces, open_stream
from sparseflow._src.data.readers.policy import BadRecord, text_of
from sparseflow._src.data.readers.schema import NUMERIC_DTYPES, Schema


class JsonSource:
    """JSON lines files read under a schema.

    Args:
        paths: a file name or a list of them (compressed files are decompressed on the fly).
        block_size: bytes per piece.
        compression: ``"detect"`` (magic bytes / extension), ``"gzip"``, ... or None.
        rename: ``{file field name: schema column name}``.
    """

    format = "json"

    def __init__(self, paths, *, block_size: int = 1 << 22, compression="detect", rename=None):
        self.paths = [paths] if isinstance(paths, str) or hasattr(paths, "__fspath__") else list(paths)
        self.paths = [str(p) for p in self.paths]
        self.block_size = int(block_size)
        self.compression = compression
        self.rename = dict(rename or {})

    def pieces(self, path: str, schema: Schema):
        schema = schema.with_sources(self.rename)
        stream = open_stream(path, self.compression)
        try:
            for piece, first, *_ in line_pieces(stream, path, self.block_size, 1):
                yield lambda piece=piece, first=first: _parse(piece, first, path, schema)
        finally:
            stream.close()


def _lines(piece: bytes) -> list[tuple[int, bytes]]:
    """(index, line) of the non-blank lines of a piece."""
    return [(i, ln) for i, ln in enumerate(piece.split(b"\n")) if ln.strip()]


def _parse(piece: bytes, first_line: int, path: str, schema: Schema) -> RawBlock:
    if piece.startswith(b"\xef\xbb\xbf"):
        piece = b"   " + piece[3:]
    records = None
    try:
        table = pajson.read_json(io.BytesIO(piece), read_options=pajson.ReadOptions(use_threads=False,
                                                                                   block_size=len(piece) + 64))
        records = _lines(piece)
        if table.num_rows != len(records):
            table = None
    except pa.ArrowInvalid:
        table = None
    if table is None or any(_inferred_temporal(t) or _integers_as_floats(c, t) for c in schema
                            if c.file_name in table.column_names
                            for t in [table.schema.field(c.file_name).type]):
        # Arrow infers timestamps from date-like strings, and makes a column of integers with one
        # beyond int64 double: take such pieces' text as written
        return _parse_slow(piece, first_line, path, schema)
    columns = {}
    for col in schema:
        if col.file_name in table.column_names:
            columns[col.name] = _validated(table.column(col.file_name))
    return RawBlock(path, columns, table.num_rows, [], _locator(records, first_line), False)


def _inferred_temporal(t) -> bool:
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        t = t.value_type
    return pa.types.is_temporal(t)


def _integers_as_floats(col, t) -> bool:
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        t = t.value_type
    return col.dtype in NUMERIC_DTYPES and col.value_dtype.kind in "iu" and pa.types.is_floating(t)


def _validated(arr):
    """Arrow's JSON reader does not check UTF-8: string columns are checked here (as binary when bad)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        try:
            arr.validate(full=True)
        except pa.ArrowInvalid:
            return arr.cast(pa.binary() if pa.types.is_string(arr.type) else pa.large_binary())
    return arr


def _locator(records, first_line):
    def locate(rows):
        return [(first_line + records[r][0], None, text_of(records[r][1].rstrip(b"\r"))) for r in rows]

    return locate


def _text(v, numeric=False):
    """A JSON value as the text the coercion rules read (bools as 1/0; a number with a fraction or
    an exponent as written for a numeric column, else as Arrow writes the float)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, decimal.Decimal):
        if numeric:
            return str(v)
        v = float(v)
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return pa.scalar(v, pa.float64()).cast(pa.string()).as_py()  # as the fast path writes it
    return str(v)


def _parse_slow(piece: bytes, first_line: int, path: str, schema: Schema) -> RawBlock:
    structural, good = [], []
    for i, ln in _lines(piece):
        line = first_line + i
        raw = ln.rstrip(b"\r")
        try:
            obj = json.loads(raw.decode("utf-8"), parse_float=decimal.Decimal)
        except UnicodeDecodeError as e:
            structural.append(BadRecord(path, line, None, None, "invalid UTF-8", text_of(raw[max(0, e.start - 20):
                                                                                                e.end + 20]),
                                        text_of(raw)))
            continue
        except json.JSONDecodeError as e:
            structural.append(BadRecord(path, line, None, None, f"invalid JSON ({e.msg} at column {e.colno})",
                                        text_of(raw), text_of(raw)))
            continue
        if not isinstance(obj, dict):
            structural.append(BadRecord(path, line, None, None, "not a JSON object", text_of(raw), text_of(raw)))
            continue
        nested = next((c for c in schema if isinstance(obj.get(c.file_name), dict) or
                       (isinstance(obj.get(c.file_name), list) and not c.multi_valued)), None)
        if nested is not None:
            structural.append(BadRecord(path, line, None, nested.name, "a nested value where a single value is "
                                        "expected", json.dumps(obj.get(nested.file_name), default=str), text_of(raw)))
            continue
        good.append((i, ln, obj))
    columns = {}
    for col in schema:
        vals = [obj.get(col.file_name) for _, _, obj in good]
        if all(v is None for v in vals):
            continue
        num = col.dtype in NUMERIC_DTYPES
        if col.multi_valued and any(isinstance(v, list) for v in vals):
            texts = [[_text(x, num) for x in v] if isinstance(v, list) else None if v is None else
                     _text(v, num).split(col.delimiter) for v in vals]
            columns[col.name] = pa.array(texts, pa.list_(pa.string()))
        else:
            columns[col.name] = pa.array([_text(v, num) for v in vals], pa.string())
    return RawBlock(path, columns, len(good), structural, _locator([(i, ln) for i, ln, _ in good], first_line))
