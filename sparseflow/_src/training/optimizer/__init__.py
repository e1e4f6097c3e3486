"""Optimizers, learning-rate schedules and the global step (re-exported by ``tf.train``)."""

from sparseflow._src.training.optimizer.adaptive import (
    AdadeltaOptimizer,
    AdagradOptimizer,
    AdamOptimizer,
    RMSPropOptimizer,
)
from sparseflow._src.training.optimizer.ftrl import FtrlOptimizer
from sparseflow._src.training.optimizer.gradient_descent import (
    GradientDescentOptimizer,
    MomentumOptimizer,
    ProximalGradientDescentOptimizer,
)
from sparseflow._src.training.optimizer.learning_rate_decay import (
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    natural_exp_decay,
    noisy_linear_cosine_decay,
    piecewise_constant,
    polynomial_decay,
)
from sparseflow._src.training.optimizer.optimizer import Optimizer
from sparseflow._src.training.optimizer.sync_replicas_optimizer import SyncReplicasOptimizer
from sparseflow._src.training.optimizer.training_util import (
    assert_global_step,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
    global_step,
)

__all__ = [
    "Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "ProximalGradientDescentOptimizer",
    "AdagradOptimizer", "AdamOptimizer", "RMSPropOptimizer", "AdadeltaOptimizer", "FtrlOptimizer",
    "exponential_decay", "natural_exp_decay", "inverse_time_decay", "polynomial_decay", "piecewise_constant",
    "cosine_decay", "cosine_decay_restarts", "linear_cosine_decay", "noisy_linear_cosine_decay",
    "SyncReplicasOptimizer",
    "global_step", "get_global_step", "create_global_step", "get_or_create_global_step", "assert_global_step",
]
