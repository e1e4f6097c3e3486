"""MetaGraphDef export and import: ``tf.train.export_meta_graph`` / ``tf.train.import_meta_graph``.

A MetaGraphDef holds the GraphDef (with output shapes), the op signatures it uses
(``meta_info_def.stripped_op_list``), the SaverDef and the graph's collections:

* variable collections (global, trainable, local, model, moving-average, metric, global step) as
  serialized VariableDefs, so imported variables are Variable objects again;
* ``savers`` as SaverDefs; operations and tensors as names (``node_list``); strings, ints and
  floats as values. Other Python objects are skipped with a warning, as TensorFlow does.

A ``.meta`` file is a binary MetaGraphDef (text format with ``as_text=True``); reading accepts
either. Parsing uses protobuf only: nothing read is unpickled or executed.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0, name="v")
    ...     mgd = export_meta_graph()
    >>> with tf.Graph().as_default():
    ...     _ = import_meta_graph(mgd)
    ...     [x.name for x in tf.global_variables()]
    ['v:0']
"""

from __future__ import annotations

import os
import sys

from google.protobuf import message as _pb_message
from google.protobuf import text_format

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.file_io import atomic_write_string_to_file
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.graph_import import import_graph_def
from sparseflow._src.framework.graph_io import attr_value_from_python
from sparseflow._src.framework.op_def import get_op_def, is_registered
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.proto import meta_graph_pb2, op_def_pb2
from sparseflow._src.framework.proto.queue_runner_pb2 import QueueRunnerDef
from sparseflow._src.framework.proto.saver_pb2 import SaverDef
from sparseflow._src.framework.proto.variable_pb2 import VariableDef
from sparseflow._src.ops.variables import Variable
from sparseflow._src.training.checkpoint.saver import Saver, prepend_name_scope, strip_name_scope

__all__ = ["export_meta_graph", "import_meta_graph", "read_meta_graph_file", "variable_to_proto",
           "stripped_op_list_for_graph", "VARIABLE_COLLECTIONS"]

VARIABLE_COLLECTIONS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
                        GraphKeys.MODEL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.METRIC_VARIABLES,
                        GraphKeys.GLOBAL_STEP)


# ---------------------------------------------------------------------------- variables
def variable_to_proto(var: Variable, export_scope=None):
    """The VariableDef of ``var`` (names relative to ``export_scope``), None if outside the scope."""
    if export_scope is not None and not var._ref().name.startswith(export_scope):
        return None
    vd = VariableDef(
        variable_name=strip_name_scope(var._ref().name, export_scope),
        initializer_name=strip_name_scope(var.initializer.name, export_scope),
        snapshot_name=strip_name_scope(var._snapshot.name, export_scope),
        trainable=bool(var.trainable), is_resource=False)
    if var.initial_value is not None:
        vd.initial_value_name = strip_name_scope(var.initial_value.name, export_scope)
    info = var._get_save_slice_info()
    if info is not None:
        vd.save_slice_info_def.full_name = strip_name_scope(info.full_name, export_scope)
        vd.save_slice_info_def.full_shape.extend(int(d) for d in info.full_shape)
        vd.save_slice_info_def.var_offset.extend(int(d) for d in info.var_offset)
        vd.save_slice_info_def.var_shape.extend(int(d) for d in info.var_shape)
    return vd


def _variable_from_proto(vd: VariableDef, import_scope=None) -> Variable:
    var = Variable(variable_def=vd, import_scope=import_scope)
    if vd.HasField("save_slice_info_def"):
        s = vd.save_slice_info_def
        var._set_save_slice_info(Variable.SaveSliceInfo(prepend_name_scope(s.full_name, import_scope),
                                                        list(s.full_shape), list(s.var_offset), list(s.var_shape)))
    return var


# ---------------------------------------------------------------------------- op signatures
def _op_def_to_proto(op_def) -> op_def_pb2.OpDef:
    out = op_def_pb2.OpDef(name=op_def.name, is_stateful=bool(op_def.is_stateful))
    for src, dst in ((op_def.input_args, out.input_arg), (op_def.output_args, out.output_arg)):
        for a in src:
            arg = dst.add(name=a.name, type_attr=a.type_attr, number_attr=a.number_attr,
                          type_list_attr=a.type_list_attr, is_ref=a.is_ref)
            if a.type is not None:
                arg.type = a.type.as_datatype_enum
    for a in op_def.attrs.values():
        attr = out.attr.add(name=a.name, type=a.type)
        if a.minimum is not None:
            attr.has_minimum, attr.minimum = True, int(a.minimum)
        if a.has_default:
            try:
                attr.default_value.CopyFrom(attr_value_from_python(a.default, a.type))
            except (TypeError, ValueError, AttributeError):
                attr.ClearField("default_value")
    return out


def stripped_op_list_for_graph(graph_def) -> op_def_pb2.OpList:
    """The signatures of the op types ``graph_def`` uses (function bodies included)."""
    used = {n.op for n in graph_def.node}
    for f in graph_def.library.function:
        used.update(n.op for n in f.node_def)
    fn_names = {f.signature.name for f in graph_def.library.function}
    out = op_def_pb2.OpList()
    for name in sorted(used - fn_names):
        if is_registered(name):
            out.op.append(_op_def_to_proto(get_op_def(name)))
    return out


# ---------------------------------------------------------------------------- collections
def _kind_of(item) -> str | None:
    if isinstance(item, (Operation, Tensor)):
        return "node_list"
    if isinstance(item, (bytes, str)):
        return "bytes_list"
    if isinstance(item, bool) or isinstance(item, int):
        return "int64_list"
    if isinstance(item, float):
        return "float_list"
    if type(item).__name__ == "Any" and hasattr(item, "type_url"):  # google.protobuf.Any (SavedModel assets)
        return "any_list"
    return None


def _add_collection_def(mgd, graph, key, export_scope=None):
    items = graph.get_collection(key)
    if not items or key == GraphKeys.SAVEABLE_OBJECTS:  # host-side saveables (tables) are not graph data
        return
    col = meta_graph_pb2.CollectionDef()
    try:
        if key in VARIABLE_COLLECTIONS and all(isinstance(v, Variable) for v in items):
            for v in items:
                vd = variable_to_proto(v, export_scope)
                if vd is not None:
                    col.bytes_list.value.append(vd.SerializeToString())
        elif key == GraphKeys.SAVERS and all(isinstance(s, Saver) for s in items):
            for s in items:
                sd = s.to_proto(export_scope) if s.saver_def is not None else None
                if sd is not None:
                    col.bytes_list.value.append(sd.SerializeToString())
        elif key == GraphKeys.QUEUE_RUNNERS and all(hasattr(q, "to_proto") for q in items):
            for q in items:
                qd = q.to_proto(export_scope)
                if qd is not None:
                    col.bytes_list.value.append(qd.SerializeToString())
        else:
            kind = _kind_of(items[0])
            if kind is None or any(_kind_of(x) != kind for x in items):
                raise TypeError(f"unsupported items {type(items[0]).__name__}")
            field = getattr(col, kind)
            for x in items:
                if kind == "node_list":
                    if export_scope is None or x.name.startswith(export_scope):
                        field.value.append(strip_name_scope(x.name, export_scope))
                elif kind == "bytes_list":
                    field.value.append(x.encode("utf-8") if isinstance(x, str) else x)
                elif kind == "any_list":
                    field.value.add().CopyFrom(x)
                else:
                    field.value.append(x)
    except Exception as e:  # noqa: BLE001 - like TensorFlow: warn and leave the collection out
        logging.warning("Issue encountered when serializing %s.\nType is unsupported, or the types of the items "
                        "don't match field type in CollectionDef. Note this is a warning and probably safe to "
                        "ignore.\n%s", key, e)
        return
    mgd.collection_def[key].CopyFrom(col)


def _restore_collections(mgd, graph, import_scope):
    variables_by_bytes: dict[bytes, Variable] = {}
    for key in sorted(mgd.collection_def):
        col = mgd.collection_def[key]
        kind = col.WhichOneof("kind")
        if kind is None:
            continue
        values = getattr(col, kind).value
        if kind == "bytes_list" and key in VARIABLE_COLLECTIONS:
            for raw in values:
                var = variables_by_bytes.get(raw)
                if var is None:
                    var = variables_by_bytes[raw] = _variable_from_proto(VariableDef.FromString(raw), import_scope)
                graph.add_to_collection(key, var)
        elif kind == "bytes_list" and key == GraphKeys.SAVERS:
            for raw in values:
                graph.add_to_collection(key, Saver.from_proto(SaverDef.FromString(raw), import_scope))
        elif kind == "bytes_list" and key == GraphKeys.QUEUE_RUNNERS:
            from sparseflow._src.training.session.queue_runner import QueueRunner  # it imports saver.py

            with graph.as_default():
                for raw in values:
                    qr = QueueRunner.from_proto(QueueRunnerDef.FromString(raw), import_scope)
                    graph.add_to_collection(key, qr)
        elif kind == "node_list":
            for name in values:
                graph.add_to_collection(key, graph.as_graph_element(prepend_name_scope(name, import_scope)))
        elif kind == "any_list":  # kept as Any protos, as TensorFlow does
            for v in values:
                graph.add_to_collection(key, v)
        else:
            for v in values:
                graph.add_to_collection(key, v)
    return variables_by_bytes


# ---------------------------------------------------------------------------- export / import
def _strip_graph_def(graph_def, export_scope):
    from sparseflow._src.framework.proto import graph_pb2

    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    for nd in graph_def.node:
        if not nd.name.startswith(export_scope.rstrip("/") + "/"):
            continue
        new = out.node.add()
        new.CopyFrom(nd)
        new.name = strip_name_scope(nd.name, export_scope)
        del new.input[:]
        new.input.extend(strip_name_scope(i, export_scope) for i in nd.input)
        if "_class" in new.attr:
            locs = [strip_name_scope(s.decode(), export_scope).encode() for s in new.attr["_class"].list.s]
            del new.attr["_class"].list.s[:]
            new.attr["_class"].list.s.extend(locs)
    return out


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None, collection_list=None,
                      as_text=False, graph=None, export_scope=None, clear_devices=False,
                      clear_extraneous_savers=False, strip_default_attrs=False, save_debug_info=False, **kwargs):
    """The MetaGraphDef of ``graph`` (default graph); also written to ``filename`` when given."""
    del strip_default_attrs, save_debug_info, kwargs, clear_extraneous_savers
    graph = graph or get_default_graph()
    if graph_def is None:
        graph_def = graph.as_graph_def(add_shapes=True)
    if export_scope:
        graph_def = _strip_graph_def(graph_def, export_scope)
    mgd = meta_graph_pb2.MetaGraphDef()
    if meta_info_def is not None:
        mgd.meta_info_def.CopyFrom(meta_info_def)
    sf = sys.modules.get("sparseflow")
    # tensorflow_version stays empty: TensorFlow parses it as its own version number (and reads an empty
    # one as "VariableDefs carry `trainable`"); the producer is named in tensorflow_git_version.
    mgd.meta_info_def.tensorflow_git_version = f"sparseflow {getattr(sf, '__version__', '')}".strip()
    mgd.meta_info_def.stripped_op_list.CopyFrom(stripped_op_list_for_graph(graph_def))
    mgd.graph_def.CopyFrom(graph_def)
    if clear_devices:
        for nd in mgd.graph_def.node:
            nd.device = ""
    if saver_def is not None:
        mgd.saver_def.CopyFrom(saver_def)
        if export_scope:
            for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
                setattr(mgd.saver_def, field, strip_name_scope(getattr(saver_def, field), export_scope))
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        _add_collection_def(mgd, graph, key, export_scope)
    if filename:
        filename = os.fspath(filename)
        if as_text:
            atomic_write_string_to_file(filename, text_format.MessageToString(mgd))
        else:
            atomic_write_string_to_file(filename, mgd.SerializeToString())
    return mgd


def read_meta_graph_file(filename) -> meta_graph_pb2.MetaGraphDef:
    """The MetaGraphDef in ``filename`` (binary or text format)."""
    filename = os.fspath(filename)
    if not os.path.isfile(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        raw = f.read()
    mgd = meta_graph_pb2.MetaGraphDef()
    try:
        mgd.ParseFromString(raw)
        return mgd
    except _pb_message.DecodeError:
        pass
    try:
        text_format.Merge(raw.decode("utf-8"), mgd)
    except (text_format.ParseError, UnicodeDecodeError) as e:
        raise errors.DataLossError(None, None, f"Meta graph file {filename} is neither a binary nor a text "
                                               f"MetaGraphDef (it is corrupt or not a .meta file): {e}") from None
    return mgd


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """Adds the graph of a MetaGraphDef (or ``.meta`` file) to the default graph, recreates its
    collections and returns a Saver built from its SaverDef (None when it has no variables)."""
    del kwargs
    if isinstance(meta_graph_or_file, meta_graph_pb2.MetaGraphDef):
        mgd = meta_graph_or_file
    else:
        mgd = read_meta_graph_file(meta_graph_or_file)
    graph = get_default_graph()
    graph_def = mgd.graph_def
    if clear_devices:
        from sparseflow._src.framework.proto import graph_pb2

        graph_def = graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
        for nd in graph_def.node:
            nd.device = ""
    producer = mgd.meta_info_def.stripped_op_list if mgd.HasField("meta_info_def") else None
    import_graph_def(graph_def, name=import_scope or "", producer_op_list=producer)
    imported = _restore_collections(mgd, graph, import_scope)
    if mgd.HasField("saver_def"):
        return Saver(saver_def=SaverDef.FromString(mgd.saver_def.SerializeToString()), name=import_scope)
    if imported or graph.get_collection(GraphKeys.GLOBAL_VARIABLES, import_scope):
        return Saver()
    logging.info("Saver not created because there are no variables in the graph to restore")
    return None
