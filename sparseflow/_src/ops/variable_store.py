"""The variable store behind ``tf.get_variable``: the variables of a graph by full name, with the
reuse checks, default initializers and regularization losses of TF1's ``_VariableStore``.

``variable_scope.py`` holds the scopes and the public functions; this module only creates and
finds variables. With a partitioner a variable is made as shards ``<name>/part_<i>`` (see
partitioned_variables.py for the shard sizes) returned together as a PartitionedVariable.
"""

from __future__ import annotations

import enum
import functools
import inspect

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.framework.tensor_shape import as_shape
from sparseflow._src.ops import init_ops
from sparseflow._src.ops import partitioned_variables as pv
from sparseflow._src.ops.partitioned_variable import PartitionedVariable
from sparseflow._src.ops.variables import Variable, init_scope


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized (ON_READ variables are never trainable)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How updates of a distributed variable are aggregated."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3


def _trainable_default(synchronization, trainable, name):
    on_read = synchronization == VariableSynchronization.ON_READ
    if on_read and trainable:
        raise ValueError(f"Synchronization value can be set to VariableSynchronization.ON_READ only for "
                         f"non-trainable variables. You have specified trainable=True and synchronization="
                         f"VariableSynchronization.ON_READ for variable {name}.")
    return (not on_read) if trainable is None else trainable


def _arg_names(fn):
    """``fn``'s positional-or-keyword parameter names, whether it takes ``**kwargs``, and how many of
    the positional parameters have no default."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return [], False, 0
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                   and p.default is p.empty)
    return names, any(p.kind == p.VAR_KEYWORD for p in params), required


def _format_sites(var) -> str:
    return "".join(f'  File "{s.filename}", line {s.lineno}, in {s.function}\n' for s in var.op.traceback)


# ---------------------------------------------------------------------- the variable store
class _VariableStore:
    """The variables made by ``get_variable`` in one graph, by full name."""

    def __init__(self):
        self._vars: dict = {}
        self._partitioned_vars: dict = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        dtype = getattr(dtype, "base_dtype", dtype)

        def true_getter(name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                        trainable=None, collections=None, caching_device=None, partitioner=None,
                        validate_shape=True, use_resource=None, constraint=None,
                        synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
            is_scalar = shape is not None and isinstance(shape, (list, tuple)) and not shape
            partitioned_args = (name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
                                caching_device, validate_shape, constraint, synchronization, aggregation)
            if partitioner is not None and not is_scalar:
                if not callable(partitioner):
                    raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
                with get_default_graph().name_scope(None):
                    return self._get_partitioned_variable(partitioner, *partitioned_args)
            if reuse is True and partitioner is None and name in self._partitioned_vars:
                return self._get_partitioned_variable(None, *partitioned_args)
            if f"{name}/part_0" in self._vars:
                raise ValueError(f"No partitioner was provided, but a partitioned version of the variable was "
                                 f"found: {name}/part_0. Perhaps a variable of the same name was already created "
                                 f"with partitioning?")
            return self._get_single_variable(name, shape, dtype, initializer, regularizer, reuse, trainable,
                                             collections, caching_device, validate_shape, constraint,
                                             synchronization, aggregation)

        trainable = _trainable_default(synchronization, trainable, name)
        kwargs = dict(name=name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                      reuse=reuse, trainable=trainable, collections=collections, caching_device=caching_device,
                      partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                      synchronization=synchronization, aggregation=aggregation)
        if custom_getter is None:
            return true_getter(constraint=constraint, **kwargs)
        names, has_kwargs, _ = _arg_names(custom_getter)
        if "constraint" in names or has_kwargs:
            kwargs["constraint"] = constraint
        return custom_getter(getter=true_getter, **kwargs)

    def _get_partitioned_variable(self, partitioner, name, shape, dtype, initializer, regularizer, reuse,
                                  trainable, collections, caching_device, validate_shape, constraint,
                                  synchronization, aggregation):
        """The PartitionedVariable ``name`` (shards ``name/part_<i>``), found or created."""
        if name in self._vars:
            raise ValueError(f"A partitioner was provided, but an unpartitioned version of the variable was found: "
                             f"{name}.  Perhaps a variable of the same name was already created without "
                             f"partitioning?")
        dtype = dtypes.as_dtype(dtype)
        shape = as_shape(shape)
        from_tensor = isinstance(initializer, Tensor)
        if from_tensor:
            shape = shape.merge_with(initializer.get_shape())
        partitions = None
        if not reuse or partitioner:
            partitions = pv.call_partitioner(partitioner, shape, dtype, name)
        if name in self._partitioned_vars:
            return self._existing_partitioned(name, shape, dtype, partitions, reuse)
        if reuse is True:
            raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with tf.get_variable(). "
                             f"Did you mean to set reuse=False or reuse=tf.AUTO_REUSE in VarScope?")
        slice_dim, num_slices = pv.slice_dim_and_count(partitions)
        if f"{name}/part_0" in self._vars:
            if f"{name}/part_{num_slices - 1}" not in self._vars:
                raise ValueError(f"Partitioner returned a different partitioning than what was already found.  "
                                 f"Partitioner returned {num_slices} shards, and shard {name}/part_0 was found, but "
                                 f"{name}/part_{num_slices - 1} was not.")
            if f"{name}/part_{num_slices}" in self._vars:
                raise ValueError(f"Partitioner returned a different partitioning than what was already found.  "
                                 f"Partitioner returned {num_slices} shards, and shard {name}/part_0 was found, but "
                                 f"so was the extra shard {name}/part_{num_slices}.")
        g = get_default_graph()
        shards = []
        for i, (offset, part_shape) in enumerate(pv.iter_slices(shape.as_list(), num_slices, slice_dim)):
            info = pv.PartitionInfo(full_shape=shape.as_list(), var_offset=offset)
            part_name = f"{name}/part_{i}"
            with g.name_scope(part_name + "/PartitionedInitializer"):
                if initializer is None:
                    init, init_shape = _default_initializer(name, dtype), part_shape
                elif callable(initializer):
                    init, init_shape = initializer, part_shape
                else:  # a value: each shard gets its slice
                    from sparseflow._src.ops import array_slice_ops

                    value = initializer if from_tensor else convert_to_tensor(initializer, dtype=dtype)
                    init, init_shape = array_slice_ops.slice(value, offset, part_shape), None
                    dtype = init.dtype.base_dtype
            with g.name_scope(None):
                var = self._get_single_variable(part_name, init_shape, dtype, init, regularizer, reuse, trainable,
                                                collections, caching_device, validate_shape, constraint,
                                                synchronization, aggregation, partition_info=info)
            var._set_save_slice_info(Variable.SaveSliceInfo(name, shape.as_list(), offset, part_shape))
            shards.append(var)
        result = PartitionedVariable(name=name, shape=shape, dtype=dtype, variable_list=shards,
                                     partitions=partitions)
        self._partitioned_vars[name] = result
        return result

    def _existing_partitioned(self, name, shape, dtype, partitions, reuse):
        if reuse is False:
            raise ValueError(f"Partitioned variable with name {name} already exists. Did you mean to set reuse=True "
                             f"or reuse=tf.AUTO_REUSE in VarScope?")
        found = self._partitioned_vars[name]
        if not shape.is_compatible_with(found.get_shape()):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape {shape} and found "
                             f"shape {found.get_shape()}.")
        if not dtype.is_compatible_with(found.dtype):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified dtype {dtype.name} and "
                             f"found dtype {found.dtype.name}.")
        if partitions is not None and found._get_partitions() != partitions:
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified partitions {partitions} "
                             f"and found partitions {found._get_partitions()}.")
        return found

    def _get_single_variable(self, name, shape, dtype, initializer, regularizer, reuse, trainable, collections,
                             caching_device, validate_shape, constraint, synchronization, aggregation,
                             partition_info=None):
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        shape = as_shape(shape)
        if name in self._vars:
            found = self._vars[name]
            if reuse is False:
                msg = (f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                       f"reuse=tf.AUTO_REUSE in VarScope?")
                raise ValueError(f"{msg} Originally defined at:\n\n{_format_sites(found)}")
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} and found shape "
                                 f"{found.get_shape()}.")
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} and found "
                                 f"dtype {found.dtype.name}.")
            return found
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). Did "
                             f"you mean to set reuse=tf.AUTO_REUSE in VarScope?")
        if initializer is None:
            initializer = _default_initializer(name, dtype)
        with init_scope():
            if from_value:
                init_val, variable_dtype = initializer, None
            else:
                if inspect.isclass(initializer):
                    initializer = initializer()
                names, _, required = _arg_names(initializer)
                if shape.is_fully_defined():
                    args = (shape.as_list(),)
                    kw = {"dtype": dtype}
                    if "partition_info" in names:
                        kw["partition_info"] = partition_info
                    init_val = functools.partial(initializer, *args, **kw)
                    variable_dtype = dtype.base_dtype
                elif required == 0:
                    init_val, variable_dtype = initializer, None
                else:
                    raise ValueError("The initializer passed is not valid. It should be a callable with no "
                                     "arguments and the shape should not be provided or an instance of "
                                     "`tf.keras.initializers.*' and `shape` should be fully defined.")
        v = Variable(initial_value=init_val, name=name, trainable=trainable, collections=collections,
                     caching_device=caching_device, dtype=variable_dtype, validate_shape=validate_shape,
                     constraint=constraint, synchronization=synchronization, aggregation=aggregation)
        self._vars[name] = v
        if regularizer:
            g = get_default_graph()
            with g.colocate_with(v.op), g.name_scope(name + "/Regularizer/"):
                loss = regularizer(v)
            if loss is not None:
                g.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _default_initializer(name, dtype):
    """glorot_uniform for floating variables, zeros for integers, booleans and strings."""
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.base_dtype} is required")
