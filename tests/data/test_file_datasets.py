"""TextLineDataset, TFRecordDataset, FixedLengthRecordDataset and Dataset.list_files against values
recorded from TensorFlow 2.21 (``tf.compat.v1``, one-shot iterators) on the same files."""

import gzip
import zlib

import numpy as np
import pytest

import sparseflow as tf

D = tf.data


@pytest.fixture
def files(tmp_path):
    (tmp_path / "lines.txt").write_bytes(b"header\nalpha\r\n\nbeta\r\r\ngamma")
    (tmp_path / "lines2.txt").write_bytes(b"x1\nx2\nx3\nx4\n")
    (tmp_path / "lines.txt.gz").write_bytes(gzip.compress(b"g1\ng2\n"))
    (tmp_path / "lines.txt.z").write_bytes(zlib.compress(b"z1\nz2"))
    (tmp_path / "cr.txt").write_bytes(b"a\rb\nc\r\n\r\nd\r")
    (tmp_path / "fixed.bin").write_bytes(b"HHH" + bytes(range(10)) + b"FF")
    (tmp_path / "fixed2.bin").write_bytes(bytes(range(12)))
    (tmp_path / "fixed.bin.gz").write_bytes(gzip.compress(b"HHH" + bytes(range(10)) + b"FF"))
    for n in ["c.txt", "a.txt", "e.txt", "b.txt", "d.txt"]:
        (tmp_path / f"lf_{n}").write_text(n)
    return tmp_path


def _run(build, feed=None):
    """Every element, through a graph iterator, as TensorFlow's recording did (``feed(graph)``: a feed dict)."""
    with tf.Graph().as_default() as g:
        it = tf.data.make_initializable_iterator(build())
        feed = feed(g) if feed else None
        nxt = it.get_next()
        out = []
        with tf.Session() as sess:
            sess.run(it.initializer, feed)
            while True:
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return out


def test_text_lines_drop_line_ends_and_every_carriage_return(files):
    assert _run(lambda: D.TextLineDataset(str(files / "lines.txt")).skip(1)) == [b"alpha", b"", b"beta", b"gamma"]
    assert list(D.TextLineDataset(str(files / "cr.txt"))) == [b"ab", b"c", b"", b"d"]


def test_text_lines_of_compressed_files(files):
    assert _run(lambda: D.TextLineDataset(str(files / "lines.txt.gz"), compression_type="GZIP")) == [b"g1", b"g2"]
    assert list(D.TextLineDataset(str(files / "lines.txt.z"), "ZLIB")) == [b"z1", b"z2"]


def test_parallel_reads_interleave_files_in_tensorflows_order(files):
    a, b = str(files / "lines.txt"), str(files / "lines2.txt")
    assert _run(lambda: D.TextLineDataset([a, b], num_parallel_reads=2)) == [
        b"header", b"x1", b"alpha", b"x2", b"", b"x3", b"beta", b"x4", b"gamma"]
    assert _run(lambda: D.TextLineDataset([b, a, b], num_parallel_reads=2)) == [
        b"x1", b"header", b"x2", b"alpha", b"x3", b"", b"x4", b"beta", b"gamma", b"x1", b"x2", b"x3", b"x4"]


def test_file_names_from_a_fed_placeholder_and_from_a_dataset(files):
    def build():
        names = tf.placeholder(tf.string, [None], name="names")
        return D.TextLineDataset(names).batch(3)

    got = _run(build, lambda g: {g.get_tensor_by_name("names:0"): [str(files / "lines2.txt")] * 2})
    assert [b.tolist() for b in got] == [[b"x1", b"x2", b"x3"], [b"x4", b"x1", b"x2"], [b"x3", b"x4"]]
    listed = D.Dataset.list_files(str(files / "lines2.txt"), shuffle=False)
    assert list(D.TextLineDataset(listed).take(2)) == [b"x1", b"x2"]
    with pytest.raises(TypeError, match="rank <= 1"):
        D.TextLineDataset(tf.constant([["a"]]))


def test_fixed_length_records_between_header_and_footer(files):
    assert _run(lambda: D.FixedLengthRecordDataset(str(files / "fixed2.bin"), 3)) == [
        bytes([0, 1, 2]), bytes([3, 4, 5]), bytes([6, 7, 8]), bytes([9, 10, 11])]
    ds = D.FixedLengthRecordDataset(str(files / "fixed.bin"), 5, header_bytes=3, footer_bytes=2)
    assert list(ds) == [bytes(range(5)), bytes(range(5, 10))]


def test_fixed_length_body_not_a_multiple_is_tensorflows_error(files):
    msg = (r'Excluding the header \(3 bytes\) and footer \(2 bytes\), input file ".*fixed.bin" has body length 10 '
           r"bytes, which is not an exact multiple of the record length \(4 bytes\).")
    with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
        _run(lambda: D.FixedLengthRecordDataset(str(files / "fixed.bin"), 4, header_bytes=3, footer_bytes=2))
    got = []  # compressed: the whole records first, then TensorFlow's DataLossError
    with pytest.raises(tf.errors.DataLossError, match=msg.replace("fixed.bin", "fixed.bin.gz")):
        for r in D.FixedLengthRecordDataset(str(files / "fixed.bin.gz"), 4, 3, 2, compression_type="GZIP"):
            got.append(r)
    assert got == [bytes([0, 1, 2, 3]), bytes([4, 5, 6, 7])]


def test_list_files_orders_equal_tensorflows(files):
    d = str(files)
    names = lambda got: [g.decode().replace(d, "D") for g in got]  # noqa: E731
    assert names(_run(lambda: D.Dataset.list_files(f"{d}/lf_*.txt", shuffle=False))) == [
        f"D/lf_{c}.txt" for c in "abcde"]
    assert names(_run(lambda: D.Dataset.list_files(f"{d}/lf_*.txt", seed=3))) == [f"D/lf_{c}.txt" for c in "edcba"]
    assert names(_run(lambda: D.Dataset.list_files([f"{d}/lf_[cd].txt", f"{d}/lf_a*"], shuffle=False))) == [
        "D/lf_a.txt", "D/lf_c.txt", "D/lf_d.txt"]

    def with_graph_seed():
        tf.set_random_seed(17)
        return D.Dataset.list_files(f"{d}/lf_*.txt")

    assert names(_run(with_graph_seed)) == [f"D/lf_{c}.txt" for c in "badec"]


def test_lines_are_blocks_for_batching(files):
    path = files / "many.txt"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(5000)))
    ds = D.TextLineDataset(str(path), buffer_size=1000)
    assert ds._supports_batches()
    batches = [b for b in ds.batch(1024)]
    assert [len(b) for b in batches] == [1024] * 4 + [904]
    assert np.concatenate(batches).tolist() == [b"line %d" % i for i in range(5000)]


def test_bad_arguments_are_refused_by_name(files):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported compression_type: 'BZIP2'"):
        D.TextLineDataset(str(files / "lines.txt"), compression_type="BZIP2")
    with pytest.raises(TypeError, match="Dataset` of scalar `tf.string`"):
        D.TFRecordDataset(D.Dataset.range(3))
    with pytest.raises(tf.errors.NotFoundError, match="nothing_here.txt"):
        list(D.TextLineDataset(str(files / "nothing_here.txt")))
