"""Raw tabular data to model inputs, as described by a config's ``[data]`` and ``[features]`` tables.

A :class:`FeatureSpec` reads delimited text files (CSV/TSV, the Criteo format) into columns, then
turns a split into three arrays: ``wide`` uint64 keys ``[rows, wide fields]`` (categoricals,
bucketized numerics and crosses), ``deep`` uint64 keys ``[rows, deep fields]`` (the categoricals
to embed) and ``numeric`` float32 ``[rows, numerics]`` (optionally ``log1p``, then standardized by
the training split's mean and deviation). A key is the FarmHash Fingerprint64 of ``"field=value"``
(a cross joins its parts' values), so keys never collide across fields and need no vocabulary:
they index dynamic embedding tables. A missing value (empty or one of ``missing``) is a category
of its own.

Example:
    >>> spec = FeatureSpec(columns=["a", "b", "y"], label="y", positive=["1"], numeric=["a"],
    ...                    categorical=["b"], buckets={"a": [2.0]}, crosses=[["b", "a_bucket"]])
    >>> raw = {"a": ["1", "3"], "b": ["x", "y"], "y": ["1", "0"]}
    >>> spec.fit(raw)
    >>> inputs = spec.transform(raw)
    >>> inputs.wide.shape, inputs.deep.shape, inputs.numeric.round(2).tolist(), inputs.label.tolist()
    ((2, 3), (2, 2), [[-1.0], [1.0]], [[1.0], [0.0]])
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os

import numpy as np
import pyarrow as pa

from sparseflow._src.data.readers.hashing import hash_strings

__all__ = ["FeatureSpec", "ModelInputs", "read_table"]


@dataclasses.dataclass
class ModelInputs:
    wide: np.ndarray  # uint64 [rows, wide fields]
    deep: np.ndarray  # uint64 [rows, deep fields]
    numeric: np.ndarray  # float32 [rows, numerics]
    label: np.ndarray  # float32 [rows, 1]

    def __len__(self):
        return len(self.label)

    def take(self, idx) -> ModelInputs:
        return ModelInputs(self.wide[idx], self.deep[idx], self.numeric[idx], self.label[idx])


def read_table(paths, columns, delimiter=",", skip_initial_space=False, comment_prefix=None, numeric=(),
               missing=("", "?")) -> dict:
    """Columns (lists of stripped strings) of delimited text files without a header; blank lines and
    lines starting with ``comment_prefix`` are skipped; a row of another width is an error, and so is
    a field of a ``numeric`` column that is neither ``missing`` nor a finite number."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = {c: [] for c in columns}
    cols = [out[c] for c in columns]
    checks = [(j, c) for j, c in enumerate(columns) if c in set(numeric)]
    for path in paths:
        with open(path, newline="") as f:
            for lineno, rec in enumerate(csv.reader(f, delimiter=delimiter, skipinitialspace=skip_initial_space),
                                         start=1):
                if not rec or (comment_prefix and rec[0].startswith(comment_prefix)):
                    continue
                if len(rec) != len(cols):
                    raise ValueError(f"{path}:{lineno}: expected {len(cols)} fields, got {len(rec)}: {rec!r:.120}")
                for col, v in zip(cols, rec):
                    col.append(v.strip())
                for j, name in checks:
                    _check_number(cols[j][-1], missing, path, lineno, name)
    return out


def _check_number(text, missing, path, lineno, column):
    if text in missing:
        return
    try:
        ok = math.isfinite(float(text))
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{path}:{lineno}: column {column!r}: {text!r} is not a finite number; write a number, "
                         f"or leave the field empty for a missing value")


def _keys(strings: list) -> np.ndarray:
    return hash_strings(pa.array(strings, pa.string()))


@dataclasses.dataclass
class FeatureSpec:
    """How raw columns become model inputs (see the module docstring)."""

    columns: list
    label: str
    positive: list = dataclasses.field(default_factory=lambda: ["1"])
    numeric: list = dataclasses.field(default_factory=list)
    log1p: list = dataclasses.field(default_factory=list)
    categorical: list = dataclasses.field(default_factory=list)
    buckets: dict = dataclasses.field(default_factory=dict)  # numeric column -> boundaries; adds "<col>_bucket"
    log_buckets: list = dataclasses.field(default_factory=list)  # numeric columns; adds "<col>_log" (see _log_bucket)
    crosses: list = dataclasses.field(default_factory=list)  # lists of categorical / bucket names
    wide: list | None = None  # default: categorical + buckets + crosses
    deep: list | None = None  # default: categorical + buckets
    missing: list = dataclasses.field(default_factory=lambda: ["", "?"])
    min_frequency: int = 1  # categorical values seen fewer times in training share one "rare" key per field
    stats: dict = dataclasses.field(default_factory=dict)  # numeric column -> (mean, std), set by fit
    vocab: dict = dataclasses.field(default_factory=dict)  # categorical -> frequent values, set by fit

    def __post_init__(self):
        known = set(self.columns)
        for c in [self.label, *self.numeric, *self.categorical, *self.buckets, *self.log_buckets]:
            if c not in known:
                raise ValueError(f"feature {c!r} is not a data column (columns: {', '.join(self.columns)})")
        for c in self.log1p:
            if c not in self.numeric:
                raise ValueError(f"log1p column {c!r} is not in numeric")
        cats = self.categoricals
        for cross in self.crosses:
            if len(cross) < 2 or any(c not in cats for c in cross):
                raise ValueError(f"cross {cross!r} needs two or more of the categorical/bucket features {cats}")
        for name, sel in (("wide", self.wide), ("deep", self.deep)):
            for c in sel or ():
                if c not in cats and c not in self.cross_names:
                    raise ValueError(f"{name} feature {c!r} is not a categorical, bucket or cross feature")

        if int(self.min_frequency) < 1:
            raise ValueError(f"min_frequency must be >= 1, got {self.min_frequency!r}")

    @property
    def categoricals(self) -> list:
        return (list(self.categorical) + [f"{c}_bucket" for c in self.buckets]
                + [f"{c}_log" for c in self.log_buckets])

    @property
    def cross_names(self) -> list:
        return ["_x_".join(c) for c in self.crosses]

    @property
    def wide_features(self) -> list:
        return list(self.wide) if self.wide is not None else self.categoricals + self.cross_names

    @property
    def deep_features(self) -> list:
        return list(self.deep) if self.deep is not None else self.categoricals

    def _numbers(self, raw, col) -> np.ndarray:
        v = np.array([float(x) if x not in self.missing else 0.0 for x in raw[col]], np.float64)
        return np.log1p(np.maximum(v, 0.0)) if col in self.log1p else v

    def fit(self, raw: dict):
        """Numeric means and deviations of the training columns ``raw``; with ``min_frequency`` > 1,
        the categorical values seen at least that often."""
        for col in self.numeric:
            v = self._numbers(raw, col)
            self.stats[col] = (float(v.mean()), float(v.std()) or 1.0)
        self.vocab = {}
        if int(self.min_frequency) > 1:
            for col in self.categorical:
                values, counts = np.unique(np.asarray(raw[col], dtype=object).astype(str), return_counts=True)
                self.vocab[col] = sorted(values[counts >= int(self.min_frequency)].tolist())

    @property
    def fitted(self) -> dict:
        """What ``fit`` learned, as JSON-able data (see :meth:`load_fitted`)."""
        return {"numeric_stats": self.stats, "vocab": self.vocab}

    def load_fitted(self, doc: dict):
        self.stats = {k: tuple(v) for k, v in doc.get("numeric_stats", {}).items()}
        self.vocab = {k: list(v) for k, v in doc.get("vocab", {}).items()}

    def _log_bucket(self, raw, col) -> list:
        """TF's Criteo baseline discretization: ``floor(ln(x)^2)`` for x > 2, else the integer x;
        missing values stay missing (their own category)."""
        out = []
        for x in raw[col]:
            if x in self.missing:
                out.append("")
                continue
            v = float(x)
            out.append(str(int(np.floor(np.log(v) ** 2))) if v > 2 else str(int(np.floor(v))))
        return out

    def _values(self, raw: dict) -> dict:
        vals = {}
        for c in self.categorical:
            if c in self.vocab:
                keep = set(self.vocab[c])
                vals[c] = [v if v in keep or v in self.missing else "\x02rare" for v in raw[c]]
            else:
                vals[c] = raw[c]
        for col in self.log_buckets:
            vals[f"{col}_log"] = self._log_bucket(raw, col)
        for col, bounds in self.buckets.items():
            v = np.array([float(x) if x not in self.missing else np.nan for x in raw[col]])
            b = np.searchsorted(np.asarray(bounds, np.float64), v, side="right").astype(str).tolist()
            vals[f"{col}_bucket"] = [s if x == x else "" for s, x in zip(b, v)]
        for cross, name in zip(self.crosses, self.cross_names):
            vals[name] = ["\x01".join(parts) for parts in zip(*(vals[c] for c in cross))]
        return vals

    def transform(self, raw: dict) -> ModelInputs:
        if (self.numeric and not self.stats) or (int(self.min_frequency) > 1 and self.categorical and not self.vocab):
            raise ValueError("FeatureSpec.fit(train columns) must run before transform")
        vals = self._values(raw)
        n = len(raw[self.label])

        def keys(names):
            if not names:
                return np.zeros((n, 0), np.uint64)
            return np.stack([_keys([f"{c}={v}" for v in vals[c]]) for c in names], axis=1)

        numeric = np.zeros((n, len(self.numeric)), np.float32)
        for j, col in enumerate(self.numeric):
            mu, sd = self.stats[col]
            numeric[:, j] = (self._numbers(raw, col) - mu) / sd
        positive = set(self.positive)
        label = np.array([[1.0 if v in positive else 0.0] for v in raw[self.label]], np.float32).reshape(n, 1)
        return ModelInputs(keys(self.wide_features), keys(self.deep_features), numeric, label)
