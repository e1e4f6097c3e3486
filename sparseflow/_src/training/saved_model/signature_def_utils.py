"""SignatureDefs and TensorInfos: ``tf.saved_model.signature_def_utils`` and ``tf.saved_model.utils``.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3], name="x")
    ...     sig = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": x * 2.0})
    >>> sig.method_name, sig.inputs["x"].name, sig.outputs["y"].name
    ('tensorflow/serving/predict', 'x:0', 'mul:0')
"""

from __future__ import annotations

from sparseflow._src.framework import dtypes
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.framework.operation import Tensor
from sparseflow._src.framework.proto import meta_graph_pb2
from sparseflow._src.framework.sparse_tensor import SparseTensor
from sparseflow._src.framework.tensor_proto import make_tensor_proto
from sparseflow._src.framework.tensor_shape import TensorShape
from sparseflow._src.training.saved_model import constants

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info", "build_signature_def", "predict_signature_def",
           "classification_signature_def", "regression_signature_def", "is_valid_signature"]


def _shape_proto(shape: TensorShape):
    from sparseflow._src.framework.proto import tensor_shape_pb2

    proto = tensor_shape_pb2.TensorShapeProto()
    if shape.ndims is None:
        proto.unknown_rank = True
        return proto
    for d in shape.as_list():
        proto.dim.add(size=-1 if d is None else d)
    return proto


def build_tensor_info(tensor):
    """The TensorInfo (name or sparse component names, dtype, static shape) of a tensor."""
    info = meta_graph_pb2.TensorInfo()
    if isinstance(tensor, SparseTensor):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        info.dtype = tensor.dtype.as_datatype_enum
        info.tensor_shape.CopyFrom(_shape_proto(tensor.get_shape()))
        return info
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info needs a Tensor or SparseTensor, got {type(tensor).__name__}: {tensor!r}")
    info.name = tensor.name
    info.dtype = tensor.dtype.as_datatype_enum
    info.tensor_shape.CopyFrom(_shape_proto(tensor.get_shape()))
    return info


def _scoped(name, import_scope):
    return f"{import_scope}/{name}" if import_scope else name


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor (or SparseTensor) of ``graph`` that ``tensor_info`` names."""
    graph = graph or get_default_graph()
    encoding = tensor_info.WhichOneof("encoding")
    if encoding == "name":
        return graph.get_tensor_by_name(_scoped(tensor_info.name, import_scope))
    if encoding == "coo_sparse":
        c = tensor_info.coo_sparse
        return SparseTensor(graph.get_tensor_by_name(_scoped(c.indices_tensor_name, import_scope)),
                            graph.get_tensor_by_name(_scoped(c.values_tensor_name, import_scope)),
                            graph.get_tensor_by_name(_scoped(c.dense_shape_tensor_name, import_scope)))
    raise ValueError(f"Invalid TensorInfo.encoding: {encoding}")


def get_element_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor or Operation that ``tensor_info.name`` names."""
    graph = graph or get_default_graph()
    return graph.as_graph_element(_scoped(tensor_info.name, import_scope))


def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A SignatureDef from ``{key: TensorInfo}`` maps and a method name."""
    sig = meta_graph_pb2.SignatureDef()
    for key, info in (inputs or {}).items():
        sig.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        sig.outputs[key].CopyFrom(info)
    if method_name is not None:
        sig.method_name = method_name
    for key, value in (defaults or {}).items():
        sig.defaults[key].CopyFrom(make_tensor_proto(value))
    return sig


def predict_signature_def(inputs, outputs):
    """A ``tensorflow/serving/predict`` signature of ``{key: tensor}`` inputs and outputs."""
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               constants.PREDICT_METHOD_NAME)


def _string_examples(examples, what):
    if examples is None:
        raise ValueError(f"{what} `examples` cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError(f"{what} `examples` must be a string Tensor. Found `examples` of type {type(examples)}.")
    info = build_tensor_info(examples)
    if info.dtype != dtypes.string.as_datatype_enum:
        raise ValueError(f"{what} input tensors must be of type string. Found tensors of type {info.dtype}")
    return info


def classification_signature_def(examples, classes, scores):
    """A ``tensorflow/serving/classify`` signature: serialized examples in, classes and/or scores out."""
    inputs = {constants.CLASSIFY_INPUTS: _string_examples(examples, "Classification")}
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    outputs = {}
    if classes is not None:
        info = build_tensor_info(classes)
        if info.dtype != dtypes.string.as_datatype_enum:
            raise ValueError("Classification classes must be of type string Tensor.")
        outputs[constants.CLASSIFY_OUTPUT_CLASSES] = info
    if scores is not None:
        info = build_tensor_info(scores)
        if info.dtype != dtypes.float32.as_datatype_enum:
            raise ValueError("Classification scores must be a float32 Tensor.")
        outputs[constants.CLASSIFY_OUTPUT_SCORES] = info
    return build_signature_def(inputs, outputs, constants.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """A ``tensorflow/serving/regress`` signature: serialized examples in, float predictions out."""
    inputs = {constants.REGRESS_INPUTS: _string_examples(examples, "Regression")}
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    info = build_tensor_info(predictions)
    if info.dtype != dtypes.float32.as_datatype_enum:
        raise ValueError("Regression output must be a float32 Tensor.")
    return build_signature_def(inputs, {constants.REGRESS_OUTPUTS: info}, constants.REGRESS_METHOD_NAME)


def is_valid_signature(signature_def):
    """Whether a signature fits its method: predict needs inputs and outputs; classify and regress
    one string input and string classes / float scores or float outputs."""
    if signature_def is None or not signature_def.method_name:
        return False
    string, real = dtypes.string.as_datatype_enum, dtypes.float32.as_datatype_enum
    method, ins, outs = signature_def.method_name, signature_def.inputs, signature_def.outputs
    if method == constants.PREDICT_METHOD_NAME:
        return bool(ins) and bool(outs)
    if method == constants.CLASSIFY_METHOD_NAME:
        if set(ins) != {constants.CLASSIFY_INPUTS} or ins[constants.CLASSIFY_INPUTS].dtype != string or not outs:
            return False
        for key, info in outs.items():
            want = {constants.CLASSIFY_OUTPUT_CLASSES: string, constants.CLASSIFY_OUTPUT_SCORES: real}.get(key)
            if want is None or info.dtype != want:
                return False
        return True
    if method == constants.REGRESS_METHOD_NAME:
        return (set(ins) == {constants.REGRESS_INPUTS} and ins[constants.REGRESS_INPUTS].dtype == string
                and set(outs) == {constants.REGRESS_OUTPUTS} and outs[constants.REGRESS_OUTPUTS].dtype == real)
    return True
