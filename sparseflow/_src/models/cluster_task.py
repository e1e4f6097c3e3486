"""One task of ``sparseflow train CONFIG --ps N --workers M`` (or ``--strategy S --workers M``): a
ps that serves, or a worker that trains (and, without ps tasks, serves a shard of the tables too).

The launcher (``cluster_training``) has read the training data once and recorded the fitted
feature statistics in the model directory; it starts every task of a local cluster with
``TF_CONFIG`` and ``python -m sparseflow._src.models.cluster_task ...``. A worker:

* builds the config's model in its strategy's scope (``sparseflow.distribute``): with
  ``ParameterServerStrategy`` the dense variables (and their optimizer's updates) on the ps tasks
  and both embedding tables sharded over all ps tasks; with ``PsStrategy`` the same over the
  workers themselves; with ``MultiWorkerMirroredStrategy`` / ``HybridStrategy`` a copy of the
  dense variables on every worker (the chief's, broadcast) and the tables sharded over the workers;
* reads its own shard of the training rows (``Dataset.shard(workers, index)``), reshuffled each
  epoch, and trains between-graph: asynchronously (each update applied as it arrives), with
  ``--sync`` through ``tf.train.SyncReplicasOptimizer`` (one gradient of each worker per global
  step, table gradients aggregated by key), or in lockstep with the other workers (the
  all-reduce strategies: every worker's copy of the global step advances once per step);
* stops when the global step reaches ``epochs * steps per epoch`` (the steps of one pass over the
  data: ``ceil(examples / batch)``, or ``ceil(examples / (batch * workers))`` when a global step
  takes one batch of every worker: sync and all-reduce), as ``StopAtStepHook`` would, so a
  restarted run goes on from the checkpoint's step.

The chief (worker 0) initializes or restores the model (``MonitoredTrainingSession``), writes a
checkpoint once per epoch's worth of steps, prints progress, waits until every worker has finished
and writes the final checkpoint (``strategy.finish``: every worker's last update is in it), evaluates
that state on the eval data, and prints the result as one JSON line ``{"cluster_result": {...}}`` on
stdout (the launcher turns it into the command's result); the other workers, whose servers hold
table shards, leave after that (``strategy.release``).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

import numpy as np

import sparseflow as tf
from sparseflow._src.models.config import load_config
from sparseflow._src.models.metrics import roc_auc
from sparseflow._src.models.trainer import build_model, evaluate_in_session, json_line, load_fitted
from sparseflow._src.training.distribute import (
    HybridStrategy,
    MultiWorkerMirroredStrategy,
    ParameterServerStrategy,
    PsStrategy,
)

__all__ = ["main", "steps_per_epoch"]

def steps_per_epoch(examples: int, batch_size: int, workers: int, sync: bool) -> int:
    """Global steps of one pass over ``examples``: one batch each (async), or one batch of every
    worker each (sync)."""
    return max(1, math.ceil(examples / (batch_size * (workers if sync else 1))))


def _arguments(argv):
    p = argparse.ArgumentParser(prog="python -m sparseflow._src.models.cluster_task")
    p.add_argument("--config", required=True)
    p.add_argument("--data-dir")
    p.add_argument("--model-dir", required=True)
    p.add_argument("--epochs", type=int, required=True)
    p.add_argument("--examples", type=int, required=True, help="training examples (counted by the launcher)")
    p.add_argument("--strategy", default="parameter_server",
                   choices=["parameter_server", "ps", "multi_worker_mirrored", "hybrid"])
    p.add_argument("--staleness", type=int, default=0)
    p.add_argument("--sync", action="store_true")
    p.add_argument("--wait-secs", type=float, default=600.0,
                   help="how long a worker waits for the chief's initialization, and the chief for the workers")
    return p.parse_args(argv)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _train(sess, m, step_after, cfg, index, workers, last_step, spe, log_every):
    """Trains on this worker's shard until the global step reaches ``last_step``; returns the
    (steps, examples, recent labels, recent logits, recent losses) of this worker."""
    batch_size = int(cfg.train["batch_size"])
    from sparseflow._src.models import input_data

    shard = input_data.reader(cfg, cfg.train_paths, "train", transform=True).shard(workers, index)
    step = int(sess.run(m.global_step))
    steps = examples = 0
    losses, ys, ps = [], [], []
    t0 = time.perf_counter()
    next_log = (step // log_every + 1) * log_every
    for epoch in itertools.count(step // spe):
        if step >= last_step:
            break
        for b in input_data.training_batches(cfg, epoch, batch_size, shard):
            loss, logits, step = sess.run([m.loss, m.logits, step_after],
                                             {m.wide: b["wide"], m.deep: b["deep"], m.numeric: b["numeric"],
                                              m.label: b["label"]})
            step = int(step)
            if not math.isfinite(loss):
                raise ValueError(f"training diverged: the loss is {float(loss)} at global step {step}. Lower the "
                                 "learning rates or check the data for extreme values.")
            steps += 1
            examples += len(b["label"])
            losses, ys, ps = (losses + [float(loss)])[-50:], (ys + [b["label"]])[-80:], (ps + [logits])[-80:]
            if index == 0 and step >= next_log:
                next_log = (step // log_every + 1) * log_every
                rate = examples / max(time.perf_counter() - t0, 1e-9)
                _log(f"step {min(step, last_step)}/{last_step}  loss {np.mean(losses):.4f}  "
                     f"{rate * workers:,.0f} examples/s (all workers, estimated)")
            if step >= last_step:
                break
    return steps, examples, ys, ps, losses, time.perf_counter() - t0


def make_strategy(name: str, sync: bool, staleness: int = 0):
    """The strategy of ``--strategy`` for this process's cluster (``TF_CONFIG``)."""
    if name == "parameter_server":
        return ParameterServerStrategy(sync=sync)
    if sync:
        raise ValueError(f"--sync is an option of the parameter_server strategy, not of {name!r}")
    if name == "ps":
        return PsStrategy()
    if name == "multi_worker_mirrored":
        return MultiWorkerMirroredStrategy()
    if name == "hybrid":
        return HybridStrategy(staleness=staleness)
    raise ValueError(f"unknown strategy {name!r}; one of parameter_server, ps, multi_worker_mirrored, hybrid")


_MODES = {"multi_worker_mirrored": ("sync", "synchronous (dense gradients all-reduced, tables by key)"),
          "hybrid": ("hybrid", "dense gradients all-reduced, table rows pushed asynchronously")}


def main(argv=None) -> int:
    args = _arguments(argv)
    strategy = make_strategy(args.strategy, args.sync, args.staleness)
    if strategy.serves_only:
        strategy.join()
        return 0
    cfg = load_config(args.config, data_dir=args.data_dir)
    load_fitted(cfg, args.model_dir)
    workers, index, chief = strategy.num_workers, strategy.worker_index, strategy.is_chief
    mode, how = _MODES.get(args.strategy, ("sync", "synchronous (SyncReplicasOptimizer)") if args.sync else
                           ("async", "asynchronous"))
    spe = steps_per_epoch(args.examples, int(cfg.train["batch_size"]), workers, mode != "async")
    last_step = args.epochs * spe
    with tf.Graph().as_default():
        with strategy.scope():
            model = build_model(cfg).build(wrap_optimizer=strategy.wrap_optimizer)
            with tf.control_dependencies([model.train_op]):  # the global step once this step's update is in
                step_after = tf.identity(model.global_step)
        scaffold = tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=2, sharded=True))
        checkpoint = tf.train.latest_checkpoint(args.model_dir) if chief else None
        with strategy.training_session(checkpoint_dir=args.model_dir, scaffold=scaffold, save_checkpoint_steps=spe,
                                       max_wait_secs=args.wait_secs, stop_grace_period_secs=5) as sess:
            if chief:
                where = "from the initial model"
                if checkpoint:  # the other workers may have stepped already: the checkpoint's own step
                    where = f"resuming at global step {checkpoint.rsplit('-', 1)[-1]} ({checkpoint})"
                servers = (f"{strategy.cluster_spec.num_tasks('ps')} ps task(s)" if args.strategy == "parameter_server"
                           else "tables served by the workers" if args.strategy in _MODES
                           else "parameters served by the workers")
                _log(f"training {how} on {workers} worker(s) and {servers} ({args.strategy} strategy), {where}; "
                     f"{last_step} global steps ({args.epochs} epoch(s) of {spe})")
            steps, examples, ys, ps, losses, secs = _train(sess, model, step_after, cfg, index, workers, last_step, spe,
                                                           max(1, last_step // 20))
            _log(f"worker {index}: {steps} steps, {examples} examples in {secs:.1f}s "
                 f"({examples / max(secs, 1e-9):,.0f} examples/s)")
            strategy.finish(sess, timeout=args.wait_secs)
            if chief:
                result = {"global_step": int(sess.run(model.global_step)), "workers": workers,
                          "ps": strategy.cluster_spec.num_tasks("ps") if "ps" in strategy.cluster_spec.jobs else 0,
                          "strategy": args.strategy, "mode": mode}
                if ys:
                    y, p = np.concatenate(ys), np.concatenate(ps)
                    auc = roc_auc(y, p) if y.min() != y.max() else float("nan")
                    result.update(train_loss=round(float(np.mean(losses)), 4), train_auc=round(auc, 4))
                if cfg.eval_paths:
                    result.update(evaluate_in_session(sess, model, cfg, cfg.eval_paths, "eval", sys.stderr))
        strategy.release(timeout=args.wait_secs)  # after the chief's final checkpoint (written by finish)
    if chief:
        print(json_line({"cluster_result": result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
