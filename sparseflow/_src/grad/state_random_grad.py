"""Explicit "no gradient" entries for random ops and variable state ops.

Random draws do not depend differentiably on their shape, seed or count inputs. Variables,
assignments and scatter updates change state: like TensorFlow, autodiff does not flow through
them (a variable is a leaf; its gradient is taken at the value read from it).

Example:
    >>> from sparseflow._src.grad.registry import get_gradient_function, NOT_DIFFERENTIABLE
    >>> get_gradient_function("AssignAdd") is NOT_DIFFERENTIABLE
    True
"""

from __future__ import annotations

from sparseflow._src.grad.registry import NotDifferentiable
from sparseflow._src.ops.training_ops import DENSE_OPS, SPARSE_OPS

__all__: list[str] = []

RANDOM_OPS = ("RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal",
              "RandomShuffle", "Multinomial")
CANDIDATE_SAMPLING_OPS = ("UniformCandidateSampler", "LogUniformCandidateSampler", "LearnedUnigramCandidateSampler",
                          "ThreadUnsafeUnigramCandidateSampler", "FixedUnigramCandidateSampler",
                          "AllCandidateSampler", "ComputeAccidentalHits")
STATE_OPS = ("VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized", "CountUpTo",
             "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax",
             "ScatterUpdate", "ScatterNdAdd", "ScatterNdSub", "ScatterNdUpdate")

for _op_type in RANDOM_OPS + CANDIDATE_SAMPLING_OPS + STATE_OPS + DENSE_OPS + SPARSE_OPS:
    NotDifferentiable(_op_type)
