"""``tf.saved_model.builder.SavedModelBuilder`` and ``tf.saved_model.simple_save`` (TF1).

The first MetaGraphDef is added with the session's variables (``add_meta_graph_and_variables``),
saved in TensorFlow's checkpoint format as ``variables/variables``, restorable by the graph's own
SaverDef (RestoreV2) in TensorFlow; further tag-sets share them
(``add_meta_graph``). ``save()`` writes ``saved_model.pb`` (or ``.pbtxt``).

Example:
    >>> import os, tempfile
    >>> import sparseflow as tf
    >>> export_dir = os.path.join(tempfile.mkdtemp(), "model")
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.placeholder(tf.float32, [None, 2], name="x")
    ...     w = tf.Variable([[1.0], [2.0]], name="w")
    ...     sess.run(tf.global_variables_initializer())
    ...     tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": tf.matmul(x, w)})
    >>> sorted(os.listdir(export_dir)), sorted(os.listdir(os.path.join(export_dir, "variables")))
    (['saved_model.pb', 'variables'], ['variables.data-00000-of-00001', 'variables.index'])
"""

from __future__ import annotations

import os

from google.protobuf import any_pb2, text_format

from sparseflow._src.framework import errors, file_io, tf_logging
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.proto import meta_graph_pb2, saved_model_pb2
from sparseflow._src.framework.tensor_util import constant_value
from sparseflow._src.training.checkpoint.saver import Saver
from sparseflow._src.training.saved_model import constants
from sparseflow._src.training.saved_model.signature_def_utils import predict_signature_def
from sparseflow._src.training.saved_model.tf_tensor_bundle import write_tf_bundle

__all__ = ["SavedModelBuilder", "simple_save"]


def _asset_source(asset_tensor):
    if not isinstance(asset_tensor, Tensor):
        raise TypeError(f"Asset path tensor must be a Tensor, got {asset_tensor!r}.")
    if asset_tensor.op.type != "Const":
        raise TypeError(f"Asset path tensor {asset_tensor.name} must be of type constant, not "
                        f"{asset_tensor.op.type}.")
    value = constant_value(asset_tensor)
    path = value.reshape(-1)[0] if value is not None and value.size else None
    if path is None:
        raise TypeError(f"Asset path tensor {asset_tensor.name} holds no file name.")
    return path.decode() if isinstance(path, bytes) else str(path)


def _asset_filename(source, taken):
    """The file's basename, suffixed ``_1``, ``_2``, ... when another file already took it."""
    name = os.path.basename(source)
    if name not in taken or taken[name] == source:
        return name
    stem, ext = os.path.splitext(name)
    i = 1
    while f"{stem}_{i}{ext}" in taken and taken[f"{stem}_{i}{ext}"] != source:
        i += 1
    return f"{stem}_{i}{ext}"


def _check_tensor_info(info):
    if info is None:
        raise AssertionError("All TensorInfo protos used in the SignatureDefs must have the name and dtype fields "
                             "set.")
    if info.WhichOneof("encoding") is None:
        raise AssertionError(f"Invalid `tensor_info`: {info}: all TensorInfo protos used in the SignatureDefs must "
                             f"have one of the 'encoding' fields (e.g., name or coo_sparse) set.")
    if info.dtype == 0:
        raise AssertionError(f"Invalid `tensor_info`: {info}: all TensorInfo protos used in the SignatureDefs must "
                             f"have the dtype field set.")


def _save_variables(sess, prefix):
    """Writes the global variables, keyed by name, as a TensorFlow-format checkpoint at ``prefix``."""
    from sparseflow._src.ops.variables import global_variables

    variables = global_variables()
    for v in variables:
        if getattr(v, "_save_slice_info", None) is not None:
            raise ValueError(f"SavedModelBuilder: variable {v.op.name} is a partition of a PartitionedVariable; "
                             f"SavedModels of partitioned variables are not written yet. Export a graph whose "
                             f"variables are not partitioned.")
    if sess.graph.get_collection(GraphKeys.SAVEABLE_OBJECTS):
        raise ValueError("SavedModelBuilder: the graph has saveable objects (e.g. mutable tables) besides variables; "
                         "their state is not written to SavedModels yet.")
    values = sess.run(variables) if variables else []
    write_tf_bundle(prefix, {v.op.name: value for v, value in zip(variables, values)})


class SavedModelBuilder:
    """Builds a SavedModel in ``export_dir`` (which must not exist or be empty)."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        if file_io.Exists(self._export_dir):
            if file_io.ListDirectory(self._export_dir):
                raise AssertionError(f"Export directory already exists, and isn't empty. Please choose a different "
                                     f"export directory, or delete all the contents of the specified directory: "
                                     f"{self._export_dir}")
        else:
            file_io.MakeDirs(self._export_dir)
        self._saved_model = saved_model_pb2.SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._has_saved_variables = False
        self._copied_assets: dict[str, str] = {}

    # ------------------------------------------------------------------ pieces
    @staticmethod
    def _validate_signature_def_map(signature_def_map):
        for sig in signature_def_map.values():
            for info in list(sig.inputs.values()) + list(sig.outputs.values()):
                _check_tensor_info(info)
        for reserved in (constants.INIT_OP_SIGNATURE_KEY, constants.TRAIN_OP_SIGNATURE_KEY):
            if reserved in signature_def_map:
                raise KeyError(f'SignatureDef map key "{reserved}" is reserved for initialization. Please use a '
                               f"different key.")

    def _save_assets(self, assets_collection):
        """Records each asset path constant in the ``saved_model_assets`` collection and copies the file."""
        if not assets_collection:
            tf_logging.info("No assets to save.")
            return
        graph = get_default_graph()
        taken: dict[str, str] = {}
        for asset_tensor in assets_collection:
            source = _asset_source(asset_tensor)
            filename = _asset_filename(source, taken)
            taken[filename] = source
            record = meta_graph_pb2.AssetFileDef(filename=filename)
            record.tensor_info.name = asset_tensor.name
            packed = any_pb2.Any(type_url=constants.ASSET_FILE_DEF_TYPE_URL, value=record.SerializeToString())
            graph.add_to_collection(constants.ASSETS_KEY, packed)
        assets_dir = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY)
        file_io.MakeDirs(assets_dir)
        for filename, source in taken.items():
            destination = os.path.join(assets_dir, filename)
            if not file_io.Exists(destination):
                file_io.Copy(source, destination)
                self._copied_assets[filename] = source

    @staticmethod
    def _add_main_op(main_op):
        if main_op is None:
            return
        if not isinstance(main_op, Operation):
            raise TypeError(f"main_op needs to be an Operation: {main_op!r}")
        graph = get_default_graph()
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            if graph.get_collection(key):
                raise ValueError(f"Graph already contains one or more main ops under the collection {key}.")
        graph.add_to_collection(constants.MAIN_OP_KEY, main_op)

    @staticmethod
    def _saver(saver):
        return saver or Saver(sharded=True, allow_empty=True)

    def _tag_and_add(self, meta_graph_def, tags, signature_def_map):
        for tag in tags:
            meta_graph_def.meta_info_def.tags.append(tag)
        for key, sig in signature_def_map.items():
            meta_graph_def.signature_def[key].CopyFrom(sig)
        self._saved_model.meta_graphs.add().CopyFrom(meta_graph_def)

    # ------------------------------------------------------------------ API
    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, assets_collection=None,
                                     legacy_init_op=None, clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Saves the session's variables and adds the graph under ``tags`` with its signatures."""
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been saved. Please invoke "
                                 "`add_meta_graph()` instead.")
        signature_def_map = dict(signature_def_map or {})
        self._validate_signature_def_map(signature_def_map)
        with sess.graph.as_default():
            self._save_assets(assets_collection)
            self._add_main_op(main_op if main_op is not None else legacy_init_op)
            variables_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
            file_io.MakeDirs(variables_dir)
            saver = self._saver(saver)
            _save_variables(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME))
            meta_graph_def = saver.export_meta_graph(clear_devices=clear_devices,
                                                     strip_default_attrs=strip_default_attrs)
        self._tag_and_add(meta_graph_def, tags, signature_def_map)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None, legacy_init_op=None,
                       clear_devices=False, main_op=None, strip_default_attrs=False, saver=None):
        """Adds the default graph under another tag-set, sharing the variables already saved."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved yet. Please invoke "
                                 "`add_meta_graph_and_variables()` first.")
        signature_def_map = dict(signature_def_map or {})
        self._validate_signature_def_map(signature_def_map)
        self._save_assets(assets_collection)
        self._add_main_op(main_op if main_op is not None else legacy_init_op)
        meta_graph_def = self._saver(saver).export_meta_graph(clear_devices=clear_devices,
                                                              strip_default_attrs=strip_default_attrs)
        self._tag_and_add(meta_graph_def, tags, signature_def_map)

    def save(self, as_text=False):
        """Writes ``saved_model.pb`` (``saved_model.pbtxt`` with ``as_text``); returns its path."""
        if not file_io.Exists(self._export_dir):
            file_io.MakeDirs(self._export_dir)
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            contents = text_format.MessageToString(self._saved_model).encode("utf-8")
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            contents = self._saved_model.SerializeToString(deterministic=True)
        try:
            file_io.atomic_write_string_to_file(path, contents)
        except OSError as e:
            raise errors.UnknownError(None, None, f"Could not write the SavedModel to {path}: {e}") from e
        tf_logging.info("SavedModel written to: %s", path)
        return path


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """Saves a serving SavedModel of ``session``: one ``serve`` MetaGraphDef whose
    ``serving_default`` predict signature maps the ``inputs`` / ``outputs`` dicts of tensors."""
    signature_def_map = {constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(inputs, outputs)}
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(session, tags=[constants.SERVING], signature_def_map=signature_def_map,
                                         assets_collection=session.graph.get_collection(GraphKeys.ASSET_FILEPATHS),
                                         main_op=legacy_init_op, clear_devices=True)
    builder.save()
