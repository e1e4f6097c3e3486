"""sparseflow: a dataflow-graph deep-learning framework with the TensorFlow 1.x programming model.

``import sparseflow as tf`` runs plain TF1 (``tf.compat.v1``) programs that use implemented ops.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3], name="x")
    ...     with tf.Session() as sess:
    ...         sess.run(x, {x: [[1, 2, 3]]}).shape
    (1, 3)
"""

# ruff: noqa: F401, F403
from sparseflow import (
    app,
    audio,
    bitwise,
    client,
    compat,
    config,
    contrib,
    data,
    debugging,
    distribute,
    dtypes,
    embedding,
    errors,
    feature_column,
    flags,
    gfile,
    graph_util,
    image,
    initializers,
    io,
    layers,
    linalg,
    logging,
    lookup,
    losses,
    manip,
    math,
    metrics,
    models,
    nest,
    nn,
    python_io,
    queue,
    random,
    raw_ops,
    saved_model,
    sets,
    signal,
    sparse,
    spectral,
    strings,
    summary,
    sysconfig,
    test,
    train,
    version,
)
from sparseflow._src import distributed as _distributed  # registers grpc:// session targets
from sparseflow._src import kernels as _kernels  # registers every kernel
from sparseflow._src.data.dataset_structure import SparseTensorSpec, TensorSpec
from sparseflow._src.framework.api_graph import *
from sparseflow._src.framework.default_session import get_default_session
from sparseflow._src.framework.device_spec import DeviceSpec
from sparseflow._src.framework.dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from sparseflow._src.framework.errors import OpError
from sparseflow._src.framework.graph import Graph, GraphKeys, get_default_graph, name_scope, reset_default_graph
from sparseflow._src.framework.operation import Operation, Tensor
from sparseflow._src.framework.proto.event_pb2 import Event, LogMessage, SessionLog, TaggedRunMetadata
from sparseflow._src.framework.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from sparseflow._src.framework.public_io import *
from sparseflow._src.framework.sparse_tensor import (
    IndexedSlices,
    IndexedSlicesValue,
    SparseTensor,
    SparseTensorValue,
)
from sparseflow._src.framework.tensor_conversion import (
    convert_to_tensor,
    convert_to_tensor_or_indexed_slices,
    is_tensor,
    register_tensor_conversion_function,
)
from sparseflow._src.framework.tensor_shape import Dimension, TensorShape, dimension_value
from sparseflow._src.grad.gradients_impl import *
from sparseflow._src.grad.pass_through import grad_pass_through, no_gradient
from sparseflow._src.grad.recompute_grad import recompute_grad
from sparseflow._src.grad.registry import NoGradient, NotDifferentiable, RegisterGradient
from sparseflow._src.ops import fused_ops as _fused_ops
from sparseflow._src.ops import internal_ops as _internal_ops
from sparseflow._src.ops.accumulator_ops import *
from sparseflow._src.ops.api_compat import *
from sparseflow._src.ops.array_manip_ops import *
from sparseflow._src.ops.array_ops import *
from sparseflow._src.ops.array_space_ops import *
from sparseflow._src.ops.check_ops import *
from sparseflow._src.ops.clip_ops import *
from sparseflow._src.ops.constant_op import *
from sparseflow._src.ops.control_flow_ops import *
from sparseflow._src.ops.core_ops import *
from sparseflow._src.ops.fake_quant_ops import *
from sparseflow._src.ops.file_ops import *
from sparseflow._src.ops.image_geometry_ops import random_crop
from sparseflow._src.ops.init_ops import *
from sparseflow._src.ops.legacy_variable_ops import *
from sparseflow._src.ops.logging_ops import Print
from sparseflow._src.ops.logging_ops import print_v2 as print  # noqa: A001 - TensorFlow's name
from sparseflow._src.ops.lookup_ops import *
from sparseflow._src.ops.math_einsum import einsum, searchsorted
from sparseflow._src.ops.math_linalg_solve import *
from sparseflow._src.ops.math_misc_ops import (
    cross,
    edit_distance,
    fingerprint,
    floor_div,
    histogram_fixed_width,
    histogram_fixed_width_bins,
    timestamp,
)
from sparseflow._src.ops.math_ops import *
from sparseflow._src.ops.math_special_ops import *
from sparseflow._src.ops.misc_compat_ops import *
from sparseflow._src.ops.nn_conv_ops import conv2d_backprop_filter_v2, conv2d_backprop_input_v2
from sparseflow._src.ops.nn_ops import *
from sparseflow._src.ops.nn_topk_ops import approx_top_k
from sparseflow._src.ops.numerics_ops import *
from sparseflow._src.ops.parsing_ops import *
from sparseflow._src.ops.partitioned_variable import PartitionedVariable
from sparseflow._src.ops.partitioned_variables import *
from sparseflow._src.ops.queue_ops import *
from sparseflow._src.ops.random_gamma_ops import *
from sparseflow._src.ops.random_ops import *
from sparseflow._src.ops.reader_ops import *
from sparseflow._src.ops.script_ops import *
from sparseflow._src.ops.sequence_parsing_ops import parse_single_sequence_example
from sparseflow._src.ops.session_ops import delete_session_tensor, get_session_handle, get_session_tensor
from sparseflow._src.ops.sort_ops import *
from sparseflow._src.ops.sparse_extra_ops import *
from sparseflow._src.ops.sparse_ops import *
from sparseflow._src.ops.spectral_nd_ops import fftnd, ifftnd, irfftnd, rfftnd
from sparseflow._src.ops.spectral_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d
from sparseflow._src.ops.state_ops import *
from sparseflow._src.ops.string_ops import *
from sparseflow._src.ops.template import make_template
from sparseflow._src.ops.variable_scope import *
from sparseflow._src.ops.variables import *
from sparseflow._src.ops.vectorized_map_ops import vectorized_map
from sparseflow._src.platform.build_info import (
    COMPILER_VERSION,
    CXX11_ABI_FLAG,
    CXX_VERSION,
    GIT_VERSION,
    GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER,
    MONOLITHIC_BUILD,
    VERSION,
)
from sparseflow._src.runtime.session import InteractiveSession, Session
from sparseflow._src.training.metrics.confusion_matrix import confusion_matrix
from sparseflow._src.version import __version__ as __version__
