"""Every key of a model config: its section, type, default and meaning, as data.

``config.py`` checks configs against this table (unknown keys, types, defaults) and
``docs/configs.md`` is generated from it (``python tools/gen_config_docs.py``; a test checks that
the file is up to date).

Example:
    >>> KEYS[("train", "batch_size")].default
    256
    >>> check_type(KEYS[("train", "batch_size")], "64")
    Traceback (most recent call last):
    ...
    ValueError: config [train] batch_size must be an integer, got '64'
"""

from __future__ import annotations

import dataclasses

__all__ = ["Key", "KEYS", "SECTIONS", "check_type", "defaults_of", "keys_of", "markdown"]

SECTIONS = {
    "data": "Where the examples are and how their files are read.",
    "features": "How raw columns become model inputs: numeric values, hashed categorical keys, buckets and crosses.",
    "model": "The model and its optimizers.",
    "train": "The training run.",
}

_NO_DEFAULT = object()  # a required key


@dataclasses.dataclass(frozen=True)
class Key:
    section: str
    name: str
    type: str  # "string", "bool", "integer", "number", "list of strings", ... (see check_type)
    default: object
    meaning: str
    # keys the checkpoint depends on: a model directory refuses a config that changes them
    structural: bool = False

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT


def _k(section, name, type_, default, meaning, structural=False):
    return (section, name), Key(section, name, type_, default, meaning, structural)


_OPTIMIZER = ("table {type = ..., learning_rate = ..., other arguments of the optimizer}")
KEYS: dict[tuple[str, str], Key] = dict([
    # ------------------------------------------------------------------ [data]
    _k("data", "train", "path or list of paths", _NO_DEFAULT,
       "Training files. Relative paths are taken from `data_dir`. CSV/TSV, JSON lines or Parquet, each "
       "optionally compressed (`.gz`, `.bz2`, `.zst`); files are streamed, never loaded whole."),
    _k("data", "eval", "path or list of paths", None,
       "Evaluation files (same formats). `train` evaluates on them after training, `evaluate` and "
       "`predict` read them by default."),
    _k("data", "data_dir", "string", None,
       "Base directory of relative data paths. Default: the config file's directory. `@adult` is the "
       "Adult data shipped with sparseflow. `--data-dir DIR` (relative to the working directory) wins; a "
       "bundled config that reads data not shipped with sparseflow needs `--data-dir`."),
    _k("data", "format", "string", "auto",
       "`auto` (by extension: `.csv` `.tsv` `.txt` `.data` `.test` are CSV/TSV, `.json` `.jsonl` `.ndjson` "
       "JSON lines, `.parquet` `.pq` Parquet; after removing a compression suffix), `csv`, `json` or "
       "`parquet`."),
    _k("data", "columns", "list of strings", None,
       "The columns of CSV/TSV files without a header line, in order. Required for such files; for "
       "files with a header, JSON lines and Parquet the columns are found by name."),
    _k("data", "header", "bool or \"auto\"", "auto",
       "Whether CSV/TSV files start with a line of column names. `auto`: a first line whose fields are "
       "exactly `columns` is a header (checked per file, so a training file with a header and evaluation "
       "files without one work together)."),
    _k("data", "delimiter", "string", ",", "The field separator of CSV/TSV files (`\"\\t\"` for TSV)."),
    _k("data", "skip_initial_space", "bool", False,
       "Strip blanks around categorical values (`a, b` reads `b`); numbers are always read with blanks."),
    _k("data", "comment_prefix", "string", None,
       "Lines at the top of a CSV/TSV file that start with this text are skipped (the Adult test file "
       "starts with `|1x3 Cross validator`)."),
    _k("data", "label", "string", _NO_DEFAULT, "The label column.", structural=True),
    _k("data", "positive", "string or list of strings", ["1"],
       "Label values that mean 1 (compared as text: a JSON or Parquet number by its shortest decimal "
       "form, `1.0` as `1`). Every other value means 0. A run whose training labels are all one class "
       "stops with an error that lists the values seen.", structural=True),
    _k("data", "id", "string", None,
       "A column copied into the predictions of `predict` next to each probability (also "
       "`predict --id-column`)."),
    _k("data", "bad_records", "string", "error",
       "What a bad record does (a value that is not a number in a numeric column, `nan`/`inf`, a "
       "missing label, a wrong number of fields, invalid UTF-8 or JSON): `error` stops with the file, "
       "line, column and text; `skip` drops the record; `default` reads a bad feature value as missing "
       "(a record without a single bad value to replace is skipped). Skipped and defaulted records are "
       "counted in the run's summary."),
    _k("data", "reject_file", "string", None,
       "Where bad records are written (JSON lines: file, line, column, reason, text) under `skip` or "
       "`default`; relative to the working directory. Evaluation and prediction data write theirs "
       "next to it, with `-eval` / `-predict` before the extension."),
    # ------------------------------------------------------------------ [features]
    _k("features", "numeric", "list of strings", [],
       "Numeric columns, fed to the deep part standardized by the training data's mean and deviation "
       "(a missing value reads as 0 before standardizing).", structural=True),
    _k("features", "log1p", "list of strings", [],
       "Numeric columns transformed by `log1p(max(x, 0))` before standardizing (counts).", structural=True),
    _k("features", "categorical", "list of strings", [],
       "Categorical columns: each value becomes a uint64 key (FarmHash Fingerprint64 of its text, salted "
       "by the column) of the dynamic embedding tables; no vocabulary, no hash buckets. A missing value is "
       "a category of its own.", structural=True),
    _k("features", "buckets", "table {column = [boundaries]}", {},
       "Numeric columns bucketized by these boundaries into the categorical feature `<column>_bucket` "
       "(a missing value is a bucket of its own).", structural=True),
    _k("features", "log_buckets", "list of strings", [],
       "Numeric columns also discretized as `floor(ln(x)^2)` (x > 2, else the integer x) into the "
       "categorical feature `<column>_log` (TensorFlow's Criteo baseline).", structural=True),
    _k("features", "crosses", "list of lists of strings", [],
       "Crosses of two or more categorical or bucket features: one key per combination of values, "
       "named `a_x_b`.", structural=True),
    _k("features", "wide", "list of strings", None,
       "Features of the wide (linear) part. Default: every categorical, bucket and cross feature.",
       structural=True),
    _k("features", "deep", "list of strings", None,
       "Features embedded for the deep part. Default: every categorical and bucket feature.", structural=True),
    _k("features", "missing", "list of strings", ["", "?"],
       "Texts that mean a missing value (the empty field always does).", structural=True),
    _k("features", "min_frequency", "integer", 1,
       "Categorical values seen fewer times in the training data share one key per column.", structural=True),
    # ------------------------------------------------------------------ [model]
    _k("model", "type", "string", "wide_deep",
       "`wide_deep` (Cheng et al., 2016) or `deepfm` (Guo et al., 2017: Wide&Deep plus pairwise "
       "factorization-machine interactions of the deep embeddings).", structural=True),
    _k("model", "embedding_dim", "integer", 8, "Width of the deep embeddings.", structural=True),
    _k("model", "embedding_stddev", "number", None,
       "Standard deviation of new embedding rows (truncated normal). Default `1/sqrt(embedding_dim)`; "
       "smaller values (0.1) keep training inputs close to serving inputs, where unseen keys read zeros."),
    _k("model", "hidden_units", "list of integers", [128, 64], "Sizes of the ReLU layers of the MLP.",
       structural=True),
    _k("model", "dropout", "number", 0.0, "Rate of hidden units dropped in training steps, in [0, 1)."),
    _k("model", "l2", "number", 0.0, "L2 penalty on the MLP's weights."),
    _k("model", "admission", "integer", 1, "Sightings of a key in training before it gets table rows."),
    _k("model", "wide_optimizer", _OPTIMIZER, {"type": "ftrl", "learning_rate": 0.1},
       "Sparse optimizer of the wide table's rows: `sgd`, `adagrad`, `rowwise_adagrad`, `adam` or `ftrl`.",
       structural=True),
    _k("model", "deep_optimizer", _OPTIMIZER, {"type": "adagrad", "learning_rate": 0.05},
       "Sparse optimizer of the deep table's rows (same types).", structural=True),
    _k("model", "dense_optimizer", _OPTIMIZER, {"type": "adam", "learning_rate": 0.001},
       "Optimizer of the dense weights: `adam`, `adagrad`, `sgd`, `ftrl`, `momentum` or `rmsprop`.",
       structural=True),
    # ------------------------------------------------------------------ [train]
    _k("train", "epochs", "integer", 1, "Passes over the training data (`--epochs` wins); >= 0."),
    _k("train", "batch_size", "integer", 256, "Examples per training step; >= 1."),
    _k("train", "eval_batch_size", "integer", 4096, "Examples per evaluation or prediction step; >= 1."),
    _k("train", "seed", "integer", 0, "Seed of the initial weights, dropout and shuffling; >= 0."),
    _k("train", "shuffle", "bool", True, "Shuffle the training examples every epoch."),
    _k("train", "shuffle_buffer", "integer", 200000,
       "Examples in the shuffle buffer (memory grows with it, not with the data); >= 1."),
    _k("train", "model_dir", "string", None,
       "Checkpoint directory, relative to the working directory (`--model-dir` wins). Default "
       "`sparseflow_runs/<config name>`. It records the config it was trained with: a config that "
       "changes the model (a key marked *model* below) is refused there; `--overwrite` starts afresh."),
])


def keys_of(section: str) -> set:
    return {name for (s, name) in KEYS if s == section}


def defaults_of(section: str) -> dict:
    """The defaults of a section's optional keys that have one."""
    return {k.name: k.default for k in KEYS.values()
            if k.section == section and k.default is not None and not k.required}


def _is_str_list(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_CHECKS = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "bool or \"auto\"": (lambda v: isinstance(v, bool) or v == "auto", "true, false or \"auto\""),
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "number": (_is_number, "a number"),
    "list of strings": (_is_str_list, "a list of strings"),
    "list of integers": (lambda v: isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool)
                                                               for x in v), "a list of integers"),
    "list of lists of strings": (lambda v: isinstance(v, list) and all(_is_str_list(x) for x in v),
                                 "a list of lists of strings"),
    "path or list of paths": (lambda v: isinstance(v, str) or _is_str_list(v), "a path or a list of paths"),
    "string or list of strings": (lambda v: isinstance(v, str) or _is_str_list(v),
                                  "a string or a list of strings"),
    "table {column = [boundaries]}": (lambda v: isinstance(v, dict) and all(
        isinstance(b, list) and all(_is_number(x) for x in b) for b in v.values()),
        "a table of column = [boundaries] (numbers)"),
    _OPTIMIZER: (lambda v: isinstance(v, dict) and isinstance(v.get("type", ""), str),
                 "a table {type = \"...\", learning_rate = ...}"),
}


def check_type(key: Key, value) -> None:
    """ValueError unless ``value`` has ``key``'s type."""
    ok, what = _CHECKS[key.type]
    if not ok(value):
        raise ValueError(f"config [{key.section}] {key.name} must be {what}, got {value!r}")


def _default_text(key: Key) -> str:
    if key.required:
        return "required"
    if key.default is None:
        return "—"
    v = key.default
    if isinstance(v, bool):
        return "`true`" if v else "`false`"
    if isinstance(v, str):
        return f"`\"{v}\"`"
    if isinstance(v, dict):
        return "`{" + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + "}`"
    return f"`{_toml(v)}`"


def _toml(v) -> str:
    if isinstance(v, str):
        return f"\"{v}\""
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return str(v)


def markdown() -> str:
    """``docs/configs.md``: every key with its type, default and meaning."""
    out = ["# Config reference", "",
           "<!-- generated from sparseflow/_src/models/config_schema.py by `python tools/gen_config_docs.py`; "
           "tests/models/test_config_docs.py checks it -->", "",
           "A config is a TOML file (YAML too, with PyYAML installed) with four tables. `sparseflow train "
           "CONFIG` takes a file or the name of a bundled config (`adult_wide_deep`, `adult_deepfm`, "
           "`criteo_wide_deep`, `criteo_deepfm`; their files are in `sparseflow/_src/models/configs/`). "
           "Unknown keys and values of the wrong type are errors that name the key.", "",
           "Keys marked *model* define the model's variables and inputs: a model directory records them and "
           "refuses a config that changes them (naming each difference); `--overwrite` starts afresh. "
           "Other keys (epochs, learning rates of the same optimizer type, data paths, ...) may change "
           "between runs.", ""]
    for section, about in SECTIONS.items():
        out += [f"## [{section}]", "", about, "", "| key | type | default | meaning |", "|---|---|---|---|"]
        for key in KEYS.values():
            if key.section == section:
                mark = " *model*" if key.structural else ""
                meaning = key.meaning.replace("|", "\\|")
                out.append(f"| `{key.name}`{mark} | {key.type.replace('|', '/')} | {_default_text(key)} | "
                           f"{meaning} |")
        out.append("")
    return "\n".join(out)
