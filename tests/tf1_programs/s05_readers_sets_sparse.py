"""An input pipeline and data utilities in a TF1 program: CSV shards written with tf.write_file,
found with tf.matching_files, read by tf.TextLineReader from tf.train.string_input_producer under a
Coordinator with queue runners (headers skipped), decoded with tf.decode_csv and batched; whole files
and fixed-length records; tags compared with tf.sets; a sparse bag of ids turned into indicators,
softmaxed, split and serialized; raw bytes, serialized tensors and compressed strings decoded; and
the v1 switches TF1 programs flip at startup."""
# ruff: noqa: I001 - the marked TF import and disable_v2_behavior() stay together for the runner
import os
import tempfile
import zlib

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


tf.disable_control_flow_v2()
tf.disable_tensor_equality()
tf.disable_v2_tensorshape()
RESULT("executing_eagerly_outside", tf.executing_eagerly_outside_functions())
RESULT("resource_variables", tf.resource_variables_enabled())
workdir = tempfile.mkdtemp()
os.chdir(workdir)

with tf.Graph().as_default():
    shards = []
    for i in range(3):
        rows = "\n".join("%d,%0.1f,t%d" % (10 * i + j, 0.5 * j + i, j % 2) for j in range(4))
        shards.append(tf.write_file("data/part-%d.csv" % i, "id,score,tag\n" + rows + "\n"))
    record_bytes = tf.write_file("data/fixed.bin", b"HD" + bytes(range(12)) + b"F")
    with tf.Session() as sess:
        sess.run(shards + [record_bytes])

with tf.Graph().as_default():
    files = tf.matching_files("data/part-*.csv")
    queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = tf.TextLineReader(skip_header_lines=1)
    key, line = reader.read(queue)
    ident, score, tag = tf.decode_csv(line, record_defaults=[[0], [0.0], [""]])
    batch = tf.train.batch([ident, score, tag], batch_size=5, num_threads=1, allow_smaller_final_batch=True)
    fixed = tf.FixedLengthRecordReader(record_bytes=4, header_bytes=2, footer_bytes=1)
    fixed_queue = tf.FIFOQueue(2, tf.string)
    enqueue_fixed = fixed_queue.enqueue_many([["data/fixed.bin"]])
    close_fixed = fixed_queue.close()
    fixed_keys, fixed_values = fixed.read_up_to(fixed_queue, 8)
    decoded = tf.decode_raw(fixed_values, tf.uint8)
    whole = tf.WholeFileReader()
    whole_queue = tf.train.string_input_producer(["data/part-0.csv"], num_epochs=1, shuffle=False)
    whole_key, whole_value = whole.read(whole_queue)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        RESULT("files", sess.run(files))
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        batches = []
        try:
            while not coord.should_stop():
                batches.append(sess.run(batch))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)
        for n, (ids, scores, tags) in enumerate(batches):
            RESULT("batch_%d_ids" % n, ids)
            RESULT("batch_%d_scores" % n, scores)
            RESULT("batch_%d_tags" % n, tags)
        RESULT("lines_read", sess.run(reader.num_records_produced()))
        RESULT("files_done", sess.run(reader.num_work_units_completed()))
        sess.run([enqueue_fixed, close_fixed])
        k, v = sess.run([fixed_keys, decoded])
        RESULT("fixed_keys", k)
        RESULT("fixed_values", v)

with tf.Graph().as_default():
    whole = tf.WholeFileReader()
    whole_queue = tf.train.string_input_producer(["data/part-0.csv"], num_epochs=1, shuffle=False)
    whole_key, whole_value = whole.read(whole_queue)
    liked = tf.constant([[1, 2, 3, 4], [5, 6, 6, 7]], tf.int64)
    seen = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([4, 9, 5], tf.int64), [2, 2])
    both = tf.sets.set_intersection(liked, seen)
    either = tf.sets.set_union(liked, seen)
    only_liked = tf.sets.set_difference(liked, seen)
    size = tf.sets.set_size(seen)
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 1]], tf.constant([3, 1, 2, 0], tf.int64), [3, 2])
    weights = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 1]], [0.5, 1.5, 2.0, -1.0], [3, 2])
    merged = tf.sparse_merge(ids, weights, 4)
    indicator = tf.sparse_to_indicator(ids, 4)
    soft = tf.sparse_softmax(merged)
    left, right = tf.sparse_split(sp_input=merged, num_split=2, axis=1)
    top = tf.sparse_reduce_max(merged, axis=1)
    biggest = tf.sparse_maximum(merged, tf.SparseTensor([[0, 1], [2, 0]], [9.0, -4.0], [3, 4]))
    rows = tf.deserialize_many_sparse(tf.serialize_many_sparse(merged), tf.float32)
    raw = tf.decode_raw(tf.constant([b"\x01\x00\x02\x00"]), tf.int16)
    roundtrip = tf.parse_tensor(tf.serialize_tensor(tf.constant([[1.5, -2.0]])), tf.float32)
    inflated = tf.decode_compressed(tf.constant([zlib.compress(b"compressed text")]), "ZLIB")
    spectrum = tf.abs(tf.fft(tf.complex(tf.constant([1.0, 2.0, 0.0, -1.0]), tf.zeros([4]))))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        wk, wv = sess.run([whole_key, whole_value])
        coord.request_stop()
        coord.join(threads)
        RESULT("whole_key", wk)
        RESULT("whole_length", len(wv))
        for name, sp in (("both", both), ("either", either), ("only_liked", only_liked)):
            value = sess.run(sp)
            RESULT(name + "_indices", value.indices)
            RESULT(name + "_values", value.values)
            RESULT(name + "_shape", value.dense_shape)
        RESULT("set_size", sess.run(size))
        m = sess.run(merged)
        RESULT("merged_indices", m.indices)
        RESULT("merged_values", m.values)
        RESULT("indicator", sess.run(indicator))
        RESULT("softmax", sess.run(soft).values)
        RESULT("split_right", sess.run(right).indices)
        RESULT("reduce_max", sess.run(top))
        RESULT("maximum", sess.run(biggest).values)
        RESULT("deserialized", sess.run(rows).indices)
        RESULT("raw", sess.run(raw))
        RESULT("roundtrip", sess.run(roundtrip))
        RESULT("inflated", sess.run(inflated))
        RESULT("spectrum", sess.run(spectrum))
