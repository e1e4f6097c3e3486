"""Peak memory of ``sparseflow train`` on Criteo-format files: bounded by the batch, the shuffle
buffer and the tables, not by the file.

Writes a synthetic Criteo-format TSV (``w1_data.make_synthetic``) of ``--base-rows`` rows, and a
file of ``--rows`` rows holding the same rows repeated (so both train the same tables, one on a
file ``rows / base-rows`` times larger), plus that file gzip-compressed; trains one epoch of
Wide&Deep on each through the CLI (a subprocess) and samples the process's ``/proc`` status every
50 ms: ``peak_rss_mb`` (VmHWM: anonymous memory plus the file pages it touched; an uncompressed file
is read through a memory map, whose pages the kernel may drop at any time) and ``peak_anon_mb`` (the
largest RssAnon seen: memory the process itself holds). Prints one JSON line.

    python benchmarks/cli_memory.py                              # 250,000 rows x 4 = 1,000,000 rows
    python benchmarks/cli_memory.py --base-rows 50000 --rows 200000    # quick
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.w1_data import make_synthetic  # noqa: E402

CONFIG = """
[data]
train = "{train}"
columns = [{columns}]
label = "label"
delimiter = "\\t"
header = false
[features]
numeric = [{ints}]
log1p = [{ints}]
categorical = [{cats}]
missing = [""]
[model]
embedding_dim = 8
embedding_stddev = 0.1
hidden_units = [64, 32]
[train]
epochs = 1
batch_size = 1024
shuffle_buffer = {buffer}
"""


def _quoted(names):
    return ", ".join(f'"{n}"' for n in names)


def _status(pid) -> dict:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                    out[key] = int(value.split()[0]) / 1024.0
    except OSError:
        pass
    return out


def measure(train_path: str, workdir: str, buffer: int) -> dict:
    ints, cats = [f"I{i}" for i in range(1, 14)], [f"C{i}" for i in range(1, 27)]
    cfg = os.path.join(workdir, "criteo.toml")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(train=train_path, columns=_quoted(["label", *ints, *cats]), ints=_quoted(ints),
                              cats=_quoted(cats), buffer=buffer))
    model_dir = tempfile.mkdtemp(dir=workdir)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "sparseflow", "train", cfg, "--model-dir", model_dir], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = {"VmHWM": 0.0, "RssAnon": 0.0, "RssFile": 0.0}
    while proc.poll() is None:
        s = _status(proc.pid)
        for k in peak:
            peak[k] = max(peak[k], s.get(k, 0.0))
        time.sleep(0.05)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"sparseflow train failed:\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    shutil.rmtree(model_dir)
    return {"rows": result["train_examples"], "file_mb": round(os.path.getsize(train_path) / 2**20, 1),
            "peak_rss_mb": round(peak["VmHWM"]), "peak_anon_mb": round(peak["RssAnon"]),
            "peak_file_pages_mb": round(peak["RssFile"]), "seconds": round(time.perf_counter() - t0, 1),
            "train_auc": result.get("auc")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--base-rows", type=int, default=250_000)
    ap.add_argument("--shuffle-buffer", type=int, default=200_000)
    args = ap.parse_args(argv)
    if args.rows % args.base_rows:
        ap.error("--rows must be a multiple of --base-rows")
    with tempfile.TemporaryDirectory(prefix="sparseflow-cli-memory-") as tmp:
        base = os.path.join(tmp, "base.txt")
        make_synthetic(base, args.base_rows, seed=0)
        big = os.path.join(tmp, "big.txt")
        with open(base, "rb") as src, open(big, "wb") as dst:
            for _ in range(args.rows // args.base_rows):
                src.seek(0)
                shutil.copyfileobj(src, dst)
        with open(big, "rb") as src, gzip.open(big + ".gz", "wb", compresslevel=1) as dst:
            shutil.copyfileobj(src, dst)
        report = {"base": measure(base, tmp, args.shuffle_buffer), "big": measure(big, tmp, args.shuffle_buffer),
                  "big_gzip": measure(big + ".gz", tmp, args.shuffle_buffer)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
