"""``tf.train.Saver``: saves and restores variables through graph ops (SaveV2 / RestoreV2).

Like TensorFlow, ``Saver()`` adds to the graph (under the name scope ``save``): the filename
tensor ``save/Const`` (a PlaceholderWithDefault), ``save/SaveV2`` whose output gate is
``save/control_dependency``, and ``save/RestoreV2`` feeding ``save/Assign*`` ops grouped as
``save/restore_all``. The SaverDef naming them goes into every exported MetaGraphDef, so
``import_meta_graph`` gives back a working Saver. ``save(sess, "dir/model.ckpt", global_step=100)``
writes the bundle ``dir/model.ckpt-100.{index,data-00000-of-00001}`` (atomically, checksummed;
see bundle.py), rewrites the ``checkpoint`` state file, deletes checkpoints beyond
``max_to_keep`` and writes ``dir/model.ckpt-100.meta``.

With ``sharded=True`` each device holding variables writes its own bundle
``<prefix>-SSSSS-of-NNNNN`` and ``save/MergeV2Checkpoints`` merges them into ``<prefix>``
(data files renamed, merged index written last).

Example:
    >>> import os, tempfile
    >>> import sparseflow as tf
    >>> d = tempfile.mkdtemp()
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable([1.0, 2.0], name="v")
    ...     saver = tf.train.Saver()
    ...     with tf.Session() as sess:
    ...         sess.run(v.initializer)
    ...         path = saver.save(sess, os.path.join(d, "model.ckpt"), global_step=7)
    >>> os.path.basename(path), sorted(os.listdir(d))[:2]
    ('model.ckpt-7', ['checkpoint', 'model.ckpt-7.data-00000-of-00001'])
"""

from __future__ import annotations

import collections
import glob
import os
import re
import time

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.device_spec import DeviceSpec, canonical_name
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.proto.saver_pb2 import SaverDef
from sparseflow._src.ops import constant_op, core_ops, io_ops
from sparseflow._src.training.checkpoint import checkpoint_management as cm
from sparseflow._src.training.checkpoint.saveable import all_saveable_objects, validate_and_slice_inputs

__all__ = ["Saver", "BaseSaverBuilder", "BulkSaverBuilder", "SaverDef"]


def _set_cpu0(device: str) -> str:
    spec = DeviceSpec.from_string(device)
    return DeviceSpec(spec.job, spec.replica, spec.task, "CPU", 0).to_string()


def prepend_name_scope(name: str, scope: str | None) -> str:
    """``scope/name`` for op/tensor names (``^op`` and ``loc:@op`` keep their marker)."""
    if not scope:
        return name
    scope = scope.rstrip("/")
    for marker in ("^", "loc:@"):
        if name.startswith(marker):
            return marker + scope + "/" + name[len(marker):]
    return scope + "/" + name


def strip_name_scope(name: str, scope: str | None) -> str:
    """``name`` without a leading ``scope/`` (``^op`` and ``loc:@op`` keep their marker)."""
    if not scope:
        return name
    scope = scope.rstrip("/") + "/"
    for marker in ("^", "loc:@", ""):
        if name.startswith(marker + scope):
            return marker + name[len(marker) + len(scope):]
    return name


def _with_dependencies(dependencies, output_tensor, name=None):
    g = get_default_graph()
    with g.name_scope(name or "control_dependency") as scope, g.colocate_with(output_tensor.op):
        with g.control_dependencies(dependencies):
            return core_ops.identity(output_tensor, name=scope)


class BaseSaverBuilder:
    """Builds a Saver's graph: save and restore ops for a list of SaveableObjects."""

    def __init__(self, write_version=SaverDef.V2):
        if write_version != SaverDef.V2:
            raise ValueError("sparseflow writes only the V2 checkpoint format (tensor bundles).")
        self._write_version = write_version

    def save_op(self, filename_tensor, saveables):
        names, tensors, slices = [], [], []
        for saveable in saveables:
            for spec in saveable.specs:
                names.append(spec.name)
                tensors.append(spec.tensor)
                slices.append(spec.slice_spec)
        return io_ops.save_v2(filename_tensor, names, slices, tensors)

    def bulk_restore(self, filename_tensor, saveables, preferred_shard, restore_sequentially):
        del preferred_shard, restore_sequentially
        out = []
        g = get_default_graph()
        for saveable in saveables:
            with g.device(_set_cpu0(saveable.device) if saveable.device else None):
                for spec in saveable.specs:
                    out.extend(io_ops.restore_v2(filename_tensor, [spec.name], [spec.slice_spec], [spec.dtype]))
        return out

    def _add_save_ops(self, filename_tensor, saveables):
        return _with_dependencies([self.save_op(filename_tensor, saveables)], filename_tensor)

    def _add_restore_ops(self, filename_tensor, saveables, restore_sequentially, reshape, preferred_shard=-1,
                         name="restore_all"):
        restored = self._restored_tensors(filename_tensor, saveables, restore_sequentially, preferred_shard)
        gate = _checks_gate([(saveables, restored)], reshape, filename_tensor)
        return core_ops.group(*_restore_after(gate, saveables, restored, reshape, filename_tensor), name=name)

    def _restored_tensors(self, filename_tensor, saveables, restore_sequentially, preferred_shard):
        """The restored tensors of each saveable (one list per saveable; none for saveables that
        read the checkpoint themselves)."""
        by_name = [s for s in saveables if not s.reads_checkpoint]
        tensors = self.bulk_restore(filename_tensor, by_name, preferred_shard, restore_sequentially) if by_name else []
        out, idx = [], 0
        for saveable in saveables:
            if saveable.reads_checkpoint:
                out.append([])
                continue
            out.append(tensors[idx:idx + len(saveable.specs)])
            idx += len(saveable.specs)
        return out

    def _group_by_devices(self, saveables):
        per_device = collections.defaultdict(list)
        for saveable in saveables:
            devices = {canonical_name(spec.device) for spec in saveable.specs}
            if len(devices) != 1:
                raise ValueError(f"All tensors of a saveable object must be on the same device: {saveable.name}")
            per_device[devices.pop()].append(saveable)
        return sorted(per_device.items(), key=lambda t: t[0])

    def _add_sharded_save_ops(self, checkpoint_prefix, per_device):
        g = get_default_graph()
        num_shards = len(per_device)
        num_shards_tensor = constant_op.constant(num_shards, name="num_shards")
        saves, prefixes, last_device = [], [], None
        for shard, (device, saveables) in enumerate(per_device):
            last_device = device
            with g.device(_set_cpu0(device)):
                shard_prefix = io_ops.sharded_filename(checkpoint_prefix, shard, num_shards_tensor)
                prefixes.append(shard_prefix)
                saves.append(self._add_save_ops(shard_prefix, saveables))
        with g.control_dependencies([x.op for x in saves]), g.device(_set_cpu0(last_device)):
            merge = io_ops.merge_v2_checkpoints(prefixes, checkpoint_prefix, delete_old_dirs=True)
            with g.control_dependencies([merge]):
                return core_ops.identity(checkpoint_prefix)

    def _add_sharded_restore_ops(self, filename_tensor, per_device, restore_sequentially, reshape):
        g = get_default_graph()
        restored = []
        for shard, (device, saveables) in enumerate(per_device):
            with g.device(device):
                restored.append(self._restored_tensors(filename_tensor, saveables, restore_sequentially, shard))
        gate = _checks_gate([(saveables, r) for (_, saveables), r in zip(per_device, restored)], reshape,
                            filename_tensor)
        shards = []
        for (device, saveables), r in zip(per_device, restored):
            with g.device(device):
                shards.append(core_ops.group(*_restore_after(gate, saveables, r, reshape, filename_tensor),
                                             name="restore_shard"))
        return core_ops.group(*shards, name="restore_all")

    def build(self, names_to_saveables, reshape=False, sharded=False, max_to_keep=5,
              keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, filename="model"):
        """Adds the save/restore ops for ``names_to_saveables``; returns their SaverDef."""
        saveables = validate_and_slice_inputs(names_to_saveables)
        if max_to_keep is None:
            max_to_keep = 0
        g = get_default_graph()
        with g.name_scope(name or "save"):
            filename_tensor = constant_op.placeholder_with_default(filename or "model", shape=(), name="filename")
            filename_tensor = constant_op.placeholder_with_default(filename_tensor, shape=(), name="Const")
            if sharded:
                per_device = self._group_by_devices(saveables)
                save_tensor = self._add_sharded_save_ops(filename_tensor, per_device)
                restore_op = self._add_sharded_restore_ops(filename_tensor, per_device, restore_sequentially,
                                                           reshape)
            else:
                save_tensor = self._add_save_ops(filename_tensor, saveables)
                restore_op = self._add_restore_ops(filename_tensor, saveables, restore_sequentially, reshape)
        return SaverDef(filename_tensor_name=filename_tensor.name, save_tensor_name=save_tensor.name,
                        restore_op_name=restore_op.name, max_to_keep=max_to_keep, sharded=sharded,
                        keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours, version=self._write_version)


def _restored_shapes(saveable, reshape):
    from sparseflow._src.ops import array_ops

    if not reshape:
        return None
    return [spec.tensor.get_shape() if spec.tensor.get_shape().is_fully_defined() else array_ops.shape(spec.tensor)
            for spec in saveable.specs]


def _checks_gate(groups, reshape, filename_tensor):
    """One op that runs after every restored tensor is read and every saveable's
    ``check_restored`` passed (``restore_from_checkpoint(validate_only=True)`` for saveables that
    read the checkpoint themselves): restores wait for it, so a refused restore assigns nothing."""
    g = get_default_graph()
    waits = []
    for saveables, restored in groups:
        for saveable, tensors in zip(saveables, restored):
            waits.extend(t.op for t in tensors)
            with g.device(_set_cpu0(saveable.device) if saveable.device else None):
                if saveable.reads_checkpoint:
                    waits.extend(saveable.restore_from_checkpoint(filename_tensor, validate_only=True))
                else:
                    waits.extend(saveable.check_restored(tensors, _restored_shapes(saveable, reshape)))
    return core_ops.group(*waits, name="restore_checked")


def _restore_after(gate, saveables, restored, reshape, filename_tensor):
    g = get_default_graph()
    with g.control_dependencies([gate]):
        return [saveable.restore_from_checkpoint(filename_tensor) if saveable.reads_checkpoint else
                saveable.restore(tensors, _restored_shapes(saveable, reshape))
                for saveable, tensors in zip(saveables, restored)]


class BulkSaverBuilder(BaseSaverBuilder):
    """Restores every tensor with one RestoreV2 op (TensorFlow's default builder)."""

    def bulk_restore(self, filename_tensor, saveables, preferred_shard, restore_sequentially):
        del preferred_shard, restore_sequentially
        specs = [(spec.name, spec.slice_spec, spec.dtype) for s in saveables for spec in s.specs]
        names, slices, dts = zip(*specs)
        with get_default_graph().device("/device:CPU:0"):
            return io_ops.restore_v2(filename_tensor, list(names), list(slices), list(dts))


_KEY_RE = re.compile(r"Key (\S+) not found in checkpoint[^\n]*?(?: \(also missing: ([^)]*)\))?$", re.MULTILINE)


class Saver:
    """Saves and restores variables (TensorFlow 1.x ``tf.train.Saver``)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=SaverDef.V2,
                 pad_step_number=False, save_relative_paths=False, filename=None):
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either set defer_build=False "
                             "or var_list=None.")
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._builder = builder
        self._is_built = False
        self._allow_empty = allow_empty
        self._is_empty = None
        self._write_version = write_version
        self._pad_step_number = pad_step_number
        self._filename = filename
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._key_to_variable: dict[str, str] = {}
        self._save_relative_paths = save_relative_paths
        if not defer_build:
            self.build()
        if self.saver_def:
            self._check_saver_def()
            self._write_version = self.saver_def.version

    # ------------------------------------------------------------------ building
    def build(self):
        if self._is_built:
            return
        self._is_built = True
        if not self.saver_def:
            if self._builder is None:
                self._builder = BulkSaverBuilder(self._write_version)
            if self._var_list is None:
                self._var_list = all_saveable_objects()
            if isinstance(self._var_list, (list, tuple, dict)) and not self._var_list:
                if self._allow_empty:
                    self._is_empty = True
                    return
                raise ValueError("No variables to save")
            self._is_empty = False
            self.saver_def = self._builder.build(
                self._var_list, reshape=self._reshape, sharded=self._sharded, max_to_keep=self._max_to_keep,
                keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours, name=self._name,
                restore_sequentially=self._restore_sequentially, filename=self._filename)
            self._remember_names()
        elif self._name:
            self.saver_def.filename_tensor_name = prepend_name_scope(self.saver_def.filename_tensor_name, self._name)
            self.saver_def.save_tensor_name = prepend_name_scope(self.saver_def.save_tensor_name, self._name)
            self.saver_def.restore_op_name = prepend_name_scope(self.saver_def.restore_op_name, self._name)
        self._check_saver_def()
        self._next_checkpoint_time = time.time() + self.saver_def.keep_checkpoint_every_n_hours * 3600

    def _remember_names(self):
        items = self._var_list.items() if isinstance(self._var_list, dict) else \
            ((None, v) for v in self._var_list)
        for key, v in items:
            for var in (v if isinstance(v, (list, tuple)) else [v]):
                vname = getattr(var, "name", str(var))
                k = key if key is not None else getattr(getattr(var, "op", None), "name", vname)
                self._key_to_variable.setdefault(k, vname)

    def _check_saver_def(self):
        if not isinstance(self.saver_def, SaverDef):
            raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {self.saver_def}")
        if not self.saver_def.save_tensor_name:
            raise ValueError(f"saver_def must specify the save_tensor_name: {self.saver_def}")
        if not self.saver_def.restore_op_name:
            raise ValueError(f"saver_def must specify the restore_op_name: {self.saver_def}")

    def as_saver_def(self):
        return self.saver_def

    def to_proto(self, export_scope=None):
        """The SaverDef (names relative to ``export_scope``; None when they lie outside it)."""
        if export_scope is None:
            return self.saver_def
        d = self.saver_def
        if not all(n.startswith(export_scope) for n in (d.filename_tensor_name, d.save_tensor_name,
                                                         d.restore_op_name)):
            return None
        out = SaverDef()
        out.CopyFrom(d)
        out.filename_tensor_name = strip_name_scope(out.filename_tensor_name, export_scope)
        out.save_tensor_name = strip_name_scope(out.save_tensor_name, export_scope)
        out.restore_op_name = strip_name_scope(out.restore_op_name, export_scope)
        return out

    @staticmethod
    def from_proto(saver_def, import_scope=None):
        return Saver(saver_def=saver_def, name=import_scope)

    # ------------------------------------------------------------------ retention
    @property
    def last_checkpoints(self) -> list[str]:
        """Checkpoint prefixes not yet deleted, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        assert isinstance(last_checkpoints, list)
        self._last_checkpoints = [(s, np.inf) for s in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        assert isinstance(last_checkpoints_with_time, list)
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Resumes retention of ``checkpoint_paths`` (those that exist, with their mtimes) after a restart."""
        found = []
        for p in checkpoint_paths:
            mtimes = cm.get_checkpoint_mtimes([p])
            if mtimes:
                found.append((p, mtimes[0]))
        self.set_last_checkpoints_with_time(found)

    def _record_last_checkpoint(self, latest_save_path):
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != latest_save_path]
        self._last_checkpoints.append((latest_save_path, time.time()))
        if len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix="meta"):
        if not self._checkpoints_to_be_deleted:
            return
        path, stamp = self._checkpoints_to_be_deleted.pop(0)
        if stamp > self._next_checkpoint_time:
            self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
            return
        try:
            cm.remove_checkpoint(path, self.saver_def.version, meta_graph_suffix)
        except Exception as e:  # noqa: BLE001 - deletion failures never fail a save
            logging.warning("Ignoring: %s", e)

    # ------------------------------------------------------------------ save / restore
    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Saves the variables; returns the checkpoint prefix (None for an empty saver)."""
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if isinstance(save_path, bytes):
            save_path = save_path.decode("utf-8")
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = int(sess.run(global_step))
            fmt = "%s-%08d" if self._pad_step_number else "%s-%d"
            checkpoint_file = fmt % (save_path, int(global_step))
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': '{latest_filename}' and "
                                 f"'{save_path}'")
        if not hasattr(sess, "run") or not hasattr(sess, "graph"):
            raise TypeError(f"'sess' must be a Session; {sess}")
        parent = os.path.dirname(save_path)
        model_checkpoint_path = None
        if not self._is_empty:
            try:
                out = sess.run(self.saver_def.save_tensor_name, {self.saver_def.filename_tensor_name: checkpoint_file})
                out = out.item() if isinstance(out, np.ndarray) else out
                model_checkpoint_path = out.decode("utf-8") if isinstance(out, bytes) else str(out)
                if write_state:
                    self._record_last_checkpoint(model_checkpoint_path)
                    cm.update_checkpoint_state(parent, model_checkpoint_path, self.last_checkpoints,
                                               latest_filename=latest_filename,
                                               save_relative_paths=self._save_relative_paths)
                    self._maybe_delete_old_checkpoints(meta_graph_suffix)
            except (errors.FailedPreconditionError, errors.NotFoundError) as exc:
                self._remove_shard_leftovers(checkpoint_file)
                if parent and not os.path.isdir(parent):
                    raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.") from exc
                raise
            except BaseException:
                self._remove_shard_leftovers(checkpoint_file)
                raise
        if write_meta_graph:
            with sess.graph.as_default():
                self.export_meta_graph(cm.meta_graph_filename(checkpoint_file, meta_graph_suffix),
                                       strip_default_attrs=strip_default_attrs)
        return model_checkpoint_path

    def _remove_shard_leftovers(self, checkpoint_file):
        """After a failed sharded save: deletes the per-device bundles that were never merged."""
        if self.saver_def.sharded:
            for path in glob.glob(glob.escape(checkpoint_file) + "-[0-9][0-9][0-9][0-9][0-9]-of-[0-9]*"):
                if ".tempstate" not in path:
                    try:
                        os.remove(path)
                    except OSError:
                        pass

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False, export_scope=None,
                          clear_devices=False, clear_extraneous_savers=False, strip_default_attrs=False,
                          save_debug_info=False):
        """Writes (when ``filename`` is given) and returns the MetaGraphDef of the default graph."""
        from sparseflow._src.training.checkpoint import meta_graph

        return meta_graph.export_meta_graph(
            filename=filename, graph_def=get_default_graph().as_graph_def(add_shapes=True), saver_def=self.saver_def,
            collection_list=collection_list, as_text=as_text, export_scope=export_scope, clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers, strip_default_attrs=strip_default_attrs)

    def restore(self, sess, save_path):
        """Restores the variables from the checkpoint ``save_path`` (a prefix, e.g. from latest_checkpoint).

        All or nothing: every tensor is read and checked against its variable before any is
        assigned, so a refused restore leaves every variable as it was.
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if isinstance(save_path, bytes):
            save_path = save_path.decode("utf-8")
        if not cm.checkpoint_exists(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: " + save_path)
        logging.info("Restoring parameters from %s", save_path)
        try:
            sess.run(self.saver_def.restore_op_name, {self.saver_def.filename_tensor_name: save_path})
        except errors.NotFoundError as err:
            raise self._restore_error(err, "a Variable name or other graph key that is missing", save_path,
                                      sess) from err
        except errors.InvalidArgumentError as err:
            raise self._restore_error(err, "a mismatch between the current graph and the graph", save_path,
                                      sess) from err

    def _restore_error(self, err, verbiage, save_path, sess):
        found = _failed_check(sess.graph, err, save_path, self._key_to_variable)
        if found:
            head = f"Restoring from checkpoint {save_path} failed: {found} Nothing was restored."
        else:
            head = (f"Restoring from checkpoint {save_path} failed. This is most likely due to {verbiage} from the "
                    f"checkpoint. Please ensure that you have not altered the graph expected based on the "
                    f"checkpoint. Nothing was restored.")
        msg = f"{head} Original error:\n\n{err.message}"
        m = _KEY_RE.search(err.message)
        if m:
            keys = [m.group(1)] + [k.strip() for k in (m.group(2) or "").split(",") if k.strip()]
            named = [f"'{k}' (for variable {self._key_to_variable[k]})" if k in self._key_to_variable else f"'{k}'"
                     for k in keys]
            msg += "\nMissing from the checkpoint: " + ", ".join(named)
        return type(err)(err.node_def, err.op, msg)


def _failed_check(graph, err, save_path, key_to_variable) -> str | None:
    """What a failed restore check (an EnsureShape or Reshape after RestoreV2) refused, in words:
    the checkpoint key, its variable, and both shapes; None when the failure was elsewhere."""
    from sparseflow._src.framework.tensor_bundle import BundleReader
    from sparseflow._src.framework.tensor_util import constant_value

    name = getattr(err.op, "name", None)
    try:
        op = graph.get_operation_by_name(name) if name else None
    except (KeyError, ValueError):
        return None
    if op is None or op.type not in ("EnsureShape", "Reshape") or not op.inputs:
        return None
    src = op.inputs[0]
    if src.op.type != "RestoreV2":
        return None
    names = constant_value(src.op.inputs[1])
    if names is None:
        return None
    key = np.asarray(names, dtype=object).reshape(-1)[src.value_index]
    key = key.decode("utf-8") if isinstance(key, bytes) else str(key)
    want = op._attrs["shape"] if op.type == "EnsureShape" else constant_value(op.inputs[1])
    want = want.as_list() if hasattr(want, "as_list") else [int(d) for d in np.asarray(want).reshape(-1)]
    try:
        with BundleReader(save_path) as r:
            have = r.shape(key)
    except errors.OpError:
        have = "another shape"
    var = key_to_variable.get(key)
    what = f"variable {var}" if var else "its variable"
    how = "has" if op.type == "EnsureShape" else "has a different number of elements than"
    return (f"the checkpoint holds '{key}' with shape {have}, but {what} {how} shape {want} in this graph. "
            f"Build the graph as it was when the checkpoint was saved, or leave this variable out of the Saver's "
            f"var_list.")


def _get_saver_or_default():
    """The Saver of the SAVERS collection, or a new sharded one added to it."""
    savers = get_default_graph().get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one to "
                               f"use by passing it to the constructor.")
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    get_default_graph().add_to_collection(GraphKeys.SAVERS, saver)
    return saver
