"""A model directory records the config it was trained with; a config that changes the model is
refused there with a message naming what differs, ``--overwrite`` starts afresh."""

import json

import pytest

from sparseflow._src.models.run_record import differences
from sparseflow.cli import main
from tests.models.test_input_data import _config, _csv, _rows


@pytest.fixture
def trained(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.csv").write_text(_csv(_rows(600, 0)))
    (tmp_path / "test.csv").write_text(_csv(_rows(200, 1)))
    cfg = _config(tmp_path)
    assert main(["train", cfg]) == 0
    capsys.readouterr()
    return tmp_path


def _files(d):
    return sorted(p.name for p in (d / "model").iterdir())


def _other(tmp_path, old, new):
    text = (tmp_path / "c.toml").read_text()
    assert old in text
    (tmp_path / "other.toml").write_text(text.replace(old, new))
    return str(tmp_path / "other.toml")


def test_another_model_type_is_refused_naming_the_difference(trained, capsys):
    before = _files(trained)
    other = _other(trained, "[model]\n", '[model]\ntype = "deepfm"\n')
    for command in ("train", "evaluate"):
        assert main([command, other]) == 1
        captured = capsys.readouterr()
        error = json.loads(captured.out.splitlines()[-1])["error"]
        assert "holds a model trained with another config (" in error
        assert "model.type: 'wide_deep' in the model directory, 'deepfm' in this config" in error
    assert _files(trained) == before  # nothing written


def test_an_added_feature_is_refused_naming_it(trained, capsys):
    other = _other(trained, 'categorical = ["x", "a", "b"]', 'categorical = ["x", "a", "b"]\nlog_buckets = ["v"]')
    assert main(["train", other]) == 1
    error = json.loads(capsys.readouterr().out.splitlines()[-1])["error"]
    assert "features.log_buckets: 'v' added" in error
    other = _other(trained, 'positive = "yes"', 'positive = ["yes", "y"]')
    assert main(["train", other]) == 1
    assert "data.positive: 'y' added" in json.loads(capsys.readouterr().out.splitlines()[-1])["error"]


def test_learning_rates_and_epochs_may_change_and_are_noted(trained, capsys):
    other = _other(trained, "embedding_dim = 4", "embedding_dim = 4\ndense_optimizer = {type = \"adam\", "
                   "learning_rate = 0.01}")
    assert main(["train", other, "--epochs", "4"]) == 0
    err = capsys.readouterr().err
    assert "changed since the checkpoint: model.dense_optimizer:" in err and "epoch 4/4" in err


def test_overwrite_starts_afresh(trained, capsys):
    (trained / "model" / "notes.txt").write_text("mine")
    other = _other(trained, "[model]\n", '[model]\ntype = "deepfm"\n')
    assert main(["train", other, "--overwrite"]) == 0
    captured = capsys.readouterr()
    assert "--overwrite: removed" in captured.err and "resumed" not in captured.err and "epoch 1/3" in captured.err
    record = json.loads((trained / "model" / "run_config.json").read_text())
    assert record["config"]["model"]["type"] == "deepfm" and record["source"].endswith("other.toml")
    assert (trained / "model" / "notes.txt").read_text() == "mine"  # only sparseflow's files are removed
    assert main(["evaluate", other]) == 0


def test_differences_of_optimizers_compare_their_types_only():
    a = {"model": {"wide_optimizer": {"type": "ftrl", "learning_rate": 0.1}}}
    b = {"model": {"wide_optimizer": {"type": "ftrl", "learning_rate": 0.5}}}
    c = {"model": {"wide_optimizer": {"type": "adagrad", "learning_rate": 0.1}}}
    assert differences(a, b) == [] and len(differences(a, b, structural=False)) == 1
    assert differences(a, c) == ["model.wide_optimizer: 'ftrl' in the model directory, 'adagrad' in this config"]
