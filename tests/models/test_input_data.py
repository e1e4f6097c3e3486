"""``sparseflow train / evaluate / predict`` read through ``sparseflow.data``: formats, compression,
headers, the bad-record policy and reject file, and the checks that refuse data that would train
nothing (each through the CLI, as a user meets it)."""

import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparseflow._src.models import load_config
from sparseflow._src.models.input_data import detect_format
from sparseflow.cli import main

COLUMNS = ["x", "a", "b", "v", "y"]
CONFIG = """
[data]
columns = ["x", "a", "b", "v", "y"]
label = "y"
positive = "yes"
train = {train}
eval = {eval}
{data}
[features]
numeric = ["v"]
categorical = ["x", "a", "b"]
crosses = [["a", "b"]]
[model]
hidden_units = [8]
embedding_dim = 4
[train]
epochs = 3
batch_size = 64
model_dir = "model"
"""


def _rows(n, seed):
    """Rows whose label depends on a categorical (x), an interaction (a, b) and a numeric (v)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        x, a, b, v = rng.integers(0, 20), rng.integers(0, 3), rng.integers(0, 3), rng.normal()
        logit = (1.5 if x < 10 else -1.5) + (2.0 if a == b else -1.0) + v
        y = "yes" if rng.random() < 1 / (1 + np.exp(-logit)) else "no"
        rows.append({"x": f"x{x}", "a": str(a), "b": str(b), "v": round(float(v), 3), "y": y})
    return rows


def _csv(rows, header=False, delimiter=",", columns=COLUMNS):
    lines = [delimiter.join(columns)] if header else []
    lines += [delimiter.join(str(r[c]) for c in columns) for r in rows]
    return "\n".join(lines) + "\n"


def _config(tmp_path, train='"train.csv"', eval_='"test.csv"', data="", **replace):
    text = CONFIG.format(train=train, eval=eval_, data=data)
    for old, new in replace.items():
        text = text.replace(old, new)
    path = tmp_path / "c.toml"
    path.write_text(text)
    return str(path)


def _run(capsys, *argv):
    """(exit status, stdout's last line as JSON, stderr)."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, json.loads(captured.out.strip().splitlines()[-1]), captured.err


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # model_dir "model" and relative reject files are in the working directory
    (tmp_path / "test.csv").write_text(_csv(_rows(300, 1)))
    return tmp_path


@pytest.mark.parametrize("name", ["train.csv.gz", "train.parquet", "train.jsonl", "train.tsv", "train_h.csv"])
def test_train_reads_every_format(data, capsys, name):
    rows = _rows(1500, 0)
    path = data / name
    extra = ""
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(_csv(rows).encode()))
    elif name.endswith(".parquet"):
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif name.endswith(".tsv"):
        path.write_text(_csv(rows, delimiter="\t"))
        extra = 'delimiter = "\\t"'
        (data / "test.csv").write_text(_csv(_rows(300, 1), delimiter="\t"))
    else:
        path.write_text(_csv(rows, header=True))  # a header line, recognised (header = "auto")
    status, result, err = _run(capsys, "train", _config(data, train=f'"{name}"', data=extra))
    assert status == 0, err
    assert result["train_examples"] == 1500 and result["auc"] > 0.7, result


def test_detect_format():
    assert [detect_format(p) for p in ("a.csv.gz", "a.TSV", "b.jsonl.zst", "c.pq", "d.bin")] == \
        ["csv", "csv", "json", "parquet", "csv"]
    assert detect_format("a.txt", "json") == "json"


def test_header_false_makes_a_header_a_bad_record_named_by_line_and_column(data, capsys):
    (data / "train.csv").write_text(_csv(_rows(200, 0), header=True))
    status, result, err = _run(capsys, "train", _config(data, data="header = false"))
    assert status == 1 and "train.csv:1, column 'v': not a number: 'v'" in err and "error" in result


def test_a_malformed_value_names_file_line_column_and_text(data, capsys):
    lines = _csv(_rows(200, 0)).splitlines()
    lines[41] = "x1,0,1,abc,yes"
    (data / "train.csv").write_text("\n".join(lines) + "\n")
    status, result, err = _run(capsys, "train", _config(data))
    assert status == 1
    assert f"{data / 'train.csv'}:42, column 'v': not a number: 'abc'" in result["error"]
    assert "Traceback" not in err


def test_invalid_utf8_and_broken_gzip_name_the_file(data, capsys):
    (data / "train.csv").write_bytes(_csv(_rows(50, 0)).encode() + b"x\xff\xfe,0,1,0.5,yes\n")
    status, result, _ = _run(capsys, "train", _config(data))
    assert status == 1 and "train.csv:51, column 'x': invalid UTF-8" in result["error"]
    (data / "train.csv.gz").write_bytes(gzip.compress(_csv(_rows(500, 0)).encode())[:-200])
    status, result, _ = _run(capsys, "train", _config(data, train='"train.csv.gz"'))
    assert status == 1 and "train.csv.gz" in result["error"]


def test_an_empty_training_file_is_a_clear_error(data, capsys):
    (data / "train.csv").write_text("")
    status, result, err = _run(capsys, "train", _config(data))
    assert status == 1 and "no training examples in train.csv" in result["error"] and "Traceback" not in err


def test_skip_policy_writes_the_reject_file_and_counts_in_the_summary(data, capsys):
    lines = _csv(_rows(600, 0)).splitlines()
    lines[10] = "x1,0,1,abc,yes"
    lines[20] = "x1,0,1"
    lines[30] = "x2,0,1,0.1,"  # a missing label
    (data / "train.csv").write_text("\n".join(lines) + "\n")
    status, result, err = _run(capsys, "train", _config(data, data='bad_records = "skip"\nreject_file = "rej.jsonl"'))
    assert status == 0, err
    assert result["train_examples"] == 597 and result["skipped"] == 3
    assert "training data: 3 bad records skipped" in err
    rejected = [json.loads(line) for line in (data / "rej.jsonl").read_text().splitlines()]
    assert [(r["line"], r.get("column"), r["reason"]) for r in rejected] == [
        (11, "v", "not a number"), (21, None, "expected 5 fields, got 3"), (31, "y", "missing value")]
    assert (data / "rej-eval.jsonl").read_text() == ""  # a clean evaluation pass: an empty reject file


def test_default_policy_reads_a_bad_value_as_missing(data, capsys):
    lines = _csv(_rows(600, 0)).splitlines()
    lines[10] = "x1,0,1,inf,yes"
    (data / "train.csv").write_text("\n".join(lines) + "\n")
    status, result, err = _run(capsys, "train", _config(data, data='bad_records = "default"'))
    assert status == 0, err
    assert result["train_examples"] == 600 and result["defaulted"] == 1 and result["skipped"] == 0


def test_labels_of_one_class_stop_the_run(data, capsys):
    (data / "train.csv").write_text(_csv(_rows(300, 0)))
    status, result, err = _run(capsys, "train", _config(data, **{'positive = "yes"': 'positive = "Yes"'}))
    assert status == 1
    assert "all 300 training labels are 0 (negative)" in err and "'yes' (" in err and "['Yes']" in err
    assert not (data / "model").exists() or not list((data / "model").glob("model.ckpt*"))


def test_features_that_are_all_missing_stop_the_run(data, capsys):
    rows = [{"X": r["x"], "A": r["a"], "B": r["b"], "V": r["v"], "y": r["y"]} for r in _rows(300, 0)]
    (data / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))  # other column names
    status, result, _ = _run(capsys, "train", _config(data, train='"train.jsonl"'))
    assert status == 1 and "every feature value of the 300 training examples is missing" in result["error"]


def test_evaluation_labels_of_one_class_are_an_error_not_a_nan(data, capsys):
    (data / "train.csv").write_text(_csv(_rows(600, 0)))
    (data / "test.csv").write_text(_csv([dict(r, y="no") for r in _rows(100, 1)]))
    status, result, err = _run(capsys, "train", _config(data))
    assert status == 1 and "all 100 evaluation labels are 0: AUC is undefined" in result["error"]


def test_comment_lines_at_the_top_are_skipped(data, capsys):
    (data / "train.csv").write_text("|1x3 Cross validator\n" + _csv(_rows(600, 0)))
    status, result, err = _run(capsys, "train", _config(data, data='comment_prefix = "|"'))
    assert status == 0 and result["train_examples"] == 600, err


def test_predict_on_serving_files_without_labels_with_an_id_column(data, capsys):
    (data / "train.csv").write_text(_csv(_rows(1500, 0)))
    cfg = _config(data)
    assert main(["train", cfg]) == 0
    serving = _rows(40, 5)
    (data / "serve.csv").write_text(_csv(serving, columns=["x", "a", "b", "v"]))  # no label column
    status, result, err = _run(capsys, "predict", cfg, "--input", str(data / "serve.csv"), "--output",
                               str(data / "p.csv"))
    assert status == 0 and result["predictions"] == 40, err
    assert np.loadtxt(data / "p.csv").shape == (40,)
    for i, r in enumerate(serving):
        r["id"] = f"req-{i}"
    (data / "serve.jsonl").write_text("".join(json.dumps({k: v for k, v in r.items() if k != "y"}) + "\n"
                                              for r in serving))
    status, result, err = _run(capsys, "predict", cfg, "--input", str(data / "serve.jsonl"), "--output",
                               str(data / "p2.csv"), "--id-column", "id")
    assert status == 0, err
    lines = (data / "p2.csv").read_text().splitlines()
    assert lines[0] == "id,probability" and len(lines) == 41 and lines[1].startswith("req-0,")
    assert np.allclose([float(line.split(",")[1]) for line in lines[1:]], np.loadtxt(data / "p.csv"), atol=2e-6)


def test_bundled_criteo_configs_say_where_their_data_must_come_from(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = load_config("criteo_wide_deep")
    assert cfg.train_paths == [str(tmp_path / "criteo_8k_train.txt")]  # not inside the installed package
    assert main(["train", "criteo_wide_deep"]) == 1


def test_missing_data_file_error_says_where_paths_are_taken_from(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, result, _ = _run(capsys, "train", "criteo_deepfm")
    assert status == 1 and "no data file" in result["error"] and "give --data-dir DIR" in result["error"]
