"""Training, evaluation and prediction loops for config-described models.

``train(cfg)`` streams the training data through ``sparseflow.data`` (``input_data``): one pass
fits the numeric statistics and checks the data (no examples, one label class, every feature
missing: an error), then each epoch reads the files again, shuffled through a bounded buffer, so
memory never depends on the files' size. The model directory (``model_dir``, else the config's,
else ``./sparseflow_runs/<config name>``) records the config (``run_record``); a config with other
model keys is refused there. The latest checkpoint is restored and training goes on from its step
(in the middle of an epoch too), writing a checkpoint after each epoch and on Ctrl-C. With
evaluation data it then evaluates. ``evaluate(cfg)`` restores and reports AUC, log loss and
accuracy. Messages and progress go to ``log`` (stderr); the result is one JSON line on ``out``
(stdout). ``predict(cfg, output)`` writes one probability per input row (with an id column).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import sys
import time

import numpy as np

import sparseflow as tf
from sparseflow._src.models import input_data, run_record
from sparseflow._src.models.config import Config, model_dir_of
from sparseflow._src.models.deepfm import DeepFM
from sparseflow._src.models.metrics import binary_metrics, roc_auc
from sparseflow._src.models.progress import TrainingProgress, interrupt_requests
from sparseflow._src.models.wide_deep import WideDeep

__all__ = ["build_model", "train", "evaluate", "predict", "TrainingInterrupted", "json_line", "prepare_training",
           "PreparedRun", "load_fitted", "evaluate_in_session"]

_MODELS = {"wide_deep": WideDeep, "deepfm": DeepFM}


class TrainingInterrupted(Exception):
    """Ctrl-C during training: a checkpoint of the last finished step was saved."""

    def __init__(self, step: int, total: int, checkpoint: str | None):
        self.step, self.total, self.checkpoint = step, total, checkpoint
        saved = f"saved {checkpoint}" if checkpoint else "nothing to save"
        super().__init__(f"interrupted at step {step} of {total}; {saved}; run the same command to resume")


def build_model(cfg: Config) -> WideDeep:
    """The config's model (not yet built into a graph)."""
    m = {k: v for k, v in cfg.model.items() if v is not None}
    cls = _MODELS[m.pop("type")]
    f = cfg.features
    return cls(num_wide=len(f.wide_features), num_deep=len(f.deep_features), num_numeric=len(f.numeric),
               seed=int(cfg.train["seed"]), **m)


def json_line(doc: dict) -> str:
    """``doc`` as one line of valid JSON (a non-finite number becomes null)."""
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        return v
    return json.dumps(clean(doc), allow_nan=False)


def _feed(g, b, with_label=True):
    feed = {g.wide: b["wide"], g.deep: b["deep"], g.numeric: b["numeric"]}
    if with_label:
        feed[g.label] = b["label"]
    return feed


def _probs(sess, g, batch) -> np.ndarray:
    probs = sess.run(g.prob, _feed(g, batch, with_label=False)).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(probs))
    if bad.size:
        raise ValueError(f"the model predicts {probs[bad[0]]} for {bad.size} of {probs.size} examples of a batch; "
                         "its weights are not finite, so no metrics are reported")
    return probs


def _session(model_dir, required, var_list=None):
    """A Session with the model's variables and tables initialized or restored; and its Saver.
    With ``var_list`` (evaluation, prediction) only those are restored: the model, not its optimizer's
    state, so a checkpoint of any training mode serves (a SyncReplicasOptimizer names Adam's beta
    powers outside the model's scope, as TensorFlow's does)."""
    saver = tf.train.Saver(var_list=var_list, max_to_keep=2)
    sess = tf.Session()
    ckpt = tf.train.latest_checkpoint(model_dir) if os.path.isdir(model_dir) else None
    if ckpt:
        try:
            saver.restore(sess, ckpt)
        except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError, tf.errors.DataLossError) as e:
            sess.close()
            first = e.message.split("\n")[0].removesuffix(" Original error:")
            raise type(e)(None, None, f"model_dir {model_dir!r} holds a checkpoint this config's model cannot "
                                      f"restore: {first} Train into another --model-dir (or use --overwrite) to "
                                      f"start afresh, or use the config that wrote it.") from e
    elif required:
        sess.close()
        raise FileNotFoundError(f"no checkpoint in model_dir {model_dir}: run `sparseflow train` first "
                                "(with the same config and --model-dir)")
    else:
        sess.run(tf.global_variables_initializer())
    return sess, saver, ckpt


def load_fitted(cfg, model_dir):
    """Reads the feature statistics a training run recorded in ``model_dir`` into ``cfg``."""
    path = os.path.join(model_dir, run_record.FEATURES_FILE)
    if not os.path.exists(path):
        raise FileNotFoundError(f"model_dir {model_dir} has no {run_record.FEATURES_FILE} (the feature statistics "
                                "written by `sparseflow train`): train into it first")
    with open(path) as f:
        cfg.features.load_fitted(json.load(f))


def _read_summary(ds) -> dict:
    s = ds.summary()
    return {"examples": s["rows_out"], "skipped": s["skipped"], "defaulted": s["defaulted"]}


def _bad_record_note(name, summary, reject):
    if not (summary["skipped"] or summary["defaulted"]):
        return None
    where = f"; written to {reject}" if reject else ""
    return f"{name}: {summary['skipped']} bad records skipped, {summary['defaulted']} bad values read as missing{where}"


def evaluate_in_session(sess, g, cfg, paths, role, log):
    """Metrics of the model in ``sess`` on ``paths`` (AUC, log loss, accuracy, examples)."""
    ds, batches = input_data.inference_batches(cfg, paths, role, int(cfg.train["eval_batch_size"]))
    labels, probs = [], []
    for b in batches:
        labels.append(b["label"].reshape(-1))
        probs.append(_probs(sess, g, b))
    y = np.concatenate(labels) if labels else np.zeros(0, np.float32)
    p = np.concatenate(probs) if probs else np.zeros(0, np.float32)
    read = _read_summary(ds)
    note = _bad_record_note("evaluation data", read, ds.stats.reject_path)
    if note:
        print(note, file=log, flush=True)
    if not len(y):
        raise ValueError(f"no evaluation examples in {', '.join(paths)}")
    if y.min() == y.max():
        raise ValueError(f"all {len(y)} evaluation labels are {int(y[0])}: AUC is undefined. Check [data] positive "
                         f"= {cfg.features.positive} against the evaluation files' {cfg.features.label!r} values")
    metrics = dict(binary_metrics(y, p), examples=len(y))
    if read["skipped"] or read["defaulted"]:
        metrics.update(eval_skipped=read["skipped"], eval_defaulted=read["defaulted"])
    return metrics


def _report(metrics, out, log, prefix):
    print(f"{prefix}: auc {metrics['auc']:.4f}  logloss {metrics['logloss']:.4f}  accuracy {metrics['accuracy']:.4f}"
          f"  ({metrics['examples']} examples)", file=log, flush=True)
    print(json_line(metrics), file=out, flush=True)


def _prepare_model_dir(cfg, model_dir, overwrite, log):
    if overwrite:
        gone = run_record.remove_run(model_dir)
        if gone:
            print(f"--overwrite: removed {len(gone)} checkpoint and record files of {model_dir}", file=log, flush=True)
    has_ckpt = os.path.isdir(model_dir) and tf.train.latest_checkpoint(model_dir) is not None
    run_record.check(model_dir, cfg, has_ckpt, log)
    return has_ckpt


@dataclasses.dataclass
class PreparedRun:
    """What ``prepare_training`` found: the model directory, the run's length and the data's counts."""

    model_dir: str
    epochs: int
    batch_size: int
    examples: int
    read: dict  # the training data's read summary (rows_out, skipped, defaulted, reject_file)
    resuming: bool
    t0: float

    @property
    def summary(self) -> dict:
        return {"train_examples": self.examples, "skipped": self.read["skipped"], "defaulted": self.read["defaulted"]}


def prepare_training(cfg: Config, model_dir=None, epochs=None, overwrite=False, log=None) -> PreparedRun:
    """The model directory checked against the config (or emptied with ``overwrite``), the training
    data read once (statistics and checks), and the fitted statistics recorded in the directory
    (those of the checkpoint when resuming), so that every process of a run uses the same."""
    log = log or sys.stderr
    model_dir = model_dir_of(cfg, model_dir)
    epochs = int(epochs if epochs is not None else cfg.train["epochs"])
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got {epochs}")
    print(f"checkpoints: {model_dir}", file=log, flush=True)
    resuming = _prepare_model_dir(cfg, model_dir, overwrite, log)
    t0 = time.perf_counter()
    size = sum(os.path.getsize(p) for p in cfg.train_paths if os.path.isfile(p))
    print(f"reading {len(cfg.train_paths)} training file(s), {size / 2**20:,.1f} MB: statistics and checks",
          file=log, flush=True)
    stats = input_data.fit(cfg)
    input_data.check_training_data(cfg, stats, lambda text: print(text, file=log, flush=True))
    examples = stats.read["rows_out"]
    print(f"read {examples} training examples in {time.perf_counter() - t0:.1f}s", file=log, flush=True)
    note = _bad_record_note("training data", stats.read, stats.read["reject_file"])
    if note:
        print(note, file=log, flush=True)
    if resuming and os.path.exists(os.path.join(model_dir, run_record.FEATURES_FILE)):
        load_fitted(cfg, model_dir)  # the statistics the checkpoint was trained with
    os.makedirs(model_dir, exist_ok=True)
    run_record.write(model_dir, cfg, cfg.features.fitted)
    return PreparedRun(model_dir, epochs, int(cfg.train["batch_size"]), examples, stats.read, resuming, t0)


def train(cfg: Config, model_dir=None, epochs=None, out=None, log=None, evaluate_after=True,
          overwrite=False) -> dict:
    """Trains (resuming from ``model_dir``) and, with eval data, evaluates; returns the final metrics
    (training metrics of the last epoch when there is no eval data). Raises
    :class:`TrainingInterrupted` after saving a checkpoint when Ctrl-C is pressed."""
    out, log = out or sys.stdout, log or sys.stderr
    run = prepare_training(cfg, model_dir, epochs, overwrite, log)
    model_dir, epochs, batch_size, examples, t0 = run.model_dir, run.epochs, run.batch_size, run.examples, run.t0
    steps_per_epoch = math.ceil(examples / batch_size)
    total = epochs * steps_per_epoch
    prefix = os.path.join(model_dir, "model.ckpt")
    with tf.Graph().as_default():
        g = build_model(cfg).build()
        sess, saver, ckpt = _session(model_dir, required=False)
        with sess:
            step = int(sess.run(g.global_step))
            if ckpt:
                print(f"resumed from {ckpt} at step {step}", file=log, flush=True)
            run_step = sess.make_callable([g.loss, g.logits, g.train_op],
                                          feed_list=[g.wide, g.deep, g.numeric, g.label])
            progress = TrainingProgress(log, total=total * batch_size, initial=min(step, total) * batch_size)
            train_metrics = {}
            saved = step if ckpt else None
            reader = input_data.reader(cfg, cfg.train_paths, "train", transform=True)
            try:
                with interrupt_requests() as stop:
                    for epoch in range(step // steps_per_epoch, epochs):
                        progress.set_description(f"epoch {epoch + 1}/{epochs}")
                        skip = step - epoch * steps_per_epoch  # batches done before an interruption
                        losses, recent_y, recent_p = [], [], []
                        te, n_seen = time.perf_counter(), 0
                        for i, b in enumerate(input_data.training_batches(cfg, epoch, batch_size, reader)):
                            if i < skip:
                                continue
                            if stop.is_set():
                                saved = step if step == saved else _save(saver, sess, prefix, step)
                                raise TrainingInterrupted(step, total, saved and f"{prefix}-{saved}")
                            loss, logits, _ = run_step(b["wide"], b["deep"], b["numeric"], b["label"])
                            if not math.isfinite(loss):
                                last = f" (the last checkpoint is step {saved})" if saved else ""
                                raise ValueError(f"training diverged: the loss is {float(loss)} at step {step + 1} "
                                                 f"(epoch {epoch + 1}); nothing of this epoch was saved{last}. "
                                                 "Lower the learning rates or check the data for extreme values.")
                            step += 1
                            n_seen += len(b["label"])
                            losses.append(float(loss))
                            recent_y.append(b["label"])
                            recent_p.append(logits)
                            recent_y, recent_p = recent_y[-80:], recent_p[-80:]
                            progress.update(len(b["label"]), loss=float(np.mean(losses[-50:])))
                        ys, ps = np.concatenate(recent_y or [np.zeros((0, 1))]), np.concatenate(
                            recent_p or [np.zeros((0, 1))])
                        auc = roc_auc(ys, ps) if len(ys) else float("nan")
                        train_metrics = {"loss": round(float(np.mean(losses)), 4) if losses else None,
                                         "auc": round(auc, 4) if math.isfinite(auc) else None}
                        saved = _save(saver, sess, prefix, step)
                        secs = time.perf_counter() - te
                        progress.write(f"epoch {epoch + 1}/{epochs}  loss {_fmt(train_metrics['loss'])}  train auc "
                                       f"{_fmt(train_metrics['auc'])}  {n_seen / max(secs, 1e-9):,.0f} examples/s")
            finally:
                progress.close()
            summary = run.summary
            if not cfg.eval_paths or not evaluate_after:
                result = {**train_metrics, **summary, "seconds": round(time.perf_counter() - t0, 1)}
                print(json_line(result), file=out, flush=True)
                return result
            metrics = evaluate_in_session(sess, g, cfg, cfg.eval_paths, "eval", log)
    metrics.update(summary, seconds=round(time.perf_counter() - t0, 1))
    _report(metrics, out, log, "eval")
    return metrics


def _fmt(v):
    return "n/a" if v is None else f"{v:.4f}"


def _save(saver, sess, prefix, step) -> int:
    saver.save(sess, prefix, global_step=step)
    return step


def _restored(cfg, model_dir, log):
    """(graph, model graph, session, checkpoint) of a trained model directory."""
    has_ckpt = os.path.isdir(model_dir) and tf.train.latest_checkpoint(model_dir) is not None
    run_record.check(model_dir, cfg, has_ckpt, log)
    if has_ckpt:
        load_fitted(cfg, model_dir)
    graph = tf.Graph()
    with graph.as_default():
        g = build_model(cfg).build()
        sess, _, ckpt = _session(model_dir, required=True, var_list=g.inference_state)
    return graph, g, sess, ckpt


def evaluate(cfg: Config, model_dir=None, paths=None, out=None, log=None) -> dict:
    """Restores the latest checkpoint of ``model_dir`` and evaluates on ``paths`` (default: eval data)."""
    out, log = out or sys.stdout, log or sys.stderr
    model_dir = model_dir_of(cfg, model_dir)
    paths = list(paths) if paths else cfg.eval_paths
    if not paths:
        raise ValueError("no evaluation data: give [data] eval in the config or files with --input")
    graph, g, sess, ckpt = _restored(cfg, model_dir, log)
    with graph.as_default(), sess:
        metrics = evaluate_in_session(sess, g, cfg, paths, "eval", log)
    _report(metrics, out, log, f"eval ({ckpt})")
    return metrics


def predict(cfg: Config, output, model_dir=None, paths=None, id_column=None, log=None) -> dict:
    """Writes one probability per row of ``paths`` (default: eval data) to ``output`` (a path or
    ``"-"`` for stdout): one number per line, or with an id column (``id_column``, else ``[data]
    id``) a CSV of ``<id>,probability`` with a header. The label column is not needed. Returns
    counts: ``{"predictions", "skipped", "output"}``."""
    log = log or sys.stderr
    model_dir = model_dir_of(cfg, model_dir)
    paths = list(paths) if paths else cfg.eval_paths
    if not paths:
        raise ValueError("no input data: give files with --input or [data] eval in the config")
    id_column = id_column or cfg.data.get("id")
    if id_column in (*cfg.features.input_columns, cfg.features.label):
        raise ValueError(f"the id column {id_column!r} is a feature or the label of the model; give a column that "
                         "only identifies the rows (predictions are written next to its text)")
    extra = [id_column] if id_column else []
    graph, g, sess, ckpt = _restored(cfg, model_dir, log)
    print(f"predicting with {ckpt}", file=log, flush=True)
    ds, batches = input_data.inference_batches(cfg, paths, "predict", int(cfg.train["eval_batch_size"]),
                                               with_label=False, extra=extra)
    tmp = None if output == "-" else f"{output}.tmp-{os.getpid()}"
    f = sys.stdout if output == "-" else open(tmp, "w", newline="")  # noqa: SIM115
    n = 0
    try:
        writer = csv.writer(f, lineterminator="\n")
        if id_column:
            writer.writerow([id_column, "probability"])
        with graph.as_default(), sess:
            for b in batches:
                probs = _probs(sess, g, b)
                if id_column:
                    ids = [v.decode("utf-8", "backslashreplace") for v in b[id_column]]
                    writer.writerows(zip(ids, (f"{p:.6f}" for p in probs)))
                else:
                    f.write("".join(f"{p:.6f}\n" for p in probs))
                n += len(probs)
        if tmp:
            f.close()
            os.replace(tmp, output)
    finally:
        if tmp and not f.closed:
            f.close()
        if tmp and os.path.exists(tmp):
            os.remove(tmp)
    read = _read_summary(ds)
    note = _bad_record_note("input data", read, ds.stats.reject_path)
    if note:
        print(note + ("" if id_column else "; the predictions have fewer lines than the input: set [data] id "
                      "(or --id-column) to match them"), file=log, flush=True)
    return {"predictions": n, "skipped": read["skipped"], "output": output}
