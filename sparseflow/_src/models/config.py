"""Model configs: a TOML (or, when PyYAML is installed, YAML) file describing the data, the
features, the model and the training run. Every key, its type, default and meaning is in
``config_schema.KEYS`` (rendered as ``docs/configs.md``). The bundled configs are in ``configs/``
next to this module; ``load_config("adult_wide_deep")`` finds one by name.

Example:
    >>> cfg = load_config("adult_wide_deep")
    >>> cfg.model["type"], cfg.features.label, os.path.basename(cfg.train_paths[0])
    ('wide_deep', 'income', 'adult.data')
    >>> cfg.data["bad_records"], cfg.train["shuffle_buffer"]
    ('error', 200000)
"""

from __future__ import annotations

import copy
import dataclasses
import os
import tomllib

from sparseflow._src.models.config_schema import KEYS, SECTIONS, check_type, defaults_of, keys_of
from sparseflow._src.models.features import FeatureSpec

__all__ = ["Config", "load_config", "parse_config", "model_dir_of", "CONFIG_DIR", "BUNDLED_DATA", "RUNS_DIR"]

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs")
BUNDLED_DATA = {"@adult": os.path.join(PACKAGE_DIR, "data", "adult")}
RUNS_DIR = "sparseflow_runs"  # default parent of model directories, in the working directory
MODEL_TYPES = ("wide_deep", "deepfm")
FORMATS = ("auto", "csv", "json", "parquet")


@dataclasses.dataclass
class Config:
    features: FeatureSpec
    train_paths: list
    eval_paths: list
    model: dict
    train: dict
    data: dict  # the [data] table with its defaults (format, header, delimiter, bad_records, ...)
    source: str = "<dict>"
    document: dict = dataclasses.field(default_factory=dict)  # every table with its defaults (run records)
    data_base: str = "."  # where relative data paths were taken from, and why (for error messages)

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


def _check_table(section, table):
    """Unknown keys, missing required keys and values of the wrong type, named."""
    _check_keys(section, table, keys_of(section))
    for name in keys_of(section):
        key = KEYS[(section, name)]
        if name not in table:
            if key.required:
                raise ValueError(f"config [{section}] needs {name!r} ({key.meaning.split('.')[0].lower()})")
            continue
        check_type(key, table[name])


def _int_at_least(section, key, value, low):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"config [{section}] {key} must be an integer >= {low}, got {value!r}")


def _check_values(model, train):
    """Values the run divides by, loops over or sizes arrays with: refused here, not as a traceback later."""
    for key, low in (("epochs", 0), ("batch_size", 1), ("eval_batch_size", 1), ("seed", 0), ("shuffle_buffer", 1)):
        _int_at_least("train", key, train[key], low)
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


def parse_config(doc: dict, base_dir: str = ".", data_dir: str | None = None, source: str = "<dict>",
                 bundled: bool = False) -> Config:
    """A :class:`Config` from a parsed document; relative data paths are taken from ``data_dir``
    (argument, relative to the working directory; else ``[data] data_dir``, relative to
    ``base_dir``; ``@adult`` = bundled; else ``base_dir``). A ``bundled`` config without a
    ``data_dir`` takes them from the working directory (its own directory is inside the package)."""
    _check_keys("top level", doc, set(SECTIONS))
    tables = {}
    for section in SECTIONS:
        table = doc.get(section, {})
        if not isinstance(table, dict):
            raise ValueError(f"config [{section}] must be a table, got {table!r}")
        _check_table(section, table)
        tables[section] = {**copy.deepcopy(defaults_of(section)), **copy.deepcopy(table)}
    data, feats, model, train = (tables[s] for s in SECTIONS)
    if model["type"] not in MODEL_TYPES:
        raise ValueError(f"config [model] type must be one of {MODEL_TYPES}, got {model['type']!r}")
    if str(data["format"]) not in FORMATS:
        raise ValueError(f"config [data] format must be one of {FORMATS}, got {data['format']!r}")
    if data["bad_records"] not in ("error", "skip", "default"):
        raise ValueError(f"config [data] bad_records must be \"error\", \"skip\" or \"default\", "
                         f"got {data['bad_records']!r}")
    if len(data["delimiter"]) != 1:
        raise ValueError(f"config [data] delimiter must be one character, got {data['delimiter']!r}")
    if data_dir is not None and data_dir not in BUNDLED_DATA:
        data_dir = os.path.abspath(data_dir)  # an argument is relative to the working directory
        why = f"--data-dir {data_dir}"
    elif "data_dir" in data:
        why = f"[data] data_dir of {source}"
    elif bundled:
        why = ("the working directory: this bundled config reads data that sparseflow does not ship; "
               "give --data-dir DIR")
    else:
        why = f"the directory of {source}"
    base = data_dir or data.get("data_dir") or (os.getcwd() if bundled else ".")
    base = BUNDLED_DATA.get(base, base)
    if not os.path.isabs(base):
        base = os.path.join(base_dir, base)
    positive = data["positive"]
    data["positive"] = [positive] if isinstance(positive, str) else list(positive)
    spec_args = {k: v for k, v in feats.items() if k not in ("wide", "deep") or v is not None}
    columns = data.get("columns")
    spec = FeatureSpec(columns=list(columns) if columns is not None else None, label=data["label"],
                       positive=data["positive"], **spec_args)
    _check_values(model, train)
    if int(feats["min_frequency"]) < 1:
        raise ValueError(f"config [features] min_frequency must be >= 1, got {feats['min_frequency']!r}")
    return Config(spec, _paths(data["train"], base), _paths(data.get("eval"), base), model, train, data,
                  source, document=copy.deepcopy(tables), data_base=f"{os.path.normpath(base)} ({why})")


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
    bundled = os.path.realpath(base_dir) == os.path.realpath(CONFIG_DIR)
    return parse_config(doc, base_dir=base_dir, data_dir=data_dir, source=path, bundled=bundled)
