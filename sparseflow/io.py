"""``tf.io``: graph writing and file helpers, and (TF1 endpoints) the queue classes."""

# ruff: noqa: F401
from sparseflow._src.data.record_io import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator
from sparseflow._src.framework.file_io import io_gfile as gfile
from sparseflow._src.framework.file_io import write_graph
from sparseflow._src.ops.file_ops import (
    decode_compressed,
    decode_raw,
    matching_files,
    parse_tensor,
    read_file,
    serialize_tensor,
    write_file,
)
from sparseflow._src.ops.image_codec_ops import (
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from sparseflow._src.ops.misc_compat_ops import decode_json_example
from sparseflow._src.ops.parsing_ops import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
    decode_csv,
    parse_example,
    parse_single_example,
)
from sparseflow._src.ops.queue_ops import PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue
from sparseflow._src.ops.sequence_parsing_ops import parse_sequence_example, parse_single_sequence_example
from sparseflow._src.ops.sparse_extra_ops import deserialize_many_sparse, serialize_many_sparse, serialize_sparse
