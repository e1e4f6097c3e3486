"""Files into tf.data, TF1 style: tf.train.Example records written with tf.python_io.TFRecordWriter
(plain and GZIP), read back with TFRecordDataset + parse_single_example / parse_example, shuffled with
op and graph seeds through re-initialized iterators; a CSV file through TextLineDataset + decode_csv;
list_files; FixedLengthRecordDataset. Prints RESULT lines (exact values)."""
import os
import shutil
import tempfile

import numpy as np

# TF_IMPORT
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def RESULT(name, value):
    toks = []
    for v in np.asarray(value).ravel().tolist():
        if isinstance(v, bytes):
            toks.append(v.decode("utf-8"))
        elif isinstance(v, float):
            toks.append("%.6g" % v)
        else:
            toks.append(str(v))
    print("RESULT %s %s" % (name, " ".join(toks)))


def drain(sess, tensor):
    out = []
    while True:
        try:
            out.append(sess.run(tensor))
        except tf.errors.OutOfRangeError:
            return out


work = tempfile.mkdtemp(prefix="tfdata_prog_")
rng = np.random.RandomState(7)

# ---------------------------------------------------------------- write Examples
def make_example(i):
    words = [b"w%d" % k for k in range(i % 4)]
    return tf.train.Example(features=tf.train.Features(feature={
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=rng.uniform(-1, 1, 3).astype(np.float32))),
        "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=words)),
        "steps": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 3)))),
        "label": tf.train.Feature(float_list=tf.train.FloatList(value=[float(i % 2)])),
    }))

paths = []
for shard, options in enumerate([None, tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)]):
    path = os.path.join(work, "part-%d.tfrecord%s" % (shard, ".gz" if options else ""))
    with tf.python_io.TFRecordWriter(path, options) as writer:
        for i in range(shard * 10, shard * 10 + 10):
            writer.write(make_example(i).SerializeToString())
    paths.append(path)
RESULT("records_in_plain_file", len(list(tf.python_io.tf_record_iterator(paths[0]))))
first = tf.train.Example.FromString(next(tf.python_io.tf_record_iterator(paths[0])))
RESULT("first_example_id", first.features.feature["id"].int64_list.value[0])

features = {
    "id": tf.FixedLenFeature([], tf.int64),
    "x": tf.FixedLenFeature([3], tf.float32),
    "words": tf.VarLenFeature(tf.string),
    "label": tf.FixedLenFeature([], tf.float32, default_value=0.0),
}

# ---------------------------------------------------------------- read, parse, shuffle, batch
g = tf.Graph()
with g.as_default():
    plain = tf.data.TFRecordDataset(paths[0])
    zipped = tf.data.TFRecordDataset(paths[1], compression_type="GZIP")
    ds = plain.concatenate(zipped).map(lambda r: tf.parse_single_example(r, features))
    ds = ds.shuffle(8, seed=42).batch(4)
    it = tf.data.make_initializable_iterator(ds)
    batch = it.get_next()
    total_x = tf.reduce_sum(batch["x"])
    words_per_row = tf.sparse_reduce_sum(tf.SparseTensor(batch["words"].indices,
                                                         tf.ones_like(batch["words"].values, tf.int64),
                                                         batch["words"].dense_shape), axis=1)
    with tf.Session() as sess:
        for epoch in range(2):
            sess.run(it.initializer)
            ids, sums = [], 0.0
            while True:
                try:
                    b, s, w = sess.run([batch, total_x, words_per_row])
                except tf.errors.OutOfRangeError:
                    break
                ids.extend(b["id"].tolist())
                sums += float(s)
                if epoch == 0 and len(ids) == 4:
                    RESULT("first_batch_words", w)
                    RESULT("first_batch_labels", b["label"])
            RESULT("shuffled_ids_init%d" % epoch, ids)
            RESULT("sum_x_init%d" % epoch, sums)

# graph-level seed only, reshuffling under repeat, parse_example on batches
g = tf.Graph()
with g.as_default():
    tf.set_random_seed(2024)
    ds = tf.data.TFRecordDataset(paths[:1]).shuffle(5).repeat(2).batch(5)
    spec = {"id": tf.FixedLenFeature([], tf.int64),
            "steps": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-1)}
    ds = ds.map(lambda r: tf.parse_example(r, spec))
    it = tf.data.make_one_shot_iterator(ds)
    nxt = it.get_next()
    with tf.Session() as sess:
        parts = drain(sess, nxt)
        RESULT("graph_seed_repeat_ids", np.concatenate([p["id"] for p in parts]))
        RESULT("padded_steps_batch0", parts[0]["steps"])

# ---------------------------------------------------------------- CSV lines
csv_path = os.path.join(work, "table.csv")
with open(csv_path, "w") as f:
    f.write("age,city,score,flag\n")
    f.write('31,"Paris, FR",0.5,1\n40,Rome,,0\n,NA,2.25,1\n27,"say ""hi""",1e-3,0\n')
g = tf.Graph()
with g.as_default():
    lines = tf.data.TextLineDataset(csv_path).skip(1)
    ds = lines.batch(3).map(lambda r: tf.decode_csv(r, [[-1], [""], [0.0], [0]], na_value="NA"))
    it = tf.data.make_one_shot_iterator(ds)
    age, city, score, flag = it.get_next()
    with tf.Session() as sess:
        for k, parts in enumerate(drain(sess, [age, city, score, flag])):
            RESULT("csv_batch%d_age" % k, parts[0])
            RESULT("csv_batch%d_city" % k, parts[1])
            RESULT("csv_batch%d_score" % k, parts[2])
            RESULT("csv_batch%d_flag" % k, parts[3])
    sel = tf.decode_csv(["1,a,2.5", "3,b,"], [[0.0], [7.0]], select_cols=[0, 2])
    with tf.Session() as sess:
        RESULT("csv_select_cols", np.concatenate(sess.run(sel)))

# ---------------------------------------------------------------- list_files and fixed-length records
for name in ["b", "c", "a", "d"]:
    with open(os.path.join(work, "shard-%s.bin" % name), "wb") as f:
        f.write(b"HDR" + bytes(bytearray(range(ord(name), ord(name) + 6))))
g = tf.Graph()
with g.as_default():
    files = tf.data.Dataset.list_files(os.path.join(work, "shard-*.bin"), seed=11)
    records = files.interleave(lambda f: tf.data.FixedLengthRecordDataset(f, 2, header_bytes=3), cycle_length=2)
    it = tf.data.make_initializable_iterator(records)
    nxt = it.get_next()
    names_it = tf.data.make_one_shot_iterator(files)
    name = names_it.get_next()
    with tf.Session() as sess:
        RESULT("list_files_order", [os.path.basename(n.decode()) for n in drain(sess, name)])
        sess.run(it.initializer)
        RESULT("fixed_length_records", [r.decode() for r in drain(sess, nxt)])
    lines = tf.data.TextLineDataset([csv_path, csv_path], num_parallel_reads=2).skip(2).take(3)
    it = tf.data.make_one_shot_iterator(lines)
    nxt = it.get_next()
    with tf.Session() as sess:
        RESULT("parallel_lines", [l.decode()[:5] for l in drain(sess, nxt)])

shutil.rmtree(work)
