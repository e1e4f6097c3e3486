"""CSV / TSV files on ``pyarrow.csv``, streamed in pieces of whole lines, with exact line numbers.

A file is read (and decompressed) as a stream and cut into pieces of whole lines of about
``block_size`` bytes, each parsed by ``pyarrow.csv`` on its own, so pieces are parsed in parallel
and every row's line number is known: the piece's first line plus the row's place among the
piece's non-blank lines. Blank lines are not records.

Each piece is tried on the fast path first: Arrow converts numbers itself and checks UTF-8 (a
piece of pure ASCII, known from the scan that counts its newlines, needs no check). When
that fails (a value that is not a number, invalid UTF-8, a number Arrow would silently turn into
inf), or when a quote runs over a line end, the piece is parsed again with every column as raw
bytes, lines with unbalanced quotes are taken out as bad records, and ``coerce`` finds the bad
values one by one. Rows with too few or too many fields are handed over by Arrow's
``invalid_row_handler``. Quoted values may not contain line breaks (newlines end records).
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.csv as pacsv

from sparseflow._src.data.readers.blocks import (
    RawBlock,
    as_bytes,
    count_byte,
    is_compressed,
    line_pieces,
    mapped_line_pieces,
    open_stream,
    read_fully,
    read_head_lines,
)
from sparseflow._src.data.readers.coerce import has_inf, has_nonfinite
from sparseflow._src.data.readers.policy import BadRecord, text_of
from sparseflow._src.data.readers.schema import Column, Schema

_FAST_TYPES = {"float32": pa.float32(), "float64": pa.float64(), "int32": pa.int64(), "int64": pa.int64(),
               "uint32": pa.int64(), "uint64": pa.uint64(), "string": pa.string(), "key": pa.string()}


class CsvSource:
    """Delimited text files read under a schema.

    Args:
        paths: a file name or a list of them (gzip/bz2/zstd files are decompressed on the fly).
        header: the first line (after ``skip_rows``) names the columns.
        column_names: the names of the file's columns when there is no header (default: the
            schema's file names, in order).
        delimiter: the field separator (``"\\t"`` for TSV).
        quote_char: the quoting character, or None/False for none.
        skip_rows: lines to skip at the top of each file (before the header).
        skip_initial_space: strip blanks around categorical values (``"a, b"`` -> ``"b"``);
            numbers are always read with surrounding blanks.
        block_size: bytes per piece.
        compression: ``"detect"`` (magic bytes / extension), ``"gzip"``, ... or None.
        rename: ``{file column name: schema column name}`` for files that name columns differently.
        encoding: the files' text encoding; others than UTF-8 (an ASCII-compatible one such as
            ``"latin-1"``) are transcoded piece by piece.
    """

    format = "csv"

    def __init__(self, paths, *, header: bool = True, column_names=None, delimiter: str = ",",
                 quote_char='"', skip_rows: int = 0, skip_initial_space: bool = False, block_size: int = 1 << 22,
                 compression="detect", encoding: str = "utf-8", rename=None):
        self.paths = [paths] if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__") else list(paths)
        self.paths = [str(p.decode() if isinstance(p, bytes) else p) for p in self.paths]
        if len(delimiter) != 1:
            raise ValueError(f"The delimiter must be one character, got {delimiter!r}")
        self.header = bool(header)
        self.column_names = list(column_names) if column_names is not None else None
        self.delimiter = delimiter
        self.quote_char = quote_char or False
        self.skip_rows = int(skip_rows)
        self.strip = bool(skip_initial_space)
        self.block_size = int(block_size)
        self.compression = compression
        self.rename = dict(rename or {})
        self.encoding = None if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
        if self.encoding is not None and "\n".encode(self.encoding) != b"\n":
            raise ValueError(f"Encoding {encoding!r} is not ASCII-compatible")

    def decode(self, data: bytes) -> bytes:
        return data if self.encoding is None else as_bytes(data).decode(self.encoding).encode("utf-8")

    def pieces(self, path: str, schema: Schema):
        """Callables that each parse one piece of ``path`` into a ``RawBlock`` (run on any thread)."""
        schema = schema.with_sources(self.rename)
        stream = open_stream(path, self.compression)
        try:
            n_head = self.skip_rows + (1 if self.header else 0)
            head_lines, rest = read_head_lines(stream, path, n_head)
            if n_head == 0:
                rest = read_fully(stream, path, 3)
            if head_lines and head_lines[0].startswith(b"\xef\xbb\xbf"):
                head_lines[0] = head_lines[0][3:]
            elif not head_lines and rest.startswith(b"\xef\xbb\xbf"):
                rest = rest[3:]  # a byte-order mark is not data
            if self.header:
                if len(head_lines) < n_head:
                    if head_lines or rest:
                        raise ValueError(f"{path}: the file ends before its header line")
                    return  # an empty file: no records
                names = self._parse_header(self.decode(head_lines[-1]), path)
            else:
                names = self.column_names or [c.file_name for c in schema]
            plan = _Plan(self, schema, names, path)
            if is_compressed(stream):
                pieces = line_pieces(stream, path, self.block_size, n_head + 1, rest)
            else:
                offset = stream.tell() - len(rest)
                stream.close()
                pieces = mapped_line_pieces(path, self.block_size, n_head + 1, offset)
            for piece, first, n_newlines, ascii_only in pieces:
                yield lambda piece=piece, first=first, n=n_newlines, a=ascii_only: plan.parse(piece, first, n, a)
        finally:
            stream.close()

    def _parse_header(self, line: bytes, path: str) -> list[str]:
        try:
            t = pacsv.read_csv(io.BytesIO(line + b"\n"), read_options=pacsv.ReadOptions(autogenerate_column_names=True),
                               parse_options=pacsv.ParseOptions(delimiter=self.delimiter, quote_char=self.quote_char),
                               convert_options=pacsv.ConvertOptions(column_types={}, strings_can_be_null=False,
                                                                    auto_dict_encode=False))
            names = [text_of(v).strip() if self.strip else text_of(v) for v in
                     (t.column(i)[0].as_py() for i in range(t.num_columns))]
        except pa.ArrowInvalid as e:
            raise ValueError(f"{path}:{self.skip_rows + 1}: cannot parse the header line: {e}") from e
        if self.column_names is not None:
            if len(self.column_names) != len(names):
                raise ValueError(f"{path}: header has {len(names)} columns, column_names {len(self.column_names)}")
            return self.column_names
        return [str(n) for n in names]


class _Plan:
    """How the pieces of one file are parsed (its column names and the Arrow options)."""

    def __init__(self, src: CsvSource, schema: Schema, names: list, path: str):
        self.src, self.schema, self.names, self.path = src, schema, names, path
        if len(set(names)) != len(names):
            raise ValueError(f"{path}: duplicate column names {names}")
        self.wanted: dict[str, Column] = {}
        for col in schema:
            if col.file_name in names:
                self.wanted[col.file_name] = col
            elif col.default is None and not col.categorical and not col.multi_valued:
                raise ValueError(f"{path}: the file has no column {col.file_name!r} and the schema gives it no "
                                 f"default; the file's columns are {names}")
        self.quote = src.quote_char.encode() if src.quote_char else None
        fast = {}
        for name, col in self.wanted.items():
            plain_nulls = schema.nulls_of(col) == ("",)
            fast[name] = _FAST_TYPES[col.dtype] if plain_nulls and not col.multi_valued else pa.string()
        self.fast_types = fast
        self.float_cols = [n for n, t in fast.items() if pa.types.is_floating(t)]

    def _options(self, n_bytes, handler, types, nulls, check_utf8=True):
        return dict(
            read_options=pacsv.ReadOptions(column_names=self.names, use_threads=False, block_size=n_bytes + 64),
            parse_options=pacsv.ParseOptions(delimiter=self.src.delimiter, quote_char=self.src.quote_char,
                                             invalid_row_handler=handler, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(column_types=types, include_columns=list(self.wanted),
                                                 null_values=nulls, strings_can_be_null=bool(nulls),
                                                 check_utf8=check_utf8, auto_dict_encode=False))

    def parse(self, piece, first_line: int, n_newlines: int, ascii_only: bool = False) -> RawBlock:
        """The records of ``piece`` (whole lines; ``n_newlines`` of them, the first is line
        ``first_line``); ``ascii_only``: no byte of the piece is >= 0x80."""
        piece = self.src.decode(piece)
        table, invalid = self._fast(piece, n_newlines, ascii_only)
        if table is None:
            return self._slow(piece, first_line)
        block = self._block(table, invalid, piece, first_line, [])
        block.nulls_done = True
        return block

    def _fast(self, piece: bytes, n_newlines: int, ascii_only: bool):
        invalid = []

        def handler(row):
            invalid.append((row.number, row.text, row.expected_columns, row.actual_columns))
            return "skip"

        try:
            # ASCII text is valid UTF-8: Arrow need not check it again
            table = pacsv.read_csv(pa.BufferReader(piece), **self._options(len(piece), handler, self.fast_types, [""],
                                                                           check_utf8=not ascii_only))
        except pa.ArrowInvalid:
            return None, None
        n_lines = n_newlines + (0 if len(piece) and memoryview(piece)[-1] == 10 else 1)
        if (table.num_rows + len(invalid) != n_lines and table.num_rows + len(invalid) != _count_records(piece)) or \
                (self.quote and count_byte(piece, self.quote[0]) % 2) or \
                any("\n" in t for _, t, _, _ in invalid):
            return None, None  # a quote ran over a line end
        for name in self.float_cols:
            if (has_nonfinite if self.wanted[name].finite else has_inf)(table.column(name)):
                return None, None  # "1e39" -> inf in float32 (or nan in a finite column): let coerce judge the text
        return table, invalid

    def _slow(self, piece, first_line: int) -> RawBlock:
        piece = as_bytes(piece)
        broken = []
        if self.quote:
            lines = piece.split(b"\n")
            for i, ln in enumerate(lines):
                if ln.count(self.quote) % 2:
                    broken.append(BadRecord(self.path, first_line + i, None, None, "unbalanced quotes",
                                            text_of(ln.rstrip(b"\r")), text_of(ln.rstrip(b"\r"))))
                    lines[i] = b""
            if broken:
                piece = b"\n".join(lines)
        invalid = []

        def handler(row):
            invalid.append((row.number, row.text, row.expected_columns, row.actual_columns))
            return "skip"

        types = {name: pa.binary() for name in self.wanted}
        table = pacsv.read_csv(io.BytesIO(piece), **self._options(len(piece), handler, types, []))
        return self._block(table, invalid, piece, first_line, broken)

    def _block(self, table, invalid, piece, first_line, broken) -> RawBlock:
        lines = _LineMap(piece, first_line, [num for num, *_ in invalid])
        structural = list(broken)
        if invalid:
            inv_lines = lines.invalid_lines()
            for (_, text, want, got), line in zip(invalid, inv_lines):
                structural.append(BadRecord(self.path, line, None, None,
                                            f"expected {want} fields, got {got}", text, text))
            structural.sort(key=lambda r: r.line)
        columns = {col.name: table.column(name) for name, col in self.wanted.items()}
        return RawBlock(self.path, columns, table.num_rows, structural, lines.locate, self.src.strip)


def _count_records(piece) -> int:
    """Non-blank lines of a piece (what Arrow makes records of)."""
    return sum(1 for ln in as_bytes(piece).split(b"\n") if ln and ln != b"\r")


class _LineMap:
    """Line numbers of a piece's records, computed when an error needs them."""

    def __init__(self, piece: bytes, first_line: int, invalid_numbers: list):
        self.piece, self.first_line, self.invalid_numbers = piece, first_line, invalid_numbers
        self._lines = None

    def _build(self):
        if self._lines is None:
            self._lines = as_bytes(self.piece).split(b"\n")
            self._records = [i for i, ln in enumerate(self._lines) if ln and ln != b"\r"]
            bad = {n - 1 for n in self.invalid_numbers if n is not None}
            self._valid = [r for k, r in enumerate(self._records) if k not in bad]
        return self._lines

    def invalid_lines(self) -> list:
        self._build()
        return [self.first_line + self._records[n - 1] if n is not None and 0 < n <= len(self._records) else None
                for n in self.invalid_numbers]

    def locate(self, rows) -> list:
        lines = self._build()
        out = []
        for r in rows:
            i = self._valid[r] if r < len(self._valid) else None
            out.append((None, None, None) if i is None else
                       (self.first_line + i, None, text_of(lines[i].rstrip(b"\r"))))
        return out
