"""Summary ops and TF1's ``tf.summary`` builders: each returns a scalar string tensor holding a
serialized ``Summary`` proto (TensorFlow's ops, tags and bytes), added to ``GraphKeys.SUMMARIES``.

Tags follow TF1: the name under the current name scope (made unique like an op name), prefixed by
``family/`` when a family is given; images and audio clips get ``/image/<i>`` and ``/audio/<i>``.

Example:
    >>> import sparseflow as tf
    >>> from sparseflow._src.framework.proto import summary_pb2
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     with tf.name_scope("train"):
    ...         s = tf.summary.scalar("loss", tf.constant(0.25))
    ...     h = tf.summary.histogram("w", tf.constant([1.0, 2.0, 2.0]))
    ...     merged = summary_pb2.Summary.FromString(sess.run(tf.summary.merge_all()))
    >>> [(v.tag, v.WhichOneof("value")) for v in merged.value]
    [('train/loss', 'simple_value'), ('w', 'histo')]
"""

from __future__ import annotations

import re

import numpy as np

from sparseflow._src.framework import dtypes
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.graph import GraphKeys, get_default_graph, name_scope
from sparseflow._src.framework.op_def import register_op
from sparseflow._src.framework.op_def_library import apply_op
from sparseflow._src.framework.proto import summary_pb2
from sparseflow._src.framework.tensor_conversion import convert_to_tensor
from sparseflow._src.ops.constant_op import constant

__all__ = ["scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge", "merge_all"]

_SCALAR = lambda op: [[]]  # noqa: E731 - every summary op yields one serialized proto
_REAL = "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64}"

register_op("ScalarSummary", inputs=["tags: string", "values: T"], outputs=["summary: string"],
            attrs=[f"T: {_REAL}"], shape_fn=_SCALAR)
register_op("HistogramSummary", inputs=["tag: string", "values: T"], outputs=["summary: string"],
            attrs=[f"T: {_REAL} = float"], shape_fn=_SCALAR)
register_op("ImageSummary", inputs=["tag: string", "tensor: T"], outputs=["summary: string"],
            attrs=["max_images: int >= 1 = 3", "T: {uint8, float, half, double} = float",
                   "bad_color: tensor = uint8 [255, 0, 0, 255]"],
            shape_fn=_SCALAR)
register_op("AudioSummaryV2", inputs=["tag: string", "tensor: float", "sample_rate: float"],
            outputs=["summary: string"], attrs=["max_outputs: int >= 1 = 3"], shape_fn=_SCALAR)
register_op("TensorSummaryV2", inputs=["tag: string", "tensor: T", "serialized_summary_metadata: string"],
            outputs=["summary: string"], attrs=["T: type"], shape_fn=_SCALAR)
register_op("MergeSummary", inputs=["inputs: N * string"], outputs=["summary: string"], attrs=["N: int >= 1"],
            shape_fn=_SCALAR)

_BAD_COLOR = np.array([255, 0, 0, 255], np.uint8)
_INVALID_TAG_CHARS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    if name is None:
        return None
    new = _INVALID_TAG_CHARS.sub("_", name).lstrip("/")
    if new != name:
        logging.info("Summary name %s is illegal; using %s instead.", name, new)
    return new


class _SummaryScope:
    """TF1's summary scope: a name scope ``[family/]name`` whose path (plus ``family/``) is the tag."""

    def __init__(self, name, family, values):
        self.name, self.family = _clean_tag(name), _clean_tag(family)
        self._scope = name_scope(self.name if self.family is None else f"{self.family}/{self.name}", None, values)

    def __enter__(self):
        scope = self._scope.__enter__()
        tag = scope.rstrip("/")
        return (tag if self.family is None else f"{self.family}/{tag}"), scope

    def __exit__(self, *exc):
        return self._scope.__exit__(*exc)


def _collect(value, collections, default):
    graph = get_default_graph()
    for key in (default if collections is None else collections):
        graph.add_to_collection(key, value)
    return value


def scalar(name, tensor, collections=None, family=None):
    """A summary of the scalar ``tensor`` (a ``simple_value``)."""
    with _SummaryScope(name, family, [tensor]) as (tag, scope):
        out = apply_op("ScalarSummary", [tag, tensor], name=scope).outputs[0]
    return _collect(out, collections, [GraphKeys.SUMMARIES])


def histogram(name, values, collections=None, family=None):
    """A histogram of ``values`` (TensorFlow's exponential buckets; NaN or infinity fails the run)."""
    with _SummaryScope(name, family, [values]) as (tag, scope):
        out = apply_op("HistogramSummary", [tag, values], name=scope).outputs[0]
    return _collect(out, collections, [GraphKeys.SUMMARIES])


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """PNG images of the first ``max_outputs`` of ``tensor`` ``[batch, height, width, 1|3|4]``; float
    images are scaled to [0, 255] (offset to 128 when negative) and non-finite pixels drawn red."""
    with _SummaryScope(name, family, [tensor]) as (tag, scope):
        out = apply_op("ImageSummary", [tag, tensor], {"max_images": int(max_outputs), "bad_color": _BAD_COLOR},
                       name=scope).outputs[0]
    return _collect(out, collections, [GraphKeys.SUMMARIES])


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """16-bit WAV clips of the first ``max_outputs`` of ``tensor`` ``[batch, frames(, channels)]``,
    values in [-1, 1]."""
    with _SummaryScope(name, family, [tensor]) as (tag, scope):
        rate = convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        out = apply_op("AudioSummaryV2", [tag, tensor, rate], {"max_outputs": int(max_outputs)},
                       name=scope).outputs[0]
    return _collect(out, collections, [GraphKeys.SUMMARIES])


def tensor_summary(name, tensor, summary_description=None, collections=None, summary_metadata=None,
                   family=None, display_name=None):
    """A summary holding ``tensor`` itself (a TensorProto), with ``SummaryMetadata``."""
    metadata = summary_pb2.SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if display_name:
        metadata.display_name = display_name
    if summary_description:
        metadata.summary_description = summary_description
    with _SummaryScope(name, family, [tensor]) as (tag, scope):
        out = apply_op("TensorSummaryV2", [tag, tensor, constant(metadata.SerializeToString())],
                       name=scope).outputs[0]
    return _collect(out, collections, [GraphKeys.SUMMARIES])


def text(name, tensor, collections=None):
    """A summary of the string ``tensor`` that TensorBoard's text plugin shows."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype.base_dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype.base_dtype.name}")
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs, collections=None, name=None):
    """One summary with the values of ``inputs`` (serialized summaries); a tag seen twice fails the run."""
    inputs = list(inputs)
    with name_scope(name, "Merge", inputs):
        out = apply_op("MergeSummary", [inputs], name=name).outputs[0]
    return _collect(out, collections, [])


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """``merge`` of the summaries in collection ``key`` (under ``scope``), or None if there are none."""
    summaries = get_default_graph().get_collection(key, scope=scope)
    return merge(summaries, name=name) if summaries else None

