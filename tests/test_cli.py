"""``sparseflow train / evaluate / predict`` on a small config: results on stdout (the last line is
always one JSON object), messages on stderr; errors are one clear line and a non-zero exit."""

import json
import os

import numpy as np
import pytest

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
epochs = 3
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
    captured = capsys.readouterr()
    assert captured.out.count("\n") == 1  # stdout: the result only; progress and messages on stderr
    trained = json.loads(captured.out)
    assert set(trained) >= {"auc", "accuracy", "logloss", "train_examples", "skipped"} and trained["auc"] > 0.7
    assert "epoch 3/3" in captured.err and "checkpoints: " in captured.err
    assert main(["evaluate", str(cfg), "--model-dir", mdir]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert evaluated["auc"] == trained["auc"]
    out = tmp_path / "p.txt"
    assert main(["predict", str(cfg), "--model-dir", mdir, "--output", str(out)]) == 0
    assert json.loads(capsys.readouterr().out) == {"predictions": 300, "skipped": 0, "output": str(out)}
    assert np.loadtxt(out).shape == (300,)


def test_errors_are_reported_without_traceback(tmp_path, capsys):
    assert main(["evaluate", "no_such_config"]) == 1
    captured = capsys.readouterr()
    assert "no config file" in captured.err
    assert "no config file" in json.loads(captured.out.splitlines()[-1])["error"]
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
    assert f"checkpoints: {expected}" in capsys.readouterr().err.splitlines()
    assert any(f.startswith("model.ckpt-") for f in os.listdir(expected))
    assert main(["evaluate", str(cfg)]) == 0
    assert expected in capsys.readouterr().err  # names the checkpoint it evaluated
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


def _setup(tmp_path, config=CONFIG, n_train=300):
    _write_synthetic(tmp_path / "train.csv", n_train, 0)
    _write_synthetic(tmp_path / "test.csv", 100, 1)
    cfg = tmp_path / "c.toml"
    cfg.write_text(config)
    return str(cfg)


def _one_clear_error(capsys, *needles):
    captured = capsys.readouterr()
    err = captured.err
    errors = [line for line in err.splitlines() if " error: " in line]
    assert "Traceback" not in err and len(errors) == 1, err  # (a progress bar may come before)
    for needle in needles:
        assert needle in err, err
    assert "error" in json.loads(captured.out.splitlines()[-1])  # the last line on stdout is valid JSON
    return err


def test_a_nan_in_a_numeric_feature_is_refused_naming_file_line_and_column(tmp_path, capsys):
    cfg = _setup(tmp_path)
    lines = (tmp_path / "train.csv").read_text().splitlines()
    fields = lines[6].split(",")
    fields[3] = "nan"
    lines[6] = ",".join(fields)
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n")
    mdir = tmp_path / "model"
    assert main(["train", cfg, "--model-dir", str(mdir)]) == 1
    _one_clear_error(capsys, "train.csv:7, column 'v': not a finite number: 'nan'")
    assert not mdir.exists() or not any(p.name.endswith(".index") for p in mdir.iterdir())


def test_a_diverging_loss_stops_training_without_a_checkpoint(tmp_path, capsys):
    cfg = _setup(tmp_path, CONFIG.replace("embedding_dim = 4", "embedding_dim = 4\n"
                                          "dense_optimizer = {type = \"sgd\", learning_rate = 1e30}"))
    mdir = tmp_path / "model"
    assert main(["train", cfg, "--model-dir", str(mdir)]) == 1
    _one_clear_error(capsys, "training diverged: the loss is", "nothing of this epoch was saved")
    assert not any(p.name.endswith(".index") for p in mdir.iterdir())


@pytest.mark.parametrize("key, value, message", [
    ("batch_size", "0", "[train] batch_size must be an integer >= 1, got 0"),
    ("batch_size", "\"64\"", "[train] batch_size must be an integer, got '64'"),
    ("epochs", "-1", "[train] epochs must be an integer >= 0, got -1"),
    ("eval_batch_size", "0", "[train] eval_batch_size must be an integer >= 1"),
    ("shuffle", "1", "[train] shuffle must be true or false"),
])
def test_bad_train_settings_are_one_line_errors(tmp_path, capsys, key, value, message):
    text = "\n".join(line for line in CONFIG.splitlines() if not line.startswith(f"{key} ="))
    cfg = _setup(tmp_path, text.replace("[train]\n", f"[train]\n{key} = {value}\n"))
    assert main(["train", cfg]) == 1
    _one_clear_error(capsys, message)


def test_bad_model_settings_are_one_line_errors(tmp_path, capsys):
    cfg = _setup(tmp_path, CONFIG.replace("hidden_units = [8]", "hidden_units = [8, 0]"))
    assert main(["train", cfg]) == 1
    _one_clear_error(capsys, "[model] hidden_units must be an integer >= 1, got 0")


def test_retraining_with_other_hidden_units_is_one_clear_error_and_keeps_the_checkpoint(tmp_path, capsys):
    cfg = _setup(tmp_path)
    mdir = str(tmp_path / "model")
    assert main(["train", cfg, "--model-dir", mdir]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in (tmp_path / "model").iterdir())
    other = tmp_path / "other.toml"
    other.write_text(CONFIG.replace("hidden_units = [8]", "hidden_units = [16]"))
    assert main(["train", str(other), "--model-dir", mdir]) == 1
    _one_clear_error(capsys, "holds a model trained with another config", "model.hidden_units: [8] in the model "
                     "directory, [16] in this config", "another --model-dir", "--overwrite")
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == before
    assert main(["evaluate", cfg, "--model-dir", mdir]) == 0  # the old checkpoint still works


def test_evaluating_a_corrupt_checkpoint_is_one_clear_error(tmp_path, capsys):
    cfg = _setup(tmp_path)
    mdir = tmp_path / "model"
    assert main(["train", cfg, "--model-dir", str(mdir)]) == 0
    capsys.readouterr()
    data = next(p for p in mdir.iterdir() if ".data-" in p.name)
    raw = bytearray(data.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    data.write_bytes(bytes(raw))
    assert main(["evaluate", cfg, "--model-dir", str(mdir)]) == 1
    _one_clear_error(capsys, "sparseflow evaluate: error:", "is corrupt", "CRC-32")


def test_a_checkpoint_without_a_run_record_is_still_checked_by_the_restore(tmp_path, capsys):
    cfg = _setup(tmp_path)
    mdir = tmp_path / "model"
    assert main(["train", cfg, "--model-dir", str(mdir)]) == 0
    (mdir / "run_config.json").unlink()  # a model directory of an older sparseflow
    other = tmp_path / "other.toml"
    other.write_text(CONFIG.replace("hidden_units = [8]", "hidden_units = [16]"))
    capsys.readouterr()
    assert main(["train", str(other), "--model-dir", str(mdir)]) == 1
    _one_clear_error(capsys, "holds a checkpoint this config's model cannot restore", "has shape",
                     "Nothing was restored")


def test_version_and_negative_epochs(capsys):
    from sparseflow._src.version import __version__

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"sparseflow {__version__}"
    with pytest.raises(SystemExit) as e:
        main(["train", "adult_wide_deep", "--epochs", "-1"])
    assert e.value.code == 2 and "--epochs: must be an integer >= 0, got -1" in capsys.readouterr().err


def test_help_has_no_rst_markup(capsys):
    for argv in (["--help"], ["train", "--help"], ["launch", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        assert "``" not in capsys.readouterr().out
