"""``tf.random``: public names re-exported from the implementation."""

# ruff: noqa: F401, F403
from sparseflow._src.framework.api_graph import set_random_seed
from sparseflow._src.ops.candidate_sampling_ops import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from sparseflow._src.ops.random_gamma_ops import random_gamma as gamma
from sparseflow._src.ops.random_gamma_ops import random_poisson as poisson
from sparseflow._src.ops.random_ops import categorical, get_seed, multinomial, truncated_normal
from sparseflow._src.ops.random_ops import random_normal as normal
from sparseflow._src.ops.random_ops import random_shuffle as shuffle
from sparseflow._src.ops.random_ops import random_uniform as uniform
