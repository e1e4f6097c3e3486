"""The schema of a record stream: every column's type, default, and how its text becomes values.

Column types (``dtype``):

=========== ============================================================================
``float32``  numbers; also ``float64``, ``int32``, ``int64``, ``uint32``, ``uint64`` (numbers:
             an unsigned column holds the numbers as written, -1 is out of its range)
``string``   the value's bytes (UTF-8 checked), a NumPy object array of ``bytes``
``key``      a categorical value hashed to a uint64 key: FarmHash ``Fingerprint64`` of its
             UTF-8 text (``tf.strings.to_hash_bucket_fast`` is this key modulo the bucket
             count); with ``num_buckets`` the column is the int64 bucket id instead
=========== ============================================================================

Coercion rules (the same for every format; see ``coerce.py``):

- A field is *missing* when it is empty, null, absent, or one of the column's ``null_values``.
  A missing value becomes the column's ``default``. A dense numeric column without a default
  (``default=None``), or a ``required`` column, makes a missing value a bad record. A
  categorical column (``string`` / ``key``) without a default keeps it missing: the missing
  marker in a dense column (``MISSING_KEY`` for keys, -1 for bucket ids, ``b""`` for strings: the values TensorFlow's
  feature columns ignore); a sparse column of any type has no entry for it.
- Numeric text becomes a number (leading/trailing blanks and tabs allowed, ``1e3``, ``nan``,
  ``inf``). An integer column also takes the text of an integral float (``260.0`` -> 260);
  ``2.5`` or a number out of the column's range is a bad record, never truncated or wrapped;
  so is ``nan`` or ``inf`` in a ``finite`` column.
  Integers are exact: their text is read as a decimal number, never through a float
  (``9007199254740993.0`` is 9007199254740993), and so are JSON integers of any size and Parquet
  decimals. Numbers typed by the format (JSON, Parquet) are cast under the same checks.
- Categorical values are hashed through their text; a number typed by the format is written
  in its shortest decimal form first (an int 1005 hashes like the text ``"1005"``).
- A column with a ``delimiter`` is multi-valued: its text is split on the delimiter, empty
  items are dropped, and every item is coerced by the rules above (JSON arrays and Parquet
  lists are taken as they are). It comes out as a ``SparseTensorValue`` [rows, max items];
  a missing field is a row with no items.

Example:
    >>> s = Schema([Column("age", "float32", default=0.0), Column("city", "key"),
    ...             Column("tags", "string", delimiter="|")])
    >>> s.names, s["tags"].output
    (['age', 'city', 'tags'], 'sparse')
"""

from __future__ import annotations

import dataclasses

import numpy as np

MISSING_KEY = np.uint64(2**64 - 1)  # the key of a missing value: -1 as int64 bits, TF's ignore value
MISSING_ID = -1  # the bucket id of a missing value
NUMERIC_DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64,
                  "uint32": np.uint32, "uint64": np.uint64}
DTYPES = (*NUMERIC_DTYPES, "string", "key")
_ALIASES = {"float": "float32", "double": "float64", "int": "int64", "str": "string", "bytes": "string",
            "categorical": "key"}


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of a :class:`Schema`.

    Args:
        name: the column's name in the output (and in the files, unless ``source`` is given).
        dtype: ``float32``, ``float64``, ``int32``, ``int64``, ``uint32``, ``uint64``, ``string`` or
            ``key`` (a hashed categorical value; an unsigned dtype holds numbers).
        default: the value of a missing field (None: a numeric column requires a value, a
            categorical column keeps it missing).
        delimiter: makes the column multi-valued: its text is split on this string.
        output: ``"dense"`` (a value per row) or ``"sparse"`` (a ``SparseTensorValue`` with the
            present values only). Multi-valued columns are always sparse.
        num_buckets: for ``key`` columns, output int64 bucket ids ``key % num_buckets``.
        hash_salt: for ``key`` columns, ``FingerprintCat64(Fingerprint64(salt), key)`` instead of
            the key, so that equal values of different fields get different keys.
        null_values: texts that mean "missing" in this column besides the empty string
            (e.g. ``("?",)`` in the Adult data).
        source: the column's name in the files when it differs from ``name``.
        finite: for float columns, ``nan`` and ``inf`` are bad records ("not a finite number")
            instead of values (a model's input that must be finite).
        required: a missing value is a bad record whatever the type (e.g. a label column of
            text); without it only a dense numeric column without default requires a value.
    """

    name: str
    dtype: str = "float32"
    default: object = None
    delimiter: str | None = None
    output: str | None = None
    num_buckets: int | None = None
    hash_salt: str | None = None
    null_values: tuple = ()
    source: str | None = None
    finite: bool = False
    required: bool = False

    def __post_init__(self):
        dtype = _ALIASES.get(self.dtype, self.dtype)
        if dtype not in DTYPES:
            raise ValueError(f"Column {self.name!r}: unknown dtype {self.dtype!r}; expected one of {DTYPES}")
        object.__setattr__(self, "dtype", dtype)
        if self.delimiter is not None and not self.delimiter:
            raise ValueError(f"Column {self.name!r}: the delimiter must not be empty")
        output = self.output or ("sparse" if self.delimiter is not None else "dense")
        if output not in ("dense", "sparse"):
            raise ValueError(f"Column {self.name!r}: output must be 'dense' or 'sparse', got {self.output!r}")
        if self.delimiter is not None and output != "sparse":
            raise ValueError(f"Column {self.name!r}: a multi-valued column is sparse")
        object.__setattr__(self, "output", output)
        if self.num_buckets is not None and (dtype != "key" or self.num_buckets < 1):
            raise ValueError(f"Column {self.name!r}: num_buckets needs dtype 'key' and a count >= 1")
        if self.hash_salt is not None and dtype != "key":
            raise ValueError(f"Column {self.name!r}: hash_salt needs dtype 'key'")
        object.__setattr__(self, "null_values", tuple(self.null_values))
        if self.default is not None:
            object.__setattr__(self, "default", self._check_default(self.default))

    def _check_default(self, value):
        if self.dtype in NUMERIC_DTYPES:
            if isinstance(value, (bytes, str)) or not np.isscalar(value):
                raise ValueError(f"Column {self.name!r}: the default of a {self.dtype} column must be a number, "
                                 f"got {value!r}")
            cast = np.asarray(value).astype(NUMERIC_DTYPES[self.dtype])
            if self.dtype.startswith(("int", "uint")) and cast != value:
                raise ValueError(f"Column {self.name!r}: default {value!r} is not a {self.dtype}")
            return cast[()]
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, bytes):
            value.decode("utf-8")
            return value
        raise ValueError(f"Column {self.name!r}: the default of a {self.dtype} column must be a string, got {value!r}")

    # ------------------------------------------------------------------ derived facts
    @property
    def file_name(self) -> str:
        return self.source or self.name

    @property
    def categorical(self) -> bool:
        return self.dtype in ("string", "key")

    @property
    def multi_valued(self) -> bool:
        return self.delimiter is not None

    @property
    def value_dtype(self) -> np.dtype:
        """The NumPy dtype of the column's values."""
        if self.dtype == "key":
            return np.dtype(np.int64 if self.num_buckets else np.uint64)
        if self.dtype == "string":
            return np.dtype(object)
        return np.dtype(NUMERIC_DTYPES[self.dtype])

    @property
    def missing_value(self):
        """What a missing field of a dense categorical column without default becomes."""
        if self.dtype == "key":
            return MISSING_ID if self.num_buckets else MISSING_KEY
        return b""

    def spec(self):
        """The ``TensorSpec`` / ``SparseTensorSpec`` of one element of this column."""
        from sparseflow._src.data.dataset_structure import SparseTensorSpec, TensorSpec
        from sparseflow._src.framework import dtypes

        dt = dtypes.string if self.dtype == "string" else dtypes.as_dtype(self.value_dtype)
        if self.output == "sparse":
            return SparseTensorSpec([None] if self.multi_valued else [1], dt)
        return TensorSpec([], dt)


def _column(name, spec) -> Column:
    if isinstance(spec, Column):
        if spec.name != name:
            raise ValueError(f"Schema key {name!r} names a Column called {spec.name!r}")
        return spec
    if isinstance(spec, str):
        return Column(name, spec)
    if isinstance(spec, dict):
        return Column(name, **spec)
    raise TypeError(f"Column {name!r}: expected a dtype name, a dict of Column arguments or a Column, got {spec!r}")


class Schema:
    """The ordered columns of a stream.

    ``Schema([Column(...), ...])`` or ``Schema({"age": "float32", "city": {"dtype": "key"}})``.
    ``null_values`` are texts that mean "missing" in every column (the empty string always does).
    """

    def __init__(self, columns, null_values=()):
        if isinstance(columns, Schema):
            null_values = tuple(null_values) or columns.null_values
            columns = columns.columns
        if isinstance(columns, dict):
            cols = [_column(k, v) for k, v in columns.items()]
        else:
            cols = [c if isinstance(c, Column) else Column(*c) if isinstance(c, tuple) else _column(c, "float32")
                    for c in columns]
        if not cols:
            raise ValueError("A schema needs at least one column")
        names = [c.name for c in cols]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"Duplicate column names in schema: {dup}")
        self.columns: tuple[Column, ...] = tuple(cols)
        self.null_values: tuple = tuple(null_values)
        self._by_name = {c.name: c for c in cols}

    names = property(lambda self: [c.name for c in self.columns])

    def __getitem__(self, name) -> Column:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"No column {name!r} in the schema; columns are {self.names}") from None

    def __contains__(self, name) -> bool:
        return name in self._by_name

    def __iter__(self):
        return iter(self.columns)

    def __len__(self):
        return len(self.columns)

    def __eq__(self, other):
        return isinstance(other, Schema) and self.columns == other.columns and self.null_values == other.null_values

    def __hash__(self):
        return hash((self.columns, self.null_values))

    def __repr__(self):
        return "Schema([" + ", ".join(f"{c.name}:{c.dtype}" for c in self.columns) + "])"

    def nulls_of(self, col: Column) -> tuple:
        """The texts that mean "missing" in ``col`` (the empty string first)."""
        out = [""]
        for v in (*self.null_values, *col.null_values):
            if v not in out:
                out.append(v)
        return tuple(out)

    def with_sources(self, rename) -> Schema:
        """This schema reading column ``rename[file_name] = name`` from ``file_name`` (a source whose
        files name columns differently)."""
        if not rename:
            return self
        by_name = {v: k for k, v in rename.items()}
        unknown = sorted(set(by_name) - set(self._by_name))
        if unknown:
            raise ValueError(f"rename targets {unknown} are not columns of the schema {self.names}")
        return Schema([dataclasses.replace(c, source=by_name[c.name]) if c.name in by_name else c
                       for c in self.columns], self.null_values)

    def select(self, names) -> Schema:
        """The schema of the named columns, in the given order."""
        return Schema([self[n] for n in names], self.null_values)

    def element_spec(self) -> dict:
        """``{name: TensorSpec | SparseTensorSpec}`` of one record."""
        return {c.name: c.spec() for c in self.columns}
