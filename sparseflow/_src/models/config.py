"""Model configs: a TOML (or, when PyYAML is installed, YAML) file describing the data schema, the
features, the model and the training run. The bundled configs are in ``configs/`` next to this
module; ``load_config("adult_wide_deep")`` finds one by name.

Sections (see ``configs/adult_wide_deep.toml`` for a complete example)::

    [data]      columns, label, positive (label values meaning 1), delimiter, skip_initial_space,
                comment_prefix, train (path or list), eval (path or list), data_dir (base of
                relative paths; "@adult" is the bundled Adult data)
    [features]  numeric, log1p, categorical, buckets = {col = [boundaries]}, log_buckets (numeric
                columns also as floor(ln(x)^2) categories "<col>_log"), crosses = [[a, b]], wide, deep
                (default: all categoricals+buckets+crosses / categoricals+buckets), missing,
                min_frequency (rarer training values of a categorical share one key; default 1)
    [model]     type = "wide_deep" | "deepfm", embedding_dim, embedding_stddev (initial deep rows:
                truncated normal; default 1/sqrt(dim)), hidden_units, dropout (training only), l2,
                admission, wide_optimizer, deep_optimizer, dense_optimizer (tables {type = "ftrl",
                learning_rate = 0.1, ...})
    [train]     epochs, batch_size, eval_batch_size, seed, shuffle, model_dir (checkpoints; relative to the
                working directory; default ``sparseflow_runs/<config name>``, see :func:`model_dir_of`)

Example:
    >>> cfg = load_config("adult_wide_deep")
    >>> cfg.model["type"], cfg.features.label, os.path.basename(cfg.train_paths[0])
    ('wide_deep', 'income', 'adult.data')
"""

from __future__ import annotations

import dataclasses
import os
import tomllib

from sparseflow._src.models.features import FeatureSpec

__all__ = ["Config", "load_config", "parse_config", "model_dir_of", "CONFIG_DIR", "BUNDLED_DATA", "RUNS_DIR"]

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs")
BUNDLED_DATA = {"@adult": os.path.join(PACKAGE_DIR, "data", "adult")}
RUNS_DIR = "sparseflow_runs"  # default parent of model directories, in the working directory
_DATA_KEYS = {"columns", "label", "positive", "delimiter", "skip_initial_space", "comment_prefix", "train", "eval",
              "data_dir"}
_FEATURE_KEYS = {"numeric", "log1p", "categorical", "buckets", "log_buckets", "crosses", "wide", "deep", "missing",
                 "min_frequency"}
_MODEL_KEYS = {"type", "embedding_dim", "hidden_units", "l2", "wide_optimizer", "deep_optimizer", "dense_optimizer",
               "admission", "embedding_stddev", "dropout"}
_TRAIN_KEYS = {"epochs", "batch_size", "eval_batch_size", "seed", "model_dir", "shuffle"}
MODEL_TYPES = ("wide_deep", "deepfm")


@dataclasses.dataclass
class Config:
    features: FeatureSpec
    train_paths: list
    eval_paths: list
    model: dict
    train: dict
    read_options: dict
    source: str = "<dict>"

    @property
    def name(self) -> str:
        """The config file's name without extension (``adult_wide_deep``); the model type for a
        config built from a dict."""
        if self.source == "<dict>":
            return self.model["type"]
        return os.path.splitext(os.path.basename(self.source))[0]


def model_dir_of(cfg: Config, model_dir: str | None = None) -> str:
    """The absolute model directory of a run: ``model_dir``, else the config's ``[train] model_dir``,
    else ``sparseflow_runs/<config name>``; relative paths are taken from the working directory (as
    a TensorFlow Estimator's ``model_dir``). A directory inside the installed package is refused.

    Example:
        >>> os.path.relpath(model_dir_of(load_config("adult_wide_deep")))
        'sparseflow_runs/adult_wide_deep'
    """
    path = os.path.abspath(os.path.expanduser(model_dir or cfg.train.get("model_dir") or
                                              os.path.join(RUNS_DIR, cfg.name)))
    package = os.path.realpath(PACKAGE_DIR)
    if os.path.commonpath([os.path.realpath(path), package]) == package:
        raise ValueError(f"model_dir {path} is inside the installed sparseflow package ({package}); "
                         "give a directory of your own (--model-dir DIR or [train] model_dir)")
    return path


def _check_keys(section, table, allowed):
    unknown = set(table) - allowed
    if unknown:
        raise ValueError(f"config [{section}]: unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")


def _int_at_least(section, key, value, low):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"config [{section}] {key} must be an integer >= {low}, got {value!r}")


def _check_values(model, train):
    """Values the run divides by, loops over or sizes arrays with: refused here, not as a traceback later."""
    for key, low in (("epochs", 0), ("batch_size", 1), ("eval_batch_size", 1), ("seed", 0)):
        _int_at_least("train", key, train[key], low)
    if not isinstance(train["shuffle"], bool):
        raise ValueError(f"config [train] shuffle must be true or false, got {train['shuffle']!r}")
    if "embedding_dim" in model:
        _int_at_least("model", "embedding_dim", model["embedding_dim"], 1)
    units = model.get("hidden_units", [])
    if not isinstance(units, list):
        raise ValueError(f"config [model] hidden_units must be a list of layer sizes, got {units!r}")
    for u in units:
        _int_at_least("model", "hidden_units", u, 1)
    for key, high in (("dropout", 1.0), ("l2", float("inf")), ("embedding_stddev", float("inf"))):
        v = model.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < high):
            raise ValueError(f"config [model] {key} must be a number in [0, {high}), got {v!r}")


def _paths(value, base):
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [p if os.path.isabs(p) else os.path.normpath(os.path.join(base, p)) for p in items]


def parse_config(doc: dict, base_dir: str = ".", data_dir: str | None = None, source: str = "<dict>") -> Config:
    """A :class:`Config` from a parsed document; relative data paths are taken from ``data_dir``
    (argument, relative to the working directory; else ``[data] data_dir``, relative to
    ``base_dir``; ``@adult`` = bundled)."""
    _check_keys("top level", doc, {"data", "features", "model", "train"})
    data, feats = dict(doc.get("data", {})), dict(doc.get("features", {}))
    model, train = dict(doc.get("model", {})), dict(doc.get("train", {}))
    for name, table, keys in (("data", data, _DATA_KEYS), ("features", feats, _FEATURE_KEYS),
                              ("model", model, _MODEL_KEYS), ("train", train, _TRAIN_KEYS)):
        _check_keys(name, table, keys)
    for key in ("columns", "label", "train"):
        if key not in data:
            raise ValueError(f"config [data] needs {key!r}")
    model.setdefault("type", "wide_deep")
    if model["type"] not in MODEL_TYPES:
        raise ValueError(f"config [model] type must be one of {MODEL_TYPES}, got {model['type']!r}")
    if data_dir is not None and data_dir not in BUNDLED_DATA:
        data_dir = os.path.abspath(data_dir)  # an argument is relative to the working directory
    base = data_dir or data.get("data_dir", ".")
    base = BUNDLED_DATA.get(base, base)
    if not os.path.isabs(base):
        base = os.path.join(base_dir, base)
    positive = data.get("positive", ["1"])
    spec = FeatureSpec(columns=list(data["columns"]), label=data["label"],
                       positive=[positive] if isinstance(positive, str) else list(positive),
                       **{k: v for k, v in feats.items()})
    read_options = {"delimiter": data.get("delimiter", ","),
                    "skip_initial_space": data.get("skip_initial_space", False),
                    "comment_prefix": data.get("comment_prefix")}
    train.setdefault("epochs", 1)
    train.setdefault("batch_size", 256)
    train.setdefault("eval_batch_size", 4096)
    train.setdefault("seed", 0)
    train.setdefault("shuffle", True)
    _check_values(model, train)
    return Config(spec, _paths(data["train"], base), _paths(data.get("eval"), base), model, train, read_options,
                  source)


def load_config(path: str, data_dir: str | None = None, overrides: dict | None = None) -> Config:
    """Reads a ``.toml`` / ``.yaml`` config file, or a bundled one by name (``"adult_wide_deep"``).
    ``overrides`` maps ``"section.key"`` to values (e.g. ``{"train.epochs": 1}``)."""
    if not os.path.exists(path):
        bundled = os.path.join(CONFIG_DIR, path if path.endswith(".toml") else f"{path}.toml")
        if not os.path.exists(bundled):
            names = sorted(f[:-5] for f in os.listdir(CONFIG_DIR) if f.endswith(".toml"))
            raise FileNotFoundError(f"no config file {path!r} (bundled configs: {', '.join(names)})")
        path = bundled
    if path.endswith((".yaml", ".yml")):
        try:
            import yaml
        except ImportError:
            raise ImportError(f"{path}: YAML configs need PyYAML (pip install pyyaml); TOML needs nothing") from None
        with open(path) as f:
            doc = yaml.safe_load(f) or {}
    else:
        with open(path, "rb") as f:
            try:
                doc = tomllib.load(f)
            except tomllib.TOMLDecodeError as e:
                raise ValueError(f"{path}: invalid TOML: {e}") from None
    for dotted, value in (overrides or {}).items():
        section, _, key = dotted.partition(".")
        doc.setdefault(section, {})[key] = value
    base_dir = os.path.dirname(os.path.abspath(path))
    return parse_config(doc, base_dir=base_dir, data_dir=data_dir, source=path)
