"""The ``sparseflow`` command line.

    sparseflow demo                       Wide&Deep on the bundled Adult census data, end to end
    sparseflow train CONFIG               train (resuming from the model directory), then evaluate
    sparseflow evaluate CONFIG            evaluate the latest checkpoint: AUC, logloss, accuracy
    sparseflow predict CONFIG --output F  one probability per evaluation row
    sparseflow launch --ps N --workers M [--chief] -- script.py ARGS
                                          a local cluster: one process per task, each with TF_CONFIG

CONFIG is a TOML (or YAML) file, or the name of a bundled config (adult_wide_deep, adult_deepfm,
criteo_wide_deep, criteo_deepfm). Checkpoints go to --model-dir, else the config's [train]
model_dir, else ./sparseflow_runs/<config name> in the working directory. The last line of demo,
train and evaluate is a JSON object with the final metrics.
"""

from __future__ import annotations

import argparse
import sys


def _common(p, epochs=True):
    p.add_argument("config", help="config file (.toml/.yaml) or bundled config name")
    p.add_argument("--model-dir", help="checkpoint directory (default: the config's [train] model_dir, "
                   "else ./sparseflow_runs/<config name>)")
    p.add_argument("--data-dir", help="base directory of the config's relative data paths")
    if epochs:
        p.add_argument("--epochs", type=int, help="number of epochs (default: the config's)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="sparseflow", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="Wide&Deep on the bundled Adult data, end to end")
    demo.add_argument("--epochs", type=int, help="number of epochs (default: the config's)")
    demo.add_argument("--model-dir", help="checkpoint directory (default: a fresh temporary directory)")
    _common(sub.add_parser("train", help="train a config's model, then evaluate it"))
    _common(sub.add_parser("evaluate", help="evaluate the latest checkpoint"), epochs=False)
    pred = sub.add_parser("predict", help="write predicted probabilities")
    _common(pred, epochs=False)
    pred.add_argument("--output", required=True, help="output file ('-' for stdout)")
    pred.add_argument("--input", nargs="+", help="data files (default: the config's eval data)")
    from sparseflow._src.distributed.launcher import __doc__ as launch_doc
    from sparseflow._src.distributed.launcher import add_launch_arguments, run_launch

    add_launch_arguments(sub.add_parser("launch", help="run a script as a local ps/worker cluster",
                                        description=launch_doc.split("Example:")[0],
                                        formatter_class=argparse.RawDescriptionHelpFormatter))
    args = parser.parse_args(argv)
    if args.command == "launch":  # before the models import: the launcher needs none of it
        return run_launch(args)

    from sparseflow._src.framework import errors
    from sparseflow._src.models import evaluate, load_config, predict, train

    try:
        if args.command == "demo":
            from sparseflow._src.apps.demo import run

            run(epochs=args.epochs, model_dir=args.model_dir)
            return 0
        cfg = load_config(args.config, data_dir=args.data_dir)
        if args.command == "train":
            train(cfg, model_dir=args.model_dir, epochs=args.epochs)
        elif args.command == "evaluate":
            evaluate(cfg, model_dir=args.model_dir)
        else:
            n = predict(cfg, args.output, model_dir=args.model_dir, paths=args.input)
            print(f"wrote {n} predictions to {args.output}", file=sys.stderr)
    except errors.OpError as e:  # sparseflow's errors: the first line says what and where
        print(f"sparseflow {args.command}: error: {_first_line(e.message)}", file=sys.stderr)
        return 1
    except (OSError, ValueError, TypeError, ImportError) as e:
        print(f"sparseflow {args.command}: error: {_first_line(str(e))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"sparseflow {args.command}: interrupted", file=sys.stderr)
        return 130
    return 0


def _first_line(message: str) -> str:
    """An error's message without the op details that follow its first line."""
    return message.split("\n")[0].removesuffix(" Original error:").strip() or message.strip()


if __name__ == "__main__":
    sys.exit(main())
