"""parse_example / parse_single_example and decode_csv against values and messages recorded from
TensorFlow 2.21 (``tf.compat.v1``); the Examples come from a TFRecord file TensorFlow wrote."""

import base64

import numpy as np
import pytest

import sparseflow as tf
from tests.data import tf_record_fixtures as fx

SPEC = {
    "id": tf.io.FixedLenFeature([], tf.int64),
    "score": tf.io.FixedLenFeature([2], tf.float32),
    "tags": tf.io.VarLenFeature(tf.string),
    "seq": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True, default_value=-1),
    "opt": tf.io.FixedLenFeature([1], tf.float32, default_value=[-9.0]),
    "sp": tf.io.SparseFeature(index_key="idx", value_key="val", dtype=tf.float32, size=5),
}
# TensorFlow's results for the three examples of EXAMPLES_TFRECORD
TF_BATCH = {
    "tags": {"indices": [[1, 0], [2, 0], [2, 1]], "values": [b"t0", b"t0", b"t1"], "dense_shape": [3, 2]},
    "id": [0, 1, 2], "opt": [[7.0], [-9.0], [9.0]], "score": [[0.0, -1.25], [0.5, -1.25], [1.0, -1.25]],
    "seq": [[-1, -1, -1, -1], [0, 1, -1, -1], [0, 1, 2, 3]],
    "sp": {"indices": [[0, 1], [1, 1], [1, 4], [2, 2]], "values": [0.0, 2.0, 1.5, 3.0], "dense_shape": [3, 5]},
}
TF_BATCH_SHAPES = {"tags": [2], "id": [None], "opt": [None, 1], "score": [None, 2], "seq": [None, None], "sp": [2]}
TF_SINGLE = {  # the third example alone
    "tags": {"indices": [[0], [1]], "values": [b"t0", b"t1"], "dense_shape": [2]}, "id": 2, "opt": [9.0],
    "score": [1.0, -1.25], "seq": [0, 1, 2, 3], "sp": {"indices": [[2]], "values": [3.0], "dense_shape": [5]},
}
TF_SINGLE_SHAPES = {"tags": [1], "id": [], "opt": [1], "score": [2], "seq": [None], "sp": [1]}


def _examples(tmp_path):
    path = tmp_path / "examples.tfrecord"
    path.write_bytes(base64.b64decode(fx.EXAMPLES_TFRECORD))
    return str(path), list(tf.io.tf_record_iterator(str(path)))


def _plain(v):
    if isinstance(v, tf.SparseTensorValue):
        return {"indices": v.indices.tolist(), "values": v.values.tolist(), "dense_shape": v.dense_shape.tolist()}
    return np.asarray(v).tolist()


def _static(t):
    return (t.dense_shape if isinstance(t, tf.SparseTensor) else t).shape.as_list()


def test_parse_example_of_tensorflow_examples_equals_tensorflow(tmp_path):
    _, records = _examples(tmp_path)
    with tf.Graph().as_default():
        ser = tf.placeholder(tf.string, [None])
        parsed = tf.io.parse_example(ser, SPEC)
        assert {k: _static(v) for k, v in parsed.items()} == TF_BATCH_SHAPES
        with tf.Session() as sess:
            out = sess.run(parsed, {ser: records})
    assert {k: _plain(v) for k, v in out.items()} == TF_BATCH
    assert out["score"].dtype == np.float32 and out["id"].dtype == np.int64


def test_parse_single_example_equals_tensorflow(tmp_path):
    _, records = _examples(tmp_path)
    with tf.Graph().as_default():
        parsed = tf.parse_single_example(tf.constant(records[2]), SPEC)
        assert {k: _static(v) for k, v in parsed.items()} == TF_SINGLE_SHAPES
        with tf.Session() as sess:
            out = sess.run(parsed)
    assert {k: _plain(v) for k, v in out.items()} == TF_SINGLE


def test_defaults_padding_and_an_empty_example_equal_tensorflow(tmp_path):
    _, records = _examples(tmp_path)
    spec = {"score": tf.FixedLenFeature([2, 1], tf.float32, default_value=[[1.0], [2.0]]),
            "m": tf.FixedLenFeature([], tf.string, default_value="dflt"),
            "seqf": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True)}
    with tf.Graph().as_default(), tf.Session() as sess:
        out = sess.run(tf.parse_example([records[0], b""], spec))
    assert _plain(out["score"]) == [[[0.0], [-1.25]], [[1.0], [2.0]]]
    assert _plain(out["m"]) == [b"dflt", b"dflt"]
    assert out["seqf"].shape == (2, 0, 2)


def test_tfrecord_dataset_map_parse_batch_pipeline(tmp_path):
    path, _ = _examples(tmp_path)
    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "tags": tf.io.VarLenFeature(tf.string)}
    ds = tf.data.TFRecordDataset(path).map(lambda r: tf.io.parse_single_example(r, spec)).batch(3)
    (batch,) = list(ds)
    assert batch["id"].tolist() == [0, 1, 2]
    assert batch["tags"].values.tolist() == [b"t0", b"t0", b"t1"]
    ds = tf.data.TFRecordDataset(path).batch(2).map(lambda r: tf.io.parse_example(r, spec))
    assert [b["id"].tolist() for b in ds] == [[0, 1], [2]]


def test_examples_built_here_parse_as_tensorflows(tmp_path):
    def feature(**kind):
        return tf.train.Feature(**kind)

    ex = tf.train.Example(features=tf.train.Features(feature={
        "id": feature(int64_list=tf.train.Int64List(value=[2])),
        "score": feature(float_list=tf.train.FloatList(value=[1.0, -1.25])),
        "tags": feature(bytes_list=tf.train.BytesList(value=[b"t0", b"t1"])),
        "seq": feature(int64_list=tf.train.Int64List(value=[0, 1, 2, 3])),
        "idx": feature(int64_list=tf.train.Int64List(value=[2])),
        "val": feature(float_list=tf.train.FloatList(value=[3.0])),
        "opt": feature(float_list=tf.train.FloatList(value=[9.0]))}))
    _, records = _examples(tmp_path)
    theirs = tf.train.Example.FromString(records[2])
    assert ex == theirs  # same fields, numbers and values on the wire
    with tf.Graph().as_default(), tf.Session() as sess:
        out = sess.run(tf.parse_single_example(ex.SerializeToString(), SPEC))
    assert {k: _plain(v) for k, v in out.items()} == TF_SINGLE


TF_ERRORS = [
    ({"opt": tf.io.FixedLenFeature([1], tf.float32)}, None,
     "Name: <unknown>, Feature: opt (data type: float) is required but could not be found."),
    ({"id": tf.io.FixedLenFeature([], tf.float32)}, 1,
     "Name: <unknown>, Key: id, Index: 0.  Data types don't match. Data type: int64 but expected type: float"),
    ({"score": tf.io.FixedLenFeature([3], tf.float32)}, 1,
     "Name: <unknown>, Key: score, Index: 0.  Number of float values != expected.  Values size: 2 but output "
     "shape: [3]"),
    ({"score": tf.io.FixedLenSequenceFeature([3], tf.float32, allow_missing=True)}, 1,
     "Name: <unknown>, Key: score, Index: 0.  Number of float values is not a multiple of stride length. Saw 2 "
     "values but output shape is: [?,3]"),
]


@pytest.mark.parametrize("spec,count,message", TF_ERRORS)
def test_bad_examples_give_tensorflows_messages_naming_op_and_feature(tmp_path, spec, count, message):
    _, records = _examples(tmp_path)
    with tf.Graph().as_default(), tf.Session() as sess:
        parsed = tf.io.parse_example(records[:count], spec)
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(parsed)
    assert str(info.value.message).startswith(message)
    assert "ParseExampleV2" in str(info.value)  # the op, its type and the user's line follow


def test_undecodable_record_is_named():
    with tf.Graph().as_default(), tf.Session() as sess:
        parsed = tf.io.parse_example([b"\x0a\x05garbage"], {"id": tf.io.FixedLenFeature([], tf.int64)},
                                     example_names=["rec-7"])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Could not parse example input, value: "
                                                                 r"b'\\n\\x05garbage' \(Name: rec-7, index 0"):
            sess.run(parsed)


def test_bad_specs_are_refused_when_building():
    with pytest.raises(ValueError, match="requires allow_missing to be True"):
        tf.io.parse_example(["x"], {"s": tf.io.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(ValueError, match="need to be known"):
        tf.io.parse_example(["x"], {"s": tf.io.FixedLenFeature([None], tf.int64)})
    with pytest.raises(ValueError, match="Unsupported dtype int32"):
        tf.io.parse_example(["x"], {"s": tf.io.VarLenFeature(tf.int32)})
    with pytest.raises(ValueError, match="must be a scalar"):
        tf.io.parse_single_example(["x"], {"s": tf.io.VarLenFeature(tf.int64)})


# ---------------------------------------------------------------------------------------- decode_csv
CSV_CASES = {  # records, record defaults, keyword arguments, TensorFlow's (dtype, values) per output
    "types_quotes_and_defaults": (
        [b"1,2.5,abc,7", b'-3,,"q,""x""",', b",1e3,,"],
        [[0], [0.0], ["dflt"], lambda: tf.constant([9], tf.int64)], {},
        [("int32", [1, -3, 0]), ("float32", [2.5, 0.0, 1000.0]), ("object", [b"abc", b'q,"x"', b"dflt"]),
         ("int64", [7, 9, 9])]),
    "select_cols": ([b"a,1,b,2.5,c", b"x,2,y,,z"], [[0], [1.5]], {"select_cols": [1, 3]},
                    [("int32", [1, 2]), ("float32", [2.5, 1.5])]),
    "na_value_and_delimiter": ([b"1|NA|x", b"NA|2|NA"], [[0], [0.0], ["s"]], {"field_delim": "|", "na_value": "NA"},
                               [("int32", [1, 0]), ("float32", [0.0, 2.0]), ("object", [b"x", b"s"])]),
    "quotes_kept_without_quote_delim": ([b'"a",b', b'c,"d'], [[""], [""]], {"use_quote_delim": False},
                                        [("object", [b'"a"', b"c"]), ("object", [b"b", b'"d'])]),
    "double": ([b"0.1,3", b"1e-300,4"], [lambda: tf.constant([0], tf.float64), [0]], {},
               [("float64", [0.1, 1e-300]), ("int32", [3, 4])]),
    "records_of_rank_2": ([[b"1,2", b"3,4"], [b"5,6", b"7,8"]], [[0], [0]], {},
                          [("int32", [[1, 3], [5, 7]]), ("int32", [[2, 4], [6, 8]])]),
    "spaces_around_numbers": ([b" 12 , 2.5 "], [[0], [0.0]], {}, [("int32", [12]), ("float32", [2.5])]),
}


def _decode(records, defaults, kwargs):
    with tf.Graph().as_default(), tf.Session() as sess:
        outs = tf.io.decode_csv(tf.constant(records), [d() if callable(d) else d for d in defaults], **kwargs)
        return sess.run(outs)


@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_decode_csv_equals_tensorflow(case):
    records, defaults, kwargs, expected = CSV_CASES[case]
    got = _decode(records, defaults, kwargs)
    assert [(str(np.asarray(v).dtype), np.asarray(v).tolist()) for v in got] == expected


CSV_ERRORS = {
    "empty_record": ([b""], [[5]], {}, "Expect 1 fields but have 0 in record 0"),
    "too_many_fields": ([b"1,2,3"], [[0], [0]], {}, "Expect 2 fields but have 3 in record 0"),
    "required": ([b"1,"], [[0], lambda: tf.constant([], tf.int32)], {},
                 "Field 1 is required but missing in record 0!"),
    "not_an_int": ([b"1,x"], [[0], [0]], {}, "Field 1 in record 0 is not a valid int32: x"),
    "not_a_float": ([b"1,2.5.5"], [[0], [0.0]], {}, "Field 1 in record 0 is not a valid float: 2.5.5"),
    "int32_range": ([b"1,3000000000"], [[0], [0]], {}, "Field 1 in record 0 is not a valid int32: 3000000000"),
    "digit_separator": ([b"1_0"], [[0]], {}, "Field 0 in record 0 is not a valid int32: 1_0"),
    "quote_not_escaped": ([b'1,"ab"c'], [[0], [""]], {}, "Quote inside a string has to be escaped by another quote"),
    "quote_in_unquoted": ([b'1,a"b'], [[0], [""]], {}, "Unquoted fields cannot have quotes/CRLFs inside"),
    "short_for_select_cols": ([b"1,2"], [[0]], {"select_cols": [3]}, "Expect 1 fields but have 0 in record 0"),
}


@pytest.mark.parametrize("case", sorted(CSV_ERRORS))
def test_decode_csv_errors_are_tensorflows(case):
    records, defaults, kwargs, message = CSV_ERRORS[case]
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        _decode(records, defaults, kwargs)
    assert str(info.value.message).startswith(message)


def test_decode_csv_argument_checks():
    with pytest.raises(ValueError, match="strictly increasing"):
        tf.decode_csv(["1,2"], [[0], [0]], select_cols=[1, 0])
    with pytest.raises(ValueError, match="do not match"):
        tf.decode_csv(["1,2"], [[0]], select_cols=[0, 1])
    with pytest.raises(ValueError, match="at most rank 1"):
        tf.decode_csv(["1,2"], [[[0]], [0]])


def test_decode_csv_in_a_text_line_pipeline(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n2,\n")
    ds = tf.data.TextLineDataset(str(path)).skip(1).batch(2).map(lambda r: tf.io.decode_csv(r, [[0], ["?"]]))
    ((nums, texts),) = list(ds)
    assert nums.tolist() == [1, 2] and texts.tolist() == [b"x", b"?"]
