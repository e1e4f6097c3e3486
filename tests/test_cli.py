"""``sparseflow train / evaluate / predict`` on a small config; errors are one clear line."""

import json
import os

import numpy as np

from sparseflow._src.models.config import PACKAGE_DIR
from sparseflow.cli import main
from tests.models.test_models import _write_synthetic

CONFIG = """
[data]
columns = ["x", "a", "b", "v", "y"]
label = "y"
positive = "yes"
train = "train.csv"
eval = "test.csv"
[features]
numeric = ["v"]
categorical = ["x", "a", "b"]
crosses = [["a", "b"]]
[model]
hidden_units = [8]
embedding_dim = 4
[train]
epochs = 1
batch_size = 64
model_dir = "model"
"""


def test_train_evaluate_predict(tmp_path, capsys):
    _write_synthetic(tmp_path / "train.csv", 1500, 0)
    _write_synthetic(tmp_path / "test.csv", 300, 1)
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG)
    mdir = str(tmp_path / "model")
    assert main(["train", str(cfg), "--model-dir", mdir]) == 0
    trained = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(trained) >= {"auc", "accuracy", "logloss"} and trained["auc"] > 0.7
    assert main(["evaluate", str(cfg), "--model-dir", mdir]) == 0
    evaluated = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert evaluated["auc"] == trained["auc"]
    out = tmp_path / "p.txt"
    assert main(["predict", str(cfg), "--model-dir", mdir, "--output", str(out)]) == 0
    assert np.loadtxt(out).shape == (300,)


def test_errors_are_reported_without_traceback(tmp_path, capsys):
    assert main(["evaluate", "no_such_config"]) == 1
    assert "no config file" in capsys.readouterr().err
    _write_synthetic(tmp_path / "train.csv", 100, 0)
    _write_synthetic(tmp_path / "test.csv", 100, 1)
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG)
    assert main(["evaluate", str(cfg), "--model-dir", str(tmp_path / "empty")]) == 1
    assert "no checkpoint" in capsys.readouterr().err


def test_default_model_dir_is_per_config_in_the_working_directory(tmp_path, monkeypatch, capsys):
    _write_synthetic(tmp_path / "train.csv", 600, 0)
    _write_synthetic(tmp_path / "test.csv", 200, 1)
    cfg = tmp_path / "small.toml"
    cfg.write_text(CONFIG.replace('model_dir = "model"\n', ""))
    monkeypatch.chdir(tmp_path)
    expected = os.path.join(str(tmp_path), "sparseflow_runs", "small")
    assert main(["train", str(cfg)]) == 0
    assert f"checkpoints: {expected}" in capsys.readouterr().out.splitlines()
    assert any(f.startswith("model.ckpt-") for f in os.listdir(expected))
    assert main(["evaluate", str(cfg)]) == 0
    assert expected in capsys.readouterr().out  # names the checkpoint it evaluated
    assert main(["predict", str(cfg), "--output", "p.txt"]) == 0
    assert np.loadtxt(tmp_path / "p.txt").shape == (200,)


def test_model_dir_inside_the_package_is_refused(tmp_path, capsys):
    _write_synthetic(tmp_path / "train.csv", 100, 0)
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG)
    inside = os.path.join(PACKAGE_DIR, "runs")
    assert main(["train", str(cfg), "--model-dir", inside]) == 1
    assert "inside the installed sparseflow package" in capsys.readouterr().err
    assert not os.path.exists(inside)
