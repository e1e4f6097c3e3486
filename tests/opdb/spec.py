"""The op database's data model: one ``OpEntry`` per op type (or variant), with ``Sample`` inputs.

This module imports neither sparseflow nor TensorFlow: the same entries are built with
``tensorflow.compat.v1`` by ``tools/record_opdb.py`` (which writes the fixtures) and with
sparseflow by ``tests/opdb/test_opdb.py`` (which compares against them).

An entry builds its op with ``build(tf, **inputs_and_attrs)``; the default is
``tf.raw_ops.<op_type>(**inputs_and_attrs)``, so the sample's keys are TensorFlow's argument
names. A sample's input values are NumPy arrays (fixed dtype), ``T(...)`` values (cast to each
dtype the entry runs in: the OpDef's allowed types of its type attr), ``Const(...)`` values
(always embedded as constants, never fed) or lists of these (list inputs such as ConcatV2's).

Every sample runs in every ``MODE``: inputs as constants (folded by the optimization passes),
as placeholders of known shape, of known rank but unknown dimensions, and of unknown rank.

Example::

    OpEntry("Sum", [
        Sample("rank0", {"input": T(2.5), "axis": np.array([], np.int32)}),
        Sample("empty_rows", {"input": T(np.zeros((0, 3))), "axis": np.int64(0)}, {"keep_dims": True}),
    ])
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable

import numpy as np

MODES = ("const", "static", "dims", "rank")

# Types never generated: bfloat16 has no NumPy type (sparseflow stores it as float32, so its values
# are not TensorFlow's rounded ones); the rest are handles and quantized types.
EXCLUDED_DTYPES = frozenset({"bfloat16", "variant", "resource", "qint8", "quint8", "qint16", "quint16",
                             "qint32"})

FLOAT_KINDS = {"half": "float", "float16": "float", "float32": "float", "float64": "float"}
_NP = {"half": np.float16, "float16": np.float16, "float32": np.float32, "float64": np.float64,
       "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
       "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_,
       "complex64": np.complex64, "complex128": np.complex128, "string": np.object_}


def np_dtype(name: str):
    return np.dtype(_NP[name])


def kind(dtype: str) -> str:
    """'float', 'complex', 'int' (signed), 'uint', 'bool' or 'string'."""
    if dtype in FLOAT_KINDS:
        return "float"
    if dtype.startswith("complex"):
        return "complex"
    if dtype.startswith("uint"):
        return "uint"
    if dtype.startswith("int"):
        return "int"
    return dtype


@dataclasses.dataclass(frozen=True)
class T:
    """A value typed by the entry's dtype: an array-like cast to it, or ``fn(dtype_name) -> array``."""

    value: object

    def resolve(self, dtype: str) -> np.ndarray:
        if callable(self.value):
            return np.asarray(self.value(dtype))
        if dtype == "string":  # numbers become their text: 1.5 -> b"1.5"
            a = np.asarray(self.value, dtype=object)
            return np.array([x if isinstance(x, bytes) else str(x).encode() for x in a.reshape(-1)],
                            dtype=object).reshape(a.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            return np.asarray(self.value).astype(np_dtype(dtype))


@dataclasses.dataclass(frozen=True)
class Const:
    """An input always embedded as a constant (never fed through a placeholder)."""

    value: object


@dataclasses.dataclass
class Sample:
    name: str
    args: dict  # TF argument name -> array | T | Const | list of these
    attrs: dict = dataclasses.field(default_factory=dict)
    kinds: frozenset | None = None  # dtype kinds this sample runs in (None: every dtype of the entry)
    grad: bool = True  # check gradients when the entry is differentiable (float and complex dtypes)
    # Also a directional finite-difference check (float64/complex128; smooth points only): True, or the
    # dtype kinds it applies to (FLOATS: an op whose gradient is zero by definition, Sign, only where it is).
    fd: bool | frozenset = False
    # For entries not compared with TensorFlow: check(inputs, attrs, outputs) -> "" or what is wrong, where
    # inputs are the resolved arrays by name and outputs the fetched arrays (None when the sample raised).
    check: Callable | None = None
    modes: tuple = MODES


@dataclasses.dataclass
class OpEntry:
    op_type: str
    samples: list
    build: Callable | None = None  # build(tf, **inputs_and_attrs) -> Tensor | list | Operation
    name: str = ""  # unique id within the family; defaults to op_type
    dtypes: tuple | None = None  # None: the OpDef's allowed types of type_attr (minus EXCLUDED_DTYPES)
    type_attr: str = "T"
    rtol: float | dict | None = None  # forward tolerance override: one rtol, or {dtype: rtol} (see compare.py)
    grad_rtol: float | None = None
    tf: bool | str = True  # False-y reason string: not compared with TensorFlow (no TF equivalent)
    # Where sparseflow knowingly differs from TensorFlow, and why: keys are a sample name or
    # "sample|dtype", with ":grad" appended when only the gradient differs.
    differs: dict = dataclasses.field(default_factory=dict)
    # canonical(array) -> array applied to sparseflow's and TensorFlow's output values before comparing them,
    # for encodings with more than one right byte string (PNG: zlib settings, row filters); says so in its docstring
    canonical: Callable | None = None
    static_shape_differs: str = ""  # why sparseflow's static shapes knowingly differ from TF's
    stateful: bool = False  # fresh session per run (variables, random state)
    workdir: bool = False  # run in a fresh temporary working directory (ops that read or write files)
    runtime_op: bool = False  # the op is inserted by the runtime (passes, partitioning): the program reaches it
    cpu_devices: int = 1  # sessions get this many CPU devices (ConfigProto device_count)

    @property
    def id(self) -> str:
        return self.name or self.op_type

    @property
    def compared_with_tf(self) -> bool:
        return self.tf is True


def differs_for(entry: OpEntry, key: str) -> tuple[bool, bool]:
    """(nothing compared, gradient not compared) for the record ``sample|dtype|mode`` by
    ``entry.differs``: keys are ``sample``, ``sample|dtype`` or ``sample|dtype|mode`` (``*``
    matches anything), with ``:grad`` appended when only the gradient differs."""
    skip_all = skip_grad = False
    for k in entry.differs:
        base, _, part = k.partition(":")
        if fnmatch.fnmatchcase(key, base + "|*" * (2 - base.count("|"))):
            if part == "grad":
                skip_grad = True
            else:
                skip_all = True
    return skip_all, skip_grad


def with_dtype(sample: Sample, dtype: str | None) -> dict:
    """The sample's inputs resolved for ``dtype``: name -> array | Const(array) | list."""

    def one(v):
        if isinstance(v, Const):
            return Const(one(v.value))
        if isinstance(v, T):
            if dtype is None:
                raise ValueError(f"sample {sample.name}: T(...) needs an entry dtype")
            return v.resolve(dtype)
        if isinstance(v, list):
            return [one(x) for x in v]
        return np.asarray(v)

    return {k: one(v) for k, v in sample.args.items()}


def applies(sample: Sample, dtype: str | None) -> bool:
    return sample.kinds is None or dtype is None or kind(dtype) in sample.kinds


def fd_applies(sample: Sample, dtype: str | None) -> bool:
    """Whether the sample's finite-difference check runs in ``dtype`` (given its inputs allow it)."""
    return sample.fd is True or bool(sample.fd) and (dtype is None or kind(dtype) in sample.fd)


# ---------------------------------------------------------------- deterministic values
def _golden(n: int, seed: int) -> np.ndarray:
    """n distinct values in [0, 1): the golden-ratio sequence (no RNG, same everywhere)."""
    return np.mod((np.arange(n, dtype=np.float64) + 1 + seed * 7) * 0.6180339887498949, 1.0)


def regular(*shape, lo=-2.0, hi=2.0, seed=0, away_from_zero=False) -> T:
    """Distinct values in [lo, hi) of the entry's dtype (unsigned: [max(lo, 0), hi); bool: alternating)."""

    def make(dtype):
        n = int(np.prod(shape, dtype=np.int64))
        k = kind(dtype)
        u = _golden(n, seed)
        if k == "bool":
            return (np.arange(n) % 2 == 0).reshape(shape)
        if k == "string":
            return np.array([f"s{int(x * 100)}".encode() for x in u], dtype=object).reshape(shape)
        low = max(lo, 0.0) if k == "uint" else lo
        v = low + (hi - low) * u
        if away_from_zero:
            v = np.where(np.abs(v) < 0.25, v + np.sign(v + 1e-9) * 0.5, v)
        if k in ("int", "uint"):
            v = np.round(v * 2)
            if away_from_zero:
                v = np.where(v == 0, 1, v)
        if k == "complex":
            v = v + 1j * (lo + (hi - lo) * _golden(n, seed + 1))
        return v.astype(np_dtype(dtype)).reshape(shape)

    return T(make)


def positive(*shape, lo=0.5, hi=2.0, seed=0) -> T:
    return regular(*shape, lo=lo, hi=hi, seed=seed)


def edge_values(dtype: str) -> np.ndarray:
    """The values programs trip on: zeros of both signs, infinities, NaN, extremes of the type."""
    k = kind(dtype)
    d = np_dtype(dtype)
    if k == "float":
        fi = np.finfo(d)
        return np.array([0.0, -0.0, 1.0, -1.5, 2.5, np.inf, -np.inf, np.nan, fi.max, -fi.max, fi.tiny], dtype=d)
    if k == "int":
        ii = np.iinfo(d)
        return np.array([0, 1, -1, 7, -7, ii.min, ii.max], dtype=d)
    if k == "uint":
        return np.array([0, 1, 7, np.iinfo(d).max], dtype=d)
    if k == "complex":
        return np.array([0, -0.0, 1 + 2j, -1.5 + 0.5j, complex(np.inf, 0), complex(0, np.nan), 3j], dtype=d)
    if k == "bool":
        return np.array([False, True])
    return np.array([b"", b"a", b"xyz"], dtype=object)


EDGES = T(edge_values)
EDGE_COL = T(lambda d: edge_values(d)[:, None])  # with EDGE_ROW: every pair of edge values
EDGE_ROW = T(lambda d: edge_values(d)[None, :])


def empty(*shape) -> T:
    """A tensor with a zero-length dimension (an empty batch)."""
    return T(lambda d: np.full(shape, b"", dtype=object) if d == "string" else np.zeros(shape, dtype=np_dtype(d)))


def i32(v) -> np.ndarray:
    return np.asarray(v, dtype=np.int32)


def i64(v) -> np.ndarray:
    return np.asarray(v, dtype=np.int64)


# The dtypes an op that takes any type (T: type) runs in: one of each kind and width class.
ANY_TYPE = ("bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64", "complex64", "string")
REAL_FLOAT_TYPES = ("float16", "float32", "float64")

FLOATS = frozenset({"float"})
INTS = frozenset({"int", "uint"})
NUMBERS = frozenset({"float", "int", "uint", "complex"})
REALS = frozenset({"float", "int", "uint"})
