"""The `sparseflow` command line (see DESCRIPTION, printed by `sparseflow --help`)."""

from __future__ import annotations

import argparse
import sys

DESCRIPTION = """\
  sparseflow demo                       Wide&Deep on the bundled Adult census data, end to end
  sparseflow train CONFIG               train (resuming from the model directory), then evaluate
  sparseflow train CONFIG --ps N --workers M [--sync]
                                        the same on a local cluster of N ps and M worker processes
  sparseflow train CONFIG --strategy ps --workers M
                                        M workers that also serve the parameters (no ps tasks)
  sparseflow train CONFIG --strategy multi_worker_mirrored|hybrid --workers M
                                        dense variables on every worker, gradients all-reduced;
                                        tables sharded over the workers (sync, or hybrid: async)
  sparseflow evaluate CONFIG            evaluate the latest checkpoint: AUC, logloss, accuracy
  sparseflow predict CONFIG --output F  one probability per input row (with an id column)
  sparseflow launch --ps N --workers M [--chief] -- script.py ARGS
                                        a local cluster: one process per task, each with TF_CONFIG
  sparseflow launch --ray [ADDRESS] --ps N --workers M -- script.py ARGS
                                        the same as Ray actors (a Ray cluster, or a local instance)

CONFIG is a TOML (or YAML) file, or the name of a bundled config (adult_wide_deep, adult_deepfm,
criteo_wide_deep, criteo_deepfm); every key is described in docs/configs.md. Data files are
CSV/TSV, JSON lines or Parquet, optionally gzip/bz2/zstd-compressed, streamed in bounded memory.
Checkpoints go to --model-dir, else the config's [train] model_dir, else
./sparseflow_runs/<config name> in the working directory.

Progress and messages go to stderr; stdout gets the result: its last line is always one JSON
object (the metrics, or {"error": ...} with exit status 1, or {"interrupted": ...} with 130).
"""


def _epochs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {value}")
    return value


def _common(p, epochs=True):
    p.add_argument("config", help="config file (.toml/.yaml) or bundled config name")
    p.add_argument("--model-dir", help="checkpoint directory (default: the config's [train] model_dir, "
                   "else ./sparseflow_runs/<config name>)")
    p.add_argument("--data-dir", help="base directory of the config's relative data paths")
    if epochs:
        p.add_argument("--epochs", type=_epochs, help="number of epochs (default: the config's)")


def _parser():
    from sparseflow._src.version import __version__

    parser = argparse.ArgumentParser(prog="sparseflow", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"sparseflow {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="Wide&Deep on the bundled Adult data, end to end")
    demo.add_argument("--epochs", type=_epochs, help="number of epochs (default: the config's)")
    demo.add_argument("--model-dir", help="checkpoint directory (default: a fresh temporary directory)")
    train = sub.add_parser("train", help="train a config's model, then evaluate it")
    _common(train)
    train.add_argument("--overwrite", action="store_true",
                       help="remove the model directory's checkpoints first and start afresh")
    train.add_argument("--ps", type=_epochs, default=0, metavar="N",
                       help="train on a local cluster with N ps tasks (tables sharded over them)")
    train.add_argument("--workers", type=_epochs, default=None, metavar="M",
                       help="worker processes of the cluster (default 1; with --ps)")
    train.add_argument("--sync", action="store_true",
                       help="synchronous training on the cluster (SyncReplicasOptimizer); default asynchronous")
    train.add_argument("--strategy", choices=["parameter_server", "ps", "multi_worker_mirrored", "mirrored", "hybrid"],
                       help="parameter_server (default with --ps): separate ps tasks; ps: every worker serves a "
                            "shard of the parameters (asynchronous, no --ps); multi_worker_mirrored (or mirrored): "
                            "dense variables mirrored on every worker and all-reduced, tables sharded over the "
                            "workers, synchronous; hybrid: the same with the tables' rows pushed asynchronously")
    train.add_argument("--staleness", type=int, default=0, metavar="K",
                       help="hybrid strategy: steps of table pushes a worker may have in flight (default 0: each "
                            "step waits for its pushes)")
    ev = sub.add_parser("evaluate", help="evaluate the latest checkpoint")
    _common(ev, epochs=False)
    ev.add_argument("--input", nargs="+", help="data files (default: the config's eval data)")
    pred = sub.add_parser("predict", help="write predicted probabilities")
    _common(pred, epochs=False)
    pred.add_argument("--output", required=True, help="output file ('-' for stdout)")
    pred.add_argument("--input", nargs="+", help="data files, with or without the label column (default: the "
                      "config's eval data)")
    pred.add_argument("--id-column", help="a column written next to each probability (default: the config's "
                      "[data] id)")
    from sparseflow._src.distributed.launch_cli import add_launch_arguments
    from sparseflow._src.distributed.launcher import __doc__ as launch_doc

    add_launch_arguments(sub.add_parser("launch", help="run a script as a ps/worker cluster (local or on Ray)",
                                        description=launch_doc.split("Example:")[0].replace("``", "'"),
                                        formatter_class=argparse.RawDescriptionHelpFormatter))
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "launch":  # before the models import: the launcher needs none of it
        from sparseflow._src.distributed.launch_cli import run_launch

        return run_launch(args)

    from sparseflow._src.framework import errors
    from sparseflow._src.models import TrainingInterrupted, evaluate, load_config, predict, train
    from sparseflow._src.models.cluster_training import ClusterTrainingError
    from sparseflow._src.models.trainer import json_line

    results_on_stdout = not (args.command == "predict" and args.output == "-")

    def fail(message: str, status: int, doc: dict) -> int:
        print(f"sparseflow {args.command}: {message}", file=sys.stderr, flush=True)
        if results_on_stdout:
            print(json_line(doc), flush=True)
        return status

    try:
        if args.command == "demo":
            from sparseflow._src.apps.demo import run

            run(epochs=args.epochs, model_dir=args.model_dir)
            return 0
        cfg = load_config(args.config, data_dir=args.data_dir)
        if args.command == "train" and (args.ps or args.workers is not None or args.sync or args.strategy):
            from sparseflow._src.models.cluster_training import train_on_cluster

            strategy = args.strategy or "parameter_server"
            if not args.ps and strategy == "parameter_server":
                return fail("error: --workers and --sync train on a cluster: give its ps tasks with --ps N (or "
                            "--strategy ps for workers that serve the parameters)", 2,
                            {"error": "--workers/--sync need --ps"})
            train_on_cluster(cfg, args.config, args.ps, args.workers or 1, sync=args.sync, model_dir=args.model_dir,
                             epochs=args.epochs, data_dir=args.data_dir, overwrite=args.overwrite, strategy=strategy,
                             staleness=args.staleness)
        elif args.command == "train":
            train(cfg, model_dir=args.model_dir, epochs=args.epochs, overwrite=args.overwrite)
        elif args.command == "evaluate":
            evaluate(cfg, model_dir=args.model_dir, paths=args.input)
        else:
            result = predict(cfg, args.output, model_dir=args.model_dir, paths=args.input, id_column=args.id_column)
            print(f"wrote {result['predictions']} predictions to {args.output}", file=sys.stderr)
            if results_on_stdout:
                print(json_line(result), flush=True)
    except ClusterTrainingError as e:
        return fail(f"error: {e}", e.status, {"error": str(e)})
    except TrainingInterrupted as e:
        return fail(str(e), 130, {"interrupted": True, "step": e.step, "checkpoint": e.checkpoint})
    except errors.OpError as e:  # sparseflow's errors: the first line says what and where
        return fail(f"error: {_first_line(e.message)}", 1, {"error": _first_line(e.message)})
    except (OSError, ValueError, TypeError, ImportError) as e:
        return fail(f"error: {_first_line(str(e))}", 1, {"error": _first_line(str(e))})
    except KeyboardInterrupt:
        return fail("interrupted", 130, {"interrupted": True})
    return 0


def _first_line(message: str) -> str:
    """An error's message without the op details that follow its first line."""
    return message.split("\n")[0].removesuffix(" Original error:").strip() or message.strip()


if __name__ == "__main__":
    sys.exit(main())
