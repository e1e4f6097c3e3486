"""The feature-column abstraction (TensorFlow's ``_FeatureColumn`` API) and what every column uses:
the per-call transformation cache (``_LazyBuilder``), dense-to-sparse conversion that drops missing
values, column-list normalization, and the parse-spec records.

A column is an immutable namedtuple, so two equal columns are one cache entry. Dense columns give
``[batch] + _variable_shape`` tensors (``_get_dense_tensor``); categorical columns give an
``IdWeightPair`` of SparseTensors (``_get_sparse_tensors``) with ids in ``[0, _num_buckets)``.
"""

from __future__ import annotations

import collections
import collections.abc

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph, name_scope
from sparseflow._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import Dimension
from sparseflow._src.ops import array_ops, control_flow_ops, math_ops, sparse_ops
from sparseflow._src.ops.parsing_ops import FixedLenFeature, VarLenFeature  # noqa: F401 - parse specs


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """A SparseTensor for SparseTensor(Value)s, else a Tensor."""
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and value.dtype.base_dtype != dtypes.as_dtype(dtype).base_dtype:
            raise ValueError(f"Sparse dtype: requested = {dtypes.as_dtype(dtype).name}, actual = "
                             f"{value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


class FeatureColumn:
    """A feature column: a name, a parse spec and a transformation of the raw features."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def _var_scope_name(self) -> str:
        """The variable scope of the column's variables (its name, unless shared)."""
        return self.name

    def _transform_feature(self, inputs):
        """The column's intermediate representation built from ``inputs`` (a ``_LazyBuilder``)."""
        raise NotImplementedError

    @property
    def _parse_example_spec(self) -> dict:
        raise NotImplementedError

    @property
    def parse_example_spec(self) -> dict:
        return self._parse_example_spec

    @property
    def parents(self) -> list:
        return []

    def _reset_config(self):
        """Resets per-model state of the column (none by default)."""

    # Columns sort among other objects (e.g. as dict keys) by their text, as in TensorFlow.
    def __lt__(self, other):
        return str(self) < str(other)

    def __gt__(self, other):
        return str(self) > str(other)


class DenseColumn(FeatureColumn):
    """A column represented by a dense tensor ``[batch] + _variable_shape``."""

    @property
    def _variable_shape(self):
        raise NotImplementedError

    @property
    def variable_shape(self):
        return self._variable_shape

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        raise NotImplementedError


IdWeightPair = collections.namedtuple("IdWeightPair", ["id_tensor", "weight_tensor"])


class CategoricalColumn(FeatureColumn):
    """A column represented by sparse ids (and optional weights)."""

    IdWeightPair = IdWeightPair

    @property
    def _num_buckets(self) -> int:
        raise NotImplementedError

    @property
    def num_buckets(self) -> int:
        return self._num_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        raise NotImplementedError


# ---------------------------------------------------------------------------- transformation cache
def _assert_positive_rank(rank, key, feature):
    message = f"Feature (key: {key}) cannot have rank 0. Given: {feature}"
    with name_scope(None, "assert_positive", [rank]):
        zero = convert_to_tensor(0, dtype=rank.dtype)
        with name_scope(None, "assert_less", [zero, rank]):
            ok = math_ops.reduce_all(math_ops.less(zero, rank))
            return control_flow_ops.Assert(ok, [message, "Condition x > 0 did not hold element-wise:",
                                                f"x ({rank.name}) = ", rank])


class _LazyBuilder:
    """Builds each raw feature and each column's transformation once per model function call.

    A string key gives the raw feature (rank 1 expanded to ``[batch, 1]``); a column key gives the
    column's ``_transform_feature`` output, cached so shared inputs (a bucketized column used alone
    and in a cross) are transformed once.
    """

    def __init__(self, features):
        self._features = dict(features)
        self._feature_tensors = {}

    def get(self, key):
        if key in self._feature_tensors:
            return self._feature_tensors[key]
        if key in self._features:
            tensor = self._get_raw_feature_as_tensor(key)
            self._feature_tensors[key] = tensor
            return tensor
        if isinstance(key, str):
            raise ValueError(f"Feature {key} is not in features dictionary.")
        if not isinstance(key, FeatureColumn):
            raise TypeError(f'"key" must be either a "str" or "_FeatureColumn". Provided: {key}')
        transformed = key._transform_feature(self)
        if transformed is None:
            raise ValueError(f"Column {key.name} is not supported.")
        self._feature_tensors[key] = transformed
        return transformed

    def _get_raw_feature_as_tensor(self, key):
        feature = convert_to_tensor_or_sparse_tensor(self._features[key])

        def expand_dims(t):
            if isinstance(t, SparseTensor):
                return sparse_ops.sparse_reshape(t, [array_ops.shape(t)[0], 1])
            return array_ops.expand_dims(t, -1)

        rank = feature.get_shape().ndims
        if rank is not None:
            if rank == 0:
                raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {feature}")
            return feature if rank != 1 else expand_dims(feature)
        # Unknown rank: decided when the graph runs.
        with get_default_graph().control_dependencies([_assert_positive_rank(array_ops.rank(feature), key,
                                                                             feature)]):
            return control_flow_ops.cond(math_ops.equal(1, array_ops.rank(feature)),
                                         lambda: expand_dims(feature), lambda: feature)


def to_sparse_input_and_drop_ignore_values(input_tensor, ignore_value=None):
    """``input_tensor`` as a SparseTensor without its ``ignore_value`` cells ('' for strings, -1 for
    integers, 0 otherwise); a SparseTensor is returned as it is."""
    input_tensor = convert_to_tensor_or_sparse_tensor(input_tensor)
    if isinstance(input_tensor, SparseTensor):
        return input_tensor
    with name_scope(None, "to_sparse_input", (input_tensor,)):
        if ignore_value is None:
            if input_tensor.dtype == dtypes.string:
                ignore_value = ""
            elif input_tensor.dtype.is_integer:
                ignore_value = -1
            else:
                ignore_value = input_tensor.dtype.as_numpy_dtype()
        ignore_value = math_ops.cast(ignore_value, input_tensor.dtype, name="ignore_value")
        indices = math_ops.where_v2(math_ops.not_equal(input_tensor, ignore_value), name="indices")
        return SparseTensor(indices=indices, values=array_ops.gather_nd(input_tensor, indices, name="values"),
                            dense_shape=array_ops.shape(input_tensor, out_type=dtypes.int64, name="dense_shape"))


def normalize_feature_columns(feature_columns) -> list:
    """``feature_columns`` as a list, checked: non-empty, all columns, no two with one name."""
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, collections.abc.Iterator):
        feature_columns = list(feature_columns)
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(f"Items of feature_columns must be a _FeatureColumn. Given (type "
                             f"{type(column)}): {column}.")
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    by_name = {}
    for column in feature_columns:
        if column.name in by_name:
            raise ValueError(f"Duplicate feature column name found for columns: {column} and "
                             f"{by_name[column.name]}. This usually means that these columns refer to same "
                             f"base feature. Either one must be discarded or a duplicated but renamed item "
                             f"must be inserted in features dict.")
        by_name[column.name] = column
    return list(feature_columns)


def verify_static_batch_size_equality(tensors, columns):
    """Raises ValueError if two outputs have different known batch sizes."""
    expected, first = None, None
    for i, t in enumerate(tensors):
        size = Dimension(t.shape[0].value if t.shape.ndims else None)
        if size.value is None:
            continue
        if expected is None:
            expected, first = size, i
        elif not expected.is_compatible_with(size):
            raise ValueError(f"Batch size (first dimension) of each feature must be same. Batch size of "
                             f"columns ({columns[first].name}, {columns[i].name}): ({expected}, {size})")


def assert_key_is_string(key):
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")


def assert_string_or_int(dtype, prefix):
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {dtype}.")
