"""Lookup tables (TensorFlow's ``lookup_ops``): static hash tables initialized from tensors or text
files, vocabulary tables with out-of-vocabulary hash buckets, and ``tf.tables_initializer``.

The ops are TensorFlow's (HashTableV2, LookupTableFindV2, LookupTableImportV2, InitializeTableV2,
InitializeTableFromTextFileV2, LookupTableSizeV2, LookupTableExportV2); a table is a resource of
the session's device, created on first use of its HashTableV2 node and filled by the initializer
op, which ``tf.tables_initializer()`` groups. Out-of-vocabulary keys hash with FarmHash
Fingerprint64 (``string_to_hash_bucket_fast``, integers through their decimal string), so the ids
equal TensorFlow's.

Example:
    >>> import sparseflow as tf
    >>> from sparseflow._src.ops import lookup_ops
    >>> with tf.Graph().as_default():
    ...     table = lookup_ops.index_table_from_tensor(["a", "b"], num_oov_buckets=1)
    ...     ids = table.lookup(tf.constant(["b", "a", "zzz"]))
    ...     with tf.Session() as sess:
    ...         _ = sess.run(lookup_ops.tables_initializer())
    ...         sess.run(ids).tolist()
    [1, 0, 2]
"""

from __future__ import annotations

import collections
import functools
import uuid

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import GraphKeys, get_default_graph, name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.ops import array_ops, core_ops, math_ops, string_ops

__all__ = ["tables_initializer", "initialize_all_tables"]


LOOKUP_OP_TYPES = ("HashTableV2", "LookupTableFindV2", "LookupTableImportV2", "InitializeTableV2",
                   "InitializeTableFromTextFileV2", "LookupTableSizeV2", "LookupTableExportV2")

_TABLE_ATTRS = ["container: string = ''", "shared_name: string = ''", "use_node_name_sharing: bool = false",
                "key_dtype: type", "value_dtype: type"]


def _scalar(op):
    return [TensorShape([])]


def _find_shape(op):
    return [op.inputs[1].shape.concatenate(op.inputs[2].shape)]


register_op("HashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS, shape_fn=_scalar,
            is_stateful=True)
register_op("LookupTableFindV2", inputs=["table_handle: resource", "keys: Tin", "default_value: Tout"],
            outputs=["values: Tout"], attrs=["Tin: type", "Tout: type"], shape_fn=_find_shape)
def _keys_values_shape(op):
    keys, values = op.inputs[1].shape, op.inputs[2].shape
    if not keys.is_compatible_with(values):
        raise ValueError(f"Shapes of keys {keys} and values {values} of {op.type} must be equal")
    return []


register_op("LookupTableImportV2", inputs=["table_handle: resource", "keys: Tin", "values: Tout"],
            attrs=["Tin: type", "Tout: type"], shape_fn=_keys_values_shape, is_stateful=True)
register_op("InitializeTableV2", inputs=["table_handle: resource", "keys: Tkey", "values: Tval"],
            attrs=["Tkey: type", "Tval: type"], shape_fn=_keys_values_shape, is_stateful=True)
register_op("InitializeTableFromTextFileV2", inputs=["table_handle: resource", "filename: string"],
            attrs=["key_index: int >= -2", "value_index: int >= -2", "vocab_size: int >= -1 = -1",
                   "delimiter: string = '\t'", "offset: int = 0"], shape_fn=lambda op: [], is_stateful=True)
register_op("LookupTableSizeV2", inputs=["table_handle: resource"], outputs=["size: int64"], shape_fn=_scalar)
register_op("LookupTableExportV2", inputs=["table_handle: resource"], outputs=["keys: Tkeys", "values: Tvalues"],
            attrs=["Tkeys: type", "Tvalues: type"], shape_fn=lambda op: [TensorShape([None])] * 2)


def tables_initializer(name="init_all_tables"):
    """One op that runs every table initializer of the graph (a NoOp if there are none)."""
    initializers = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return core_ops.group(*initializers, name=name)
    return core_ops.no_op(name=name)


initialize_all_tables = tables_initializer


def _check_table_dtypes(table, key_dtype, value_dtype):
    if key_dtype.base_dtype != table.key_dtype:
        raise TypeError(f"Invalid key dtype for table, expected {table.key_dtype.name} but got "
                        f"{key_dtype.name}.")
    if value_dtype.base_dtype != table.value_dtype:
        raise TypeError(f"Invalid value dtype for table, expected {table.value_dtype.name} but got "
                        f"{value_dtype.name}.")


# ---------------------------------------------------------------------------- tables
class LookupInterface:
    """A table from keys of ``key_dtype`` to values of ``value_dtype`` that lives across steps."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)

    @property
    def name(self):
        raise NotImplementedError

    def lookup(self, keys, name=None):
        raise NotImplementedError

    def __getitem__(self, keys):
        return self.lookup(keys)


class TableInitializerBase:
    """What fills a table: its key and value dtypes and the op that initializes it."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)
    _shared_name = property(lambda self: "")

    def initialize(self, table):
        raise NotImplementedError


class KeyValueTensorInitializer(TableInitializerBase):
    """Fills a table with ``keys[i] -> values[i]`` (1-D tensors or Python lists)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
        self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name if name is not None else "key_value_init"
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        _check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        with name_scope(self._name, values=(table.resource_handle, self._keys, self._values)):
            init_op = apply_op("LookupTableImportV2", [table.resource_handle, self._keys, self._values],
                               name="LookupTableImportV2")
        get_default_graph().add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


class TextFileIndex:
    """Which part of a vocabulary line is the key or the value."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer(TableInitializerBase):
    """Fills a table from a text file, one entry per line (``TextFileIndex`` or a column number
    split at ``delimiter`` picks the key and the value)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None,
                 delimiter="\t", name=None, value_index_offset=0):
        key_dtype, value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)
        if filename is None or (isinstance(filename, (str, bytes)) and not filename):
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        if key_index < -2 or value_index < -2:
            raise ValueError(f"`key_index` and `value_index` should be >= -2, received: {key_index}, "
                             f"{value_index}.")
        for index, dtype, what in ((key_index, key_dtype, "key"), (value_index, value_dtype, "value")):
            if index == TextFileIndex.LINE_NUMBER and dtype != dtypes.int64:
                raise ValueError(f"`{what}_dtype` must be int64 if `{what}_index` is "
                                 f"{TextFileIndex.LINE_NUMBER}, received: {dtype.name}")
            if index == TextFileIndex.WHOLE_LINE and not dtype.is_integer and dtype != dtypes.string:
                raise ValueError(f"`{what}_dtype` should be either integer or string for `{what}_index` "
                                 f"{TextFileIndex.WHOLE_LINE}, received: {dtype.name}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename = filename
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter, self._name = vocab_size, delimiter, name
        self._offset = value_index_offset
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        _check_table_dtypes(table, self.key_dtype, self.value_dtype)
        with name_scope(self._name, "text_file_init", (table.resource_handle,)):
            filename = convert_to_tensor(self._filename, dtypes.string, name="asset_filepath")
            init_op = apply_op("InitializeTableFromTextFileV2", [table.resource_handle, filename],
                               {"key_index": self._key_index, "value_index": self._value_index,
                                "vocab_size": -1 if self._vocab_size is None else self._vocab_size,
                                "delimiter": self._delimiter, "offset": self._offset},
                               name="InitializeTableFromTextFileV2")
        get_default_graph().add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op

    @property
    def _shared_name(self):
        parts = [str(self._filename)] + ([str(self._vocab_size)] if self._vocab_size else [])
        parts += [str(self._key_index), str(self._value_index)] + ([str(self._offset)] if self._offset else [])
        return "hash_table_" + "_".join(parts)


class StaticHashTable(LookupInterface):
    """A table that is immutable once its initializer has run; missing keys give ``default_value``.

    The initializer op is added to ``GraphKeys.TABLE_INITIALIZERS`` (run it with
    ``tf.tables_initializer()``); looking up before it ran is a FailedPreconditionError.
    """

    def __init__(self, initializer, default_value, name=None):
        from sparseflow._src.ops.variables import init_scope

        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._initializer = initializer
        self._shared_name = initializer._shared_name or f"hash_table_{uuid.uuid4()}"
        self._name = name or "hash_table"
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._default_value.shape.merge_with(TensorShape([]))
        with init_scope():
            self._resource_handle = apply_op(
                "HashTableV2", [], {"shared_name": self._shared_name, "key_dtype": self._key_dtype,
                                    "value_dtype": self._value_dtype}, name=self._name).outputs[0]
        self._table_name = self._resource_handle.op.name.split("/")[-1]
        self._init_op = self._initialize()

    def _initialize(self):
        return self._initializer.initialize(self)

    resource_handle = property(lambda self: self._resource_handle)
    name = property(lambda self: self._table_name)
    default_value = property(lambda self: self._default_value)
    initializer = property(lambda self: self._init_op)
    init = initializer

    def size(self, name=None):
        """The number of entries (an int64 scalar)."""
        with name_scope(name, f"{self.name}_Size", [self.resource_handle]):
            return apply_op("LookupTableSizeV2", [self.resource_handle], name="LookupTableSizeV2").outputs[0]

    def lookup(self, keys, name=None):
        """The value of each key (``default_value`` for missing keys); a SparseTensor in, one out."""
        key_tensor = keys.values if isinstance(keys, SparseTensor) else convert_to_tensor(keys)
        if key_tensor.dtype.base_dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype.name}, received: "
                            f"{key_tensor.dtype.name}")
        with name_scope(name, f"{self.name}_Lookup", (self.resource_handle, key_tensor, self._default_value)):
            values = apply_op("LookupTableFindV2", [self.resource_handle, key_tensor, self._default_value],
                              name="LookupTableFindV2").outputs[0]
        values.set_shape(key_tensor.shape)
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, values, keys.dense_shape)
        return values

    def export(self, name=None):
        """``(keys, values)``: every entry of the table."""
        with name_scope(name, f"{self.name}_Export", [self.resource_handle]):
            op = apply_op("LookupTableExportV2", [self.resource_handle],
                          {"Tkeys": self._key_dtype, "Tvalues": self._value_dtype}, name="LookupTableExportV2")
        return op.outputs[0], op.outputs[1]


HashTable = StaticHashTable


# ---------------------------------------------------------------------------- out-of-vocabulary buckets
HasherSpec = collections.namedtuple("HasherSpec", ["hasher", "key"])
FastHashSpec = HasherSpec("fasthash", None)


def StrongHashSpec(key):  # noqa: N802 - TensorFlow's public name
    """The keyed SipHash hasher (``key``: two integers)."""
    if len(key) != 2:
        raise ValueError(f"`key` must have size 2, received {len(key)}")
    return HasherSpec("stronghash", tuple(int(k) for k in key))


def _as_string(tensor):
    return tensor if tensor.dtype.base_dtype == dtypes.string else string_ops.as_string(tensor)


class IdTableWithHashBuckets(LookupInterface):
    """A string (or integer) to id table whose misses go to ``num_oov_buckets`` hash buckets after
    the table's ids: ``hash(key) % num_oov_buckets + table.size()``. Without a table, every key
    is hashed."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None, key_dtype=None):
        if name:
            name = name.rstrip("/")
        if table:
            key_dtype = table.key_dtype if key_dtype is None else dtypes.as_dtype(key_dtype)
            if table.key_dtype not in (dtypes.int64, dtypes.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of (int64, string), received "
                                f"{table.key_dtype.name}.")
            if table.key_dtype.is_integer != key_dtype.is_integer:
                raise TypeError(f"Invalid `key dtype`, expected {'integer' if key_dtype.is_integer else 'non-integer'}"
                                f" but got {table.key_dtype.name}.")
            if table.value_dtype != dtypes.int64:
                raise TypeError(f"Invalid `value_dtype`: expected int64 but got {table.value_dtype.name}.")
            name = name or table.name
        else:
            if num_oov_buckets <= 0:
                raise ValueError("`oov_buckets` must be > 0 if no `table` is supplied.")
            key_dtype = dtypes.string if key_dtype is None else dtypes.as_dtype(key_dtype)
            name = name or "hash_bucket"
        if not key_dtype.is_integer and key_dtype != dtypes.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got {key_dtype.name}.")
        if not isinstance(hasher_spec, HasherSpec):
            raise TypeError(f"`hasher_spec` must be of type HasherSpec, got {type(hasher_spec).__name__}.")
        self._table, self._num_oov_buckets, self._hasher_spec = table, num_oov_buckets, hasher_spec
        self._table_name = name.split("/")[-1] if name else None
        super().__init__(key_dtype, dtypes.int64)

    name = property(lambda self: self._table_name)
    resource_handle = property(lambda self: None if self._table is None else self._table.resource_handle)

    @property
    def initializer(self):
        if self._table is not None:
            return self._table.initializer
        with name_scope(None, "init"):
            return core_ops.no_op()

    init = initializer

    def size(self, name=None):
        with name_scope(name, f"{self.name}_Size"):
            tsize = self._table.size() if self._table else convert_to_tensor(0, dtype=dtypes.int64)
            return tsize + self._num_oov_buckets

    def _hash_fn(self):
        if self._hasher_spec.hasher == "fasthash":
            return string_ops.string_to_hash_bucket_fast
        if self._hasher_spec.hasher == "legacy":
            return string_ops.string_to_hash_bucket
        if self._hasher_spec.hasher == "stronghash":
            return functools.partial(string_ops.string_to_hash_bucket_strong, key=self._hasher_spec.key)
        raise ValueError(f"Found unknown hasher {self._hasher_spec.hasher} in `hasher_spec`")

    def lookup(self, keys, name=None):
        """Table ids of known keys, hash bucket ids of the others; a SparseTensor in, one out."""
        if keys.dtype.base_dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype.name}, received: "
                            f"{keys.dtype.name}")
        values = keys.values if isinstance(keys, SparseTensor) else keys
        if self._table and self._table.key_dtype.base_dtype == dtypes.int64:
            values = math_ops.cast(values, dtypes.int64)
        if self._num_oov_buckets == 0:
            ids = self._table.lookup(values, name=name)
        else:
            with name_scope(name, f"{self.name}_Lookup"):
                buckets = self._hash_fn()(_as_string(values), num_buckets=self._num_oov_buckets,
                                          name="hash_bucket")
                if self._table:
                    ids = self._table.lookup(values)
                    buckets = math_ops.add(buckets, self._table.size())
                    is_id_non_default = math_ops.not_equal(ids, self._table.default_value)
                    ids = math_ops.where_v2(is_id_non_default, ids, buckets)
                else:
                    ids = buckets
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, ids, keys.dense_shape)
        return ids


# ---------------------------------------------------------------------------- vocabulary tables
def _check_oov(num_oov_buckets, dtype):
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater or equal than 0, got {num_oov_buckets}.")
    if not dtype.is_integer and dtype != dtypes.string:
        raise TypeError("`dtype` must either be integer or string.")


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1, hasher_spec=FastHashSpec,
                            dtype=dtypes.string, name=None):
    """A table mapping each element of ``vocabulary_list`` to its index (int64); other keys map to
    ``default_value``, or to one of ``num_oov_buckets`` hash buckets after the vocabulary."""
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` must be specified.")
    dtype = dtypes.as_dtype(dtype)
    _check_oov(num_oov_buckets, dtype)
    with name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Invalid `dtype`: Expected {'integer' if dtype.is_integer else 'non-integer'}, "
                             f"got {keys.dtype.name}.")
        if not dtype.is_integer and keys.dtype.base_dtype != dtype:
            raise ValueError(f"Invalid `dtype`: Expected {dtype.name}, got {keys.dtype.name}.")
        num_elements = array_ops.size(keys)
        values = math_ops.cast(array_ops.range(num_elements), dtypes.int64)
        with name_scope(None, "hash_table"):
            table_keys = math_ops.cast(keys, dtypes.int64) if keys.dtype.is_integer else keys
            init = KeyValueTensorInitializer(table_keys, values, table_keys.dtype.base_dtype, dtypes.int64,
                                             name="table_init")
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets, hasher_spec=hasher_spec,
                                           key_dtype=dtype)
        return table


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None, default_value=-1,
                          hasher_spec=FastHashSpec, key_dtype=dtypes.string, name=None,
                          key_column_index=TextFileIndex.WHOLE_LINE,
                          value_column_index=TextFileIndex.LINE_NUMBER, delimiter="\t"):
    """A table mapping each line of ``vocabulary_file`` (the first ``vocab_size`` lines) to its line
    number; other keys map to ``default_value`` or to ``num_oov_buckets`` hash buckets."""
    if not vocabulary_file:
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    key_dtype = dtypes.as_dtype(key_dtype)
    _check_oov(num_oov_buckets, key_dtype)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    with name_scope(name, "string_to_index"):
        table_key_dtype = dtypes.int64 if key_dtype.is_integer else key_dtype
        init = TextFileInitializer(vocabulary_file, table_key_dtype, key_column_index, dtypes.int64,
                                   value_column_index, vocab_size=vocab_size, delimiter=delimiter,
                                   name="text_file_id_table_init")
        table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets, hasher_spec=hasher_spec,
                                           key_dtype=key_dtype)
        return table


def index_to_string_table_from_tensor(vocabulary_list, default_value="UNK", name=None):
    """A table mapping index ``i`` (int64) to ``vocabulary_list[i]``; other indices give
    ``default_value``."""
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` argument must be specified.")
    with name_scope(name, "index_to_string"):
        vocabulary_list = convert_to_tensor(vocabulary_list, dtypes.string)
        num_elements = array_ops.size(vocabulary_list)
        keys = math_ops.cast(array_ops.range(num_elements), dtypes.int64)
        init = KeyValueTensorInitializer(keys, vocabulary_list, dtypes.int64, dtypes.string, name="table_init")
        return StaticHashTable(init, default_value)
