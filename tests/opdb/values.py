"""Arrays as exact JSON data, and the fixture files that hold TensorFlow's records.

An array is ``{"dtype": "float32", "shape": [2, 3], "v": [...]}`` with the values flattened:
floats as the exact Python float of each element (NaN and infinities as JSON's non-standard
``NaN``/``Infinity``, which Python reads back), complex numbers as ``[re, im]`` pairs, strings as
latin-1 text (every byte kept), integers and booleans as themselves. Decoding gives back the same
bits, except NaN payloads.

Fixtures are ``tests/opdb/fixtures/<family>.json.gz``, written byte-for-byte reproducibly (sorted
keys, gzip with mtime 0)::

    {"tensorflow": "2.21.0", "entries": {"<entry id>": {"op_type": ..., "dtypes": [...],
                                                         "records": {"<sample>|<dtype>|<mode>": {...}}}}}
"""

from __future__ import annotations

import gzip
import json
import pathlib

import numpy as np

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def encode(a: np.ndarray) -> dict:
    a = np.asarray(a)
    if a.dtype == object or a.dtype.kind in "SU":
        flat = [x.decode("latin-1") if isinstance(x, bytes) else str(x) for x in a.reshape(-1)]
        return {"dtype": "string", "shape": list(a.shape), "v": flat}
    flat = a.reshape(-1)
    if a.dtype.kind == "c":
        v = [[float(x.real), float(x.imag)] for x in flat]
    elif a.dtype.kind == "f":
        v = [float(x) for x in flat]
    elif a.dtype.kind == "b":
        v = [bool(x) for x in flat]
    else:
        v = [int(x) for x in flat]
    return {"dtype": str(a.dtype), "shape": list(a.shape), "v": v}


def decode(d: dict) -> np.ndarray:
    shape = tuple(d["shape"])
    if d["dtype"] == "string":
        return np.array([x.encode("latin-1") for x in d["v"]], dtype=object).reshape(shape)
    dt = np.dtype(d["dtype"])
    if dt.kind == "c":
        v = np.array([complex(re, im) for re, im in d["v"]], dtype=dt)
    else:
        v = np.array(d["v"], dtype=dt) if d["v"] else np.zeros(0, dt)
    return v.reshape(shape)


def fixture_path(family: str) -> pathlib.Path:
    return FIXTURES / f"{family}.json.gz"


def load_fixture(family: str) -> dict | None:
    p = fixture_path(family)
    if not p.exists():
        return None
    with gzip.open(p, "rt", encoding="utf-8") as f:
        return json.load(f)


def save_fixture(family: str, data: dict) -> pathlib.Path:
    p = fixture_path(family)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    with open(p, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        f.write(text.encode("utf-8"))
    return p
