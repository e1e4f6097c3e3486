"""Parsing: DecodeCSV, ParseExampleV2 (through ``tf.io.parse_example``, as programs build it) and
ParseSequenceExampleV2 (``tf.io.parse_sequence_example`` / ``parse_single_sequence_example``).

CSV: quoted fields, defaults for empty fields, required fields, ``na_value``, selected columns,
rank-0 and empty records, bad numbers, integer overflow, wrong column counts. Examples: fixed-length
dense features with and without defaults, variable-length (sparse) features, an empty batch, a
scalar input, missing required features, features of the wrong type, malformed bytes. SequenceExamples:
context and feature lists, padded dense lists and their lengths, sparse lists with empty steps, missing
lists (allowed or required), steps of the wrong length or type.
"""

from __future__ import annotations

import struct

import numpy as np

from tests.opdb.spec import OpEntry, Sample


def s(*values):
    return np.array([v.encode() for v in values], dtype=object)


def _csv(tf, records, record_defaults, **attrs):
    return tf.raw_ops.DecodeCSV(records=records, record_defaults=record_defaults, **attrs)


_F, _D, _I, _L = np.float32, np.float64, np.int32, np.int64


def _defaults(*pairs):
    return [np.array(v, dtype=t) if v is not None else np.zeros(0, t) for t, v in pairs]


_NO_TYPE = (None,)
_CSV = [
    Sample("columns", {"records": s("1.5,2,x,7", "-3,,\"q,uoted\",8"),
                       "record_defaults": _defaults((_F, [0]), (_I, [-1]), (object, [b"d"]), (_L, [0]))}),
    Sample("rank0_record", {"records": np.array(b"4,5", dtype=object),
                            "record_defaults": _defaults((_D, [0]), (_I, [0]))}),
    Sample("empty_records", {"records": np.zeros((0,), object), "record_defaults": _defaults((_F, [0]), (_I, [0]))}),
    Sample("matrix_records", {"records": np.array([[b"1,2"], [b"3,4"]], dtype=object),
                              "record_defaults": _defaults((_F, [0]), (_L, [0]))}),
    Sample("required_missing", {"records": s("1,"), "record_defaults": _defaults((_F, [0]), (_I, None))}),
    Sample("na_value", {"records": s("NA,2", "1,NA"), "record_defaults": _defaults((_F, [9]), (_I, [7]))},
           {"na_value": "NA"}),
    Sample("select_cols", {"records": s("a,1,b,2"), "record_defaults": _defaults((_I, [0]), (_I, [0]))},
           {"select_cols": [1, 3]}),
    Sample("tab_no_quotes", {"records": s('"a"\t2'), "record_defaults": _defaults((object, [b""]), (_I, [0]))},
           {"field_delim": "\t", "use_quote_delim": False}),
    Sample("bad_float", {"records": s("1.5x,2"), "record_defaults": _defaults((_F, [0]), (_I, [0]))}),
    Sample("int32_overflow", {"records": s("2147483648"), "record_defaults": _defaults((_I, [0]))}),
    Sample("too_many_columns", {"records": s("1,2,3"), "record_defaults": _defaults((_F, [0]), (_I, [0]))}),
    Sample("too_few_columns", {"records": s("1"), "record_defaults": _defaults((_F, [0]), (_I, [0]))}),
    Sample("unterminated_quote", {"records": s('"abc,1'), "record_defaults": _defaults((object, [b""]), (_I, [0]))}),
]


# ---------------------------------------------------------------- tf.train.Example bytes, by hand
def _key(number, wire):
    return _uvarint(number << 3 | wire)


def _uvarint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _len(number, body):
    return _key(number, 2) + _uvarint(len(body)) + body


def _feature(value):
    if isinstance(value[0], bytes):
        inner = b"".join(_len(1, v) for v in value)
        return _len(1, inner)
    if isinstance(value[0], float):
        return _len(2, _len(1, struct.pack(f"<{len(value)}f", *value)))
    return _len(3, _len(1, b"".join(_uvarint(v) for v in value)))


def example(**features):
    """A serialized ``tf.train.Example`` of lists of floats, ints or bytes."""
    entries = b"".join(_len(1, _len(1, k.encode()) + _len(2, _feature(v))) for k, v in sorted(features.items()))
    return _len(1, entries)


def _parse(tf, serialized, spec):
    feats = {}
    for key, (kind, dtype, shape, default) in spec.items():
        if kind == "fixed":
            feats[key] = tf.io.FixedLenFeature(shape, getattr(tf, dtype), default_value=default)
        else:
            feats[key] = tf.io.VarLenFeature(getattr(tf, dtype))
    out = tf.io.parse_example(serialized, feats)
    flat = []
    for key in sorted(out):
        t = out[key]
        flat += [t.indices, t.values, t.dense_shape] if hasattr(t, "indices") else [t]
    return flat


def ex(*examples):
    return np.array(list(examples), dtype=object)


_SPEC = {"age": ("fixed", "int64", [], -1), "score": ("fixed", "float32", [2], [0.0, 0.0]),
         "name": ("fixed", "string", [], b"?"), "tags": ("var", "string", None, None),
         "ids": ("var", "int64", None, None)}
_ROWS = ex(example(age=[30], score=[1.5, -2.0], name=[b"ann"], tags=[b"a", b"b"], ids=[3, 1 << 40]),
           example(score=[0.25, 4.0], ids=[-7]),
           example(age=[7], tags=[b"c"]))
_EXAMPLES = [
    Sample("batch", {"serialized": _ROWS}, {"spec": _SPEC}),
    Sample("empty_batch", {"serialized": np.zeros((0,), object)}, {"spec": _SPEC}),
    Sample("scalar", {"serialized": np.array(_ROWS[0], dtype=object)}, {"spec": _SPEC}),
    Sample("empty_example", {"serialized": ex(b"")}, {"spec": _SPEC}),
    Sample("required_missing", {"serialized": ex(example(x=[1]))},
           {"spec": {"age": ("fixed", "int64", [], None)}}),
    Sample("wrong_type", {"serialized": ex(example(age=[1.5]))}, {"spec": {"age": ("fixed", "int64", [], -1)}}),
    Sample("wrong_length", {"serialized": ex(example(score=[1.0]))},
           {"spec": {"score": ("fixed", "float32", [2], [0.0, 0.0])}}),
    Sample("malformed", {"serialized": ex(b"\x0a\xff")}, {"spec": {"age": ("fixed", "int64", [], -1)}}),
]

ENTRIES = [
    OpEntry("DecodeCSV", _CSV, build=_csv, dtypes=_NO_TYPE),
    OpEntry("ParseExampleV2", _EXAMPLES, build=_parse, dtypes=_NO_TYPE, differs={
        "malformed": "TensorFlow's error for bytes that are no Example carries them undecoded, and its Python "
                     "raises UnicodeDecodeError formatting it; sparseflow raises InvalidArgumentError"}),
]


# ---------------------------------------------------------------- tf.train.SequenceExample bytes, by hand
def sequence_example(context=None, lists=None):
    """A serialized ``tf.train.SequenceExample``: ``context`` as ``example``'s features, ``lists`` maps a
    key to its steps (a list of values per step; an empty list is a Feature of no kind)."""
    ctx = example(**context) if context else b""  # field 1 holds Features in both messages
    entries = b""
    for key, steps in sorted((lists or {}).items()):
        body = b"".join(_len(1, _feature(v) if v else b"") for v in steps)
        entries += _len(1, _len(1, key.encode()) + _len(2, body))
    return ctx + (_len(2, entries) if lists is not None else b"")


def _parse_sequence(tf, serialized, context, sequence):
    def specs(spec):
        feats = {}
        for key, (kind, dtype, shape, extra) in (spec or {}).items():
            if kind == "fixed":
                feats[key] = tf.io.FixedLenFeature(shape, getattr(tf, dtype), default_value=extra)
            elif kind == "seq":
                feats[key] = tf.io.FixedLenSequenceFeature(shape, getattr(tf, dtype), allow_missing=extra)
            else:
                feats[key] = tf.io.VarLenFeature(getattr(tf, dtype))
        return feats or None

    if serialized.shape.ndims == 0:
        dicts = tf.io.parse_single_sequence_example(serialized, specs(context), specs(sequence))
    else:
        dicts = tf.io.parse_sequence_example(serialized, specs(context), specs(sequence))
    flat = []
    for out in dicts:
        for key in sorted(out):
            t = out[key]
            flat += [t.indices, t.values, t.dense_shape] if hasattr(t, "indices") else [t]
    return flat


_CTX = {"len": ("fixed", "int64", [], -1), "tags": ("var", "string", None, None),
        "w": ("fixed", "float32", [2], [0.5, 0.5])}
_SEQ = {"tok": ("seq", "int64", [], False), "emb": ("seq", "float32", [2], True), "ids": ("var", "int64", None, None),
        "words": ("seq", "string", [], True)}
_SEQ_ROWS = ex(
    sequence_example({"len": [3], "tags": [b"x", b"y"], "w": [1.0, 2.0]},
                     {"tok": [[1], [2], [3]], "emb": [[1.0, 2.0], [3.0, 4.0]], "ids": [[5, 6], [], [7]],
                      "words": [[b"a"]]}),
    sequence_example({"tags": [b"z"]}, {"tok": [[9]], "emb": [], "ids": [[1 << 40]]}),
    sequence_example(None, {"tok": []}))
_SEQUENCES = [
    Sample("batch", {"serialized": _SEQ_ROWS}, {"context": _CTX, "sequence": _SEQ}),
    Sample("single", {"serialized": np.array(_SEQ_ROWS[0], dtype=object)}, {"context": _CTX, "sequence": _SEQ}),
    Sample("single_short", {"serialized": np.array(_SEQ_ROWS[1], dtype=object)}, {"context": _CTX, "sequence": _SEQ}),
    Sample("empty_batch", {"serialized": np.zeros((0,), object)}, {"context": _CTX, "sequence": _SEQ}),
    Sample("context_only", {"serialized": _SEQ_ROWS[:2]}, {"context": _CTX, "sequence": None}),
    Sample("lists_only_missing", {"serialized": ex(sequence_example({"len": [1]}, None))},
           {"context": None, "sequence": {"emb": _SEQ["emb"], "ids": _SEQ["ids"]}}),
    Sample("required_list_missing", {"serialized": ex(sequence_example(None, {"x": [[1]]}))},
           {"context": None, "sequence": {"tok": _SEQ["tok"]}}),
    Sample("wrong_step_length", {"serialized": ex(sequence_example(None, {"tok": [[1], [2, 3]]}))},
           {"context": None, "sequence": {"tok": _SEQ["tok"]}}),
    Sample("empty_step", {"serialized": ex(sequence_example(None, {"tok": [[1], []]}))},
           {"context": None, "sequence": {"tok": _SEQ["tok"]}}),
    Sample("wrong_step_type", {"serialized": ex(sequence_example(None, {"tok": [[1.5]]}))},
           {"context": None, "sequence": {"tok": _SEQ["tok"]}}),
    Sample("required_context_missing", {"serialized": ex(sequence_example(None, {"tok": [[1]]}))},
           {"context": {"c": ("fixed", "int64", [], None)}, "sequence": {"tok": _SEQ["tok"]}}),
]

ENTRIES.append(OpEntry("ParseSequenceExampleV2", _SEQUENCES, build=_parse_sequence, dtypes=_NO_TYPE))
