"""Wide&Deep / DeepFM models, their configs and the train/evaluate/predict loops."""

import io
import json
import os

import numpy as np
import pytest

from sparseflow._src.models import (
    DeepFM,
    FeatureSpec,
    WideDeep,
    evaluate,
    load_config,
    model_dir_of,
    parse_config,
    predict,
    roc_auc,
    train,
)

CRITEO = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "criteo")


def _write_synthetic(path, n, seed):
    """A CSV whose label depends on a categorical (x), an interaction (a, b) and a numeric (v)."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for _ in range(n):
            x, a, b, v = rng.integers(0, 20), rng.integers(0, 3), rng.integers(0, 3), rng.normal()
            logit = (1.5 if x < 10 else -1.5) + (2.0 if a == b else -1.0) + v
            y = int(rng.random() < 1 / (1 + np.exp(-logit)))
            f.write(f"x{x},{a},{b},{v:.3f},{'yes' if y else 'no'}\n")


def _doc(tmp_path, model_type="wide_deep"):
    return {"data": {"columns": ["x", "a", "b", "v", "y"], "label": "y", "positive": "yes",
                     "data_dir": str(tmp_path), "train": "train.csv", "eval": "test.csv"},
            "features": {"numeric": ["v"], "categorical": ["x", "a", "b"], "crosses": [["a", "b"]]},
            "model": {"type": model_type, "embedding_dim": 4, "hidden_units": [16]},
            "train": {"epochs": 2, "batch_size": 64, "model_dir": str(tmp_path / "model")}}


@pytest.fixture
def synthetic(tmp_path):
    _write_synthetic(tmp_path / "train.csv", 3000, 0)
    _write_synthetic(tmp_path / "test.csv", 1000, 1)
    return tmp_path


def test_feature_keys_are_per_field_and_missing_is_a_category():
    spec = FeatureSpec(columns=["a", "b", "y"], label="y", categorical=["a", "b"], crosses=[["a", "b"]])
    inputs = spec.transform({"a": ["1", "?", "1"], "b": ["1", "1", ""], "y": ["1", "0", "0"]})
    assert inputs.wide.dtype == np.uint64 and inputs.wide.shape == (3, 3)
    assert inputs.wide[0, 0] != inputs.wide[0, 1]  # same value "1", different fields
    assert inputs.wide[0, 0] == inputs.wide[2, 0] and inputs.wide[0, 2] != inputs.wide[2, 2]
    assert inputs.deep.shape == (3, 2) and inputs.numeric.shape == (3, 0)
    assert inputs.label.ravel().tolist() == [1.0, 0.0, 0.0]


def test_numeric_features_need_fit_and_are_standardized():
    spec = FeatureSpec(columns=["n", "y"], label="y", numeric=["n"], log1p=["n"])
    raw = {"n": ["0", str(np.e - 1), ""], "y": ["0", "1", "0"]}
    with pytest.raises(ValueError, match="fit"):
        spec.transform(raw)
    spec.fit(raw)
    col = spec.transform(raw).numeric[:, 0]
    assert abs(col.mean()) < 1e-6 and abs(col.std() - 1) < 1e-5 and col[0] == col[2]


def test_config_errors_name_the_problem(tmp_path):
    doc = _doc(tmp_path)
    doc["model"]["hiden_units"] = [3]
    with pytest.raises(ValueError, match="hiden_units"):
        parse_config(doc)
    doc = _doc(tmp_path)
    doc["model"]["type"] = "xgboost"
    with pytest.raises(ValueError, match="type must be one of"):
        parse_config(doc)
    doc = _doc(tmp_path)
    doc["features"]["crosses"] = [["a", "nope"]]
    with pytest.raises(ValueError, match="nope"):
        parse_config(doc)
    with pytest.raises(FileNotFoundError, match="adult_wide_deep"):
        load_config("no_such_config")


def test_bundled_configs_parse():
    for name in ("adult_wide_deep", "adult_deepfm", "criteo_wide_deep", "criteo_deepfm"):
        cfg = load_config(name)
        assert cfg.model["type"] in ("wide_deep", "deepfm") and cfg.train_paths


def test_roc_auc_matches_pairwise_definition_with_ties():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300), 1)
    pos, neg = s[y == 1], s[y == 0]
    pairwise = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (
        len(pos) * len(neg))
    assert abs(roc_auc(y, s) - pairwise) < 1e-12
    assert np.isnan(roc_auc([1, 1], [0.2, 0.3]))


@pytest.mark.parametrize("model_type", ["wide_deep", "deepfm"])
def test_train_learns_then_resumes_evaluates_and_predicts(synthetic, model_type):
    cfg = parse_config(_doc(synthetic, model_type))
    out = io.StringIO()
    metrics = train(cfg, out=out, progress=io.StringIO())
    lines = out.getvalue().strip().splitlines()
    assert json.loads(lines[-1]) == metrics
    assert metrics["auc"] > 0.8 and metrics["accuracy"] > 0.7
    model_dir = synthetic / "model"
    assert any(f.startswith("model.ckpt-") for f in os.listdir(model_dir))

    # evaluate restores dense variables and tables: same metrics as at the end of training
    out = io.StringIO()
    again = evaluate(parse_config(_doc(synthetic, model_type)), out=out)
    assert json.loads(out.getvalue().strip().splitlines()[-1]) == again
    assert again["auc"] == metrics["auc"] and again["logloss"] == metrics["logloss"]

    # re-running train resumes at the saved step: with the same epochs there is nothing left to do
    out = io.StringIO()
    resumed = train(parse_config(_doc(synthetic, model_type)), out=out, progress=io.StringIO())
    assert "resumed from" in out.getvalue() and "epoch" not in out.getvalue()
    assert resumed["auc"] == metrics["auc"]
    out = io.StringIO()
    train(parse_config(_doc(synthetic, model_type)), epochs=3, out=out, progress=io.StringIO())
    assert "epoch 3/3" in out.getvalue() and "epoch 2/3" not in out.getvalue()

    preds = synthetic / "preds.txt"
    n = predict(parse_config(_doc(synthetic, model_type)), str(preds))
    p = np.loadtxt(preds)
    assert n == 1000 and p.shape == (1000,) and ((p > 0) & (p < 1)).all()


def test_model_dir_defaults_to_sparseflow_runs_of_the_config_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bundled = load_config("adult_wide_deep")
    assert "model_dir" not in bundled.train  # no fixed shared path such as /tmp/sparseflow/...
    assert model_dir_of(bundled) == str(tmp_path / "sparseflow_runs" / "adult_wide_deep")
    doc = _doc(tmp_path)
    del doc["train"]["model_dir"]
    assert model_dir_of(parse_config(doc)) == str(tmp_path / "sparseflow_runs" / "wide_deep")
    doc["train"]["model_dir"] = "runs/a"  # relative to the working directory, as an Estimator's model_dir
    assert model_dir_of(parse_config(doc)) == str(tmp_path / "runs" / "a")
    assert model_dir_of(parse_config(doc), str(tmp_path / "given")) == str(tmp_path / "given")


def test_evaluate_without_checkpoint_is_a_clear_error(synthetic):
    with pytest.raises(FileNotFoundError, match="sparseflow train"):
        evaluate(parse_config(_doc(synthetic)), out=io.StringIO())


def test_models_build_from_python():
    import sparseflow as tf

    for cls in (WideDeep, DeepFM):
        with tf.Graph().as_default():
            g = cls(num_wide=3, num_deep=2, num_numeric=1, embedding_dim=4, hidden_units=[8, 4]).build()
            assert g.prob.shape.as_list() == [None, 1]
    with pytest.raises(ValueError, match="unknown table optimizer"):
        WideDeep(1, 1, 0, wide_optimizer={"type": "lbfgs"})


def test_dropout_only_in_training_and_embedding_stddev():
    import sparseflow as tf

    with tf.Graph().as_default():
        model = WideDeep(num_wide=1, num_deep=2, num_numeric=1, embedding_dim=16, hidden_units=[64],
                         embedding_stddev=0.01, dropout=0.5)
        g = model.build()
        feed = {g.wide: np.array([[1]] * 8, np.uint64), g.deep: np.arange(16, dtype=np.uint64).reshape(8, 2),
                g.numeric: np.ones((8, 1), np.float32), g.label: np.ones((8, 1), np.float32)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run(g.logits, feed), sess.run(g.logits, feed)
            assert not np.allclose(a, b)  # a new dropout mask each training step
            rows = sess.run(model.deep_table.lookup(g.deep, training=False), feed)
            assert 0.005 < rows.std() < 0.02  # rows were created by the training lookups
            np.testing.assert_array_equal(sess.run(g.prob, feed), sess.run(g.prob, feed))
    with pytest.raises(ValueError, match="dropout"):
        WideDeep(1, 1, 0, dropout=1.0)


@pytest.mark.skipif(not os.path.isdir(CRITEO), reason="Criteo 8k sample not present")
def test_criteo_wide_deep_beats_logistic_regression_floor(tmp_path):
    # Issue 5's goal is AUC >= 0.735; this config measured 0.7386 (seed 0), 0.7352 mean over seeds 0-4
    # (0.7386, 0.7392, 0.7321, 0.7344, 0.7316); sklearn LR floor: 0.728 +- 0.02.
    cfg = load_config("criteo_wide_deep", data_dir=CRITEO)
    metrics = train(cfg, model_dir=str(tmp_path), out=io.StringIO(), progress=io.StringIO())
    assert metrics["examples"] == 800
    assert metrics["auc"] >= 0.735


def test_log_buckets_and_min_frequency():
    spec = FeatureSpec(columns=["n", "c", "y"], label="y", numeric=["n"], categorical=["c"], log_buckets=["n"],
                       min_frequency=2)
    raw = {"n": ["0", "2", "10", ""], "c": ["a", "a", "b", ""], "y": ["1", "0", "1", "0"]}
    assert spec._log_bucket(raw, "n") == ["0", "2", "5", ""]  # floor(ln(10)^2) = 5
    with pytest.raises(ValueError, match="fit"):
        spec.transform(raw)
    spec.fit(raw)
    assert spec.vocab == {"c": ["a"]}
    test = {"n": ["1", "1", "1"], "c": ["b", "zz", "a"], "y": ["0", "0", "0"]}
    deep = spec.transform(test).deep  # columns: c, n_log
    assert deep[0, 0] == deep[1, 0] != deep[2, 0]  # rare and unseen values share one key
    again = FeatureSpec(columns=["n", "c", "y"], label="y", numeric=["n"], categorical=["c"], log_buckets=["n"],
                        min_frequency=2)
    again.load_fitted(json.loads(json.dumps(spec.fitted)))
    assert np.array_equal(again.transform(test).deep, deep)


def test_data_dir_argument_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = load_config("criteo_wide_deep", data_dir="data")
    assert cfg.train_paths == [str(tmp_path / "data" / "criteo_8k_train.txt")]
