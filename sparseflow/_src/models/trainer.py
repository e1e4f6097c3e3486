"""Training, evaluation and prediction loops for config-described models.

``train(cfg)`` reads the data (features fitted on the training split), builds the model graph,
restores the latest checkpoint in the model directory if there is one (dense variables and
embedding tables, through one ``tf.train.Saver``) and trains the remaining epochs, writing a
checkpoint after each. The model directory is ``model_dir``, else the config's, else
``./sparseflow_runs/<config name>`` (``model_dir_of``); ``train`` prints it first. A progress
bar shows examples/s, loss and the AUC of the last ~20,000 training predictions. With evaluation
data it then evaluates. ``evaluate(cfg)`` restores and prints AUC, log loss and accuracy; the last
line of both is one JSON object of the final metrics.
``predict(cfg, output)`` writes one probability per input row.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time

import numpy as np

import sparseflow as tf
from sparseflow._src.models.config import Config, model_dir_of
from sparseflow._src.models.deepfm import DeepFM
from sparseflow._src.models.features import read_table
from sparseflow._src.models.metrics import binary_metrics, roc_auc
from sparseflow._src.models.wide_deep import WideDeep
from sparseflow._src.training.session.progress import ProgressBar

__all__ = ["build_model", "load_inputs", "train", "evaluate", "predict"]

_MODELS = {"wide_deep": WideDeep, "deepfm": DeepFM}
_FEATURES_FILE = "features.json"


def build_model(cfg: Config) -> WideDeep:
    """The config's model (not yet built into a graph)."""
    m = dict(cfg.model)
    cls = _MODELS[m.pop("type")]
    f = cfg.features
    return cls(num_wide=len(f.wide_features), num_deep=len(f.deep_features), num_numeric=len(f.numeric),
               seed=int(cfg.train["seed"]), **m)


def _table(cfg, paths):
    f = cfg.features
    numeric = [*f.numeric, *f.buckets, *f.log_buckets]
    return read_table(paths, f.columns, numeric=numeric, missing=tuple(f.missing), **cfg.read_options)


def _read(cfg, paths):
    return cfg.features.transform(_table(cfg, paths))


def load_inputs(cfg: Config, paths=None, model_dir=None):
    """Model inputs of ``paths`` (default: the eval data); numeric statistics come from
    ``model_dir/features.json`` when present, else are fitted on the training data."""
    stats_file = os.path.join(model_dir, _FEATURES_FILE) if model_dir else None
    if stats_file and os.path.exists(stats_file):
        with open(stats_file) as f:
            cfg.features.load_fitted(json.load(f))
    else:
        cfg.features.fit(_table(cfg, cfg.train_paths))
    return _read(cfg, paths if paths is not None else cfg.eval_paths)


def _feed(g, inputs):
    return {g.wide: inputs.wide, g.deep: inputs.deep, g.numeric: inputs.numeric, g.label: inputs.label}


def _predict_probs(sess, g, inputs, batch_size):
    out = [sess.run(g.prob, _feed(g, inputs.take(slice(s, s + batch_size))))
           for s in range(0, len(inputs), batch_size)]
    probs = np.concatenate(out).reshape(-1) if out else np.zeros(0, np.float32)
    bad = np.flatnonzero(~np.isfinite(probs))
    if bad.size:
        raise ValueError(f"the model predicts {probs[bad[0]]} for {bad.size} of {probs.size} examples (the first is "
                         f"example {bad[0] + 1}); its weights are not finite, so no metrics are reported.")
    return probs


def _session(model_dir, required):
    """A Session with the model's variables and tables initialized or restored; and its Saver."""
    saver = tf.train.Saver(max_to_keep=2)
    sess = tf.Session()
    ckpt = tf.train.latest_checkpoint(model_dir) if os.path.isdir(model_dir) else None
    if ckpt:
        try:
            saver.restore(sess, ckpt)
        except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError, tf.errors.DataLossError) as e:
            sess.close()
            first = e.message.split("\n")[0].removesuffix(" Original error:")
            raise type(e)(None, None, f"model_dir {model_dir!r} holds a checkpoint this config's model cannot "
                                      f"restore: {first} Train into another --model-dir (or remove this one) to "
                                      f"start afresh, or use the config that wrote it.") from e
    elif required:
        sess.close()
        raise FileNotFoundError(f"no checkpoint in model_dir {model_dir}: run `sparseflow train` first "
                                "(with the same config and --model-dir)")
    else:
        sess.run(tf.global_variables_initializer())
    return sess, saver, ckpt


def _report(metrics, out, prefix):
    print(f"{prefix}: auc {metrics['auc']:.4f}  logloss {metrics['logloss']:.4f}  "
          f"accuracy {metrics['accuracy']:.4f}  ({metrics['examples']} examples)", file=out, flush=True)
    print(json.dumps(metrics), file=out, flush=True)


def train(cfg: Config, model_dir=None, epochs=None, out=None, progress=None, evaluate_after=True) -> dict:
    """Trains (resuming from ``model_dir``) and, with eval data, evaluates; returns the final metrics
    (training metrics of the last epoch when there is no eval data)."""
    out = out or sys.stdout
    model_dir = model_dir_of(cfg, model_dir)
    print(f"checkpoints: {model_dir}", file=out, flush=True)
    epochs = int(epochs if epochs is not None else cfg.train["epochs"])
    batch_size = int(cfg.train["batch_size"])
    t0 = time.perf_counter()
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got {epochs}")
    cfg.features.fit(_table(cfg, cfg.train_paths))
    data = _read(cfg, cfg.train_paths)
    eval_data = _read(cfg, cfg.eval_paths) if cfg.eval_paths and evaluate_after else None
    print(f"read {len(data)} training and {len(eval_data) if eval_data else 0} evaluation examples "
          f"in {time.perf_counter() - t0:.1f}s", file=out, flush=True)
    os.makedirs(model_dir, exist_ok=True)
    with open(os.path.join(model_dir, _FEATURES_FILE), "w") as f:
        json.dump(cfg.features.fitted, f)
    steps_per_epoch = math.ceil(len(data) / batch_size)
    with tf.Graph().as_default():
        model = build_model(cfg)
        g = model.build()
        sess, saver, ckpt = _session(model_dir, required=False)
        with sess:
            step = int(sess.run(g.global_step))
            if ckpt:
                print(f"resumed from {ckpt} at step {step}", file=out, flush=True)
            run_step = sess.make_callable([g.loss, g.logits, g.train_op], feed_list=[g.wide, g.deep, g.numeric,
                                                                                     g.label])
            total = epochs * steps_per_epoch
            bar = ProgressBar(total=total, stream=progress or sys.stderr, batch_size=batch_size, unit="step",
                              start_step=step)
            recent_y, recent_p = [], []
            train_metrics = {}
            step_saved = step if ckpt else None
            for epoch in range(step // steps_per_epoch, epochs):
                rng = np.random.default_rng([int(cfg.train["seed"]), epoch])
                order = rng.permutation(len(data)) if cfg.train.get("shuffle", True) else np.arange(len(data))
                losses = []
                te = time.perf_counter()
                for start in range(0, len(order), batch_size):
                    b = data.take(order[start:start + batch_size])
                    loss, logits, _ = run_step(b.wide, b.deep, b.numeric, b.label)
                    if not math.isfinite(loss):
                        raise ValueError(f"training diverged: the loss is {float(loss)} at step {step + 1} (epoch "
                                         f"{epoch + 1}); nothing of this epoch was saved"
                                         f"{f' (the last checkpoint is step {step_saved})' if step_saved else ''}. "
                                         f"Lower the learning rates or check the data for extreme values.")
                    losses.append(float(loss))
                    step += 1
                    recent_y.append(b.label)
                    recent_p.append(logits)
                    if bar.due():
                        ys, ps = np.concatenate(recent_y[-80:]), np.concatenate(recent_p[-80:])
                        bar.update(step, loss=float(np.mean(losses[-50:])), auc=round(roc_auc(ys, ps), 4))
                    recent_y, recent_p = recent_y[-200:], recent_p[-200:]
                secs = time.perf_counter() - te
                ys, ps = np.concatenate(recent_y[-80:]), np.concatenate(recent_p[-80:])
                train_metrics = {"loss": round(float(np.mean(losses)), 4), "auc": round(roc_auc(ys, ps), 4)}
                saver.save(sess, os.path.join(model_dir, "model.ckpt"), global_step=step)
                step_saved = step
                bar.update(step, force=False, loss=train_metrics["loss"], auc=train_metrics["auc"])
                print(f"epoch {epoch + 1}/{epochs}  loss {train_metrics['loss']:.4f}  train auc "
                      f"{train_metrics['auc']:.4f}  {len(order) / secs:,.0f} examples/s", file=out, flush=True)
            bar.close(step)
            if eval_data is None:
                print(json.dumps(train_metrics), file=out, flush=True)
                return train_metrics
            probs = _predict_probs(sess, g, eval_data, int(cfg.train["eval_batch_size"]))
    metrics = dict(binary_metrics(eval_data.label, probs), examples=len(eval_data))
    metrics["seconds"] = round(time.perf_counter() - t0, 1)
    _report(metrics, out, "eval")
    return metrics


def evaluate(cfg: Config, model_dir=None, paths=None, out=None) -> dict:
    """Restores the latest checkpoint of ``model_dir`` and evaluates on ``paths`` (default: eval data)."""
    out = out or sys.stdout
    model_dir = model_dir_of(cfg, model_dir)
    data = load_inputs(cfg, paths, model_dir)
    if not len(data):
        raise ValueError("no evaluation data: give [data] eval in the config or paths")
    with tf.Graph().as_default():
        g = build_model(cfg).build()
        sess, _, ckpt = _session(model_dir, required=True)
        with sess:
            probs = _predict_probs(sess, g, data, int(cfg.train["eval_batch_size"]))
    metrics = dict(binary_metrics(data.label, probs), examples=len(data))
    _report(metrics, out, f"eval ({ckpt})")
    return metrics


def predict(cfg: Config, output, model_dir=None, paths=None) -> int:
    """Writes one probability per row of ``paths`` (default: eval data) to ``output`` (a path or
    ``"-"`` for stdout); returns the number of rows."""
    model_dir = model_dir_of(cfg, model_dir)
    data = load_inputs(cfg, paths, model_dir)
    with tf.Graph().as_default():
        g = build_model(cfg).build()
        sess, _, ckpt = _session(model_dir, required=True)
        print(f"predicting with {ckpt}", file=sys.stderr, flush=True)
        with sess:
            probs = _predict_probs(sess, g, data, int(cfg.train["eval_batch_size"]))
    text = "".join(f"{p:.6f}\n" for p in probs)
    if output == "-":
        sys.stdout.write(text)
    else:
        with open(output, "w") as f:
            f.write(text)
    return len(probs)
