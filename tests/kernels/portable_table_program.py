"""Embedding-table rows as JSON: the initial rows of every initializer and a table after a few
pulls and pushes of each optimizer; run by test_portable_kernels.py once as is and once with numba
held to a generic x86-64 CPU (no AVX-512), which must give the same bits."""

import json
import sys

import numpy as np

from sparseflow._src.kernels import embedding_hash as H
from sparseflow._src.kernels.embedding_table import EmbeddingTableResource, TableSpec

OPTIMIZERS = {"sgd": (), "adagrad": (0.1, 0.0), "rowwise_adagrad": (0.1, 1e-7), "adam": (0.9, 0.999, 1e-8),
              "ftrl": (-0.5, 0.1, 0.01, 0.001, 0.0)}


def main():
    keys = (np.arange(300, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(7)
    out = {}
    for name, kind, p0, p1 in (("uniform", H.INIT_UNIFORM, -0.5, 0.5), ("normal", H.INIT_NORMAL, 0.1, 2.0),
                               ("truncated_normal", H.INIT_TRUNCATED_NORMAL, 0.0, 0.3)):
        for dim in (1, 7, 16, 33):  # odd widths: the vector loops' remainders
            out[f"init/{name}/{dim}"] = H.init_rows(keys, dim, kind, p0, p1, np.uint64(11)).tolist()
    rng = np.random.default_rng(0)
    for name, params in OPTIMIZERS.items():
        spec = TableSpec(dim=9, optimizer=name, optimizer_params=params, initializer="truncated_normal",
                         initializer_params=(0.0, 0.2), seed=3)
        table = EmbeddingTableResource(name, spec, num_shards=2)
        for _ in range(4):
            batch = keys[rng.integers(0, keys.size, 64)]
            table.pull(batch)
            table.push(batch, rng.standard_normal((64, 9)).astype(np.float32), learning_rate=0.1)
        e = table.export()
        out[f"table/{name}"] = [e["keys"].tolist(), e["values"].tolist(), e["state"].tolist()]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
