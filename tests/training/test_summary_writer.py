"""Events files: TensorBoard's own loader reads ours (scalars, histograms, images, audio, text, the
graph, run metadata); ours reads one TensorFlow 2.21 wrote (data/tf_events.out.tfevents); the
FileWriter's rules (metadata once per tag, run-metadata tags once, reopen, cache) are TensorFlow's."""

import glob
import os
import re
import socket

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

import sparseflow as tf
from sparseflow._src.framework.proto import config_pb2, graph_pb2
from sparseflow._src.kernels.tfrecord_framing import encode_record

HERE = os.path.dirname(os.path.abspath(__file__))


def _events_file(logdir):
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    return path


def _write_run(logdir):
    """Three steps of a small model's summaries, its graph, a traced step's metadata."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None], name="x")
        w = tf.Variable([1.0, -2.0], name="w")
        loss = tf.reduce_sum(tf.square(w)) + tf.reduce_mean(x)
        tf.summary.scalar("loss", loss)
        tf.summary.histogram("weights", w)
        tf.summary.image("img", tf.reshape(tf.range(12, dtype=tf.float32), [1, 2, 2, 3]))
        tf.summary.audio("clip", tf.reshape(tf.linspace(-1.0, 1.0, 8), [1, 8]), 4000)
        tf.summary.text("note", tf.constant("step note"))
        merged = tf.summary.merge_all()
        with tf.control_dependencies([merged]):  # the summaries see w before the update
            train = tf.assign_sub(w, 0.25 * w)
        with tf.Session() as sess, tf.summary.FileWriter(logdir, g) as writer:
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                md = tf.RunMetadata()
                opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if step == 1 else None
                summary, _ = sess.run([merged, train], {x: [float(step), 1.0]}, options=opts, run_metadata=md)
                writer.add_summary(summary, global_step=step)
                if step == 1:
                    writer.add_run_metadata(md, "step_1", global_step=step)


def test_tensorboard_loads_scalars_histograms_images_audio_text_and_graph(tmp_path):
    _write_run(str(tmp_path))
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"images": 0, "audio": 0, "tensors": 0,
                                                                           "histograms": 0})
    acc.Reload()
    tags = acc.Tags()
    assert tags["scalars"] == ["loss"] and tags["histograms"] == ["weights"]
    assert tags["images"] == ["img/image/0"] and tags["audio"] == ["clip/audio/0"] and tags["tensors"] == ["note"]
    assert tags["graph"] and tags["meta_graph"] and tags["run_metadata"] == ["step_1"]
    # loss = sum(w^2) + mean(x) with w shrinking by 1/4 after each run
    scalars = [(e.step, e.value) for e in acc.Scalars("loss")]
    assert scalars == [(0, pytest.approx(5.5)), (1, pytest.approx(5 * 0.5625 + 1.0)),
                       (2, pytest.approx(5 * 0.5625 ** 2 + 1.5))]
    h = acc.Histograms("weights")[2].histogram_value
    assert (h.min, h.max, h.num) == (pytest.approx(-2 * 0.5625), pytest.approx(0.5625), 2)
    assert sum(h.bucket) == 2 and h.bucket_limit[-1] == np.finfo(np.float64).max
    img = acc.Images("img/image/0")[0]
    assert (img.width, img.height) == (2, 2) and img.encoded_image_string.startswith(b"\x89PNG")
    clip = acc.Audio("clip/audio/0")[0]
    assert clip.content_type == "audio/wav" and clip.length_frames == 8 and clip.sample_rate == 4000
    assert acc.Tensors("note")[0].tensor_proto.string_val == [b"step note"]
    graph = acc.Graph()
    assert {"x", "w", "Square", "Merge/MergeSummary"} <= {n.name for n in graph.node}
    run_metadata = acc.RunMetadata("step_1")
    assert any(ns.node_name == "Merge/MergeSummary" for d in run_metadata.step_stats.dev_stats for ns in d.node_stats)


def test_events_file_name_first_record_and_framing(tmp_path):
    with tf.summary.FileWriter(str(tmp_path), filename_suffix=".v2") as writer:
        assert os.listdir(tmp_path) == []  # created with the first event, as TensorFlow's
        writer.add_event(tf.Event(wall_time=12.5, step=3, file_version="x"))
    path = _events_file(str(tmp_path))
    assert re.fullmatch(rf"events\.out\.tfevents\.\d{{10}}\.{re.escape(socket.gethostname())}\.v2",
                        os.path.basename(path))
    first, second = tf.train.summary_iterator(path)
    assert first.file_version == "brain.Event:2" and first.wall_time == int(first.wall_time)
    data = open(path, "rb").read()
    assert data.endswith(encode_record(tf.Event(wall_time=12.5, step=3, file_version="x").SerializeToString()))
    assert (second.wall_time, second.step) == (12.5, 3)


def test_reads_an_events_file_tensorflow_wrote():
    events = list(tf.train.summary_iterator(os.path.join(HERE, "data", "tf_events.out.tfevents")))
    assert [(e.step, e.WhichOneof("what")) for e in events] == [
        (0, "file_version"), (0, "graph_def"), (0, "meta_graph_def"), (0, "summary"), (1, "summary"),
        (2, "summary"), (3, "tagged_run_metadata"), (4, "session_log")]
    assert events[0].file_version == "brain.Event:2"
    means = [e.summary.value[0].simple_value for e in events[3:6]]
    assert [e.summary.value[0].tag for e in events[3:6]] == ["mean_1"] * 3
    np.testing.assert_allclose(means, [-1 / 3, 0.0, 1 / 3], rtol=1e-6)
    assert [e.summary.value[1].histo.num for e in events[3:6]] == [3.0] * 3
    assert events[4].summary.value[1].histo.sum == 1.0 - 3.0 + 2.0
    gd = graph_pb2.GraphDef.FromString(events[1].graph_def)
    assert {"x", "Mean", "mean_1", "x_1", "Merge/MergeSummary"} <= {n.name for n in gd.node}
    md = config_pb2.RunMetadata.FromString(events[6].tagged_run_metadata.run_metadata)
    assert events[6].tagged_run_metadata.tag == "step_3" and md.step_stats.dev_stats
    assert events[7].session_log.status == tf.SessionLog.STOP


def test_summary_metadata_is_kept_once_per_tag_and_run_metadata_tags_once(tmp_path):
    with tf.Session() as sess:
        text = sess.run(tf.summary.text("t", tf.constant("a")))
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(text, 1)
    writer.add_summary(text, 2)
    writer.add_run_metadata(tf.RunMetadata(), "r")
    with pytest.raises(ValueError, match="already used"):
        writer.add_run_metadata(tf.RunMetadata(), "r")
    writer.close()
    summaries = [e.summary.value[0] for e in tf.train.summary_iterator(_events_file(str(tmp_path)))
                 if e.HasField("summary")]
    assert [v.HasField("metadata") for v in summaries] == [True, False]
    assert summaries[0].metadata.plugin_data.plugin_name == "text"


def test_flush_close_reopen_and_cache(tmp_path):
    logdir = str(tmp_path)
    writer = tf.summary.FileWriter(logdir, flush_secs=3600)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    writer.flush()
    assert [e.step for e in tf.train.summary_iterator(_events_file(logdir))] == [0, 1]
    writer.close()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=2.0)]), 2)  # ignored: closed
    writer.reopen()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=3.0)]), 3)
    writer.close()
    files = sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))
    assert len(files) == 2
    steps = sorted(e.step for f in files for e in tf.train.summary_iterator(f) if e.HasField("summary"))
    assert steps == [1, 3]
    cached = tf.summary.FileWriterCache.get(os.path.join(logdir, "c"))
    assert tf.summary.FileWriterCache.get(os.path.join(logdir, "c")) is cached
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(os.path.join(logdir, "c")) is not cached
    tf.summary.FileWriterCache.clear()


def test_corrupt_record_is_data_loss_and_a_cut_record_ends_the_file(tmp_path):
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    path = _events_file(str(tmp_path))
    data = bytearray(open(path, "rb").read())
    open(path, "wb").write(bytes(data[:-3]))
    assert len(list(tf.train.summary_iterator(path))) == 1  # a writer still writing the last record
    data[-6] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match="checksum"):
        list(tf.train.summary_iterator(path))


def test_event_and_summary_protos_have_tensorflows_field_numbers():
    from tensorboard.compat.proto import event_pb2 as tb_event
    from tensorboard.compat.proto import summary_pb2 as tb_summary

    from sparseflow._src.framework.proto import event_pb2, summary_pb2

    def fields(descriptor):
        out = {f.name: (f.number, f.type) for f in descriptor.fields}
        for nested in descriptor.nested_types:
            out.update({f"{nested.name}.{k}": v for k, v in fields(nested).items()})
        return out

    pairs = [(event_pb2.Event, tb_event.Event), (event_pb2.SessionLog, tb_event.SessionLog),
             (event_pb2.TaggedRunMetadata, tb_event.TaggedRunMetadata), (event_pb2.LogMessage, tb_event.LogMessage),
             (summary_pb2.Summary, tb_summary.Summary), (summary_pb2.SummaryMetadata, tb_summary.SummaryMetadata),
             (summary_pb2.HistogramProto, tb_summary.HistogramProto)]
    for ours, theirs in pairs:
        assert fields(ours.DESCRIPTOR) == fields(theirs.DESCRIPTOR), ours.DESCRIPTOR.name
