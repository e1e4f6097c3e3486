"""``tf.saved_model.loader.load``: a SavedModel's MetaGraphDef for a tag-set into a session.

Loading imports the graph (and its collections) into ``sess.graph``, restores the variables
from ``variables/variables``, and runs the main op (or legacy init op, or the
``__saved_model_init_op`` signature of TF2-written TF1 graphs) with asset tensors fed their
paths under ``assets/``. It returns the MetaGraphDef, whose ``signature_def`` names the tensors.

Example:
    >>> import os, tempfile
    >>> import sparseflow as tf
    >>> export_dir = os.path.join(tempfile.mkdtemp(), "model")
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     v = tf.Variable(3.0, name="v")
    ...     sess.run(tf.global_variables_initializer())
    ...     tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": x * v})
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
    ...     sig = meta.signature_def["serving_default"]
    ...     print(sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: [1.0, 2.0]}))
    [3. 6.]
"""

from __future__ import annotations

import os

from google.protobuf import message, text_format

from sparseflow._src.framework import errors, file_io, tf_logging
from sparseflow._src.framework.proto import meta_graph_pb2, saved_model_pb2
from sparseflow._src.training.checkpoint.meta_graph import import_meta_graph
from sparseflow._src.training.checkpoint.saver import Saver
from sparseflow._src.training.saved_model import constants
from sparseflow._src.training.saved_model.signature_def_utils import get_element_from_tensor_info
from sparseflow._src.training.saved_model.tf_tensor_bundle import is_tf_bundle, read_tf_bundle

__all__ = ["load", "maybe_saved_model_directory", "contains_saved_model", "SavedModelLoader"]


def _pb_path(export_dir):
    return os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)


def _pbtxt_path(export_dir):
    return os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)


def maybe_saved_model_directory(export_dir):
    """Whether ``export_dir`` holds a ``saved_model.pb`` or ``saved_model.pbtxt``."""
    export_dir = os.fspath(export_dir)
    return file_io.Exists(_pb_path(export_dir)) or file_io.Exists(_pbtxt_path(export_dir))


contains_saved_model = maybe_saved_model_directory


def parse_saved_model(export_dir):
    """The SavedModel proto of ``export_dir`` (binary preferred, else text)."""
    pb, pbtxt = _pb_path(export_dir), _pbtxt_path(export_dir)
    saved_model = saved_model_pb2.SavedModel()
    if file_io.Exists(pb):
        with file_io.GFile(pb, "rb") as f:
            data = f.read()
        try:
            saved_model.ParseFromString(data)
        except message.DecodeError as e:
            raise OSError(f"Cannot parse file {pb}: {e}.") from None
    elif file_io.Exists(pbtxt):
        with file_io.GFile(pbtxt, "r") as f:
            text = f.read()
        try:
            text_format.Merge(text, saved_model, allow_unknown_field=True)
        except text_format.ParseError as e:
            raise OSError(f"Cannot parse file {pbtxt}: {e}.") from None
    else:
        raise OSError(f"SavedModel file does not exist at: {export_dir}{os.sep}"
                      f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|{constants.SAVED_MODEL_FILENAME_PB}}}")
    return saved_model


def _asset_feeds(export_dir, meta_graph_def, import_scope):
    """``{asset tensor name: path under assets/}`` from the assets collection and ``asset_file_def``."""
    records = []
    if constants.ASSETS_KEY in meta_graph_def.collection_def:
        for packed in meta_graph_def.collection_def[constants.ASSETS_KEY].any_list.value:
            if not packed.type_url.endswith("AssetFileDef"):
                raise ValueError(f"The {constants.ASSETS_KEY} collection holds a {packed.type_url}, not an "
                                 f"AssetFileDef.")
            records.append(meta_graph_pb2.AssetFileDef.FromString(packed.value))
    records.extend(meta_graph_def.asset_file_def)
    feeds = {}
    for record in records:
        name = record.tensor_info.name
        if import_scope:
            name = f"{import_scope}/{name}"
        feeds[name] = os.path.join(export_dir, constants.ASSETS_DIRECTORY, record.filename)
    return feeds


def _init_op(meta_graph_def, import_scope):
    if constants.INIT_OP_SIGNATURE_KEY in meta_graph_def.signature_def:
        sig = meta_graph_def.signature_def[constants.INIT_OP_SIGNATURE_KEY]
        return get_element_from_tensor_info(sig.outputs[constants.INIT_OP_SIGNATURE_KEY], import_scope=import_scope)
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        if key in meta_graph_def.collection_def:
            names = meta_graph_def.collection_def[key].node_list.value
            if len(names) != 1:
                raise RuntimeError(f"Expected exactly one SavedModel main op. Found: {list(names)}")
            from sparseflow._src.framework.graph import get_default_graph

            name = f"{import_scope}/{names[0]}" if import_scope else names[0]
            return get_default_graph().as_graph_element(name)
    return None


def _restore_from_tf_bundle(sess, prefix, variables, import_scope):
    """Loads each variable from TensorFlow's checkpoint at ``prefix`` (all checked before any is set)."""
    values = read_tf_bundle(prefix)
    plan = []
    for v in variables:
        key = v.op.name
        if import_scope and key.startswith(import_scope + "/"):
            key = key[len(import_scope) + 1:]
        if key not in values:
            raise errors.NotFoundError(None, None, f"Key {key} not found in checkpoint {prefix} (the SavedModel's "
                                                   f"variables do not match its graph).")
        value = values[key]
        if not v.get_shape().is_compatible_with(value.shape):
            raise errors.InvalidArgumentError(None, None, f"Variable {v.op.name} has shape {v.get_shape()} but the "
                                                          f"checkpoint {prefix} holds shape {list(value.shape)}.")
        plan.append((v, value))
    for v, value in plan:
        v.load(value, sess)


class SavedModelLoader:
    """Loads the MetaGraphDefs of one SavedModel directory."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        self._variables_path = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY,
                                            constants.VARIABLES_FILENAME)
        self._saved_model = parse_saved_model(self._export_dir)

    export_dir = property(lambda self: self._export_dir)
    variables_path = property(lambda self: self._variables_path)
    saved_model = property(lambda self: self._saved_model)

    def get_meta_graph_def_from_tags(self, tags):
        available = []
        for meta_graph_def in self._saved_model.meta_graphs:
            available.append(set(meta_graph_def.meta_info_def.tags))
            if set(meta_graph_def.meta_info_def.tags) == set(tags):
                return meta_graph_def
        raise RuntimeError(f"MetaGraphDef associated with tags {str(list(tags)).strip('[]')} could not be found in "
                           f"SavedModel, with available tags '{available}'. To inspect available tag-sets in the "
                           f"SavedModel, please use the SavedModel CLI: `saved_model_cli`.")

    def load_graph(self, graph, tags, import_scope=None, **saver_kwargs):
        meta_graph_def = self.get_meta_graph_def_from_tags(tags)
        with graph.as_default():
            return import_meta_graph(meta_graph_def, import_scope=import_scope, **saver_kwargs)

    def restore_variables(self, sess, saver, import_scope=None):
        from sparseflow._src.ops.variables import global_variables

        with sess.graph.as_default():
            if is_tf_bundle(self._variables_path):
                _restore_from_tf_bundle(sess, self._variables_path, global_variables(scope=import_scope),
                                        import_scope)
            elif saver is None and not global_variables(scope=import_scope):
                tf_logging.info("The specified SavedModel has no variables; no checkpoints were restored.")
            elif isinstance(saver, Saver):
                saver.restore(sess, self._variables_path)
            else:
                raise ValueError("No tf.train.Saver object was passed to the function "
                                 "`SavedModelLoader.restore_variables`. Since there are variables in the graph, a "
                                 "saver is required.")

    def run_init_ops(self, sess, tags, import_scope=None):
        meta_graph_def = self.get_meta_graph_def_from_tags(tags)
        with sess.graph.as_default():
            feeds = _asset_feeds(self._export_dir, meta_graph_def, import_scope)
            init_op = _init_op(meta_graph_def, import_scope)
            if init_op is not None:
                sess.run(fetches=[init_op], feed_dict=feeds)

    def load(self, sess, tags, import_scope=None, **saver_kwargs):
        with sess.graph.as_default():
            saver = self.load_graph(sess.graph, tags, import_scope, **saver_kwargs)
            self.restore_variables(sess, saver, import_scope)
            self.run_init_ops(sess, tags, import_scope)
        return self.get_meta_graph_def_from_tags(tags)


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the MetaGraphDef tagged exactly ``tags`` from ``export_dir`` into ``sess``; returns it."""
    return SavedModelLoader(export_dir).load(sess, tags, import_scope, **saver_kwargs)
