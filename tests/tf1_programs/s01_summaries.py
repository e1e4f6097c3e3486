"""TensorBoard summaries in a TF1 training program: summary ops (scalar with family, histogram, image,
text, merge_all), a FileWriter with its graph, session logs and run metadata, MonitoredTrainingSession
writing summaries every N steps with a checkpoint hook, SummarySaverHook and ProfilerHook (Chrome
trace), all read back with tf.train.summary_iterator."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
import glob
import json
import os
import shutil
import tempfile

import numpy as np

# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def RESULT(name, value):  # noqa: N802 - the corpus's helper
    a = np.asarray(value)
    if a.size > 32:
        print("RESULT %s.shape %s" % (name, " ".join(str(d) for d in a.shape)))
        print("RESULT %s.sum %.6g" % (name, a.sum(dtype=np.float64)))
        print("RESULT %s.abssum %.6g" % (name, np.abs(a).sum(dtype=np.float64)))
        return
    words = []
    for e in a.ravel().tolist():
        if isinstance(e, bool):
            words.append(str(e))
        elif isinstance(e, int):
            words.append("%d" % e)
        elif isinstance(e, float):
            words.append("%.6g" % e)
        elif isinstance(e, bytes):
            words.append(e.decode())
        else:
            words.append(str(e))
    print("RESULT %s %s" % (name, " ".join(words)))


def events_of(logdir):
    out = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        out.extend(tf.train.summary_iterator(path))
    return out


def describe(prefix, events):
    kinds = ["%d:%s" % (e.step, e.WhichOneof("what")) for e in events]
    RESULT(prefix + "_kinds", kinds)
    for e in events:
        what = e.WhichOneof("what")
        if what == "summary":
            for v in e.summary.value:
                kind = v.WhichOneof("value")
                tag = v.tag.replace("/", "_")
                if kind == "simple_value":
                    RESULT("%s_%d_%s" % (prefix, e.step, tag), v.simple_value)
                elif kind == "histo":
                    RESULT("%s_%d_%s" % (prefix, e.step, tag),
                           [v.histo.num, v.histo.min, v.histo.max, v.histo.sum, len(v.histo.bucket)])
                elif kind == "image":
                    RESULT("%s_%d_%s" % (prefix, e.step, tag), [v.image.height, v.image.width, v.image.colorspace])
                elif kind == "tensor":
                    RESULT("%s_%d_%s" % (prefix, e.step, tag),
                           [v.metadata.plugin_data.plugin_name or "-"] + list(v.tensor.string_val))
        elif what == "session_log":
            RESULT("%s_%d_session_log" % (prefix, e.step),
                   [e.session_log.status, os.path.basename(e.session_log.checkpoint_path) or "-"])
        elif what == "tagged_run_metadata":
            md = tf.RunMetadata()
            md.ParseFromString(e.tagged_run_metadata.run_metadata)
            RESULT("%s_%d_run_metadata" % (prefix, e.step), [e.tagged_run_metadata.tag, len(md.step_stats.dev_stats) > 0])
        elif what == "graph_def":
            gd = tf.GraphDef()
            gd.ParseFromString(e.graph_def)
            names = set(n.name for n in gd.node)
            RESULT("%s_%d_graph_has" % (prefix, e.step), ["w" in names, "train/loss" in names])


root = tempfile.mkdtemp()
try:
    rs = np.random.RandomState(0)
    xs = rs.randn(8, 3).astype(np.float32)
    ys = (xs.dot([1.0, -2.0, 0.5]) + 0.3).astype(np.float32)[:, None]

    graph = tf.Graph()
    with graph.as_default():
        step = tf.train.get_or_create_global_step()
        x = tf.constant(xs)
        y = tf.constant(ys)
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        pred = tf.matmul(x, w)
        with tf.name_scope("train"):
            loss = tf.reduce_mean(tf.square(pred - y), name="loss")
            tf.summary.scalar("loss", loss)
        tf.summary.scalar("lr", tf.constant(0.1), family="hyper")
        tf.summary.histogram("pred", pred)  # (a histogram of w would race with its update)
        tf.summary.image("pred_image", tf.reshape(pred, [1, 2, 4, 1]))
        tf.summary.text("note", tf.constant("linear model"))
        merged = tf.summary.merge_all()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        RESULT("summary_names", [t.op.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)])
        RESULT("merged_name", merged.op.name)

        # 1. A FileWriter by hand.
        hand = os.path.join(root, "hand")
        with tf.Session() as sess:
            writer = tf.summary.FileWriter(hand, sess.graph)
            sess.run(tf.global_variables_initializer())
            writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 0)
            for i in range(3):
                opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if i == 1 else None
                md = tf.RunMetadata()
                summary, _ = sess.run([merged, train_op], options=opts, run_metadata=md)
                writer.add_summary(summary, i)
                if i == 1:
                    writer.add_run_metadata(md, "traced")
            writer.close()
        describe("hand", [e for e in events_of(hand) if e.WhichOneof("what") != "meta_graph_def"])

        # 2. MonitoredTrainingSession: summaries every step, checkpoints every 4 steps, a summary hook on
        # another directory, a profiler hook. (Every step: a run that fetches the global step while it
        # increments it may read either value, so TensorFlow's hooks trigger at steps that vary between
        # runs unless each run triggers; the hooks then read the step again after the run.)
        mts, extra, prof = (os.path.join(root, d) for d in ("mts", "extra", "prof"))
        hooks = [tf.train.SummarySaverHook(save_steps=1, output_dir=extra, summary_op=tf.summary.merge_all()),
                 tf.train.ProfilerHook(save_steps=1, output_dir=prof)]
        with tf.train.MonitoredTrainingSession(checkpoint_dir=mts, save_summaries_steps=1, save_checkpoint_steps=4,
                                               log_step_count_steps=None, hooks=hooks) as sess:
            for _ in range(5):
                sess.run(train_op)
        tf.summary.FileWriterCache.clear()
        describe("mts", [e for e in events_of(mts) if e.WhichOneof("what") not in ("meta_graph_def", "graph_def")])
        RESULT("extra_kinds", ["%d:%s" % (e.step, e.WhichOneof("what")) for e in events_of(extra)
                               if e.WhichOneof("what") not in ("meta_graph_def", "graph_def")])
        describe("prof", [e for e in events_of(prof) if e.WhichOneof("what") not in ("meta_graph_def", "graph_def")])
        timelines = sorted(os.path.basename(p) for p in glob.glob(os.path.join(prof, "timeline-*.json")))
        RESULT("timelines", timelines)
        trace = json.load(open(os.path.join(prof, timelines[0])))
        ops = set(e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "X")
        RESULT("timeline_has_ops", ["train/loss" in ops, any(e.get("ph") == "M" for e in trace["traceEvents"])])
finally:
    shutil.rmtree(root, ignore_errors=True)
