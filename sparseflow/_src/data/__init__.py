"""Public names of the data layer (re-exported by sparseflow/data.py): ``tf.data`` with TF1's
iterators (``tf.compat.v1.data`` is the same module)."""

import types as _types

from sparseflow._src.data import readers as _readers
from sparseflow._src.data.dataset import AUTOTUNE, Dataset, IterContext  # noqa: F401
from sparseflow._src.data.dataset_structure import SparseTensorSpec, TensorSpec  # noqa: F401
from sparseflow._src.data.file_datasets import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset
from sparseflow._src.data.iterator_ops import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from sparseflow._src.data.readers import *  # noqa: F403 - the readers' public names are tf.data names

DatasetV1 = Dataset


def _unbatch():
    return lambda ds: ds.unbatch()


def _shuffle_and_repeat(buffer_size, count=None, seed=None):
    return lambda ds: ds.shuffle(buffer_size, seed).repeat(count)


def _map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False, num_parallel_calls=None):
    n = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches
    return lambda ds: ds.map(map_func, num_parallel_calls=n).batch(batch_size, drop_remainder)


def _parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
                         prefetch_input_elements=None):
    return lambda ds: ds.interleave(map_func, cycle_length, block_length, num_parallel_calls=cycle_length)


experimental = _types.SimpleNamespace(
    CsvDataset=_readers.CsvDataset,
    make_csv_dataset=_readers.make_csv_dataset,
    AUTOTUNE=AUTOTUNE,
    unbatch=_unbatch,
    shuffle_and_repeat=_shuffle_and_repeat,
    map_and_batch=_map_and_batch,
    parallel_interleave=_parallel_interleave,
    get_structure=lambda ds: ds.element_spec,
    TensorStructure=TensorSpec,
    SparseTensorStructure=SparseTensorSpec,
)

__all__: list[str] = ["Dataset", "DatasetV1", "Iterator", "experimental", "make_one_shot_iterator",
                      "make_initializable_iterator", "get_output_types", "get_output_shapes", "get_output_classes",
                      "AUTOTUNE", "TensorSpec", "SparseTensorSpec", "TextLineDataset", "TFRecordDataset",
                      "FixedLengthRecordDataset"] + list(_readers.__all__)

