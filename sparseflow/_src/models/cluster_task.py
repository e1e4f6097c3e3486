"""One task of ``sparseflow train CONFIG --ps N --workers M``: a ps that serves, or a worker that trains.

The launcher (``cluster_training``) has read the training data once and recorded the fitted
feature statistics in the model directory; it starts every task of a local cluster with
``TF_CONFIG`` and ``python -m sparseflow._src.models.cluster_task ...``. A worker:

* builds the config's model under ``tf.train.replica_device_setter``: dense variables (and their
  optimizer's updates) on the ps tasks, both embedding tables sharded over all ps tasks;
* reads its own shard of the training rows (``Dataset.shard(workers, index)``), reshuffled each
  epoch, and trains between-graph: asynchronously (each update applied as it arrives), or with
  ``--sync`` through ``tf.train.SyncReplicasOptimizer`` (one gradient of each worker per global
  step, table gradients aggregated by key);
* stops when the global step reaches ``epochs * steps per epoch`` (the steps of one pass over the
  data: ``ceil(examples / batch)``, or ``ceil(examples / (batch * workers))`` in sync mode), as
  ``StopAtStepHook`` would, so a restarted run goes on from the checkpoint's step.

The chief (worker 0) initializes or restores the model (``MonitoredTrainingSession``), writes a
checkpoint once per epoch's worth of steps and at the end, prints progress, waits until every worker
has finished, evaluates on the eval data and prints the result as one JSON line
``{"cluster_result": {...}}`` on stdout (the launcher turns it into the command's result).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

import numpy as np

import sparseflow as tf
from sparseflow._src.distributed.resolve import resolve_cluster
from sparseflow._src.models.config import load_config
from sparseflow._src.models.metrics import roc_auc
from sparseflow._src.models.trainer import build_model, evaluate_in_session, json_line, load_fitted

__all__ = ["main", "steps_per_epoch"]

DONE_QUEUE = "sparseflow_workers_done"


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
    p.add_argument("--sync", action="store_true")
    p.add_argument("--wait-secs", type=float, default=600.0,
                   help="how long a worker waits for the chief's initialization, and the chief for the workers")
    return p.parse_args(argv)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class _Graph:
    """The worker's graph: the model, and the ops that end a run together."""

    def __init__(self, cfg, cluster, index: int, workers: int, sync: bool):
        setter = tf.train.replica_device_setter(worker_device=f"/job:worker/task:{index}", cluster=cluster)
        self.graph = tf.Graph()
        with self.graph.as_default(), tf.device(setter):
            wrap = (lambda opt: tf.train.SyncReplicasOptimizer(opt, workers, workers)) if sync else None
            self.model = build_model(cfg).build(wrap_optimizer=wrap)
            with tf.device("/job:ps/task:0"):  # one queue every worker's graph names (queues are not ps ops)
                done = tf.FIFOQueue(workers, tf.int32, shapes=(), name="workers_done", shared_name=DONE_QUEUE)
                self.mark_done = done.enqueue(index)  # run by the other workers; the chief takes theirs
                self.wait_for_others = done.dequeue_many(workers - 1) if workers > 1 else None
            # A worker that leaves may strand others waiting for a token of a step that never comes:
            # it hands out one token per worker (their gradients are then stale and dropped).
            self.release = self.model.optimizer.get_init_tokens_op(workers) if sync else None
            self.hooks = [self.model.optimizer.make_session_run_hook(index == 0)] if sync else []


def _train(sess, g, cfg, index, workers, last_step, spe, log_every):
    """Trains on this worker's shard until the global step reaches ``last_step``; returns the
    (steps, examples, recent labels, recent logits, recent losses) of this worker."""
    m = g.model
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
            loss, logits, step, _ = sess.run([m.loss, m.logits, m.global_step, m.train_op],
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


def main(argv=None) -> int:
    args = _arguments(argv)
    resolver = resolve_cluster()
    if resolver is None:
        raise SystemExit("cluster_task runs inside a cluster: TF_CONFIG names none (use `sparseflow train "
                         "CONFIG --ps N --workers M`)")
    cluster = resolver.cluster_spec()
    job, index = resolver.task_type, int(resolver.task_id)
    server = tf.train.Server(cluster, job_name=job, task_index=index)
    if job == "ps":
        server.join()
        return 0
    cfg = load_config(args.config, data_dir=args.data_dir)
    load_fitted(cfg, args.model_dir)
    workers = cluster.num_tasks("worker")
    chief = index == 0
    spe = steps_per_epoch(args.examples, int(cfg.train["batch_size"]), workers, args.sync)
    last_step = args.epochs * spe
    g = _Graph(cfg, cluster, index, workers, args.sync)
    with g.graph.as_default():
        scaffold = tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=2, sharded=True))
    with g.graph.as_default(), tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=chief, checkpoint_dir=args.model_dir if chief else None,
            scaffold=scaffold, hooks=g.hooks, save_checkpoint_steps=spe, save_checkpoint_secs=None,
            save_summaries_steps=None, save_summaries_secs=None, log_step_count_steps=None,
            max_wait_secs=args.wait_secs, stop_grace_period_secs=5) as sess:
        start = int(sess.run(g.model.global_step))
        if chief:
            mode = "synchronous (SyncReplicasOptimizer)" if args.sync else "asynchronous"
            where = f"resuming at global step {start}" if start else "from the initial model"
            _log(f"training {mode} on {workers} worker(s) and {cluster.num_tasks('ps')} ps task(s), {where}; "
                 f"{last_step} global steps ({args.epochs} epoch(s) of {spe})")
        steps, examples, ys, ps, losses, secs = _train(sess, g, cfg, index, workers, last_step, spe,
                                                       max(1, last_step // 20))
        if g.release is not None:
            sess.run(g.release)
        if not chief:
            sess.run(g.mark_done)
        _log(f"worker {index}: {steps} steps, {examples} examples in {secs:.1f}s "
             f"({examples / max(secs, 1e-9):,.0f} examples/s)")
        if not chief:
            return 0
        if g.wait_for_others is not None:
            sess.run(g.wait_for_others, options=tf.RunOptions(timeout_in_ms=int(args.wait_secs * 1000)))
        final = int(sess.run(g.model.global_step))
        result = {"global_step": final, "workers": workers, "ps": cluster.num_tasks("ps"),
                  "mode": "sync" if args.sync else "async"}
        if ys:
            y, p = np.concatenate(ys), np.concatenate(ps)
            auc = roc_auc(y, p) if y.min() != y.max() else float("nan")
            result.update(train_loss=round(float(np.mean(losses)), 4), train_auc=round(auc, 4))
        if cfg.eval_paths:
            result.update(evaluate_in_session(sess, g.model, cfg, cfg.eval_paths, "eval", sys.stderr))
    print(json_line({"cluster_result": result}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
