"""Workload W1's shared pieces: sizes, the synthetic Criteo-format data and the exact rank AUC.

Used by ``widedeep_criteo.py`` (sparseflow) and ``widedeep_criteo_tf.py`` (the same model in
TensorFlow), so both train and score on identical data. NumPy only.
"""

from __future__ import annotations

import numpy as np

BATCH, FIELDS, NUMERIC, DIM = 2048, 26, 13, 16
HIDDEN = (512, 256, 128)
WARMUP = 5
# per-field vocabulary caps (Criteo-like) and the hidden model's per-field weight scale
_CARDS = [1400, 550, 2_000_000, 600_000, 300, 24, 12_000, 600, 3, 90_000, 5_600, 1_800_000, 3_200, 27,
          14_000, 1_000_000, 10, 5_600, 2_100, 4, 1_500_000, 18, 15, 140_000, 100, 90_000]


# ---------------------------------------------------------------------------- synthetic data
def make_synthetic(path: str, rows: int, seed: int = 0):
    """A Criteo-format file with a learnable label: ``logit = sum_f w_f[id] + numeric terms + b``,
    ``w_f`` a hidden normal weight per (field, id), ids Zipf(1.2) capped at the field's cardinality
    (15% missing), 13 geometric counts (20% missing); label ~ Bernoulli(sigmoid(logit))."""
    rng = np.random.default_rng(seed)
    scales = rng.uniform(0.1, 0.75, FIELDS)
    weights = [rng.standard_normal(min(card, 1 << 17)).astype(np.float32) * s for card, s in zip(_CARDS, scales)]
    num_w = rng.normal(0, 0.25, NUMERIC)
    int_vocab = np.array([str(i) for i in range(0, 5001)] + [""], dtype=object)
    with open(path, "w") as f:
        for start in range(0, rows, 100_000):
            n = min(100_000, rows - start)
            logit = np.full(n, -2.3)
            cols = []
            for j in range(NUMERIC):
                v = np.minimum(rng.geometric(0.05 if j % 2 else 0.01, n), 5000)
                missing = rng.random(n) < 0.2
                z = np.log1p(v) - 3.0
                logit += np.where(missing, 0.0, num_w[j] * z)
                v[missing] = len(int_vocab) - 1
                cols.append(int_vocab[v])
            for fi, card in enumerate(_CARDS):
                ids = np.minimum(rng.zipf(1.2, n), card)
                missing = rng.random(n) < 0.15
                logit += np.where(missing, 0.0, weights[fi][ids % len(weights[fi])])
                vocab, inv = np.unique((ids * 2654435761 + fi * 40503) % (1 << 32), return_inverse=True)
                hexes = np.array([f"{x:08x}" for x in vocab.tolist()] + [""], dtype=object)
                inv[missing] = len(vocab)
                cols.append(hexes[inv])
            label = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "1", "0").astype(object)
            f.write("\n".join("\t".join(r) for r in zip(label, *cols)) + "\n")


def rank_auc(labels, scores) -> float:
    """Exact ROC AUC (Mann-Whitney U, tied scores get average ranks)."""
    labels = np.asarray(labels) > 0.5
    order = np.argsort(scores, kind="mergesort")
    s = np.asarray(scores)[order]
    ranks = np.empty(len(s), np.float64)
    bounds = np.flatnonzero(np.diff(s)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(s)]])
    avg = (starts + ends + 1) / 2.0  # 1-based average rank of each tie group
    ranks[order] = np.repeat(avg, ends - starts)
    npos = labels.sum()
    nneg = len(labels) - npos
    return float((ranks[labels].sum() - npos * (npos + 1) / 2) / (npos * nneg))
