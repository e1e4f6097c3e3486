"""GraphDefs written by TensorFlow (../shared/tf-graphdefs): parse, import, run with the recorded
feeds and compare with what TensorFlow fetched (float32: rtol 1e-5, atol 1e-6; others exactly)."""

import json
import os

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def import is_registered


def _manifest(shared_dir):
    with open(os.path.join(shared_dir, "tf-graphdefs", "MANIFEST.json")) as f:
        return {entry["graph"]: entry for entry in json.load(f)}


def _load(shared_dir, entry):
    folder = os.path.join(shared_dir, "tf-graphdefs")
    with open(os.path.join(folder, entry["graph"]), "rb") as f:
        gd = tf.GraphDef.FromString(f.read())
    arrays = np.load(os.path.join(folder, entry["arrays"]), allow_pickle=False)
    return gd, arrays


@pytest.mark.parametrize("graph", ["mlp_frozen.pb", "array_ops.pb", "math_ops.pb", "logreg_frozen.pb"])
def test_tensorflow_graph_def_runs_like_tensorflow(shared_dir, graph):
    entry = _manifest(shared_dir)[graph]
    gd, arrays = _load(shared_dir, entry)
    assert sorted({n.op for n in gd.node}) == sorted(entry["ops"])
    missing = sorted(op for op in entry["ops"] if not is_registered(op))
    assert not missing, f"ops not registered in sparseflow: {missing}"
    with tf.Graph().as_default():
        fetches = tf.import_graph_def(gd, return_elements=entry["fetches"], name="")
        feeds = {name: arrays[f"feed_{i}"] for i, name in enumerate(entry["feeds"])}
        with tf.Session() as sess:
            got = sess.run(fetches, feeds)
    for i, (name, value) in enumerate(zip(entry["fetches"], got)):
        want = arrays[f"fetch_{i}"]
        value = np.asarray(value)
        assert value.dtype == want.dtype, f"{name}: dtype {value.dtype}, TensorFlow gave {want.dtype}"
        assert value.shape == want.shape, f"{name}: shape {value.shape}, TensorFlow gave {want.shape}"
        if want.dtype == np.float32:
            np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(value, want, err_msg=name)


@pytest.mark.parametrize("graph", ["mlp_frozen.pb", "array_ops.pb", "math_ops.pb", "logreg_frozen.pb"])
def test_tensorflow_graph_def_structure_survives_import(shared_dir, graph):
    entry = _manifest(shared_dir)[graph]
    gd, _ = _load(shared_dir, entry)
    assert all(is_registered(op) for op in entry["ops"]), entry["ops"]
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="")
    out = {n.name: n for n in g.as_graph_def().node}
    assert sorted(out) == sorted(n.name for n in gd.node)
    for node in gd.node:
        mine = out[node.name]
        assert (mine.op, list(mine.input), mine.device) == (node.op, list(node.input), node.device), node.name
        for key, value in node.attr.items():  # every attr TensorFlow wrote comes back with its value
            if key == "value":
                want = tf.make_ndarray(value.tensor)
                np.testing.assert_array_equal(tf.make_ndarray(mine.attr[key].tensor), want)
            else:
                assert mine.attr[key] == value, f"{node.name}.{key}"
