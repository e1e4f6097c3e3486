"""What a Saver saves: SaveableObjects made of SaveSpecs (tensor, slice spec, checkpoint name).

A variable is one SaveableObject with one spec; anything else that owns state (an embedding
table's shards, say) becomes saveable by subclassing :class:`SaveableObject`: list the tensors
to write in ``specs`` and build the ops that load them back in ``restore``. Put such objects in a
Saver's ``var_list`` or in the ``GraphKeys.SAVEABLE_OBJECTS`` collection.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.Variable(1.0, name="a")
    ...     b = tf.Variable(2.0, name="b")
    ...     sorted(op_list_to_dict([b, a]))
    ['a', 'b']
"""

from __future__ import annotations

from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.ops import state_ops
from sparseflow._src.ops.partitioned_variable import PartitionedVariable
from sparseflow._src.ops.variables import Variable

__all__ = ["SaveSpec", "SaveableObject", "ReferenceVariableSaveable", "op_list_to_dict",
           "validate_and_slice_inputs", "all_saveable_objects"]

_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable")


class SaveSpec:
    """One tensor to save: its value ``tensor``, its ``slice_spec`` ("" = whole) and checkpoint ``name``."""

    def __init__(self, tensor, slice_spec, name, dtype=None, device=None):
        self.tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        self.dtype = (dtype or tensor.dtype).base_dtype
        self.device = device if device is not None else getattr(tensor, "device", "")


class SaveableObject:
    """Something a Saver can save (``specs``) and restore (``restore`` returns the op that loads it)."""

    def __init__(self, op, specs, name):
        self.op = op
        self.specs = specs
        self.name = name

    @property
    def device(self):
        return self.specs[0].device if self.specs else ""

    def restore(self, restored_tensors, restored_shapes):
        """The op that stores ``restored_tensors`` (one per spec) into this object."""
        raise NotImplementedError

    def check_restored(self, restored_tensors, restored_shapes) -> list:
        """Ops that fail when ``restored_tensors`` cannot be stored into this object. A Saver runs
        the checks of every object before any ``restore`` op, so a refused restore changes nothing.

        By default a restored tensor must have its spec's static shape when that is fully known
        (with ``restored_shapes``, a Saver that reshapes: the same number of elements).
        """
        from sparseflow._src.ops import array_ops

        checks = []
        for spec, restored in zip(self.specs, restored_tensors):
            get_shape = getattr(spec.tensor, "get_shape", None)
            static = get_shape() if get_shape is not None else None
            if static is None or not static.is_fully_defined():
                continue
            if restored_shapes is None:
                checks.append(array_ops.ensure_shape(restored, static).op)
            else:
                checks.append(array_ops.reshape(restored, static.as_list()).op)
        return checks

    # True for objects that read the checkpoint themselves (``restore_from_checkpoint``) instead of
    # having the Saver read ``specs`` by name: an embedding table saved shard by shard, whose saved
    # names depend on how many shards it had then, so that it restores into any number of shards.
    reads_checkpoint = False

    def restore_from_checkpoint(self, filename_tensor, validate_only: bool = False):
        """For objects that read the checkpoint themselves: the op that restores this object from
        the checkpoint ``filename_tensor`` (a prefix), or with ``validate_only`` the ops that fail
        when it cannot be restored from it (a Saver runs them with every ``check_restored``, before
        any restore)."""
        raise NotImplementedError(f"{type(self).__name__} reads its checkpoint by name (reads_checkpoint is False).")


class ReferenceVariableSaveable(SaveableObject):
    """A TF1 reference variable (its VariableV2 ref tensor), saved whole or as one slice."""

    def __init__(self, var, slice_spec, name):
        super().__init__(var, [SaveSpec(var, slice_spec, name)], name)

    def restore(self, restored_tensors, restored_shapes):
        restored = restored_tensors[0]
        if restored_shapes is not None:
            from sparseflow._src.ops import array_ops

            restored = array_ops.reshape(restored, restored_shapes[0])
        return state_ops.assign(self.op, restored,
                                validate_shape=restored_shapes is None and self.op.get_shape().is_fully_defined())


def _is_variable_tensor(t) -> bool:
    return isinstance(t, Tensor) and t.op.type in _VARIABLE_OPS


def _flatten(items):
    for x in items:
        if isinstance(x, (list, tuple)):
            yield from _flatten(x)
        else:
            yield x


def op_list_to_dict(op_list):
    """``{checkpoint name: variable}`` for a list of variables (keyed by op name, or by full name for
    partitions), PartitionedVariables and SaveableObjects (keyed by their name)."""
    if not isinstance(op_list, (list, tuple, set)):
        raise TypeError(f"Variables to save should be passed in a dict or a list: {op_list}")
    op_list = sorted(_flatten(list(op_list)), key=lambda x: x.name)
    out = {}
    for var in op_list:
        if isinstance(var, (SaveableObject, PartitionedVariable)):
            name = var.name
        elif isinstance(var, Variable) and var._get_save_slice_info() is not None:
            name = var._get_save_slice_info().full_name
            if name in out:
                if not isinstance(out[name], list):
                    raise ValueError(f"Mixing slices and non-slices with the same name: {name}")
                out[name].append(var)
            else:
                out[name] = [var]
            continue
        else:
            tensor = var._ref() if isinstance(var, Variable) else var
            if not _is_variable_tensor(tensor):
                raise TypeError(f"Variable to save is not a Variable: {var}")
            name = tensor.op.name
        if name in out:
            raise ValueError(f"At least two variables have the same name: {name}")
        out[name] = var
    return out


def _saveables_for(op, name):
    if isinstance(op, SaveableObject):
        yield op
        return
    if isinstance(op, (list, tuple, PartitionedVariable)):
        full_name = None
        for v in op:
            info = v._get_save_slice_info() if isinstance(v, Variable) else None
            if info is None:
                raise ValueError(f"Slices of '{name}' must be variables with save slice info, got {v}.")
            if full_name not in (None, info.full_name):
                raise ValueError(f"Slices saved as '{name}' must all be from the same tensor, but come from "
                                 f"'{full_name}' and '{info.full_name}'.")
            full_name = info.full_name
            yield ReferenceVariableSaveable(v._ref(), info.spec, name)
        return
    tensor = op._ref() if isinstance(op, Variable) else op
    if not _is_variable_tensor(tensor):
        raise TypeError(f"names_to_saveables must be a dict mapping string names to Tensors/Variables. Not a "
                        f"variable: {op}")
    spec = ""
    if isinstance(op, Variable) and op._get_save_slice_info() is not None:
        spec = op._get_save_slice_info().spec
    yield ReferenceVariableSaveable(tensor, spec, name)


def validate_and_slice_inputs(names_to_saveables):
    """The SaveableObjects of a var_list (dict or list), sorted by checkpoint name; the same
    variable under two names is a ValueError."""
    if not isinstance(names_to_saveables, dict):
        names_to_saveables = op_list_to_dict(names_to_saveables)
    saveables, seen = [], set()
    for name, op in sorted(names_to_saveables.items(), key=lambda kv: kv[0]):
        if not isinstance(name, str):
            raise TypeError(f"Checkpoint names in a var_list dict must be strings, got {name!r}.")
        for s in _saveables_for(op, name):
            key = id(s.op)
            if key in seen:
                raise ValueError(f"The same saveable will be restored with two names: {s.name}")
            seen.add(key)
            saveables.append(s)
    return saveables


def all_saveable_objects(scope=None):
    """Global variables plus the SAVEABLE_OBJECTS collection: what ``Saver()`` saves by default."""
    g = get_default_graph()
    return g.get_collection(GraphKeys.GLOBAL_VARIABLES, scope) + g.get_collection(GraphKeys.SAVEABLE_OBJECTS, scope)
