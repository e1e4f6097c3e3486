"""Coercion of a block's columns (Arrow arrays of whatever type the format gave) to the schema.

``coerce_column`` turns one Arrow array into the column's NumPy values and reports, by row, the
values it could not coerce (with the offending text and the reason). The fast path is Arrow's
vectorized cast; only when a cast fails does a per-value pass find which values are bad, so that
clean data never pays for error reporting. The rules are written in ``schema.py``.
"""

from __future__ import annotations

import dataclasses
import decimal
import math
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparseflow._src.data.readers import hashing
from sparseflow._src.data.readers.policy import text_of
from sparseflow._src.data.readers.schema import NUMERIC_DTYPES, Column
from sparseflow._src.framework.sparse_tensor import SparseTensorValue
from sparseflow._src.kernels.jit_cache import cached_njit

_FLOAT_RE = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)
_INT_RE = re.compile(r"[+-]?\d+")
_INF_RE = re.compile(r"[+-]?inf(inity)?", re.IGNORECASE)
_BLANKS = " \t"
_RANGES = {np.dtype(np.int32): (-(2**31), 2**31 - 1), np.dtype(np.int64): (-(2**63), 2**63 - 1),
           np.dtype(np.uint32): (0, 2**32 - 1), np.dtype(np.uint64): (0, 2**64 - 1)}
_MAX_DIGITS = 40  # an integral decimal text longer than this is out of every integer range
_F32_MAX = float(np.finfo(np.float32).max)
_NO_BITS = np.zeros(8, np.uint8)


@dataclasses.dataclass
class Bad:
    """Bad values of one column in a block: rows (ascending), texts and reasons, parallel lists."""

    rows: list = dataclasses.field(default_factory=list)
    texts: list = dataclasses.field(default_factory=list)
    reasons: list = dataclasses.field(default_factory=list)

    def add(self, row, text, reason):
        self.rows.append(int(row))
        self.texts.append(text)
        self.reasons.append(reason)

    def sort(self):
        if any(a > b for a, b in zip(self.rows, self.rows[1:])):
            order = sorted(range(len(self.rows)), key=self.rows.__getitem__)
            self.rows = [self.rows[i] for i in order]
            self.texts = [self.texts[i] for i in order]
            self.reasons = [self.reasons[i] for i in order]
        return self

    def __len__(self):
        return len(self.rows)


@dataclasses.dataclass
class Coerced:
    """One column of a block: its values, the rows whose value is bad, how many were filled."""

    values: object  # np.ndarray [rows] or SparseTensorValue [rows, n]
    bad: Bad  # bad values that were NOT replaced (their rows must be dropped or reported)
    replaced: Bad  # bad values replaced by the default (``replace_bad``)
    filled: int  # missing values replaced by the default


# ---------------------------------------------------------------------- Arrow helpers
def plain(arr) -> pa.Array:
    """One contiguous array, dictionaries decoded."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


def _is_text(t) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or \
        pa.types.is_large_binary(t) or pa.types.is_string_view(t) or pa.types.is_binary_view(t)


def _null_mask(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.zeros(len(arr), bool)
    return arr.is_null().to_numpy(zero_copy_only=False)


def to_utf8(arr: pa.Array, bad: Bad) -> pa.Array:
    """A ``string`` array of a text array; values that are not UTF-8 are reported and nulled."""
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr
    try:
        return arr.cast(pa.large_string() if pa.types.is_large_binary(t) else pa.string())
    except pa.ArrowInvalid:
        pass
    values = arr.to_pylist()
    keep = []
    for i, v in enumerate(values):
        if v is not None:
            try:
                v.decode("utf-8")
            except UnicodeDecodeError:
                bad.add(i, text_of(v), "invalid UTF-8")
                v = None
        keep.append(v)
    return pa.array(keep, pa.binary()).cast(pa.string())


def text_column(arr: pa.Array, bad: Bad, strip: bool) -> pa.Array:
    """The values of any array as UTF-8 text (numbers as Arrow writes them, bools as 1/0)."""
    t = arr.type
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if pa.types.is_boolean(t):
        arr = arr.cast(pa.int8())
    elif not _is_text(t):
        # Arrow writes floats in shortest form, integral ones without ".0" (1005.0 -> "1005")
        if pa.types.is_nested(arr.type) or pa.types.is_struct(arr.type):
            for i, v in enumerate(arr.to_pylist()):
                if v is not None:
                    bad.add(i, str(v), "a nested value where a single value is expected")
            return pa.nulls(len(arr), pa.string())
        return arr.cast(pa.string())
    arr = to_utf8(arr, bad)
    return pc.utf8_trim(arr, _BLANKS) if strip else arr


@cached_njit(nogil=True)
def _fill_nulls(values, validity, has_validity, start, n, default, out):
    if not has_validity:
        for i in range(n):
            out[i] = values[start + i]
        return
    for i in range(n):  # a select, not a branch
        j = start + i
        out[i] = values[j] if (validity[j >> 3] >> (j & 7)) & 1 else default


@cached_njit(nogil=True)
def _any_inf(values, validity, has_validity, start, n):
    found = False
    for i in range(n):  # (no early exit: vectorized)
        found |= np.abs(values[start + i]) == np.inf
    if not found:
        return False
    for i in range(n):
        j = start + i
        if np.abs(values[j]) == np.inf and (not has_validity or (validity[j >> 3] >> (j & 7)) & 1):
            return True
    return False


def _fixed_width(arr: pa.Array):
    """(values, validity or None) of a numeric Arrow array as NumPy views (indexed from ``arr.offset``)."""
    validity, data = arr.buffers()[:2]
    values = np.frombuffer(data, arr.type.to_pandas_dtype()) if data is not None and data.size else \
        np.zeros(arr.offset + len(arr), arr.type.to_pandas_dtype())
    return values, (np.frombuffer(validity, np.uint8) if validity is not None and arr.null_count else None)


def has_inf(arr) -> bool:
    """Whether a float Arrow array holds an infinity (in a valid slot)."""
    arr = plain(arr)
    if len(arr) == 0 or arr.null_count == len(arr):
        return False
    values, validity = _fixed_width(arr)
    return bool(_any_inf(values, validity if validity is not None else _NO_BITS, validity is not None,
                         arr.offset, len(arr)))


def has_nonfinite(arr) -> bool:
    """Whether a float Arrow array holds a nan or an infinity (in a valid slot)."""
    arr = plain(arr)
    return bool(pa.types.is_floating(arr.type) and pc.any(pc.invert(pc.is_finite(arr))).as_py())


def fill_nulls(arr: pa.Array, default, out: np.ndarray | None = None) -> np.ndarray:
    """The values of a float or integer Arrow array, ``default`` for nulls, in one pass (into ``out``)."""
    values, validity = _fixed_width(arr)
    if out is None:
        out = np.empty(len(arr), values.dtype)
    if len(arr):
        _fill_nulls(values, validity if validity is not None else _NO_BITS, validity is not None, arr.offset,
                    len(arr), values.dtype.type(0 if default is None else default), out)
    return out


def _mark_missing(arr: pa.Array, nulls: tuple) -> np.ndarray:
    """Missing mask of a text array: null, or one of the null texts."""
    missing = _null_mask(arr)
    if nulls == ("",):
        if arr.null_count < len(arr):
            missing |= pc.equal(pc.binary_length(arr), 0).fill_null(True).to_numpy(zero_copy_only=False)
    elif nulls:
        missing |= pc.is_in(arr, value_set=pa.array(nulls, arr.type)).fill_null(True).to_numpy(zero_copy_only=False)
    return missing


# ---------------------------------------------------------------------- numbers
def _exact_integer(s: str) -> int:
    """The integer of a decimal text such as ``9007199254740993.0`` or ``1e3``, read exactly
    (never through a float); ValueError when it is not an integer."""
    try:
        d = decimal.Decimal(s)
    except decimal.InvalidOperation:
        raise ValueError("not a number") from None
    if not d.is_finite():
        raise ValueError("not an integer")
    if d.adjusted() >= _MAX_DIGITS:
        raise ValueError("number out of range")
    if d != d.to_integral_value():
        raise ValueError("not an integer")
    return int(d)


def _parse_number(text: str, integer: bool, arrow_type):
    """The number of ``text`` under the rules, or a ValueError with the reason."""
    s = text.strip(_BLANKS)
    if integer:
        if _INT_RE.fullmatch(s):
            return int(s)
        try:  # what Arrow itself accepts (e.g. 0x1f) is accepted everywhere
            return pc.cast(pa.array([s]), arrow_type).to_pylist()[0]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        if _FLOAT_RE.fullmatch(s):
            return _exact_integer(s)
        raise ValueError("not a number")
    if _FLOAT_RE.fullmatch(s):
        f = float(s)
        if math.isinf(f) and not _INF_RE.fullmatch(s):
            raise ValueError("number out of range")
        return f
    try:
        return pc.cast(pa.array([s]), pa.float64()).to_pylist()[0]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise ValueError("not a number") from None


def _int_arrow_type(dtype: np.dtype):
    return pa.uint64() if dtype.kind == "u" else pa.int64()


def _numbers_slow(texts: pa.Array, dtype: np.dtype, skip: np.ndarray, bad: Bad, finite: bool = False) -> np.ndarray:
    integer = dtype.kind in "iu"
    arrow_type = _int_arrow_type(dtype) if integer else pa.float64()
    out = np.zeros(len(texts), (np.uint64 if dtype.kind == "u" else np.int64) if integer else np.float64)
    lo, hi = _RANGES.get(dtype, (None, None))
    for i, s in enumerate(texts.to_pylist()):
        if skip[i]:
            continue
        try:
            v = _parse_number(s, integer, arrow_type)
            if integer and not lo <= v <= hi:
                raise ValueError(f"number out of range for {dtype.name}")
            if dtype == np.float32 and math.isfinite(v) and abs(v) > _F32_MAX:
                raise ValueError("number out of range for float32")
            if finite and not math.isfinite(v):
                raise ValueError("not a finite number")
        except ValueError as e:
            why = str(e)
            bad.add(i, s, f"{why} for {dtype.name}" if why == "number out of range" else why)
            skip[i] = True
            continue
        out[i] = v
    return out.astype(dtype)


def _numbers_from_text(texts: pa.Array, dtype: np.dtype, skip: np.ndarray, bad: Bad,
                       finite: bool = False) -> np.ndarray:
    """Numbers of a string array; ``skip`` (missing rows) is updated with the bad rows."""
    arrow_type = _int_arrow_type(dtype) if dtype.kind in "iu" else pa.float64()
    try:
        vals = pc.cast(texts, arrow_type).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _numbers_slow(texts, dtype, skip, bad, finite)
    if dtype.kind == "f":
        with np.errstate(invalid="ignore", over="ignore"):
            over = ~np.isfinite(vals) & ~np.isnan(vals) if dtype == np.float64 else \
                np.isinf(vals) | (np.abs(vals) > _F32_MAX)
            if finite:
                over |= np.isnan(vals)
        if over[~skip].any():  # inf must be written as inf; a too large number is bad
            return _numbers_slow(texts, dtype, skip, bad, finite)
    elif dtype not in (np.int64, np.uint64):
        lo, hi = _RANGES[dtype]
        if ((vals < lo) | (vals > hi))[~skip].any():
            return _numbers_slow(texts, dtype, skip, bad)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(skip, 0, vals).astype(dtype)


def _exact_decimals(arr: pa.Array, dtype: np.dtype, skip: np.ndarray, bad: Bad) -> np.ndarray:
    """Integers of a decimal array, exactly (Arrow's cast, or value by value when it refuses)."""
    try:
        return _numbers_from_numbers(arr.cast(_int_arrow_type(dtype)), dtype, skip, bad)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    lo, hi = _RANGES[dtype]
    out = np.zeros(len(arr), dtype)
    for i, v in enumerate(arr.to_pylist()):
        if skip[i] or v is None:
            continue
        if v != v.to_integral_value():
            bad.add(i, str(v), "not an integer")
        elif not lo <= int(v) <= hi:
            bad.add(i, str(v), f"number out of range for {dtype.name}")
        else:
            out[i] = int(v)
            continue
        skip[i] = True
    return out


def _numbers_from_numbers(arr: pa.Array, dtype: np.dtype, skip: np.ndarray, bad: Bad,
                          finite: bool = False) -> np.ndarray:
    """Numbers of a typed numeric array (JSON, Parquet), under the same range/integrality checks."""
    integer = dtype.kind in "iu"
    if pa.types.is_decimal(arr.type) and integer:
        return _exact_decimals(arr, dtype, skip, bad)
    if pa.types.is_boolean(arr.type) or pa.types.is_decimal(arr.type):
        arr = arr.cast(pa.float64())
    vals = arr.to_numpy(zero_copy_only=False)
    if vals.dtype.kind not in "iuf":
        raise TypeError(f"cannot read {arr.type} as {dtype}")
    vals = np.where(skip, 0, vals)
    with np.errstate(invalid="ignore", over="ignore"):
        if integer:
            lo, hi = _RANGES[dtype]
            if vals.dtype.kind == "f":  # a float is exactly an integer below 2**63 (2**64) or it is not
                wrong = ~np.isfinite(vals) | (np.floor(vals) != vals) | (vals < lo) | (vals >= float(hi + 1))
            elif vals.dtype.kind == "u":
                wrong = vals > np.uint64(hi)
            else:
                wrong = (vals < lo) | (vals > hi)
        elif dtype == np.float32 and vals.dtype.kind == "f":
            wrong = np.isfinite(vals) & (np.abs(vals) > _F32_MAX)
        else:
            wrong = np.zeros(len(vals), bool)
        nonfinite = ~np.isfinite(vals) if finite and not integer and vals.dtype.kind == "f" else None
    if nonfinite is not None:
        wrong |= nonfinite
    wrong &= ~skip
    for i in np.flatnonzero(wrong):
        v = vals[i]
        reason = "not an integer" if integer and vals.dtype.kind == "f" and np.isfinite(v) and \
            np.floor(v) != v else "not a finite number" if nonfinite is not None and nonfinite[i] else \
            f"number out of range for {dtype.name}"
        bad.add(i, repr(v.item()), reason)
    skip |= wrong
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(skip, 0, vals).astype(dtype)


# ---------------------------------------------------------------------- one column
def _convert(arr: pa.Array, col: Column, nulls: tuple, strip: bool, bad: Bad):
    """(values, missing): values of ``arr`` as the column's type; bad values are reported in ``bad``
    and are neither missing nor meaningful in ``values``."""
    dtype = col.value_dtype
    if col.dtype in NUMERIC_DTYPES and not (pa.types.is_null(arr.type) or _is_text(arr.type)):
        missing = _null_mask(arr)
        skip = missing.copy()
        return _numbers_from_numbers(arr, dtype, skip, bad, col.finite), missing
    texts = text_column(arr, bad, strip)
    missing = _mark_missing(texts, nulls)
    skip = missing.copy()
    skip[bad.rows] = True
    missing[bad.rows] = False
    if col.dtype in NUMERIC_DTYPES:
        return _numbers_from_text(texts, dtype, skip, bad, col.finite), missing
    if col.dtype == "string":
        vals = texts.cast(pa.binary()).to_numpy(zero_copy_only=False)
        return vals, missing
    if skip.any():
        texts = pc.if_else(pa.array(skip), pa.scalar(None, texts.type), texts)
    keys = hashing.hash_strings(texts)
    return keys, missing


def _hashed_default(col: Column):
    return hashing.hash_strings(pa.array([col.default], pa.binary()))[0]


def _finish_keys(col: Column, keys: np.ndarray, present: np.ndarray) -> np.ndarray:
    if col.hash_salt is not None:
        keys = hashing.salt_keys(keys, col.hash_salt, present)
    if col.num_buckets:
        keys = np.where(present, hashing.bucket_ids(keys, col.num_buckets), col.missing_value)
    return keys


def _quick(arr: pa.Array, col: Column, nulls_done: bool, out) -> Coerced | None:
    """The common clean cases without masks: a typed column of the right type, keys of text whose
    missing values are already null; written straight into ``out`` when given."""
    if col.output != "dense":
        return None
    t = arr.type
    if col.dtype in NUMERIC_DTYPES and t == pa.from_numpy_dtype(col.value_dtype):
        if arr.null_count and col.default is None:
            return None
        if col.finite and has_nonfinite(arr):
            return None
        return Coerced(fill_nulls(arr, col.default, out), Bad(), Bad(), arr.null_count)
    if col.dtype == "key" and nulls_done and col.default is None and col.hash_salt is None and not col.required and \
            not col.num_buckets and (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return Coerced(hashing.hash_strings(arr, out=out), Bad(), Bad(), 0)
    return None


def coerce_column(arr, col: Column, nulls: tuple, replace_bad: bool = False, strip: bool = False,
                  nulls_done: bool = False, out: np.ndarray | None = None) -> Coerced:
    """Values of ``col`` from the Arrow array ``arr`` (one entry per row of the block).

    Missing values take the column default (``filled``) or the missing marker; bad values are
    replaced by the default when ``replace_bad`` and the column has one, else reported in ``bad``.
    ``nulls_done``: the reader already made empty texts null (Arrow's CSV ``null_values``).
    ``out``: a dense column's values go there (a [rows] array, possibly strided, of the column's
    dtype), and it is the result's ``values``.
    """
    arr = plain(arr)
    if col.multi_valued:
        return _coerce_multi(arr, col, nulls, replace_bad, strip)
    done = nulls_done and nulls == ("",) and not strip  # (stripping can make new empty texts)
    quick = _quick(arr, col, done, out)
    if quick is None:
        quick = _coerce_single(arr, col, nulls, replace_bad, strip, done)
        if out is not None and col.output == "dense":
            out[:] = quick.values
            quick.values = out
    return quick


def _coerce_single(arr: pa.Array, col: Column, nulls: tuple, replace_bad: bool, strip: bool,
                   done: bool) -> Coerced:
    """``coerce_column`` of a single-valued column off the quick path: masks, defaults, bad values."""
    bad = Bad()
    vals, missing = _convert(arr, col, () if done else nulls, strip, bad)
    bad.sort()
    has_default = col.default is not None
    filled = 0
    present = ~missing
    if bad.rows:
        present[bad.rows] = False
    if missing.any():
        if has_default:
            filled = int(missing.sum())
        elif (col.dtype in NUMERIC_DTYPES or col.required) and col.output == "dense":
            for i in np.flatnonzero(missing):
                bad.add(i, "", "missing value")
            bad.sort()
    replaced = Bad()
    if replace_bad and has_default and bad.rows:
        replaced, bad = bad, Bad()
    fill = missing.copy() if has_default else np.zeros(len(vals), bool)
    if replaced.rows:
        fill[replaced.rows] = True
    if col.dtype == "key":
        default = _hashed_default(col) if has_default else None
        if fill.any():
            vals[fill] = default
        present |= fill
        vals = _finish_keys(col, vals, present)
        if not present.all() and col.output == "dense":
            vals[~present] = col.missing_value
    else:
        if fill.any():
            vals[fill] = col.default
        present |= fill
        if col.dtype == "string" and not present.all():
            vals[~present] = col.missing_value
    if col.output == "sparse":
        rows = np.flatnonzero(present)
        idx = np.stack([rows, np.zeros(len(rows), np.int64)], axis=1).astype(np.int64)
        vals = SparseTensorValue(idx, vals[rows], np.array([len(vals), 1], np.int64))
    return Coerced(vals, bad, replaced, filled)


def _coerce_multi(arr: pa.Array, col: Column, nulls: tuple, replace_bad: bool, strip: bool) -> Coerced:
    n = len(arr)
    bad = Bad()
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        items, parents = arr.flatten(), pc.list_parent_indices(arr)
    else:
        texts = text_column(arr, bad, False)
        if bad.rows:
            texts = pc.if_else(pa.array(np.isin(np.arange(n), bad.rows)), pa.scalar(None, texts.type), texts)
        lists = pc.split_pattern(texts, pattern=col.delimiter)
        items, parents = lists.flatten(), pc.list_parent_indices(lists)
    parents = parents.to_numpy(zero_copy_only=False).astype(np.int64)
    single = dataclasses.replace(col, delimiter=None, output="dense", default=None, num_buckets=None,
                                 hash_salt=None)
    item_bad = Bad()
    vals, missing = _convert(plain(items), single, nulls, strip, item_bad)
    keep = ~missing
    replaced = Bad()
    for i, text, reason in zip(item_bad.rows, item_bad.texts, item_bad.reasons):
        if replace_bad and col.default is not None:
            vals[i] = _hashed_default(col) if col.dtype == "key" else col.default
            replaced.add(parents[i], text, reason)
        else:
            keep[i] = False
            bad.add(parents[i], text, reason)
    vals, parents = vals[keep], parents[keep]
    if col.dtype == "key":
        vals = _finish_keys(col, vals, np.ones(len(vals), bool))
    starts = np.searchsorted(parents, parents, "left")
    pos = np.arange(len(parents), dtype=np.int64) - starts
    width = int(pos.max()) + 1 if len(pos) else 0
    idx = np.stack([parents, pos], axis=1).astype(np.int64).reshape(-1, 2)
    return Coerced(SparseTensorValue(idx, vals, np.array([n, width], np.int64)), bad.sort(), replaced.sort(), 0)


def take(values, rows: np.ndarray):
    """The given rows (ascending) of a column's values."""
    if not isinstance(values, SparseTensorValue):
        return values[rows]
    n = int(values.dense_shape[0])
    new = np.full(n, -1, np.int64)
    new[rows] = np.arange(len(rows))
    r = new[values.indices[:, 0]]
    k = r >= 0
    idx = values.indices[k].copy()
    idx[:, 0] = r[k]
    shape = values.dense_shape.copy()
    shape[0] = len(rows)
    return SparseTensorValue(idx, values.values[k], shape)
