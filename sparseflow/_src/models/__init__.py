"""Public names of the models layer (re-exported by sparseflow/models.py): Wide&Deep and DeepFM over
dynamic embedding tables, config files, and the train / evaluate / predict loops of the CLI."""

from sparseflow._src.models.config import Config, load_config, model_dir_of, parse_config
from sparseflow._src.models.deepfm import DeepFM
from sparseflow._src.models.features import FeatureSpec, FitStats
from sparseflow._src.models.metrics import binary_metrics, log_loss, roc_auc
from sparseflow._src.models.trainer import TrainingInterrupted, build_model, evaluate, predict, train
from sparseflow._src.models.wide_deep import ModelGraph, WideDeep

__all__ = ["Config", "DeepFM", "FeatureSpec", "FitStats", "ModelGraph", "TrainingInterrupted", "WideDeep",
           "binary_metrics", "build_model", "evaluate", "load_config", "log_loss", "model_dir_of", "parse_config",
           "predict", "roc_auc", "train"]
