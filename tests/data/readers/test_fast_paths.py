"""The compiled fast paths of the readers agree with the plain ones: the newline/ASCII scan, the
one-pass null filling and infinity check of numeric columns, hashing into a strided output, the
ASCII-only parse without Arrow's UTF-8 check, and the stacked Criteo output written in place."""

import gzip

import numpy as np
import pyarrow as pa
import pytest

from sparseflow._src.data.readers import DataError, read_criteo
from sparseflow._src.data.readers.blocks import StackColumns, count_byte, line_pieces, mapped_line_pieces, scan_lines
from sparseflow._src.data.readers.coerce import fill_nulls, has_inf
from sparseflow._src.data.readers.criteo import CAT_FEATURES, INT_FEATURES
from sparseflow._src.data.readers.hashing import hash_strings
from sparseflow._src.data.readers.reader_dataset import read_csv
from sparseflow._src.data.readers.schema import Column, Schema


def test_scan_counts_newlines_and_sees_non_ascii_at_any_alignment():
    rng = np.random.default_rng(0)
    data = rng.choice(np.frombuffer(b"ab\n\t,x\r", np.uint8), 3000)
    for lo in range(0, 17):
        for hi in (lo, lo + 1, lo + 7, lo + 8, lo + 9, lo + 100, 3000):
            part = data[lo:hi]
            assert scan_lines(part) == (int((part == 10).sum()), True)
            assert scan_lines(part.tobytes()) == (int((part == 10).sum()), True)
            assert count_byte(part, 9) == int((part == 9).sum())
    for pos in (0, 5, 8, 1000, 2999):
        d = data.copy()
        d[pos] = 0xC3
        assert scan_lines(d) == (int((d == 10).sum()), False)
        assert scan_lines(d[pos + 1:])[1] and not scan_lines(d[pos:])[1]
    assert scan_lines(b"") == (0, True) and count_byte(b"", 10) == 0


def test_line_pieces_report_newlines_and_ascii(tmp_path):
    text = b"".join(b"%d,k\xc3\xa9\n" % i if i == 70 else b"%d,k\n" % i for i in range(100)) + b"9,z"
    p = tmp_path / "f.csv"
    p.write_bytes(text)
    for pieces in (list(mapped_line_pieces(str(p), 64, 1, 0)),
                   list(line_pieces(pa.input_stream(pa.py_buffer(gzip.decompress(gzip.compress(text)))),
                                    str(p), 64, 1))):
        assert b"".join(bytes(pc) for pc, *_ in pieces) == text
        line = 1
        for piece, first, n, ascii_only in pieces:
            assert first == line and n == bytes(piece).count(b"\n")
            assert ascii_only == (b"\xc3" not in bytes(piece))
            line += n


def _with_nulls(values, valid, dtype, pad=3):
    """An Arrow array of ``values`` (``valid`` False: null, whatever the slot holds), sliced at ``pad``."""
    vals = np.concatenate([np.zeros(pad, dtype), np.asarray(values, dtype)])
    bits = np.packbits(np.concatenate([np.ones(pad, bool), valid]), bitorder="little")
    arr = pa.Array.from_buffers(pa.from_numpy_dtype(np.dtype(dtype)), len(vals),
                                [pa.py_buffer(bits.tobytes()), pa.py_buffer(vals.tobytes())])
    return arr.slice(pad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_fill_nulls_equals_arrow_fill_null(dtype):
    rng = np.random.default_rng(1)
    n = 1001
    values = (rng.random(n) * 100).astype(dtype)
    valid = rng.random(n) > 0.3
    arr = _with_nulls(values, valid, dtype)
    expected = arr.fill_null(pa.scalar(7, arr.type)).to_numpy()
    assert np.array_equal(fill_nulls(arr, 7), expected)
    out = np.zeros((n, 4), dtype)
    assert fill_nulls(arr, 7, out[:, 2]) is not None and np.array_equal(out[:, 2], expected)
    assert not out[:, [0, 1, 3]].any()
    clean = pa.array(values)
    assert np.array_equal(fill_nulls(clean.slice(5), 0), values[5:])


def test_has_inf_looks_at_valid_slots_only():
    valid = np.array([True, False, True, True])
    assert not has_inf(_with_nulls([1, np.inf, 2, np.nan], valid, np.float32))
    assert has_inf(_with_nulls([1, 2, -np.inf, 3], valid, np.float32))
    assert has_inf(pa.array([1.0, np.inf], pa.float64())) and not has_inf(pa.array([1.0, np.nan]))
    assert not has_inf(pa.array([None, None], pa.float32())) and not has_inf(pa.array([], pa.float32()))
    assert not has_inf(pa.chunked_array([pa.array([np.inf, 1.0], pa.float32())]).slice(1))


def test_hash_strings_into_a_strided_output():
    arr = pa.array(["a", None, "68fd1e64", "", "x" * 40]).slice(1)
    out = np.zeros((4, 3), np.uint64)
    hash_strings(arr, out=out[:, 1])
    assert out[:, 1].tolist() == hash_strings(arr).tolist() and not out[:, [0, 2]].any()
    with pytest.raises(ValueError, match="uint64"):
        hash_strings(arr, out=np.zeros(4, np.int64))


def test_stack_columns_called_on_values_keeps_the_column_order():
    stack = StackColumns({"xy": ["x", "y"]})
    out = stack({"a": 1, "x": np.arange(3), "b": 2, "y": np.arange(3) * 2})
    assert list(out) == ["a", "xy", "b"] and out["xy"].tolist() == [[0, 0], [1, 2], [2, 4]]
    with pytest.raises(ValueError, match="one dtype"):
        stack.allocate(Schema([Column("x", "float32"), Column("y", "int64")]), 3)


def criteo_text(rows, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(rows):
        ints = ["" if rng.random() < 0.2 else str(int(rng.integers(-1, 500))) for _ in range(13)]
        cats = ["" if rng.random() < 0.15 else f"{int(rng.integers(0, 50)) * 2654435761 % (1 << 32):08x}"
                for _ in range(26)]
        lines.append("\t".join([str(i % 2)] + ints + cats))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kw", [{}, {"num_buckets": 1000}, {"salt_fields": True}])
def test_stacked_criteo_is_the_columns_side_by_side_in_c_order(tmp_path, kw):
    p = tmp_path / "c.txt"
    p.write_text(criteo_text(700))
    cols = read_criteo(str(p), **kw).read_all()
    ds = read_criteo(str(p), stacked=True, block_size=4096, **kw)
    out = ds.read_all()
    assert list(out) == ["label", "dense", "keys"]
    assert np.array_equal(out["dense"], np.stack([cols[n] for n in INT_FEATURES], axis=1))
    assert np.array_equal(out["keys"], np.stack([cols[n] for n in CAT_FEATURES], axis=1))
    assert out["keys"].dtype == (np.int64 if kw.get("num_buckets") else np.uint64)
    batches = list(ds.batch(64))
    assert all(b["keys"].flags.c_contiguous and b["dense"].flags.c_contiguous for b in batches)
    assert np.array_equal(np.concatenate([b["keys"] for b in batches]), out["keys"])
    assert np.array_equal(np.concatenate([b["label"] for b in batches]), cols["label"])


def test_stacked_criteo_drops_and_defaults_bad_records_like_the_columns(tmp_path):
    lines = [ln.encode().split(b"\t") for ln in criteo_text(300).splitlines()]
    lines[10][1] = b"x1"  # I1 not a number (I1 has a default)
    lines[20] = lines[20][:-1]  # 39 fields
    lines[30][14] = b"\xff\xfe"  # C1 not UTF-8 (no default)
    p = tmp_path / "c.txt"
    p.write_bytes(b"\n".join(b"\t".join(ln) for ln in lines) + b"\n")
    for policy in ("skip", "default"):
        cols = read_criteo(str(p), bad_records=policy).read_all()
        ds = read_criteo(str(p), stacked=True, bad_records=policy, block_size=2048)
        out = ds.read_all()
        assert len(out["label"]) == (297 if policy == "skip" else 298)
        assert np.array_equal(out["dense"], np.stack([cols[n] for n in INT_FEATURES], axis=1))
        assert np.array_equal(out["keys"], np.stack([cols[n] for n in CAT_FEATURES], axis=1))
        assert out["keys"].flags.c_contiguous and out["dense"].flags.c_contiguous
    assert ds.summary()["skipped_by_reason"] == {"expected 40 fields, got 39": 1, "invalid UTF-8": 1}
    assert ds.summary()["defaulted_by_column"] == {"I1": 1}
    with pytest.raises(DataError) as e:
        read_criteo(str(p), stacked=True, block_size=2048).read_all()
    assert (e.value.line, e.value.column, e.value.text) == (11, "I1", "x1")


def test_non_ascii_pieces_are_still_checked_for_utf8(tmp_path):
    rows = [f"{i},k{i},{i}" for i in range(400)]
    rows[150] = "150,caf\u00e9,150"  # valid UTF-8, not ASCII
    rows[300] = "300,\udcff\udcfe,300"  # invalid UTF-8
    p = tmp_path / "f.csv"
    p.write_bytes(("a,b,c\n" + "\n".join(rows) + "\n").encode("utf-8", "surrogateescape"))
    schema = Schema([Column("a", "float32"), Column("b", "string"), Column("c", "int64", default=0)])
    for block_size in (256, 1 << 20):
        with pytest.raises(DataError, match="invalid UTF-8") as e:
            read_csv(str(p), schema, block_size=block_size).read_all()
        assert e.value.line == 302 and e.value.column == "b"
        ds = read_csv(str(p), schema, block_size=block_size, bad_records="skip")
        out = ds.read_all()
        assert len(out["a"]) == 399 and "café".encode() in out["b"].tolist()
        key = Schema([Column("a", "float32"), Column("b", "key"), Column("c", "int64", default=0)])
        keys = read_csv(str(p), key, block_size=block_size, bad_records="skip").read_all()["b"]
        assert keys.tolist() == hash_strings(pa.array([v.decode() for v in out["b"].tolist()])).tolist()
