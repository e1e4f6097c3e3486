"""``tf.sparse``: public names re-exported from the implementation.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     st = tf.sparse.from_dense([[0, 3], [4, 0]])
    ...     sess.run(tf.sparse.to_dense(tf.sparse.transpose(st))).tolist()
    [[0, 4], [3, 0]]
"""

# ruff: noqa: F401
from sparseflow._src.framework.sparse_tensor import SparseTensor, SparseTensorValue
from sparseflow._src.ops.accumulator_ops import SparseConditionalAccumulator
from sparseflow._src.ops.nn_segment_ops import sparse_segment_mean as segment_mean
from sparseflow._src.ops.nn_segment_ops import sparse_segment_sqrt_n as segment_sqrt_n
from sparseflow._src.ops.nn_segment_ops import sparse_segment_sum as segment_sum
from sparseflow._src.ops.sparse_extra_ops import sparse_mask as mask
from sparseflow._src.ops.sparse_extra_ops import sparse_maximum as maximum
from sparseflow._src.ops.sparse_extra_ops import sparse_merge as merge
from sparseflow._src.ops.sparse_extra_ops import sparse_minimum as minimum
from sparseflow._src.ops.sparse_extra_ops import sparse_reduce_max as reduce_max
from sparseflow._src.ops.sparse_extra_ops import sparse_reduce_max_sparse as reduce_max_sparse
from sparseflow._src.ops.sparse_extra_ops import sparse_reset_shape as reset_shape
from sparseflow._src.ops.sparse_extra_ops import sparse_softmax as softmax
from sparseflow._src.ops.sparse_extra_ops import sparse_split as split
from sparseflow._src.ops.sparse_extra_ops import sparse_to_indicator as to_indicator
from sparseflow._src.ops.sparse_ops import from_dense
from sparseflow._src.ops.sparse_ops import sparse_add as add
from sparseflow._src.ops.sparse_ops import sparse_concat as concat
from sparseflow._src.ops.sparse_ops import sparse_fill_empty_rows as fill_empty_rows
from sparseflow._src.ops.sparse_ops import sparse_placeholder as placeholder
from sparseflow._src.ops.sparse_ops import sparse_reduce_sum as reduce_sum
from sparseflow._src.ops.sparse_ops import sparse_reduce_sum_sparse as reduce_sum_sparse
from sparseflow._src.ops.sparse_ops import sparse_reorder as reorder
from sparseflow._src.ops.sparse_ops import sparse_reshape as reshape
from sparseflow._src.ops.sparse_ops import sparse_retain as retain
from sparseflow._src.ops.sparse_ops import sparse_slice as slice  # noqa: A004
from sparseflow._src.ops.sparse_ops import sparse_tensor_dense_matmul as matmul
from sparseflow._src.ops.sparse_ops import sparse_tensor_dense_matmul as sparse_dense_matmul
from sparseflow._src.ops.sparse_ops import sparse_tensor_to_dense as to_dense
from sparseflow._src.ops.sparse_ops import sparse_transpose as transpose
