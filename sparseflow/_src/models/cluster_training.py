"""``sparseflow train CONFIG --ps N --workers M [--sync]`` (or ``--strategy ps|multi_worker_mirrored|hybrid
--workers M``): a config's model trained on a local cluster.

The command reads the training data once (statistics and checks, as ``train``), records the
fitted statistics and the config in the model directory, then starts ``N`` ps and ``M`` worker
processes on 127.0.0.1 (``launcher.LocalCluster``: free ports, ``TF_CONFIG`` per task, output
prefixed with the task's name on stderr, every task stopped when one fails or on Ctrl-C). Each
task runs ``cluster_task`` (see there for how workers train, sync or async). The chief's result
becomes the command's: one JSON line on ``out``, as ``train`` prints it. The checkpoints in the
model directory are ordinary ones: ``sparseflow evaluate`` / ``predict`` / a local ``train`` use
them, and a cluster run resumes from a local run's checkpoint and the other way round.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

from sparseflow._src.distributed.launcher import LocalCluster
from sparseflow._src.models.config import Config
from sparseflow._src.models.trainer import json_line, prepare_training

__all__ = ["train_on_cluster", "ClusterTrainingError"]

_RESULT_KEY = "cluster_result"
#: strategies without ps tasks whose workers step together (a global step is one batch of each)
ALL_REDUCE_STRATEGIES = ("multi_worker_mirrored", "hybrid")
STRATEGIES = ("parameter_server", "ps") + ALL_REDUCE_STRATEGIES
STRATEGY_ALIASES = {"mirrored": "multi_worker_mirrored"}


class ClusterTrainingError(RuntimeError):
    """A task of the cluster failed (its output, prefixed with its name, says why) or it timed out."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class _ChiefResult:
    """The stream the tasks' stdout goes to: the chief's result line is kept, every other line goes
    to ``log``."""

    def __init__(self, log):
        self.log = log
        self.result = None

    def write(self, text: str) -> None:
        for line in text.splitlines(keepends=True):
            prefix, _, rest = line.partition("] ")
            if prefix == "[worker:0" and rest.startswith("{"):
                try:
                    doc = json.loads(rest)
                except ValueError:
                    doc = None
                if isinstance(doc, dict) and _RESULT_KEY in doc:
                    self.result = doc[_RESULT_KEY]
                    continue
            self.log.write(line)

    def flush(self) -> None:
        self.log.flush()


def train_on_cluster(cfg: Config, config_arg: str, num_ps: int, num_workers: int, sync: bool = False,
                     model_dir=None, epochs=None, data_dir=None, overwrite=False, out=None, log=None,
                     timeout=None, wait_secs: float = 600.0, strategy: str = "parameter_server",
                     staleness: int = 0) -> dict:
    """Trains ``cfg``'s model on ``num_ps`` ps and ``num_workers`` worker processes with
    ``strategy`` (``parameter_server``; ``ps``: no ps tasks, the workers serve; ``multi_worker_mirrored``
    (alias ``mirrored``) or ``hybrid``: no ps tasks, dense variables mirrored and all-reduced, tables
    on the workers, ``staleness`` for hybrid) and returns the chief's metrics (printed as one JSON
    line on ``out``). ``config_arg`` and ``data_dir`` are what the tasks load the config from (the
    command's own arguments). Raises ``ClusterTrainingError`` when a task fails, ``timeout`` seconds
    pass, or the run is interrupted (``status`` 130/143)."""
    out, log = out or sys.stdout, log or sys.stderr
    strategy = STRATEGY_ALIASES.get(strategy, strategy)
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; one of {', '.join(STRATEGIES)}")
    if staleness and strategy != "hybrid":
        raise ValueError(f"--staleness is an option of the hybrid strategy, not of {strategy}")
    if staleness < 0:
        raise ValueError(f"--staleness must be >= 0, got {staleness}")
    if strategy != "parameter_server":
        if num_ps:
            raise ValueError(f"the {strategy} strategy has no ps tasks (the workers serve the tables); got --ps "
                             f"{num_ps}")
        if sync:
            raise ValueError(f"--sync is an option of the parameter_server strategy (--ps N): the {strategy} strategy "
                             + ("trains asynchronously" if strategy == "ps" else "is synchronous by itself"))
    elif num_ps < 1:
        raise ValueError(f"--ps must be >= 1 for training on a cluster, got {num_ps}")
    if num_workers < 1:
        raise ValueError(f"--workers must be >= 1, got {num_workers}")
    run = prepare_training(cfg, model_dir, epochs, overwrite, log)
    command = ["-m", "sparseflow._src.models.cluster_task", "--config", os.path.abspath(config_arg)
               if os.path.exists(config_arg) else config_arg, "--model-dir", run.model_dir,
               "--epochs", str(run.epochs), "--examples", str(run.examples), "--wait-secs", str(wait_secs),
               "--strategy", strategy, "--staleness", str(staleness)]
    if data_dir:
        command += ["--data-dir", os.path.abspath(data_dir)]
    if sync:
        command.append("--sync")
    catcher = _ChiefResult(log)
    cluster = LocalCluster(command, num_ps=num_ps, num_workers=num_workers, out=catcher, err=log,
                           die_with_launcher=True)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in handlers:
        signal.signal(s, lambda signum, frame: cluster.request_stop(signum))
    try:
        cluster.start()
        status = cluster.wait(timeout=timeout)
    finally:
        cluster.stop()
        for s, handler in handlers.items():
            signal.signal(s, handler)
    if status != 0:
        what = {124: f"timed out after {timeout} s", 130: "interrupted", 143: "terminated"}.get(
            status, f"a task failed with status {status} (its lines above say why)")
        raise ClusterTrainingError(f"training on the cluster stopped: {what}; the last checkpoint in "
                                   f"{run.model_dir} is kept: run the same command to resume", status)
    if catcher.result is None:
        raise ClusterTrainingError("the chief finished without reporting its result", 1)
    result = {**catcher.result, **run.summary, "seconds": round(time.perf_counter() - run.t0, 1)}
    if "auc" in result:
        print(f"eval: auc {result['auc']:.4f}  logloss {result['logloss']:.4f}  accuracy {result['accuracy']:.4f}"
              f"  ({result['examples']} examples)", file=log, flush=True)
    print(json_line(result), file=out, flush=True)
    return result
