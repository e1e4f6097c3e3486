"""A config's data files as streams of model inputs, through ``sparseflow.data``'s readers.

Files are CSV/TSV, JSON lines or Parquet (by ``[data] format`` or their extension), each
possibly gzip/bz2/zstd-compressed, and are read in pieces: memory depends on the batch, the
shuffle buffer and the tables, never on the files. Per CSV/TSV file: leading lines starting with
``comment_prefix`` are skipped, a header line is recognised (``header = "auto"``: a first line
whose fields are the config's ``columns``), and a file with one field fewer than ``columns`` and
no label is read without the label (serving files, for ``predict``). Bad records follow
``[data] bad_records`` and go to ``reject_file``; the reader's counts are the run's summary.

Example:
    >>> cfg = load_config("adult_wide_deep")
    >>> stats = fit(cfg)
    >>> stats.rows, stats.positives
    (32561, 7841)
    >>> batch = next(iter(training_batches(cfg, epoch=0, batch_size=4)))
    >>> batch["wide"].shape, batch["label"].shape
    ((4, 16), (4, 1))
"""

from __future__ import annotations

import os

from sparseflow._src.data.readers import CsvSource, JsonSource, ParquetSource, ReaderDataset
from sparseflow._src.data.readers.blocks import open_stream
from sparseflow._src.models.config import Config, load_config  # noqa: F401  (load_config: doctest)
from sparseflow._src.models.features import FitStats

__all__ = ["detect_format", "reader", "fit", "check_training_data", "training_batches", "inference_batches"]

_COMPRESSED = (".gz", ".gzip", ".bz2", ".zst", ".zstd")
_BY_EXTENSION = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".data": "csv", ".test": "csv",
                 ".json": "json", ".jsonl": "json", ".ndjson": "json", ".parquet": "parquet", ".pq": "parquet"}


def detect_format(path: str, configured: str = "auto") -> str:
    """``csv``, ``json`` or ``parquet`` of a file: the configured format, else by its extension
    (after a compression suffix); CSV when the extension says nothing."""
    if configured != "auto":
        return configured
    name = path.lower()
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return _BY_EXTENSION.get(os.path.splitext(name)[1], "csv")


def _check_exists(cfg: Config, paths):
    for p in paths:
        if not os.path.exists(p):
            raise FileNotFoundError(f"no data file {p} (relative data paths are taken from {cfg.data_base})")
        if os.path.isdir(p):
            raise IsADirectoryError(f"data path {p} is a directory; name its files in the config")


def _head_lines(path: str, n: int) -> list[bytes]:
    """The first ``n`` lines of a (possibly compressed) text file, without line ends."""
    stream = open_stream(path)
    try:
        data = b""
        while data.count(b"\n") < n:
            chunk = stream.read(1 << 16)
            if not chunk:
                break
            data += chunk
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e}") from e
    finally:
        stream.close()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return [line.rstrip(b"\r") for line in data.split(b"\n")[:n]]


def _fields(line: bytes, delimiter: str, strip: bool) -> list[str]:
    fields = [f.decode("utf-8", "replace") for f in line.split(delimiter.encode())]
    fields = [f[1:-1] if len(f) >= 2 and f[0] == f[-1] == '"' else f for f in fields]
    return [f.strip() for f in fields] if strip else fields


def _csv_source(cfg: Config, path: str, for_serving: bool) -> CsvSource:
    data, columns = cfg.data, cfg.data.get("columns")
    prefix = data.get("comment_prefix")
    head = _head_lines(path, 64)
    skip = 0
    while prefix and skip < len(head) and head[skip].startswith(prefix.encode()):
        skip += 1
    first = head[skip] if skip < len(head) else b""
    fields = _fields(first, data["delimiter"], True)
    header = data["header"]
    if header == "auto":
        header = columns is None or fields == list(columns)
    if columns is None and not header:
        raise ValueError(f"{path}: CSV/TSV files without a header line need [data] columns (the names of their "
                         "fields, in order)")
    names = None
    if not header:
        names = list(columns)
        label = cfg.features.label
        if for_serving and label in names and first and len(fields) == len(names) - 1:
            names.remove(label)  # a serving file: the columns without the label
    return CsvSource(path, header=bool(header), column_names=names, delimiter=data["delimiter"], skip_rows=skip,
                     skip_initial_space=bool(data["skip_initial_space"]))


def _sources(cfg: Config, paths, for_serving: bool = False) -> list:
    _check_exists(cfg, paths)
    sources, json_files, parquet_files = [], [], []
    for p in paths:
        fmt = detect_format(p, cfg.data["format"])
        if fmt == "csv":
            sources.append(_csv_source(cfg, p, for_serving))
        elif fmt == "json":
            json_files.append(p)
        else:
            parquet_files.append(p)
    if json_files:
        sources.append(JsonSource(json_files))
    if parquet_files:
        sources.append(ParquetSource(parquet_files))
    return sources


def _reject_file(cfg: Config, role: str):
    path = cfg.data.get("reject_file")
    if path is None or cfg.data["bad_records"] == "error":
        return None
    path = os.path.abspath(os.path.expanduser(path))
    if role != "train":
        stem, ext = os.path.splitext(path)
        path = f"{stem}-{role}{ext or '.jsonl'}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def reader(cfg: Config, paths, role: str = "train", transform: bool = False, with_label: bool = True,
           extra=()) -> ReaderDataset:
    """A ``ReaderDataset`` of ``paths`` under the config's schema, policy and reject file (``role``:
    ``train``, ``eval`` or ``predict``); with ``transform``, blocks are model inputs (computed on the
    reader threads)."""
    spec = cfg.features
    schema = spec.schema(with_label=with_label, extra=extra)
    post = spec.transform if transform else None
    return ReaderDataset(_sources(cfg, paths, for_serving=not with_label), schema,
                         bad_records=cfg.data["bad_records"], reject_file=_reject_file(cfg, role), post=post,
                         element_spec=spec.element_spec(with_label, extra) if transform else None)


def fit(cfg: Config) -> FitStats:
    """One pass over the training data: the checks' counts; the numeric statistics and the
    vocabularies are set on ``cfg.features``. ``stats.read`` is the reader's summary."""
    ds = reader(cfg, cfg.train_paths, "train")
    stats = FitStats(cfg.features)
    for block in ds.read_blocks():
        stats.add(block)
    stats.finish()
    stats.read = ds.summary()
    return stats


def check_training_data(cfg: Config, stats: FitStats, warn) -> None:
    """Refuses training data that would train nothing meaningful; ``warn(text)`` for doubtful data."""
    spec, read = cfg.features, stats.read
    files = ", ".join(os.path.basename(p) for p in cfg.train_paths)
    if stats.rows == 0:
        skipped = f" ({read['skipped']} bad records skipped)" if read["skipped"] else ""
        raise ValueError(f"no training examples in {files}{skipped}: the files are empty")
    if stats.positives in (0, stats.rows):
        cls = "1 (positive)" if stats.positives else "0 (negative)"
        seen = ", ".join(f"{v!r} ({n})" for v, n in sorted(stats.label_values.items(), key=lambda x: -x[1]))
        raise ValueError(f"all {stats.rows} training labels are {cls}: the values of column {spec.label!r} are "
                         f"{seen}, and [data] positive = {spec.positive}. Set positive to the value(s) that mean "
                         "1; a model cannot learn from one class.")
    empty = [c for c in spec.input_columns if stats.missing[c] == stats.rows]
    if empty and len(empty) == len(spec.input_columns):
        raise ValueError(f"every feature value of the {stats.rows} training examples is missing (columns "
                         f"{', '.join(empty)}): check [data] columns, header, delimiter and format against the files")
    if empty:
        warn(f"warning: column(s) {', '.join(empty)} are missing in every training example")


def training_batches(cfg: Config, epoch: int, batch_size: int, ds: ReaderDataset | None = None):
    """Shuffled (by ``[train] seed`` and ``epoch``) batches of model inputs of the training data."""
    ds = ds if ds is not None else reader(cfg, cfg.train_paths, "train", transform=True)
    out = ds
    if cfg.train["shuffle"]:
        out = out.shuffle(int(cfg.train["shuffle_buffer"]), seed=int(cfg.train["seed"]) * 1_000_003 + epoch)
    return out.batch(batch_size).prefetch(2)


def inference_batches(cfg: Config, paths, role: str, batch_size: int, with_label: bool = True, extra=()):
    """(dataset, batches) of model inputs of ``paths`` in file order."""
    ds = reader(cfg, paths, role, transform=True, with_label=with_label, extra=extra)
    return ds, ds.batch(batch_size).prefetch(2)
