"""Readers never change a value silently: integers are exact or refused, out-of-range numbers are
bad records under the policy, unsigned columns hold numbers; a record is counted once however
many of its values are bad, and every pass rewrites the reject file."""

from __future__ import annotations

import decimal
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparseflow._src.data.readers.policy import DataError
from sparseflow._src.data.readers.reader_dataset import read_csv, read_json, read_parquet
from sparseflow._src.data.readers.schema import Column, Schema

BIG = 2**53 + 1  # the first integer a float64 cannot hold


def _read(ds):
    out = ds.read_all()
    return {k: v.tolist() for k, v in out.items()}, ds.summary()


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("text, expect", [
    (f"{BIG}.0", BIG), (f"{BIG}.000", BIG), ("9.007199254740993e15", BIG), ("-9223372036854775808.0", -2**63),
    ("1e3", 1000), ("  42.0 ", 42),
])
def test_integral_decimal_text_becomes_the_exact_integer(tmp_path, text, expect):
    p = _write(tmp_path, "a.csv", f"x\n{text}\n")
    values, summary = _read(read_csv(p, Schema([Column("x", "int64")])))
    assert values["x"] == [expect] and summary["skipped"] == 0


@pytest.mark.parametrize("text, reason", [
    ("9223372036854775808.0", "number out of range for int64"), ("1e400", "number out of range for int64"),
    ("1e999999999", "number out of range for int64"), (f"{BIG}.5", "not an integer"), ("nan", "not an integer"),
])
def test_integral_text_that_does_not_fit_is_a_bad_record(tmp_path, text, reason):
    p = _write(tmp_path, "a.csv", f"x\n{text}\n7\n")
    with pytest.raises(DataError, match=reason):
        _read(read_csv(p, Schema([Column("x", "int64")])))
    values, summary = _read(read_csv(p, Schema([Column("x", "int64")]), bad_records="skip"))
    assert values["x"] == [7] and summary["skipped_by_reason"] == {reason: 1}


def test_parquet_decimals_into_integer_columns_are_exact_or_refused(tmp_path):
    p = str(tmp_path / "d.parquet")
    vals = [decimal.Decimal(BIG), decimal.Decimal(2**63), decimal.Decimal(-3)]
    pq.write_table(pa.table({"x": pa.array(vals, pa.decimal128(20, 0)),
                             "f": pa.array([decimal.Decimal("1.50"), decimal.Decimal("2.00"),
                                            decimal.Decimal("3.00")], pa.decimal128(10, 2))}), p)
    values, summary = _read(read_parquet(p, Schema([Column("x", "int64"), Column("f", "float64")]),
                                         bad_records="skip"))
    assert values == {"x": [BIG, -3], "f": [1.5, 3.0]}
    assert summary["skipped_by_reason"] == {"number out of range for int64": 1}
    values, summary = _read(read_parquet(p, Schema([Column("f", "int64")]), bad_records="skip"))
    assert values == {"f": [2, 3]} and summary["skipped_by_reason"] == {"not an integer": 1}
    values, summary = _read(read_parquet(p, Schema([Column("x", "uint64")]), bad_records="skip"))
    assert values == {"x": [BIG, 2**63]} and summary["skipped_by_reason"] == {"number out of range for uint64": 1}


def test_json_integers_stay_exact_next_to_an_overflowing_neighbour(tmp_path):
    p = _write(tmp_path, "a.json", f'{{"x": {BIG}}}\n{{"x": {10**23}}}\n{{"x": {BIG}.0}}\n{{"x": -{2**63 + 1}}}\n')
    values, summary = _read(read_json(p, Schema([Column("x", "int64")]), bad_records="skip"))
    assert values["x"] == [BIG, BIG]
    assert summary["skipped"] == 2 and summary["skipped_by_reason"] == {"number out of range for int64": 2}
    with pytest.raises(DataError, match=r"a.json:2, column 'x': number out of range for int64: '1{23 zeros}'"
                       .replace("{23 zeros}", "0" * 23)):
        _read(read_json(p, Schema([Column("x", "int64")])))
    q = _write(tmp_path, "b.json", f'{{"x": -{2**63 + 1}}}\n{{"x": 1}}\n')
    with pytest.raises(DataError, match=r"b.json:1, column 'x': number out of range for int64: '-9223372036854775809'"):
        _read(read_json(q, Schema([Column("x", "int64")])))


def test_json_floats_and_keys_read_as_before_on_the_line_by_line_path(tmp_path):
    p = _write(tmp_path, "a.json", '{"x": 1e23, "y": 0.1, "k": 1005.0}\n{"x": 3, "y": 2, "k": "1005"}\n')
    values, _ = _read(read_json(p, Schema([Column("x", "int64"), Column("y", "float64"), Column("k", "key")]),
                                bad_records="skip"))
    assert values["x"] == [3] and values["y"] == [2.0] and values["k"][0] == values["k"][0]
    both, _ = _read(read_json(p, Schema([Column("y", "float64"), Column("k", "key")])))
    assert both["y"] == [0.1, 2.0] and both["k"][0] == both["k"][1]  # 1005.0 hashes like "1005"


@pytest.mark.parametrize("dtype, top", [("uint64", 2**64 - 1), ("uint32", 2**32 - 1)])
def test_an_unsigned_column_holds_numbers_and_refuses_negatives(tmp_path, dtype, top):
    col = Column("x", dtype)
    assert col.value_dtype == np.dtype(dtype) and not col.categorical
    p = _write(tmp_path, "a.csv", f"x\n5\n-1\n{top}\n{top + 1}\n")
    values, summary = _read(read_csv(p, Schema([col]), bad_records="skip"))
    assert values["x"] == [5, top]
    assert summary["skipped_by_reason"] == {f"number out of range for {dtype}": 2}
    j = _write(tmp_path, "a.json", f'{{"x": 5}}\n{{"x": -1}}\n{{"x": {top}}}\n')
    assert _read(read_json(j, Schema([col]), bad_records="skip"))[0]["x"] == [5, top]
    q = str(tmp_path / "a.parquet")
    pq.write_table(pa.table({"x": pa.array([5, -1, 7], pa.int64())}), q)
    assert _read(read_parquet(q, Schema([col]), bad_records="skip"))[0]["x"] == [5, 7]
    with pytest.raises(ValueError, match="not a uint"):
        Column("x", dtype, default=-1)


def test_a_record_with_two_bad_values_is_one_skipped_record(tmp_path):
    p = _write(tmp_path, "a.csv", "x,y\na,b\n1,2\nc,3\n")
    reject = str(tmp_path / "rejects.jsonl")
    ds = read_csv(p, Schema([Column("x", "int64"), Column("y", "int64")]), bad_records="skip", reject_file=reject)
    values, summary = _read(ds)
    assert values == {"x": [1], "y": [2]}
    assert summary["rows_read"] == 3 and summary["rows_out"] == 1 and summary["skipped"] == 2
    lines = [json.loads(x) for x in open(reject)]
    assert len(lines) == 2
    assert lines[0]["line"] == 2 and lines[0]["column"] == "x"
    assert lines[0]["also"] == [{"column": "y", "reason": "not a number", "text": "b"}]
    assert "also" not in lines[1]
    with pytest.raises(DataError, match=r"a.csv:2, column 'x': not a number: 'a'; column 'y': not a number: 'b'"):
        _read(read_csv(p, Schema([Column("x", "int64"), Column("y", "int64")])))


def test_a_clean_pass_rewrites_the_reject_file(tmp_path):
    reject = str(tmp_path / "rejects.jsonl")
    bad = _write(tmp_path, "bad.csv", "x\na\n1\n")
    good = _write(tmp_path, "good.csv", "x\n1\n")
    _read(read_csv(bad, Schema([Column("x", "int64")]), bad_records="skip", reject_file=reject))
    assert len(open(reject).readlines()) == 1
    _read(read_csv(good, Schema([Column("x", "int64")]), bad_records="skip", reject_file=reject))
    assert open(reject).read() == ""
