"""``sparseflow demo``: Wide&Deep on the bundled Adult census data, from the bundled config
``adult_wide_deep`` (train on adult.data, evaluate on adult.test).

The wide part is FTRL over dynamic-table weights of categoricals, bucketized numerics and
crosses; the deep part embeds the categoricals in a second table and runs them with the numerics
through a 128-64 ReLU MLP. Progress (a bar on a terminal), one line per epoch and the evaluation
go to ``log`` (stderr); the result is one JSON line on ``out`` (stdout).
"""

from __future__ import annotations

import sys
import tempfile

from sparseflow._src.models import load_config, train


def run(epochs: int | None = None, model_dir: str | None = None, out=None, log=None, overwrite=False) -> dict:
    """Trains and evaluates; checkpoints go to ``model_dir`` (default: a fresh temporary directory)."""
    cfg = load_config("adult_wide_deep")
    log = log or sys.stderr
    print("sparseflow demo: Wide&Deep on UCI Adult (train adult.data, evaluate adult.test)", file=log, flush=True)
    if model_dir is not None:
        return train(cfg, model_dir=model_dir, epochs=epochs, out=out, log=log, overwrite=overwrite)
    print("checkpoints go to a temporary directory, removed at the end (--model-dir DIR keeps them)", file=log,
          flush=True)
    with tempfile.TemporaryDirectory(prefix="sparseflow-demo-") as tmp:
        return train(cfg, model_dir=tmp, epochs=epochs, out=out, log=log)
