"""The Criteo display-advertising format: ``label, I1..I13, C1..C26``, tab-separated, no header.

The 13 integer features are counts (some negative) read as float32, a missing one as 0. The 26
categorical features are 8-hex-digit hashes; a missing one is the missing key.

Categorical values are hashed, not parsed as hex: the key of ``"68fd1e64"`` is
``Fingerprint64(b"68fd1e64")``, the same key (and, modulo a bucket count, the same bucket) that
TensorFlow's ``categorical_column_with_hash_bucket`` / ``to_hash_bucket_fast`` give the raw text,
so models and exported graphs agree with TensorFlow's, and the path is the one every other
categorical column takes. (Parsing the hex would give 32-bit keys that collide across fields and
that no TensorFlow op reproduces.) ``salt_fields=True`` salts each field's keys with its name, for
one table shared by all fields.

Example:
    >>> criteo_schema()["C1"].dtype, criteo_schema()["I1"].default
    ('key', np.float32(0.0))
"""

from __future__ import annotations

from sparseflow._src.data.dataset_structure import TensorSpec
from sparseflow._src.data.readers.blocks import StackColumns
from sparseflow._src.data.readers.csv_reader import CsvSource
from sparseflow._src.data.readers.reader_dataset import ReaderDataset
from sparseflow._src.data.readers.schema import Column, Schema
from sparseflow._src.framework import dtypes

INT_FEATURES = [f"I{i}" for i in range(1, 14)]
CAT_FEATURES = [f"C{i}" for i in range(1, 27)]
COLUMNS = ["label", *INT_FEATURES, *CAT_FEATURES]


def criteo_schema(num_buckets: int | None = None, salt_fields: bool = False, int_default: float = 0.0) -> Schema:
    """label (float32, required), I1..I13 (float32, default ``int_default``), C1..C26 (keys)."""
    return Schema([Column("label", "float32")]
                  + [Column(n, "float32", default=int_default) for n in INT_FEATURES]
                  + [Column(n, "key", num_buckets=num_buckets, hash_salt=n if salt_fields else None)
                     for n in CAT_FEATURES])


# dense [rows, 13] and keys [rows, 26], C order: the columns are written straight into them, and a
# batch of rows is a contiguous slice
_STACK = StackColumns({"dense": INT_FEATURES, "keys": CAT_FEATURES})


def read_criteo(paths, *, stacked: bool = False, num_buckets: int | None = None, salt_fields: bool = False,
                delimiter: str = "\t", header: bool = False, block_size: int = 1 << 22, compression="detect",
                bad_records="error", reject_file=None, num_parallel_reads=None) -> ReaderDataset:
    """Criteo files as a dataset of blocks.

    Elements are ``{"label", "I1".."I13", "C1".."C26"}`` or, with ``stacked=True``, ``{"label": [],
    "dense": [13] float32, "keys": [26] uint64}`` (int64 bucket ids with ``num_buckets``). The
    DeepCTR sample (comma-separated, with a header) reads with ``delimiter=",", header=True``.
    """
    schema = criteo_schema(num_buckets, salt_fields)
    source = CsvSource(paths, header=header, column_names=None if header else COLUMNS, delimiter=delimiter,
                       quote_char=False, block_size=block_size, compression=compression)
    spec = None
    if stacked:
        key_dtype = dtypes.int64 if num_buckets else dtypes.uint64
        spec = {"label": TensorSpec([], dtypes.float32), "dense": TensorSpec([13], dtypes.float32),
                "keys": TensorSpec([26], key_dtype)}
    return ReaderDataset([source], schema, bad_records=bad_records, reject_file=reject_file,
                         num_parallel_reads=num_parallel_reads, post=_STACK if stacked else None, element_spec=spec)
