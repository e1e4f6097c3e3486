"""``tf.nn``: public names re-exported from the implementation."""

# ruff: noqa: F401, F403
from sparseflow import _nn_rnn_cell as rnn_cell
from sparseflow._src.layers.rnn import bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn, static_rnn
from sparseflow._src.ops.array_space_ops import depth_to_space, space_to_batch, space_to_depth
from sparseflow._src.ops.candidate_sampling_ops import *
from sparseflow._src.ops.nn_activation_ops import *
from sparseflow._src.ops.nn_conv3d_ops import *
from sparseflow._src.ops.nn_conv_ops import *
from sparseflow._src.ops.nn_dropout_ops import *
from sparseflow._src.ops.nn_embedding_ops import *
from sparseflow._src.ops.nn_norm_ops import *
from sparseflow._src.ops.nn_pool_ops import *
from sparseflow._src.ops.nn_sampled_loss_ops import *
from sparseflow._src.ops.nn_softmax_ops import *
from sparseflow._src.ops.nn_topk_ops import *

# tf.nn names implemented by other op families, resolved when first used.
_ELSEWHERE = {"sigmoid": "math_ops", "tanh": "math_ops"}


def __getattr__(name):
    if name in _ELSEWHERE:
        import importlib

        module = importlib.import_module(f"sparseflow._src.ops.{_ELSEWHERE[name]}")
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module 'sparseflow.nn' has no attribute '{name}'")
