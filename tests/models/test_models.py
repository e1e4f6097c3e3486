"""Wide&Deep / DeepFM models, their configs and the train/evaluate/predict loops."""

import io
import json
import os

import numpy as np
import pytest

from sparseflow._src.models import (
    DeepFM,
    FeatureSpec,
    FitStats,
    WideDeep,
    evaluate,
    load_config,
    model_dir_of,
    parse_config,
    predict,
    roc_auc,
    train,
)


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


def _block(spec, text, tmp_path, name="t.csv"):
    """The reader block of CSV ``text`` under ``spec``'s schema."""
    from sparseflow._src.data.readers import read_csv

    path = tmp_path / name
    path.write_text(text)
    return read_csv(str(path), spec.schema(), header=False, column_names=spec.columns).read_all()


def test_feature_keys_are_per_field_and_missing_is_a_category(tmp_path):
    spec = FeatureSpec(columns=["a", "b", "y"], label="y", categorical=["a", "b"], crosses=[["a", "b"]])
    inputs = spec.transform(_block(spec, "1,1,1\n?,1,0\n1,,0\n", tmp_path))
    wide = inputs["wide"]
    assert wide.dtype == np.uint64 and wide.shape == (3, 3)
    assert wide[0, 0] != wide[0, 1]  # same value "1", different fields
    assert wide[0, 0] == wide[2, 0] and wide[0, 2] != wide[2, 2]
    assert wide[1, 0] != wide[2, 1]  # missing: a category of its own, per field
    assert inputs["deep"].shape == (3, 2) and inputs["numeric"].shape == (3, 0)
    assert inputs["label"].ravel().tolist() == [1.0, 0.0, 0.0]


def test_keys_are_the_readers_salted_hashes():
    import pyarrow as pa

    from sparseflow._src.data.readers import hashing
    from sparseflow._src.models.features import _value_key

    keys = hashing.salt_keys(hashing.hash_strings(pa.array(["x"])), "col", None)
    assert keys[0] == _value_key("col", "x")


def test_numeric_features_need_fit_and_are_standardized(tmp_path):
    spec = FeatureSpec(columns=["n", "y"], label="y", numeric=["n"], log1p=["n"])
    block = _block(spec, f"0,0\n{np.e - 1},1\n,0\n", tmp_path)
    with pytest.raises(ValueError, match="not fitted"):
        spec.transform(block)
    stats = FitStats(spec)
    stats.add(block)
    stats.finish()
    col = spec.transform(block)["numeric"][:, 0]
    assert abs(col.mean()) < 1e-6 and abs(col.std() - 1) < 1e-5 and col[0] == col[2]


def test_fit_statistics_merge_over_blocks_like_one_pass():
    spec = FeatureSpec(columns=["n", "y"], label="y", numeric=["n"])
    rng = np.random.default_rng(0)
    values = rng.normal(3.0, 2.0, 1000)
    stats = FitStats(spec)
    for part in np.array_split(values, 7):
        stats.add({"n": part.astype(np.float32), "y": np.array([b"1"] * len(part), dtype=object)})
    stats.finish()
    mean, std = spec.stats["n"]
    v = values.astype(np.float32).astype(np.float64)
    assert abs(mean - v.mean()) < 1e-9 and abs(std - v.std()) < 1e-9
    assert stats.rows == 1000 and stats.positives == 1000


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
    out, log = io.StringIO(), io.StringIO()
    metrics = train(cfg, out=out, log=log)
    assert out.getvalue().count("\n") == 1  # stdout: the result only
    assert json.loads(out.getvalue()) == metrics
    assert metrics["auc"] > 0.8 and metrics["accuracy"] > 0.7
    assert metrics["train_examples"] == 3000 and metrics["skipped"] == 0
    model_dir = synthetic / "model"
    assert any(f.startswith("model.ckpt-") for f in os.listdir(model_dir))
    assert {"run_config.json", "features.json"} <= set(os.listdir(model_dir))

    # evaluate restores dense variables and tables: same metrics as at the end of training
    out = io.StringIO()
    again = evaluate(parse_config(_doc(synthetic, model_type)), out=out, log=io.StringIO())
    assert json.loads(out.getvalue()) == again
    assert again["auc"] == metrics["auc"] and again["logloss"] == metrics["logloss"]

    # re-running train resumes at the saved step: with the same epochs there is nothing left to do
    log = io.StringIO()
    resumed = train(parse_config(_doc(synthetic, model_type)), out=io.StringIO(), log=log)
    assert "resumed from" in log.getvalue() and "epoch" not in log.getvalue()
    assert resumed["auc"] == metrics["auc"]
    log = io.StringIO()
    train(parse_config(_doc(synthetic, model_type)), epochs=3, out=io.StringIO(), log=log)
    assert "epoch 3/3" in log.getvalue() and "epoch 2/3" not in log.getvalue()

    preds = synthetic / "preds.txt"
    result = predict(parse_config(_doc(synthetic, model_type)), str(preds), log=io.StringIO())
    p = np.loadtxt(preds)
    assert result["predictions"] == 1000 and p.shape == (1000,) and ((p > 0) & (p < 1)).all()


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
        evaluate(parse_config(_doc(synthetic)), out=io.StringIO(), log=io.StringIO())


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


def test_log_buckets_and_min_frequency(tmp_path):
    spec = FeatureSpec(columns=["n", "c", "y"], label="y", numeric=["n"], categorical=["c"], log_buckets=["n"],
                       min_frequency=2)
    train_block = _block(spec, "0,a,1\n2,a,0\n10,b,1\n,,0\n", tmp_path)
    with pytest.raises(ValueError, match="not fitted"):
        spec.transform(train_block)
    stats = FitStats(spec)
    stats.add(train_block)
    stats.finish()
    assert len(spec.vocab["c"]) == 1  # only "a" was seen twice
    logs = spec.transform(train_block)["deep"][:, 1]  # deep columns: c, n_log
    again = spec.transform(_block(spec, "2,a,1\n10,a,1\n12,a,1\n0.5,a,1\n", tmp_path, "u.csv"))["deep"][:, 1]
    assert logs[1] == again[0] and logs[2] == again[1]  # 2 -> "2"; floor(ln(10)^2) = 5
    assert again[1] != again[2]  # ln(12)^2 = 6.17 -> bucket 6, ln(10)^2 = 5.30 -> bucket 5
    assert logs[0] == again[3]  # 0 and 0.5 -> 0
    test = _block(spec, "1,b,0\n1,zz,0\n1,a,0\n", tmp_path, "v.csv")
    deep = spec.transform(test)["deep"]
    assert deep[0, 0] == deep[1, 0] != deep[2, 0]  # rare and unseen values share one key
    other = FeatureSpec(columns=["n", "c", "y"], label="y", numeric=["n"], categorical=["c"], log_buckets=["n"],
                        min_frequency=2)
    other.load_fitted(json.loads(json.dumps(spec.fitted)))
    assert np.array_equal(other.transform(test)["deep"], deep)


def test_data_dir_argument_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = load_config("criteo_wide_deep", data_dir="data")
    assert cfg.train_paths == [str(tmp_path / "data" / "criteo_8k_train.txt")]
