"""CPU kernels of the lookup-table ops: a HashTableV2 node owns a ``HashTable`` resource of its
device (shared by ``shared_name``); the initializer ops fill it once, and LookupTableFindV2 maps keys
to values (the default value for missing keys).

TensorFlow's rules are kept: a table accepts one initialization (running the initializer again with
the same data is a no-op, with other data a FailedPreconditionError), a key may not map to two
values, and a lookup before initialization is a FailedPreconditionError.
"""

from __future__ import annotations

import threading

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels.registry import register_kernel


def _precondition(message: str):
    return errors.FailedPreconditionError(None, None, message)


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def _is_object(dtype) -> bool:
    return np.dtype(dtype).kind == "O"


def _key(k):
    """A hashable dict key of one element (bytes for strings, Python scalars for numbers)."""
    return k if isinstance(k, bytes) else k.item() if hasattr(k, "item") else k


class HashTable:
    """The storage of one static hash table: ``keys[i] -> values[i]``, plus a dict index."""

    def __init__(self, name: str, key_dtype=None, value_dtype=None):
        self.name = name
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self.lock = threading.Lock()
        self.keys = self.values = None
        self.index: dict = {}
        self._sorted = None  # (sorted int keys, their values) for vectorized integer lookups

    @property
    def is_initialized(self) -> bool:
        return self.keys is not None

    def initialize(self, keys: np.ndarray, values: np.ndarray):
        keys, values = np.asarray(keys).reshape(-1), np.asarray(values).reshape(-1)
        if keys.shape != values.shape:
            raise _invalid(f"Expected shape {list(keys.shape)} for value, got {list(values.shape)}")
        with self.lock:
            if self.is_initialized:
                if not (np.array_equal(keys, self.keys) and np.array_equal(values, self.values)):
                    raise _precondition("Table was already initialized with different data.")
                return
            index: dict = {}
            for k, v in zip(keys.tolist(), values.tolist()):
                old = index.setdefault(k, v)
                if old != v:
                    raise _precondition(f"HashTable has different value for same key. Key {k!r} has {old!r} "
                                        f"and trying to add value {v!r}")
            self.index = index
            if keys.dtype.kind in "iu":
                order = np.argsort(keys, kind="stable")
                self._sorted = (keys[order], values[order])
            self.keys, self.values = keys, values

    def find(self, keys: np.ndarray, default, out_dtype) -> np.ndarray:
        if not self.is_initialized:
            raise _precondition("Table not initialized.")
        keys = np.asarray(keys)
        if self._sorted is not None and keys.dtype.kind in "iu":
            skeys, svals = self._sorted
            pos = np.searchsorted(skeys, keys.reshape(-1))
            pos_c = np.minimum(pos, max(len(skeys) - 1, 0))
            hit = (pos < len(skeys)) & (skeys[pos_c] == keys.reshape(-1)) if len(skeys) else np.zeros(keys.size, bool)
            out = np.where(hit, svals[pos_c] if len(skeys) else default, default)
            return np.asarray(out, dtype=out_dtype).reshape(keys.shape)
        get, dflt = self.index.get, _key(default)
        found = [get(_key(k), dflt) for k in keys.reshape(-1).tolist()]
        out = np.empty(len(found), dtype=out_dtype) if _is_object(out_dtype) else None
        if out is not None:
            out[:] = found
        else:
            out = np.asarray(found, dtype=out_dtype)
        return out.reshape(keys.shape)


@register_kernel("HashTableV2", stateful=True)
def _hash_table(node):
    a = node.attrs
    name = a.get("shared_name") or node.name
    table = node.resources.lookup_or_create(a.get("container", ""), name, HashTable, key_dtype=a["key_dtype"],
                                            value_dtype=a["value_dtype"])
    return lambda: table


def _import(node):
    def compute(table, keys, values):
        if np.size(keys) == 0 or np.size(values) == 0:
            raise _invalid("keys and values cannot be empty tensors.")
        table.initialize(keys, values)

    return compute


register_kernel("LookupTableImportV2")(_import)
register_kernel("InitializeTableV2")(_import)


@register_kernel("LookupTableFindV2")
def _find(node):
    out_dtype = node.attrs["Tout"].as_numpy_dtype

    def compute(table, keys, default):
        if np.ndim(default) != 0:
            raise _invalid(f"Expected shape [] for default value, got {list(np.shape(default))}")
        return table.find(keys, default, out_dtype)

    return compute


@register_kernel("LookupTableSizeV2")
def _size(node):
    return lambda table: np.int64(len(table.index))


@register_kernel("LookupTableExportV2")
def _export(node):
    kd, vd = node.attrs["Tkeys"].as_numpy_dtype, node.attrs["Tvalues"].as_numpy_dtype

    def compute(table):
        if not table.is_initialized:
            return np.zeros(0, kd), np.zeros(0, vd)
        return np.array(table.keys, dtype=kd), np.array(table.values, dtype=vd)

    return compute


def _text_field(line: bytes, parts, index: int, line_no: int, dtype, what: str, filename: str):
    if index == -2:
        field = line
    elif index == -1:
        return line_no
    else:
        if index >= len(parts):
            raise _invalid(f"Invalid number of columns in {filename} line {line_no} ({line!r}) : expected at "
                           f"least {index + 1} got {len(parts)}")
        field = parts[index]
    if _is_object(dtype):
        return field
    try:
        return int(field) if np.dtype(dtype).kind in "iu" else float(field)
    except ValueError:
        raise _invalid(f"Field {field!r} in line {line_no} of {filename} is not a valid {what}") from None


@register_kernel("InitializeTableFromTextFileV2")
def _init_from_text_file(node):
    a = node.attrs
    key_index, value_index, vocab_size = a["key_index"], a["value_index"], a.get("vocab_size", -1)
    delimiter = a.get("delimiter", "\t").encode("utf-8")
    offset = a.get("offset", 0)

    def compute(table, filename):
        filename = np.asarray(filename).item()
        fname = filename.decode("utf-8") if isinstance(filename, bytes) else str(filename)
        kd, vd = table.key_dtype.as_numpy_dtype, table.value_dtype.as_numpy_dtype
        try:
            with open(fname, "rb") as f:
                lines = f.read().split(b"\n")
        except OSError as e:
            raise errors.NotFoundError(None, None, f"{fname}; {e.strerror}") from None
        if lines and lines[-1] == b"":
            lines.pop()
        lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
        if vocab_size != -1:
            if len(lines) < vocab_size:
                raise _invalid(f"Invalid vocab_size in {fname}: expected {vocab_size} got {len(lines)}")
            lines = lines[:vocab_size]
        keys, values = [], []
        position = 0
        for no, line in enumerate(lines):
            position += len(line) + 1
            if not line:
                raise _invalid(f"Invalid content in {fname}: empty line found at position {position}.")
            parts = line.split(delimiter) if key_index >= 0 or value_index >= 0 else ()
            keys.append(_text_field(line, parts, key_index, no, kd, "key", fname))
            v = _text_field(line, parts, value_index, no, vd, "value", fname)
            values.append(v + offset if value_index == -1 else v)
        karr = np.empty(len(keys), object) if _is_object(kd) else np.asarray(keys, dtype=kd)
        varr = np.empty(len(values), object) if _is_object(vd) else np.asarray(values, dtype=vd)
        if _is_object(kd):
            karr[:] = keys
        if _is_object(vd):
            varr[:] = values
        table.initialize(karr, varr)

    return compute
