"""The README's main job: Wide&Deep on the bundled Adult data trains end to end (fewer epochs here)."""

import io
import json

from sparseflow._src.apps.adult import load_adult


def test_adult_loader_shapes_and_labels():
    train, test = load_adult()
    assert train.x.shape == (32561, len(train.feature_names))
    assert test.x.shape == (16281, len(train.feature_names))
    assert abs(float(train.y.mean()) - 0.2408) < 1e-3
    assert abs(float(test.y.mean()) - 0.2362) < 1e-3


def test_demo_trains_wide_deep_and_prints_final_json(tmp_path):
    from sparseflow._src.apps.demo import run

    out, log = io.StringIO(), io.StringIO()
    metrics = run(epochs=2, model_dir=str(tmp_path), out=out, log=log)
    lines = log.getvalue().strip().splitlines()
    assert "Wide&Deep" in lines[0] and any(line.startswith("epoch 2/2") and "examples/s" in line for line in lines)
    assert lines[-1].startswith("eval: auc ")
    assert json.loads(out.getvalue()) == metrics and metrics["examples"] == 16281  # stdout: the JSON line only
    assert metrics["auc"] > 0.90 and metrics["accuracy"] > 0.845
