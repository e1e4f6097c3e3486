"""Reader datasets: files of one or several formats as one stream of typed blocks under one schema.

A ``ReaderDataset`` is a block source of the ``Dataset`` protocol (``_iter_batches``): it yields
columnar blocks (``{name: array [rows] | SparseTensorValue [rows, n]}``) of a few thousand rows,
so ``batch``/``shuffle``/``take`` work on whole blocks with NumPy. Pieces of files are parsed and
coerced on ``num_parallel_reads`` threads and come out in file order.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.csv")
    >>> _ = open(path, "w").write("age,city\\n31,Paris\\nx,Rome\\n40,\\n")
    >>> ds = read_csv(path, Schema([Column("age", "float32"), Column("city", "string")]), bad_records="skip")
    >>> [b["age"].tolist() for b in ds.batch(8)], ds.summary()["skipped"]
    ([[31.0, 40.0]], 1)
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.data.dataset import Dataset
from sparseflow._src.data.readers.blocks import coerce_block, default_workers, run_ordered
from sparseflow._src.data.readers.csv_reader import CsvSource
from sparseflow._src.data.readers.json_reader import JsonSource
from sparseflow._src.data.readers.parquet_reader import ParquetSource
from sparseflow._src.data.readers.policy import BadRecordPolicy, ReadStats
from sparseflow._src.data.readers.schema import Column, Schema  # noqa: F401  (Column: doctest)
from sparseflow._src.framework import tf_logging


class ReaderDataset(Dataset):
    """Records of ``sources`` (read one after the other) coerced to ``schema``.

    Args:
        sources: ``CsvSource`` / ``JsonSource`` / ``ParquetSource`` objects (formats may differ).
        schema: a ``Schema`` (or what ``Schema()`` takes).
        bad_records: the policy, ``"error"``, ``"skip"`` or ``"default"`` (see ``policy.py``).
        reject_file: where bad records are written (JSON lines, rewritten every pass).
        num_parallel_reads: threads that parse and coerce (default: the cores, at most 4).
        post: a function of each block's value dict (run on the reader threads), with
            ``element_spec`` describing its result.
    """

    def __init__(self, sources, schema, bad_records="error", reject_file=None, num_parallel_reads=None,
                 post=None, element_spec=None):
        self._sources = list(sources)
        if not self._sources:
            raise ValueError("A reader needs at least one source")
        for s in self._sources:
            if not hasattr(s, "pieces"):
                raise TypeError(f"Not a source: {s!r}")
        self._schema = Schema(schema)
        self._policy = BadRecordPolicy.of(bad_records)
        self._reject_file = None if reject_file is None else str(reject_file)
        self._workers = int(num_parallel_reads) if num_parallel_reads else default_workers()
        self._post = post
        self._element_spec = element_spec if element_spec is not None else self._schema.element_spec()
        self._last_stats: ReadStats | None = None
        self._current: ReadStats | None = None

    schema = property(lambda self: self._schema)
    policy = property(lambda self: self._policy)
    sources = property(lambda self: list(self._sources))

    def _iter_batches(self, ctx):
        stats = ReadStats(self._policy, self._reject_file)
        self._current = stats
        schema, policy, post = self._schema, self._policy, self._post

        def tasks():
            for src in self._sources:
                for path in src.paths:
                    stats.add_file()
                    for parse in src.pieces(path, schema):
                        yield lambda parse=parse: coerce_block(parse(), schema, policy, post)

        complete = False
        try:
            for block in run_ordered(tasks(), self._workers, ctx.cancelled):
                stats.add_block(block.rows_read, block.rows_out, block.filled, block.bad)
                if block.rows_out:
                    yield block.values
            complete = True
        finally:
            stats.close(complete)
            self._last_stats = stats
            if complete and (stats.num_skipped or stats.num_defaulted):
                tf_logging.warning("%s: %d bad records skipped, %d values replaced by defaults (%s)%s",
                                   type(self).__name__, stats.num_skipped, stats.num_defaulted,
                                   ", ".join(f"{k}: {v}" for k, v in stats.skipped.items()) or "-",
                                   f"; written to {self._reject_file}" if self._reject_file else "")

    @property
    def stats(self) -> ReadStats | None:
        """Counts of the last pass (the one running, if none has ended yet)."""
        return self._last_stats if self._last_stats is not None else self._current

    def summary(self) -> dict:
        """The counts of the last pass as a dict: files, rows_read, rows_out, skipped (and by
        reason), defaulted (and by column), filled (missing values given the default, by column)."""
        stats = self.stats
        if stats is None:
            raise ValueError("The dataset has not been read yet: iterate over it first")
        return stats.summary()

    def read_blocks(self):
        """The blocks of one pass, in file order, as they are read (``{name: array |
        SparseTensorValue}`` each): a pass over files of any size in bounded memory."""
        from sparseflow._src.data.dataset import IterContext

        ctx = IterContext({})
        try:
            yield from self._iter_batches(ctx)
        finally:
            ctx.cancelled.set()

    def read_all(self) -> dict:
        """Every record of one pass as one block (``{name: array | SparseTensorValue}``)."""
        from sparseflow._src.data import dataset_structure as st

        blocks = list(self.read_blocks())
        if not blocks:
            return {k: _empty(spec) for k, spec in self._element_spec.items()}
        return {k: st.concat_rows([b[k] for b in blocks]) for k in blocks[0]}


def _empty(spec):
    from sparseflow._src.data.dataset_structure import is_sparse_spec
    from sparseflow._src.framework.sparse_tensor import SparseTensorValue

    dt = object if spec.dtype.name == "string" else spec.dtype.as_numpy_dtype
    if is_sparse_spec(spec):
        return SparseTensorValue(np.zeros((0, 2), np.int64), np.zeros(0, dt), np.array([0, 0], np.int64))
    return np.zeros((0, *[d or 0 for d in spec.shape.as_list()]), dt)


def _common(kwargs):
    return {k: kwargs.pop(k) for k in ("bad_records", "reject_file", "num_parallel_reads") if k in kwargs}


def read_csv(paths, schema, **kwargs) -> ReaderDataset:
    """CSV/TSV files under ``schema``; keyword arguments of ``CsvSource`` (header, column_names,
    delimiter, quote_char, skip_rows, skip_initial_space, block_size, compression) and of
    ``ReaderDataset`` (bad_records, reject_file, num_parallel_reads)."""
    common = _common(kwargs)
    return ReaderDataset([CsvSource(paths, **kwargs)], schema, **common)


def read_json(paths, schema, **kwargs) -> ReaderDataset:
    """JSON lines files under ``schema`` (``JsonSource`` and ``ReaderDataset`` keyword arguments)."""
    common = _common(kwargs)
    return ReaderDataset([JsonSource(paths, **kwargs)], schema, **common)


def read_parquet(paths, schema, **kwargs) -> ReaderDataset:
    """Parquet files under ``schema``: only its columns are read (``row_groups``, ``batch_size``)."""
    common = _common(kwargs)
    return ReaderDataset([ParquetSource(paths, **kwargs)], schema, **common)


def read_sources(sources, schema, **kwargs) -> ReaderDataset:
    """Several sources, of any formats, merged into one stream under one schema and one policy."""
    return ReaderDataset(sources, schema, **kwargs)
