"""``tf.data.Dataset``: the base class of every dataset, its TF1 API, and the iteration context.

Interface for dataset sources (readers) and transformations
-----------------------------------------------------------
A dataset is a Python object; graph iterators run it on the host (``data_ops.py``). Subclass
``Dataset`` and provide:

``element_spec``
    The structure of ONE element: a ``TensorSpec(shape, dtype)`` or ``SparseTensorSpec(shape,
    dtype)`` leaf, or tuples / namedtuples / dicts of them (lists are not structures in tf.data).
    Set ``self._element_spec`` in ``__init__`` or override the property. ``output_types``,
    ``output_shapes`` and ``output_classes`` derive from it.
``_iter_elements(self, ctx)``
    A generator of elements: the structure of ``element_spec`` with NumPy leaves (``np.ndarray``
    or NumPy scalars of the spec's dtype; strings as ``bytes`` / object arrays of bytes) and
    ``SparseTensorValue`` for sparse leaves (indices int64 [n, rank] row-major, values [n],
    dense_shape int64 [rank]).
``_iter_batches(self, ctx)`` (optional, for block readers)
    A generator of *blocks*: the same structure, every dense leaf with a leading row dimension
    (equal for all leaves, any size per block) and every sparse leaf a batched SparseTensorValue
    (rank + 1, row-major). A source that implements it need not implement ``_iter_elements``
    (the default one takes the rows out of the blocks; a sparse row's dense_shape is then its
    largest index + 1, as ``parse_example`` gives for variable-length features); ``batch``,
    ``shuffle``, ``take``, ``skip``, ``shard``, ``repeat``, ``cache`` and ``prefetch`` then
    work on whole blocks with NumPy, never per row. A transformation that produces blocks only
    for some inputs overrides ``_supports_batches()``.
``_inputs(self)``
    The datasets this one reads (default: none), so captured graph tensors are found.
Specs and row helpers (``TensorSpec``, ``SparseTensorSpec``, ``slice_rows``, ``take_rows``,
``concat_rows``, ``structure(spec)`` for compiled flatten/pack) are in ``dataset_structure``.
Arguments that may be graph tensors (e.g. a ``tf.placeholder`` of file names fed when the
iterator's initializer runs) go through ``self._arg(value)`` in ``__init__``; at iteration time
``ctx.value(arg)`` gives the NumPy value. ``ctx.iterate(ds)`` / ``ctx.iterate_batches(ds)`` run
an input dataset; ``ctx.cancelled`` (a ``threading.Event``) is set when the iterator is closed:
background threads must stop then. Raise ``errors.OpError`` subclasses (InvalidArgumentError,
DataLossError, ...) for bad data; any exception reaches ``get_next()`` / the Python loop.

Example:
    >>> import sparseflow as tf
    >>> ds = tf.data.Dataset.from_tensor_slices({"x": [1, 2, 3, 4]}).map(lambda d: d["x"] * 10).batch(3)
    >>> [b.tolist() for b in ds]
    [[10, 20, 30], [40]]
"""

from __future__ import annotations

import threading

import numpy as np

from sparseflow._src.data import dataset_structure as st
from sparseflow._src.framework import dtypes
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.sparse_tensor import SparseTensor, SparseTensorValue

AUTOTUNE = -1


def _mod(name):
    import importlib

    return importlib.import_module("sparseflow._src.data." + name)


class IterContext:
    """What a running dataset sees: values of captured graph tensors, compiled functions, state.

    ``state`` lives for one initialization of an iterator (e.g. the in-memory cache), ``persistent``
    for the iterator. ``seed_generators`` (the shuffles' seed generators) live for one run of the
    dataset's graph, as TensorFlow's: one initialization, or one dataset made by a function
    (``bind``), so a re-initialized iterator repeats its shuffled orders.
    """

    def __init__(self, values: dict, runner=None, persistent: dict | None = None, cancelled=None, parent=None):
        self._values = values
        self._runner = runner
        self._compiled: dict = {} if parent is None else parent._compiled
        self._lock = threading.Lock() if parent is None else parent._lock
        self.state: dict = {} if parent is None else parent.state
        self.persistent: dict = persistent if persistent is not None else {}
        self.cancelled = cancelled if cancelled is not None else threading.Event()
        self.seed_generators: dict = {}
        self._parent = parent

    def value(self, arg):
        """The NumPy value of an argument registered with ``Dataset._arg``."""
        if isinstance(arg, SparseTensor):
            return SparseTensorValue(self.value(arg.indices), self.value(arg.values), self.value(arg.dense_shape))
        if isinstance(arg, Tensor):
            ctx = self
            while ctx is not None:
                if arg in ctx._values:
                    return ctx._values[arg]
                ctx = ctx._parent
            raise KeyError(f"No value for {arg.name}: the dataset argument was not captured.")
        return arg

    def bind(self, values: dict) -> IterContext:
        """A context for a dataset made by a function (interleave, flat_map) with its captured values."""
        return IterContext(values, self._runner, self.persistent, self.cancelled, self)

    def iterate(self, dataset):
        return dataset._iter_elements(self)

    def iterate_batches(self, dataset):
        return dataset._iter_batches(self)

    def call(self, fn, args) -> list:
        """Runs a traced function (``dataset_function.TracedFunction``) on flat component values."""
        call = self._compiled.get(fn)
        if call is None:
            with self._lock:
                call = self._compiled.get(fn)
                if call is None:
                    call = self._compiled[fn] = self._runner(fn.function)
        return call(None, *args, *[self.value(t) for t in fn.captured])


class Dataset:
    """A sequence of elements (nested tuples/dicts of tensors and sparse tensors)."""

    _element_spec = None
    _tensor_args: tuple = ()
    _functions: tuple = ()

    # ------------------------------------------------------------------ subclass interface
    def _inputs(self) -> list:
        return []

    def _iter_elements(self, ctx: IterContext):
        if not self._supports_batches():
            raise NotImplementedError(f"{type(self).__name__} implements neither _iter_elements nor _iter_batches.")
        s = st.structure(self.element_spec)
        for block in ctx.iterate_batches(self):
            leaves = s.flatten(block)
            if not s.has_sparse:
                for row in zip(*leaves):
                    yield s.pack(row)
                continue
            for i in range(st.num_rows(leaves)):
                yield s.pack([st.row_of(v, i) for v in leaves])

    def _iter_batches(self, ctx: IterContext):
        raise NotImplementedError(f"{type(self).__name__} does not produce blocks.")

    def _supports_batches(self) -> bool:
        """True when ``_iter_batches`` works (a block source, or a transformation of one)."""
        return type(self)._iter_batches is not Dataset._iter_batches

    def _arg(self, value, dtype=None):
        """Registers an argument that may be a graph tensor; returns what ``ctx.value`` takes."""
        if isinstance(value, (Tensor, SparseTensor)):
            if not self._tensor_args:
                self._tensor_args = []
            parts = [value.indices, value.values, value.dense_shape] if isinstance(value, SparseTensor) else [value]
            self._tensor_args.extend(parts)
            return value
        if isinstance(value, SparseTensorValue):
            return st.to_sparse_value(value, dtype)
        return st.to_numpy(value, dtype)

    # ------------------------------------------------------------------ structure
    @property
    def element_spec(self):
        if self._element_spec is None:
            raise NotImplementedError(f"{type(self).__name__} must set _element_spec or override element_spec.")
        return self._element_spec

    @property
    def output_types(self):
        return st.types_of(self.element_spec)

    @property
    def output_shapes(self):
        return st.shapes_of(self.element_spec)

    @property
    def output_classes(self):
        return st.classes_of(self.element_spec)

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self.element_spec!r}>"

    def __bool__(self):
        return True

    # ------------------------------------------------------------------ sources
    @staticmethod
    def from_tensor_slices(tensors):
        """Elements are the slices of ``tensors`` along their first dimension."""
        return _mod("dataset_sources").TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        """One element: ``tensors``."""
        return _mod("dataset_sources").TensorDataset(tensors)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """Elements from ``generator(*args)``, a Python callable returning an iterable (run per pass)."""
        return _mod("dataset_sources").GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def range(*args, output_type=dtypes.int64):
        """``range(stop)`` / ``range(start, stop[, step])`` as int64 scalars."""
        return _mod("dataset_sources").RangeDataset(*args, output_type=output_type)

    @staticmethod
    def zip(datasets):
        """Elements of a (nested) tuple/dict of datasets side by side, up to the shortest."""
        return _mod("dataset_sources").ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """File names matching ``file_pattern`` (a pattern or list of them), shuffled unless ``shuffle=False``."""
        return _mod("dataset_sources").list_files(file_pattern, shuffle, seed)

    # ------------------------------------------------------------------ transformations
    def concatenate(self, dataset):
        return _mod("dataset_sources").ConcatenateDataset(self, dataset)

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        """``map_func`` (built from graph ops) applied to every element; in order, ``num_parallel_calls`` at a time."""
        return _mod("dataset_transforms").MapDataset(self, map_func, num_parallel_calls)

    def flat_map(self, map_func):
        """``map_func(element)`` returns a dataset; its elements follow one another."""
        return _mod("dataset_transforms").InterleaveDataset(self, map_func, 1, 1, None, "flat_map")

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1, num_parallel_calls=None,
                   deterministic=None):
        """Datasets from ``map_func`` read ``cycle_length`` at a time, ``block_length`` elements each in turn."""
        return _mod("dataset_transforms").InterleaveDataset(self, map_func, cycle_length, block_length,
                                                            num_parallel_calls, "interleave")

    def filter(self, predicate):
        """The elements for which ``predicate`` (a scalar tf.bool) is true."""
        return _mod("dataset_transforms").FilterDataset(self, predicate)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        """Elements drawn at random from a buffer of ``buffer_size``; a new order every pass unless told not to."""
        return _mod("dataset_reorder").ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def batch(self, batch_size, drop_remainder=False):
        """``batch_size`` consecutive elements stacked (sparse ones as a SparseTensor of rank + 1)."""
        return _mod("dataset_batch").BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        """Batches of elements padded to ``padded_shapes`` (None / -1 dims: the longest in the batch)."""
        return _mod("dataset_batch").PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                                             drop_remainder)

    def unbatch(self):
        """The rows of each element (the inverse of ``batch``)."""
        return _mod("dataset_batch").UnbatchDataset(self)

    def repeat(self, count=None):
        """The dataset ``count`` times (forever when None or -1)."""
        return _mod("dataset_reorder").RepeatDataset(self, count)

    def take(self, count):
        """At most ``count`` elements (all when -1)."""
        return _mod("dataset_reorder").TakeDataset(self, count)

    def skip(self, count):
        """All but the first ``count`` elements (none when -1)."""
        return _mod("dataset_reorder").SkipDataset(self, count)

    def shard(self, num_shards, index):
        """Every ``num_shards``-th element starting at ``index`` (one worker's part)."""
        return _mod("dataset_reorder").ShardDataset(self, num_shards, index)

    def cache(self, filename=""):
        """Elements of the first complete pass kept in memory (or in files at ``filename``) for later passes."""
        return _mod("dataset_reorder").CacheDataset(self, filename)

    def prefetch(self, buffer_size):
        """A background thread keeps up to ``buffer_size`` elements ready."""
        return _mod("dataset_transforms").PrefetchDataset(self, buffer_size)

    def apply(self, transformation_func):
        """``transformation_func(self)``, which must return a Dataset."""
        ds = transformation_func(self)
        if not isinstance(ds, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return ds

    def enumerate(self, start=0):
        """``(index, element)`` pairs, the index int64 counting from ``start``."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def with_options(self, options):
        return self

    # ------------------------------------------------------------------ iterators
    def make_one_shot_iterator(self):
        """An iterator that needs no initialization (its dataset may not capture placeholders)."""
        return _mod("iterator_ops").make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator whose ``initializer`` (re)starts it, reading fed placeholders at that point."""
        return _mod("iterator_ops").make_initializable_iterator(self, shared_name)

    def __iter__(self):
        """Python iteration without a Session: nested NumPy values (and SparseTensorValues).

        Captured graph tensors are evaluated once per pass (a placeholder cannot be: use an
        initializable iterator and feed it); map functions run through compiled plans.
        """
        return _mod("iterator_ops").python_iterator(self)

    def as_numpy_iterator(self):
        return iter(self)


def all_captures(dataset) -> list:
    """Graph tensors a dataset pipeline reads (its arguments and its functions' captures), in order."""
    seen, out = set(), []

    def visit(ds):
        for t in list(ds._tensor_args) + [t for fn in ds._functions for t in fn.captured]:
            if t not in seen:
                seen.add(t)
                out.append(t)
        for d in ds._inputs():
            visit(d)

    visit(dataset)
    return out


def all_functions(dataset) -> list:
    """The traced functions of a pipeline (including those of datasets its functions return)."""
    out = []

    def visit(ds):
        for fn in ds._functions:
            if fn not in out:
                out.append(fn)
                if fn.dataset is not None:
                    visit(fn.dataset)
        for d in ds._inputs():
            visit(d)

    visit(dataset)
    return out
