"""Raw columns to model inputs, as described by a config's ``[data]`` and ``[features]`` tables.

A :class:`FeatureSpec` gives the reader ``schema`` of the columns a model reads (numbers as
float32 with ``nan`` for a missing value and ``nan``/``inf`` text refused; categoricals as uint64
keys hashed by the reader; the label as text) and turns each block the reader produces into three
arrays: ``wide`` uint64 keys ``[rows, wide fields]`` (categoricals, bucketized numerics and
crosses), ``deep`` uint64 keys ``[rows, deep fields]`` (the features to embed) and ``numeric``
float32 ``[rows, numerics]`` (optionally ``log1p``, then standardized by the training data's mean
and deviation), plus ``label`` float32 ``[rows, 1]``. A key is ``FingerprintCat64(Fingerprint64(
feature), Fingerprint64(value))``, so keys never collide across fields and need no vocabulary:
they index dynamic embedding tables; a cross chains its parts' keys. A missing value is a
category of its own. Everything is vectorized over a block.

Example:
    >>> import os, tempfile
    >>> from sparseflow._src.data.readers import read_csv
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("1,x,1\\n3,y,0\\n,x,0\\n")
    >>> spec = FeatureSpec(columns=["a", "b", "y"], label="y", numeric=["a"], categorical=["b"],
    ...                    buckets={"a": [2.0]}, crosses=[["b", "a_bucket"]])
    >>> block = read_csv(path, spec.schema(), header=False, column_names=spec.columns).read_all()
    >>> stats = FitStats(spec)
    >>> stats.add(block)
    >>> _ = stats.finish()
    >>> out = spec.transform(block)
    >>> numeric = [round(float(v), 2) for v in out["numeric"].ravel()]
    >>> out["wide"].shape, out["deep"].shape, numeric, out["label"].ravel().tolist()
    ((3, 3), (3, 2), [-0.27, 1.34, -1.07], [1.0, 0.0, 0.0])
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sparseflow._src.data.dataset_structure import TensorSpec
from sparseflow._src.data.readers.schema import MISSING_KEY, Column, Schema
from sparseflow._src.framework import dtypes
from sparseflow._src.kernels.farmhash import _cat64_arrays, fingerprint64

__all__ = ["FeatureSpec", "FitStats"]

_MISSING_TEXT = "\x00missing"  # no value of a text file hashes to this feature's missing key
_RARE_TEXT = "\x00rare"
_MAX_LABEL_VALUES = 20  # distinct label values remembered for error messages


def _salt(name: str) -> np.uint64:
    return np.uint64(fingerprint64(name))


def _cat(a, b) -> np.ndarray:
    """``FingerprintCat64(a, b)`` elementwise (either side may be a scalar)."""
    a, b = np.asarray(a, np.uint64), np.asarray(b, np.uint64)
    a, b = np.broadcast_arrays(a, b)
    return _cat64_arrays(np.ascontiguousarray(a), np.ascontiguousarray(b))


def _value_key(feature: str, text: str) -> np.uint64:
    """The key of ``text`` in ``feature``, as the reader hashes a ``key`` column salted by its name."""
    return _cat(_salt(feature), np.uint64(fingerprint64(text)))[()]


@dataclasses.dataclass
class FeatureSpec:
    """How raw columns become model inputs (see the module docstring)."""

    columns: list | None  # the files' columns (CSV/TSV without header); None: found by name
    label: str
    positive: list = dataclasses.field(default_factory=lambda: ["1"])
    numeric: list = dataclasses.field(default_factory=list)
    log1p: list = dataclasses.field(default_factory=list)
    categorical: list = dataclasses.field(default_factory=list)
    buckets: dict = dataclasses.field(default_factory=dict)  # numeric column -> boundaries; adds "<col>_bucket"
    log_buckets: list = dataclasses.field(default_factory=list)  # numeric columns; adds "<col>_log"
    crosses: list = dataclasses.field(default_factory=list)  # lists of categorical / bucket names
    wide: list | None = None  # default: categorical + buckets + crosses
    deep: list | None = None  # default: categorical + buckets
    missing: list = dataclasses.field(default_factory=lambda: ["", "?"])
    min_frequency: int = 1  # categorical values seen fewer times in training share one "rare" key per field
    stats: dict = dataclasses.field(default_factory=dict)  # numeric column -> (mean, std), set by FitStats
    vocab: dict = dataclasses.field(default_factory=dict)  # categorical -> sorted frequent keys, set by FitStats

    def __post_init__(self):
        names = [self.label, *self.numeric, *self.categorical, *self.buckets, *self.log_buckets]
        if self.columns is not None:
            known = set(self.columns)
            for c in names:
                if c not in known:
                    raise ValueError(f"feature {c!r} is not a data column (columns: {', '.join(self.columns)})")
        both = sorted(set(self.categorical) & set(self.number_columns))
        if both:
            raise ValueError(f"column(s) {both} are both categorical and numeric; bucketize a numeric column "
                             "with [features] buckets instead")
        if self.label in self.categorical or self.label in self.number_columns:
            raise ValueError(f"the label {self.label!r} cannot also be a feature")
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
        if not self.wide_features and not self.deep_features and not self.numeric:
            raise ValueError("the config has no features: give [features] numeric and/or categorical columns")

    # ------------------------------------------------------------------ names
    @property
    def number_columns(self) -> list:
        """Columns read as numbers: numeric, bucketized and log-bucketized ones."""
        return list(dict.fromkeys([*self.numeric, *self.buckets, *self.log_buckets]))

    @property
    def input_columns(self) -> list:
        """Every column the features read (the label excluded)."""
        return [*self.number_columns, *self.categorical]

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

    # ------------------------------------------------------------------ reading
    def schema(self, with_label: bool = True, extra=()) -> Schema:
        """The reader schema of the model's columns (and ``extra`` columns read as text, e.g. an id)."""
        nulls = tuple(v for v in self.missing if v != "")
        cols = [Column(c, "float32", default=float("nan"), finite=True, null_values=nulls)
                for c in self.number_columns]
        cols += [Column(c, "key", hash_salt=c, null_values=nulls) for c in self.categorical]
        if with_label:
            cols.append(Column(self.label, "string", required=True, null_values=nulls))
        cols += [Column(c, "string") for c in extra if c not in {col.name for col in cols}]
        return Schema(cols)

    def element_spec(self, with_label: bool = True, extra=()) -> dict:
        """The spec of one row of :meth:`transform`'s output."""
        spec = {"wide": TensorSpec([len(self.wide_features)], dtypes.uint64),
                "deep": TensorSpec([len(self.deep_features)], dtypes.uint64),
                "numeric": TensorSpec([len(self.numeric)], dtypes.float32)}
        if with_label:
            spec["label"] = TensorSpec([1], dtypes.float32)
        for c in extra:
            spec[c] = TensorSpec([], dtypes.string)
        return spec

    def labels(self, values) -> np.ndarray:
        """1.0 where the label text is one of ``positive``, else 0.0; float32 [rows, 1]."""
        positive = np.array([p.encode("utf-8") for p in self.positive], dtype=object)
        return np.isin(np.asarray(values, dtype=object), positive).astype(np.float32).reshape(-1, 1)

    # ------------------------------------------------------------------ features of a block
    def _missing_key(self, feature: str) -> np.uint64:
        return _value_key(feature, _MISSING_TEXT)

    def _keys(self, block: dict) -> dict:
        """uint64 keys [rows] of every categorical, bucket and log-bucket feature of a block."""
        keys = {}
        for c in self.categorical:
            k = np.asarray(block[c], np.uint64)
            missing = k == MISSING_KEY
            if c in self.vocab:
                frequent = np.asarray(self.vocab[c], np.uint64)
                k = np.where(np.isin(k, frequent) | missing, k, _value_key(c, _RARE_TEXT))
            keys[c] = np.where(missing, self._missing_key(c), k)
        for col, bounds in self.buckets.items():
            name = f"{col}_bucket"
            v = np.asarray(block[col], np.float64)
            idx = np.searchsorted(np.asarray(bounds, np.float64), v, side="right").astype(np.uint64)
            keys[name] = np.where(np.isnan(v), self._missing_key(name), _cat(_salt(name), idx))
        for col in self.log_buckets:
            name = f"{col}_log"
            v = np.asarray(block[col], np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                bucket = np.where(v > 2, np.floor(np.log(np.where(v > 2, v, 3.0)) ** 2), np.floor(v))
            ids = np.nan_to_num(bucket, nan=0.0).astype(np.int64).view(np.uint64)
            keys[name] = np.where(np.isnan(v), self._missing_key(name), _cat(_salt(name), ids))
        for cross, name in zip(self.crosses, self.cross_names):
            acc = _cat(_salt(name), keys[cross[0]])
            for part in cross[1:]:
                acc = _cat(acc, keys[part])
            keys[name] = acc
        return keys

    def _numbers(self, block: dict, col: str) -> np.ndarray:
        v = np.asarray(block[col], np.float64)
        v = np.where(np.isnan(v), 0.0, v)  # missing reads as 0
        return np.log1p(np.maximum(v, 0.0)) if col in self.log1p else v

    def transform(self, block: dict) -> dict:
        """``{"wide", "deep", "numeric"}`` (and ``"label"`` when the block has the label; other
        columns of the block that are not features pass through) of a reader block."""
        if self.numeric and not self.stats:
            raise ValueError("the numeric features' statistics are not fitted (FitStats.finish)")
        if int(self.min_frequency) > 1 and self.categorical and not self.vocab:
            raise ValueError("the categorical vocabulary for min_frequency is not fitted (FitStats.finish)")
        n = len(next(iter(block.values())))
        keys = self._keys(block)

        def stack(names):
            out = np.empty((n, len(names)), np.uint64)
            for j, name in enumerate(names):
                out[:, j] = keys[name]
            return out

        numeric = np.empty((n, len(self.numeric)), np.float32)
        for j, col in enumerate(self.numeric):
            mu, sd = self.stats[col]
            numeric[:, j] = (self._numbers(block, col) - mu) / sd
        out = {"wide": stack(self.wide_features), "deep": stack(self.deep_features), "numeric": numeric}
        if self.label in block:
            out["label"] = self.labels(block[self.label])
        used = {self.label, *self.input_columns}
        out.update((k, v) for k, v in block.items() if k not in used)
        return out

    # ------------------------------------------------------------------ what fitting learned
    @property
    def fitted(self) -> dict:
        """What fitting learned, as JSON-able data (see :meth:`load_fitted`)."""
        return {"numeric_stats": self.stats, "vocab": {k: [int(x) for x in v] for k, v in self.vocab.items()}}

    def load_fitted(self, doc: dict):
        self.stats = {k: tuple(v) for k, v in doc.get("numeric_stats", {}).items()}
        self.vocab = {k: np.asarray(v, np.uint64) for k, v in doc.get("vocab", {}).items()}


class FitStats:
    """One streamed pass over the training data: counts for the run's checks, numeric means and
    deviations (merged block by block), categorical counts for ``min_frequency``."""

    def __init__(self, spec: FeatureSpec):
        self.spec = spec
        self.rows = 0
        self.positives = 0
        self.label_values: dict = {}  # text -> count (the first _MAX_LABEL_VALUES distinct values)
        self.missing = dict.fromkeys(spec.input_columns, 0)
        self._moments = {c: (0, 0.0, 0.0) for c in spec.numeric}  # (n, mean, M2)
        self._counts: dict = {c: {} for c in spec.categorical} if int(spec.min_frequency) > 1 else {}

    def add(self, block: dict):
        spec = self.spec
        n = len(block[spec.label])
        if not n:
            return
        self.rows += n
        labels = block[spec.label]
        self.positives += int(spec.labels(labels).sum())
        if len(self.label_values) < _MAX_LABEL_VALUES:
            values, counts = np.unique(np.asarray(labels, dtype=object).astype(bytes), return_counts=True)
            for v, k in zip(values.tolist(), counts.tolist()):
                text = v.decode("utf-8", "backslashreplace")
                if text in self.label_values or len(self.label_values) < _MAX_LABEL_VALUES:
                    self.label_values[text] = self.label_values.get(text, 0) + k
        for c in spec.number_columns:
            self.missing[c] += int(np.isnan(np.asarray(block[c], np.float64)).sum())
        for c in spec.categorical:
            self.missing[c] += int((np.asarray(block[c]) == MISSING_KEY).sum())
        for c in spec.numeric:  # Chan et al.'s parallel merge of (count, mean, M2)
            v = spec._numbers(block, c)
            na, ma, m2a = self._moments[c]
            mb, m2b = float(v.mean()), float(((v - v.mean()) ** 2).sum())
            total = na + n
            delta = mb - ma
            self._moments[c] = (total, ma + delta * n / total, m2a + m2b + delta * delta * na * n / total)
        for c, counts in self._counts.items():
            keys, k = np.unique(np.asarray(block[c], np.uint64), return_counts=True)
            for key, cnt in zip(keys.tolist(), k.tolist()):
                counts[key] = counts.get(key, 0) + cnt

    def finish(self):
        """Sets the spec's numeric statistics and vocabularies."""
        spec = self.spec
        spec.stats = {}
        for c, (n, mean, m2) in self._moments.items():
            std = float(np.sqrt(m2 / n)) if n else 0.0
            spec.stats[c] = (float(mean), std or 1.0)
        spec.vocab = {}
        for c, counts in self._counts.items():
            spec.vocab[c] = np.array(sorted(k for k, v in counts.items()
                                            if v >= int(spec.min_frequency) and k != int(MISSING_KEY)), np.uint64)
        return self
