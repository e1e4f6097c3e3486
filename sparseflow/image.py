"""``tf.image`` (TF1 names): public names re-exported from the implementation."""

# ruff: noqa: F401, F403
from sparseflow._src.ops.array_space_ops import extract_image_patches, extract_patches
from sparseflow._src.ops.image_box_ops import *
from sparseflow._src.ops.image_codec_ops import *
from sparseflow._src.ops.image_color_ops import *
from sparseflow._src.ops.image_geometry_ops import *
from sparseflow._src.ops.image_metrics_ops import *
from sparseflow._src.ops.image_resize_ops import *
