"""Distribution strategies: how a model is laid out on a cluster and trained there (see strategy.py)."""

from sparseflow._src.training.distribute.mirrored_strategies import HybridStrategy, MultiWorkerMirroredStrategy
from sparseflow._src.training.distribute.ps_strategies import ParameterServerStrategy, PsStrategy
from sparseflow._src.training.distribute.strategy import Strategy

__all__ = ["HybridStrategy", "MultiWorkerMirroredStrategy", "ParameterServerStrategy", "PsStrategy", "Strategy"]
