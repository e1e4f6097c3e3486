"""``sparseflow train CONFIG --ps N --workers M [--sync]`` (or ``--strategy ps|multi_worker_mirrored|hybrid``):
the config's model trained on a local cluster of processes (127.0.0.1), to the local run's accuracy; its
checkpoints serve ``evaluate`` and resume."""

import json

import pytest

from sparseflow.cli import main
from tests.models.test_models import _write_synthetic
from tests.test_cli import CONFIG


def _result(capsys):
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert len(lines) == 1, captured.out  # stdout: the result only; the tasks' lines go to stderr
    return json.loads(lines[0]), captured.err


LAYOUTS = {"async": ["--ps", "2"], "sync": ["--ps", "2", "--sync"], "ps_strategy": ["--strategy", "ps"],
           "mirrored": ["--strategy", "multi_worker_mirrored"], "hybrid": ["--strategy", "hybrid"]}
MODES = {"sync": "sync", "mirrored": "sync", "hybrid": "hybrid"}  # the others: async


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(LAYOUTS))
def test_wide_deep_on_adult_with_2_workers_reaches_the_local_demo_bar(tmp_path, capsys, mode):
    mdir = str(tmp_path / "model")
    assert main(["train", "adult_wide_deep", *LAYOUTS[mode], "--workers", "2", "--model-dir", mdir]) == 0
    trained, err = _result(capsys)
    assert trained["mode"] == MODES.get(mode, "async") and trained["workers"] == 2
    assert trained["ps"] == (2 if mode in ("async", "sync") else 0)
    assert trained["accuracy"] >= 0.855 and trained["auc"] >= 0.908, trained
    assert "[worker:1] worker 1:" in err and "[launch] all workers finished" in err
    # 8 epochs of 32561 rows, 256 a batch: 128 global steps an epoch, 64 in sync mode (two batches a step)
    assert trained["global_step"] >= (1024 if mode == "async" else 512)
    assert main(["evaluate", "adult_wide_deep", "--model-dir", mdir]) == 0  # a local session reads it
    evaluated, _ = _result(capsys)
    assert evaluated["auc"] == trained["auc"] and evaluated["accuracy"] == trained["accuracy"]


@pytest.mark.parametrize("mode", ["async", "sync", "ps_strategy", "mirrored", "hybrid"])
def test_a_cluster_run_resumes_from_its_checkpoint(tmp_path, capsys, mode):
    _write_synthetic(tmp_path / "train.csv", 1200, 0)
    _write_synthetic(tmp_path / "test.csv", 300, 1)
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG)
    layout = {"async": ["--ps", "1"], "sync": ["--ps", "1", "--sync"], "ps_strategy": ["--strategy", "ps"],
              "mirrored": ["--strategy", "mirrored"], "hybrid": ["--strategy", "hybrid", "--staleness", "2"]}[mode]
    args = ["train", str(cfg), *layout, "--workers", "2", "--model-dir", str(tmp_path / "model")]
    per_epoch = -(-1200 // (64 * (1 if mode in ("async", "ps_strategy") else 2)))
    assert main([*args, "--epochs", "1"]) == 0
    first, err = _result(capsys)
    assert "from the initial model" in err
    # async: the other worker may be in the middle of one more step when a worker reads the last one
    assert per_epoch <= first["global_step"] <= per_epoch + 1
    assert main([*args, "--epochs", "2"]) == 0
    second, err = _result(capsys)
    assert f"resuming at global step {first['global_step']}" in err
    assert 2 * per_epoch <= second["global_step"] <= 2 * per_epoch + 1
    assert 0.5 < second["auc"] <= 1.0 and second["train_examples"] == 1200


def test_cluster_flags_need_ps_tasks(capsys):
    assert main(["train", "adult_wide_deep", "--workers", "2"]) == 2
    assert "--ps N" in capsys.readouterr().err
    assert main(["train", "adult_wide_deep", "--strategy", "ps", "--ps", "1"]) == 1
    assert "no ps tasks" in capsys.readouterr().err
    assert main(["train", "adult_wide_deep", "--strategy", "hybrid", "--ps", "1"]) == 1
    assert "the hybrid strategy has no ps tasks" in capsys.readouterr().err
    assert main(["train", "adult_wide_deep", "--strategy", "mirrored", "--workers", "2", "--sync"]) == 1
    assert "synchronous by itself" in capsys.readouterr().err
    assert main(["train", "adult_wide_deep", "--strategy", "ps", "--staleness", "2"]) == 1
    assert "--staleness is an option of the hybrid strategy" in capsys.readouterr().err
