"""A TF1 export program: tf.app.flags (TF1 keyword names, lazy parse), tf.app.run, a small model
trained a few steps, exported with SavedModelBuilder (predict + regress signatures, serve and train
tag-sets, a main op, an asset), loaded back with tf.saved_model.loader.load into a new graph (also
under an import scope), and signature helpers; results printed as RESULT lines."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
import os
import sys
import tempfile

import numpy as np

# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

flags = tf.app.flags
flags.DEFINE_integer("steps", 3, "Training steps.")
flags.DEFINE_float(flag_name="learning_rate", default_value=0.1, docstring="SGD learning rate.")
flags.DEFINE_string("model_name", "linear", "Name recorded in the export.")
flags.DEFINE_boolean("export_text", False, "Write saved_model.pbtxt.")
flags.DEFINE_list("tags", ["serve"], "Serving tags.")
FLAGS = flags.FLAGS


def RESULT(name, value):
    arr = np.asarray(value)
    toks = []
    for v in arr.ravel().tolist():
        if isinstance(v, float):
            toks.append(f"{v:.6g}")
        else:
            toks.append(v.decode() if isinstance(v, bytes) else str(v))
    print(f"RESULT {name} {' '.join(toks)}")


def main(argv):
    RESULT("argv_rest", argv[1:])
    RESULT("flags", [FLAGS.steps, FLAGS.learning_rate, FLAGS.model_name, FLAGS.export_text, "|".join(FLAGS.tags)])
    work = tempfile.mkdtemp()
    export_dir = os.path.join(work, "export")
    labels_file = os.path.join(work, "labels.txt")
    with open(labels_file, "w") as f:
        f.write("neg\npos\n")
    x_val = np.array([[1.0, 2.0], [0.5, -1.0], [-1.5, 0.25]], dtype=np.float32)
    y_val = np.array([[1.0], [0.0], [-1.0]], dtype=np.float32)
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", initializer=np.array([[0.1], [-0.2]], dtype=np.float32))
        b = tf.get_variable("b", initializer=np.array([0.05], dtype=np.float32))
        tf.get_variable("served", [], tf.int64, tf.zeros_initializer(), trainable=False,
                                  collections=[tf.GraphKeys.LOCAL_VARIABLES])
        pred = tf.add(tf.matmul(x, w), b, name="prediction")
        loss = tf.reduce_mean(tf.square(pred - y))
        train = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)
        asset = tf.constant(labels_file, name="labels_path")
        graph.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        examples = tf.placeholder(tf.string, [None], name="examples")
        regress_out = tf.identity(tf.zeros([tf.size(examples), 1]) + b, name="regress_out")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.local_variables_initializer())
            for _ in range(FLAGS.steps):
                sess.run(train, {x: x_val, y: y_val})
            RESULT("trained_loss", sess.run(loss, {x: x_val, y: y_val}))
            predict = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": pred})
            regress = tf.saved_model.signature_def_utils.regression_signature_def(examples, regress_out)
            RESULT("signature_valid", [tf.saved_model.signature_def_utils.is_valid_signature(predict),
                                       tf.saved_model.signature_def_utils.is_valid_signature(regress)])
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            builder.add_meta_graph_and_variables(
                sess, FLAGS.tags,
                signature_def_map={tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict,
                                   "regress": regress},
                assets_collection=graph.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
                main_op=tf.group(tf.local_variables_initializer(), tf.tables_initializer()))
            builder.add_meta_graph([tf.saved_model.tag_constants.TRAINING], clear_devices=True)
            path = builder.save(as_text=FLAGS.export_text)
    RESULT("saved_model_file", os.path.basename(path))
    RESULT("files", sorted(os.path.relpath(os.path.join(r, n), export_dir) for r, _, ns in os.walk(export_dir)
                           for n in ns))
    RESULT("maybe_saved_model", tf.saved_model.loader.maybe_saved_model_directory(export_dir))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, FLAGS.tags, export_dir)
        sig = meta.signature_def["serving_default"]
        RESULT("signature_keys", sorted(meta.signature_def))
        RESULT("signature_io", [sig.method_name, sig.inputs["x"].name, sig.outputs["y"].name,
                                sig.inputs["x"].tensor_shape.dim[1].size])
        RESULT("served", sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: x_val}))
        reg = meta.signature_def["regress"]
        RESULT("regressed", sess.run(reg.outputs["outputs"].name, {reg.inputs["inputs"].name: [b"a", b"b"]}))
        RESULT("local_after_main_op", sess.run("served:0"))
        RESULT("variables", sorted(v.op.name for v in tf.global_variables()))
        asset_defs = meta.collection_def["saved_model_assets"].any_list.value
        RESULT("assets", len(asset_defs))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["train"], export_dir, import_scope="restored")
        RESULT("train_tags", list(meta.meta_info_def.tags))
        RESULT("train_restored_w", sess.run("restored/w:0"))
        try:
            tf.saved_model.loader.load(sess, ["gpu"], export_dir)
        except RuntimeError as e:
            RESULT("missing_tags_error", "could not be found in SavedModel" in str(e))
    return 0


if __name__ == "__main__":
    tf.app.run(main=main, argv=[sys.argv[0], "--steps=5", "--learning_rate=0.2", "--tags=serve,cpu",
                                "--noexport_text", "extra_arg"])
