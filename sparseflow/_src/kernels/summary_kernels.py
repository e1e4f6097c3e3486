"""CPU kernels of the summary ops: each returns one serialized ``Summary`` (a bytes scalar) with
TensorFlow's tags, values, errors and bytes (images and audio encoded by summary_encoding.py).

Summaries received as inputs (MergeSummary) are parsed as protobuf messages, never executed.
"""

from __future__ import annotations

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.framework.proto import summary_pb2
from sparseflow._src.framework.tensor_proto import tensor_content_proto
from sparseflow._src.kernels.registry import register_kernel
from sparseflow._src.kernels.summary_encoding import encode_png, encode_wav, histogram_proto


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _text(value) -> str:
    v = value.item() if isinstance(value, np.ndarray) else value
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _scalar_tag(tag, node) -> str:
    if np.ndim(tag) != 0:
        raise _invalid(f"tag must be a scalar, got shape {list(np.shape(tag))} (tag '{node.name}')")
    return _text(tag)


def _out(summary: summary_pb2.Summary):
    return np.array(summary.SerializeToString(), dtype=object)


def _shape(a) -> str:
    return "[" + ",".join(str(d) for d in np.shape(a)) + "]"


@register_kernel("ScalarSummary")
def _scalar_summary(node):
    def compute(tags, values):
        if np.shape(tags) != np.shape(values):
            raise _invalid(f"tags and values are not the same shape: {_shape(tags)} != {_shape(values)} "
                           f"(tag '{node.name}')")
        s = summary_pb2.Summary()
        for tag, value in zip(np.ravel(tags).tolist(), np.ravel(values).tolist()):
            s.value.add(tag=_text(tag), simple_value=float(value))
        return _out(s)

    return compute


@register_kernel("HistogramSummary")
def _histogram_summary(node):
    def compute(tag, values):
        tag = _scalar_tag(tag, node)
        x = np.asarray(values, np.float64).ravel()
        if np.isnan(x).any():
            raise _invalid(f"Nan in summary histogram for: {tag}")
        if np.isinf(x).any():
            raise _invalid(f"Infinity in Histogram for: {tag}")
        s = summary_pb2.Summary()
        s.value.add(tag=tag, histo=histogram_proto(x))
        return _out(s)

    return compute


def _to_uint8(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """One ``[h, w, c]`` float image as uint8: scaled by the largest finite value (offset 128 when
    there are negative values), non-finite pixels in ``bad_color``. As TensorFlow's: the statistics
    and the scale in float32, the transform in the image's own type (float16 rounds as TF's)."""
    img = image
    finite = np.isfinite(img).all(axis=-1)
    good = img[finite].astype(np.float32)
    lo = good.min() if good.size else np.float32(np.inf)
    hi = good.max() if good.size else np.float32(-np.inf)
    if lo < 0:
        max_val = max(abs(lo), abs(hi))
        scale, offset = (0.0 if max_val < 1e-6 else np.float32(127.0) / np.float32(max_val)), 128.0
    else:
        scale, offset = (0.0 if hi < 1e-6 else np.float32(255.0) / np.float32(hi)), 0.0
    dtype = img.dtype.type
    with np.errstate(invalid="ignore", over="ignore"):
        out = (img * dtype(np.float32(scale)) + dtype(offset)).astype(np.uint8)
    out[~finite] = bad_color[: img.shape[-1]]
    return out


@register_kernel("ImageSummary")
def _image_summary(node):
    max_images = node.attrs.get("max_images", 3)
    bad_color = node.attrs.get("bad_color")
    bad_color = np.array([255, 0, 0, 255], np.uint8) if bad_color is None else np.asarray(bad_color, np.uint8).ravel()

    def compute(tag, tensor):
        tag = _scalar_tag(tag, node)
        t = np.asarray(tensor)
        if t.ndim != 4 or t.shape[-1] not in (1, 3, 4):
            raise _invalid(f"Tensor must be 4-D with last dim 1, 3, or 4, not {_shape(t)}")
        if bad_color.size < t.shape[-1]:
            raise _invalid(f"bad_color has {bad_color.size} values, fewer than the {t.shape[-1]} channels")
        s = summary_pb2.Summary()
        for i in range(min(max_images, t.shape[0])):
            img = t[i] if t.dtype == np.uint8 else _to_uint8(t[i], bad_color)
            v = s.value.add(tag=f"{tag}/image" if max_images == 1 else f"{tag}/image/{i}")
            v.image.height, v.image.width, v.image.colorspace = img.shape
            v.image.encoded_image_string = encode_png(img)
        return _out(s)

    return compute


@register_kernel("AudioSummaryV2")
def _audio_summary(node):
    max_outputs = node.attrs.get("max_outputs", 3)

    def compute(tag, tensor, sample_rate):
        tag = _scalar_tag(tag, node)
        t = np.asarray(tensor, np.float32)
        if t.ndim not in (2, 3):
            raise _invalid(f"sample_rate must be a scalar and tensor must be 2-D or 3-D, got {_shape(t)}")
        if np.ndim(sample_rate) != 0:
            raise _invalid(f"sample_rate must be rank 0, got {_shape(sample_rate)}")
        rate = float(sample_rate)
        if t.ndim == 2:
            t = t[:, :, None]
        s = summary_pb2.Summary()
        for i in range(min(max_outputs, t.shape[0])):
            v = s.value.add(tag=f"{tag}/audio" if max_outputs == 1 else f"{tag}/audio/{i}")
            v.audio.sample_rate = rate
            v.audio.num_channels, v.audio.length_frames = t.shape[2], t.shape[1]
            v.audio.content_type = "audio/wav"
            v.audio.encoded_audio_string = encode_wav(t[i], int(rate))
        return _out(s)

    return compute


@register_kernel("TensorSummaryV2")
def _tensor_summary(node):
    dtype = node.attrs["T"]

    def compute(tag, tensor, serialized_metadata):
        tag = _scalar_tag(tag, node)
        metadata = summary_pb2.SummaryMetadata()
        try:
            metadata.ParseFromString(bytes(np.asarray(serialized_metadata).item()))
        except Exception as e:  # noqa: BLE001 - protobuf's DecodeError
            raise _invalid(f"Could not parse the serialized summary metadata of tag {tag}: {e}") from e
        s = summary_pb2.Summary()
        v = s.value.add(tag=tag)
        v.tensor.CopyFrom(tensor_content_proto(np.asarray(tensor, dtype=object if dtype.name == "string"
                                                          else dtype.as_numpy_dtype), dtype))
        v.metadata.CopyFrom(metadata)
        return _out(s)

    return compute


@register_kernel("MergeSummary")
def _merge_summary(node):
    def compute(*inputs):
        merged = summary_pb2.Summary()
        tags = set()
        for serialized in (b for x in inputs for b in np.asarray(x, dtype=object).ravel()):
            part = summary_pb2.Summary()
            try:
                part.ParseFromString(bytes(serialized))
            except Exception as e:  # noqa: BLE001 - protobuf's DecodeError
                raise _invalid("Could not parse one of the summary inputs") from e
            for value in part.value:
                if value.tag and value.tag in tags:
                    raise _invalid(f"Duplicate tag {value.tag} found in summary inputs ")
                tags.add(value.tag)
                merged.value.add().CopyFrom(value)
        return _out(merged)

    return compute
