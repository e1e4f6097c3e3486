"""SavedModel in TensorFlow's layout: a SavedModel written by TensorFlow 2.21
(``saved_model_data/tf_written``, by ``record_saved_model.py``) loads and serves here, and ours
has the same files and loads in TensorFlow (recorded below; rerun live with
``SPARSEFLOW_TF_PYTHON=/path/to/python-with-tensorflow``)."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.training.saved_model.tf_tensor_bundle import read_tf_bundle, write_tf_bundle
from tests.training import saved_model_programs as programs

HERE = os.path.dirname(os.path.abspath(__file__))
TF_WRITTEN = os.path.join(HERE, "saved_model_data", "tf_written")
ROOT = os.path.dirname(os.path.dirname(HERE))

# What TensorFlow 2.21 computes on X / WORDS, and what it reports after loading the SavedModel
# that sparseflow writes (python tests/training/record_saved_model.py --sparseflow DIR, then
# /work/tfenv/bin/python tests/training/record_saved_model.py --load DIR).
TF_RESULTS = {"ids": [1, -1, 0], "probs": [[0.651355, 0.348645], [0.665411, 0.334589]]}
TF_LOADED_OURS = {"ids": [1, -1, 0], "method": "tensorflow/serving/predict",
                  "probs": [[0.651355, 0.348645], [0.665411, 0.334589]], "signatures": ["classify", "serving_default"],
                  "tags": ["serve"], "variables": ["dense/bias", "dense/kernel"]}
LAYOUT = ["assets/vocab.txt", "saved_model.pb", "variables/variables.data-00000-of-00001", "variables/variables.index"]


def _check_results(got, want):
    assert got["ids"] == want["ids"]
    np.testing.assert_allclose(got["probs"], want["probs"], rtol=1e-5, atol=1e-6)
    for key in ("method", "signatures", "tags", "variables"):
        if key in want:
            assert got[key] == want[key], key


@pytest.fixture
def ours(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(programs.VOCAB) + "\n")
    export_dir = str(tmp_path / "model")
    computed = programs.write_model(tf, export_dir, str(vocab))
    return export_dir, computed


def test_tensorflow_written_saved_model_loads_and_serves():
    _check_results(programs.load_and_run(tf, TF_WRITTEN), TF_LOADED_OURS)


def test_our_saved_model_has_tensorflow_layout_and_round_trips(ours):
    export_dir, computed = ours
    _check_results(computed, TF_RESULTS)
    assert programs.files(export_dir) == LAYOUT == programs.files(TF_WRITTEN)
    _check_results(programs.load_and_run(tf, export_dir), TF_LOADED_OURS)
    variables = read_tf_bundle(os.path.join(export_dir, "variables", "variables"))
    assert sorted(variables) == ["dense/bias", "dense/kernel"]


def test_assets_are_fed_from_the_export_directory(ours, tmp_path):
    export_dir, _ = ours
    moved = str(tmp_path / "moved")
    shutil.move(export_dir, moved)
    os.remove(tmp_path / "vocab.txt")  # the original asset is gone: the copy under assets/ is used
    _check_results(programs.load_and_run(tf, moved), TF_LOADED_OURS)


def test_text_saved_model_and_training_tag(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(programs.VOCAB) + "\n")
    export_dir = str(tmp_path / "model")
    programs.write_model(tf, export_dir, str(vocab), as_text=True)
    assert os.path.exists(os.path.join(export_dir, "saved_model.pbtxt"))
    _check_results(programs.load_and_run(tf, export_dir), TF_LOADED_OURS)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["train"], export_dir, import_scope="imported")
        assert list(meta.meta_info_def.tags) == ["train"]
        assert sorted(v.op.name for v in tf.global_variables()) == ["imported/dense/bias", "imported/dense/kernel"]
        np.testing.assert_allclose(sess.run("imported/dense/bias:0"), [0.5, -0.5])


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SPARSEFLOW_TF_PYTHON"), reason="set SPARSEFLOW_TF_PYTHON to run TensorFlow")
def test_tensorflow_loads_our_saved_model_live(ours):
    export_dir, _ = ours
    code = (f"import sys, json; sys.path.insert(0, {ROOT!r}); import tensorflow.compat.v1 as tf; "
            f"tf.disable_v2_behavior(); from tests.training import saved_model_programs as p; "
            f"print(json.dumps(p.load_and_run(tf, {export_dir!r})))")
    out = subprocess.run([os.environ["SPARSEFLOW_TF_PYTHON"], "-c", code], capture_output=True, text=True,
                         timeout=240, check=True).stdout
    import json

    _check_results(json.loads(out.strip().splitlines()[-1]), TF_LOADED_OURS)


def test_builder_and_loader_errors(tmp_path):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "x").write_text("x")
    with pytest.raises(AssertionError, match="isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(occupied))
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        with tf.Graph().as_default(), tf.Session() as sess:
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "missing"))
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match="could not be found in SavedModel"):
            tf.saved_model.loader.load(sess, ["gpu"], TF_WRITTEN)
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.Variable(1.0)
        sess.run(v.initializer)
        builder = tf.saved_model.Builder(str(tmp_path / "m"))
        with pytest.raises(AssertionError, match="has not been saved yet"):
            builder.add_meta_graph(["serve"])
        with pytest.raises(KeyError, match="reserved"):
            builder.add_meta_graph_and_variables(sess, ["serve"], {"__saved_model_init_op": tf.saved_model.
                                                 predict_signature_def({"v": v.value()}, {"v": v.value()})})
        builder.add_meta_graph_and_variables(sess, ["serve"])
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["serve"])


def test_signature_helpers_match_tensorflow_rules():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        ex = tf.placeholder(tf.string, [None], name="ex")
        sp = tf.sparse_placeholder(tf.int64, name="sp")
        info = tf.saved_model.utils.build_tensor_info(x)
        assert (info.name, info.dtype, [d.size for d in info.tensor_shape.dim]) == ("x:0", 1, [-1, 3])
        sparse = tf.saved_model.build_tensor_info(sp)
        assert sparse.coo_sparse.values_tensor_name == "sp/values:0"
        assert tf.saved_model.utils.get_tensor_from_tensor_info(info) is x
        with pytest.raises(ValueError, match="cannot be None or empty"):
            tf.saved_model.predict_signature_def({}, {"y": x})
        with pytest.raises(ValueError, match="must be of type string"):
            tf.saved_model.classification_signature_def(x, None, x)
        reg = tf.saved_model.regression_signature_def(ex, tf.reduce_sum(x, 1))
        assert reg.method_name == "tensorflow/serving/regress" and tf.saved_model.is_valid_signature(reg)
        bad = tf.saved_model.build_signature_def({"inputs": info}, {"outputs": info}, "tensorflow/serving/regress")
        assert not tf.saved_model.is_valid_signature(bad)


def test_tf_bundle_detects_corruption(tmp_path):
    prefix = str(tmp_path / "variables")
    write_tf_bundle(prefix, {"a": np.arange(5, dtype=np.int64), "b/c": np.ones((2, 2), np.float64),
                             "flag": np.array([True, False])})
    got = read_tf_bundle(prefix)
    assert got["a"].tolist() == [0, 1, 2, 3, 4] and got["flag"].tolist() == [True, False]
    data = tmp_path / "variables.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[3] ^= 0xFF
    data.write_bytes(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match="'a' is truncated or fails its checksum"):
        read_tf_bundle(prefix)
    with pytest.raises(TypeError, match="holds strings"):
        write_tf_bundle(prefix, {"s": np.array([b"x"], dtype=object)})


def test_runs_as_a_script_argument_free_module():
    # the recording script imports without TensorFlow when asked to write with sparseflow
    proc = subprocess.run([sys.executable, "-c", "import tests.training.record_saved_model"], cwd=ROOT,
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert proc.returncode == 0, proc.stderr
