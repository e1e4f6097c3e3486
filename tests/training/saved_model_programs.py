"""TF1 SavedModel programs, written once for any TF1-style module (``tf`` is passed in).

``write_model`` exports a small classifier: a dense layer over ``x`` plus a vocabulary lookup of
``word`` (an asset file, initialized by the main op). ``load_and_run`` loads a SavedModel and
runs its serving signature on fixed inputs. ``tests/training/record_saved_model.py`` (run by hand
with TensorFlow) writes ``saved_model_data/tf_written`` with TensorFlow and records what
TensorFlow computes from it and from a SavedModel written by sparseflow.
"""

import os

import numpy as np

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], dtype=np.float32)
WORDS = np.array([b"cat", b"zebra", b"dog"])
VOCAB = ["dog", "cat", "bird"]


def write_model(tf, export_dir, vocab_path, as_text=False):
    """Builds, initializes and exports the model; returns what it computes on X / WORDS."""
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        word = tf.placeholder(tf.string, [None], name="word")
        w = tf.get_variable("dense/kernel", initializer=np.arange(6, dtype=np.float32).reshape(3, 2) / 4.0)
        b = tf.get_variable("dense/bias", initializer=np.array([0.5, -0.5], dtype=np.float32))
        logits = tf.nn.bias_add(tf.matmul(x, w), b, name="logits")
        probs = tf.nn.softmax(logits, name="probs")
        vocab_file = tf.constant(vocab_path, name="vocab_path")
        graph.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, vocab_file)
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            vocab_file, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER),
            default_value=-1)
        ids = tf.identity(table.lookup(word), name="word_ids")
        sess.run(tf.global_variables_initializer())
        sess.run(tf.tables_initializer())
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        predict = tf.saved_model.signature_def_utils.predict_signature_def(
            {"x": x, "word": word}, {"probs": probs, "ids": ids})
        classify_in = tf.placeholder(tf.string, [None], name="examples")
        scores = tf.identity(tf.zeros([tf.size(classify_in), 2]) + probs[:1], name="scores")
        classify = tf.saved_model.signature_def_utils.classification_signature_def(classify_in, None, scores)
        builder.add_meta_graph_and_variables(
            sess, [tf.saved_model.tag_constants.SERVING],
            signature_def_map={tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict,
                               "classify": classify},
            assets_collection=graph.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            main_op=tf.tables_initializer())
        builder.add_meta_graph([tf.saved_model.tag_constants.TRAINING])
        builder.save(as_text=as_text)
        p, i = sess.run([probs, ids], {x: X, word: WORDS})
    return {"probs": np.round(p, 6).tolist(), "ids": i.tolist()}


def load_and_run(tf, export_dir):
    """Loads the serving graph into a fresh graph and runs the default signature."""
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
        sig = meta.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        feeds = {sig.inputs["x"].name: X, sig.inputs["word"].name: WORDS}
        p, i = sess.run([sig.outputs["probs"].name, sig.outputs["ids"].name], feeds)
        variables = sorted(v.op.name for v in tf.global_variables())
        return {"probs": np.round(p, 6).tolist(), "ids": np.asarray(i).tolist(), "variables": variables,
                "signatures": sorted(meta.signature_def), "method": sig.method_name,
                "tags": sorted(meta.meta_info_def.tags)}


def files(export_dir):
    out = []
    for root, _, names in os.walk(export_dir):
        out += [os.path.relpath(os.path.join(root, n), export_dir) for n in names]
    return sorted(out)
