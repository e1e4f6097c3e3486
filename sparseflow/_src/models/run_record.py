"""What a model directory records about the run that wrote it, and the check of a config against it.

``run_config.json`` holds the config a model directory was trained with (every table with its
defaults). A config whose *model* keys (``config_schema.Key.structural``: the model type and
sizes, the features, the label, the optimizer types) differ from the record is refused with a
message naming each difference, before anything is read or restored; other keys (epochs, learning
rates, data paths) may change and are listed as notes. ``--overwrite`` removes the directory's
checkpoints and records first.

Example:
    >>> differences({"model": {"type": "wide_deep"}}, {"model": {"type": "deepfm"}})
    ["model.type: 'wide_deep' in the model directory, 'deepfm' in this config"]
"""

from __future__ import annotations

import json
import os

from sparseflow._src.models.config import Config
from sparseflow._src.models.config_schema import KEYS

__all__ = ["RECORD_FILE", "FEATURES_FILE", "differences", "check", "write_json", "remove_run"]

RECORD_FILE = "run_config.json"
FEATURES_FILE = "features.json"
_OPTIMIZER_KEYS = ("wide_optimizer", "deep_optimizer", "dense_optimizer")


def _view(document: dict, structural: bool) -> dict:
    out = {}
    for (section, name), key in KEYS.items():
        if key.structural != structural and name not in _OPTIMIZER_KEYS:  # (an optimizer's arguments are notes)
            continue
        value = document.get(section, {}).get(name)
        if structural and name in _OPTIMIZER_KEYS and isinstance(value, dict):
            value = value.get("type")  # a new learning rate keeps the optimizer's slots; a new type does not
        out[f"{section}.{name}"] = value
    return out


def _describe(name, old, new) -> str:
    if isinstance(old, list) and isinstance(new, list) and all(isinstance(x, str) for x in old + new):
        added, removed = [x for x in new if x not in old], [x for x in old if x not in new]
        if added or removed:
            parts = ([f"{', '.join(map(repr, added))} added"] if added else []) + \
                ([f"{', '.join(map(repr, removed))} removed"] if removed else [])
            return f"{name}: {' and '.join(parts)}"
    return f"{name}: {old!r} in the model directory, {new!r} in this config"


def differences(recorded: dict, current: dict, structural: bool = True) -> list[str]:
    """The differences of two config documents in their model keys (or, with ``structural=False``,
    in the other keys), one text each."""
    old, new = _view(recorded, structural), _view(current, structural)
    return [_describe(k, old[k], new[k]) for k in old if old[k] != new[k]]


def _load(path):
    with open(path) as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path} is not valid JSON ({e}); remove the model directory or use --overwrite") from e


def check(model_dir: str, cfg: Config, has_checkpoint: bool, log=None) -> None:
    """Refuses ``cfg`` when ``model_dir`` holds a checkpoint of a config with other model keys."""
    path = os.path.join(model_dir, RECORD_FILE)
    if not has_checkpoint or not os.path.exists(path):
        return
    recorded = _load(path)
    diffs = differences(recorded.get("config", {}), cfg.document)
    if diffs:
        was = recorded.get("source", "another config")
        raise ValueError(f"model_dir {model_dir} holds a model trained with another config ({was}): "
                         f"{'; '.join(diffs)}. Use that config, another --model-dir, or --overwrite to start afresh "
                         "(removes its checkpoints)")
    notes = differences(recorded.get("config", {}), cfg.document, structural=False)
    if notes and log is not None:
        print(f"changed since the checkpoint: {'; '.join(notes)}", file=log, flush=True)


def write_json(path: str, doc: dict) -> None:
    """Writes ``doc`` atomically (a crash leaves the old file or the new one)."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write(model_dir: str, cfg: Config, fitted: dict) -> None:
    write_json(os.path.join(model_dir, FEATURES_FILE), fitted)
    write_json(os.path.join(model_dir, RECORD_FILE), {"source": cfg.source, "config": cfg.document})


def remove_run(model_dir: str) -> list[str]:
    """Removes the checkpoints and records of a model directory (other files stay); returns their names."""
    if not os.path.isdir(model_dir):
        return []
    gone = []
    for name in sorted(os.listdir(model_dir)):
        if name in ("checkpoint", RECORD_FILE, FEATURES_FILE) or name.startswith("model.ckpt"):
            path = os.path.join(model_dir, name)
            if os.path.isfile(path):
                os.remove(path)
                gone.append(name)
    return gone
