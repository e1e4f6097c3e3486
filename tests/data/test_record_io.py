"""TFRecord files: CRC-32C, TensorFlow-written files read by us, ours byte-identical to TensorFlow's (so
TensorFlow reads ours), GZIP/ZLIB, and damaged or truncated files named in the error."""

import base64
import gzip

import pytest

import sparseflow as tf
from sparseflow._src.data import record_io
from sparseflow._src.kernels import tfrecord_framing
from tests.data import tf_record_fixtures as fx

RECORDS = [b"", b"a", b"hello world", bytes(range(256)) * 2]
TF_FILES = {"": fx.TFRECORD_NONE, "GZIP": fx.TFRECORD_GZIP, "ZLIB": fx.TFRECORD_ZLIB}


def test_crc32c_of_known_vectors():
    assert tfrecord_framing.crc32c(b"123456789") == 0xE3069283
    assert tfrecord_framing.crc32c(b"") == 0
    assert tfrecord_framing.crc32c(bytes(32)) == 0x8A9136AA
    assert tfrecord_framing.crc32c(bytes(range(32))) == 0x46DD794E
    long = bytes(range(256)) * 7 + b"tail"  # the 8-byte loop and the byte tail agree with one byte at a time
    assert tfrecord_framing.crc32c(long) == tfrecord_framing.crc32c(long[5:], tfrecord_framing.crc32c(long[:5]))


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_tensorflow_written_files_are_read(tmp_path, compression):
    path = tmp_path / "tf.tfrecord"
    path.write_bytes(base64.b64decode(TF_FILES[compression]))
    assert list(tf.io.tf_record_iterator(str(path), tf.io.TFRecordOptions(compression))) == RECORDS
    ds = tf.data.TFRecordDataset(str(path), compression_type=compression)
    assert list(ds) == RECORDS


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_our_files_are_byte_identical_to_tensorflows(tmp_path, compression):
    path = tmp_path / "ours.tfrecord"
    with tf.io.TFRecordWriter(str(path), tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in RECORDS:
            w.write(r)
    assert path.read_bytes() == base64.b64decode(TF_FILES[compression])


def test_python_io_names_and_compression_enum(tmp_path):
    path = str(tmp_path / "x.tfrecord")
    gzip_option = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)
    with tf.python_io.TFRecordWriter(path, gzip_option) as w:
        w.write("text is written as utf-8 ✓")
    opts = tf.python_io.TFRecordOptions("GZIP")
    assert list(tf.python_io.tf_record_iterator(path, opts)) == ["text is written as utf-8 ✓".encode()]
    assert tf.python_io.TFRecordOptions.get_compression_type_string(opts) == "GZIP"
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported compression_type"):
        tf.io.TFRecordOptions("BZ2")


def test_large_records_and_many_blocks(tmp_path):
    path = str(tmp_path / "big.tfrecord")
    records = [bytes([i % 251]) * (i * 37 % 5000) for i in range(3000)] + [b"x" * 600_000]
    with tf.io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    blocks = list(record_io.record_blocks(path, "", buffer_size=4096, max_records=100))
    assert len(blocks) > 30 and [r for b in blocks for r in b.tolist()] == records


def test_a_damaged_record_names_the_file_the_record_and_its_offset(tmp_path):
    raw = bytearray(base64.b64decode(fx.TFRECORD_NONE))
    raw[30] ^= 1  # in the data checksum of record 1 (bytes 16..33)
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(bytes(raw))
    it = iter(tf.data.TFRecordDataset(str(path)))
    assert next(it) == b""
    with pytest.raises(tf.errors.DataLossError, match=r"bad\.tfrecord: corrupted record 1 at byte 16: the checksum "
                                                      r"of its data does not match"):
        next(it)
    raw = bytearray(base64.b64decode(fx.TFRECORD_NONE))
    raw[3] ^= 1  # the length of record 0
    path.write_bytes(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record 0 at byte 0: the checksum of its length"):
        list(tf.data.TFRecordDataset(str(path)))


def test_a_truncated_file_is_a_data_loss_after_its_whole_records(tmp_path):
    path = tmp_path / "cut.tfrecord"
    path.write_bytes(base64.b64decode(fx.TFRECORD_NONE)[:-3])
    got = []
    with pytest.raises(tf.errors.DataLossError, match=r"cut\.tfrecord: truncated record 3 at byte 60: the file holds "
                                                      r"only 525 of its 528 bytes"):
        for r in tf.data.TFRecordDataset(str(path)):
            got.append(r)
    assert got == RECORDS[:3]  # as TensorFlow: the whole records first


def test_compressed_data_errors(tmp_path):
    path = tmp_path / "r.gz"
    data = gzip.compress(record_io.frame(b"abc") * 3)
    path.write_bytes(data[:-12])
    with pytest.raises(tf.errors.DataLossError, match="GZIP stream is truncated"):
        list(tf.data.TFRecordDataset(str(path), "GZIP"))
    path.write_bytes(b"not gzip at all")
    with pytest.raises(tf.errors.DataLossError, match="GZIP data is corrupt"):
        list(tf.data.TFRecordDataset(str(path), "GZIP"))
    path.write_bytes(gzip.compress(record_io.frame(b"a")) + gzip.compress(record_io.frame(b"b")))
    assert list(tf.data.TFRecordDataset(str(path), "GZIP")) == [b"a", b"b"]  # concatenated members


def test_missing_file_is_not_found():
    with pytest.raises(tf.errors.NotFoundError, match="no_such.tfrecord"):
        list(tf.data.TFRecordDataset("/nonexistent/no_such.tfrecord"))


def test_writer_after_close_is_refused(tmp_path):
    w = tf.io.TFRecordWriter(str(tmp_path / "c.tfrecord"))
    w.close()
    with pytest.raises(tf.errors.FailedPreconditionError, match="closed"):
        w.write(b"x")
