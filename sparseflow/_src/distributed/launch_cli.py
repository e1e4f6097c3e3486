"""``sparseflow launch``: its options and the run (a local cluster, or Ray actors with ``--ray``).

Both launchers follow the same rules (launcher.py's docstring): ``TF_CONFIG`` per task, output
prefixed by task name, all stopped when one fails or on Ctrl-C, the failing task's exit status.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_launch_arguments(parser)
    >>> args = parser.parse_args(["--ray", "--workers", "2", "--", "train.py", "--lr", "0.1"])
    >>> args.ray, args.workers, args.program
    ('', 2, ['--', 'train.py', '--lr', '0.1'])
"""

from __future__ import annotations

import os
import signal
import sys

from sparseflow._src.distributed.launcher import LocalCluster

__all__ = ["add_launch_arguments", "run_launch"]


def add_launch_arguments(parser) -> None:
    """The options of ``sparseflow launch`` (options first, then the script and its arguments)."""
    parser.add_argument("--ps", type=int, default=1, metavar="N", help="number of ps tasks (default 1)")
    parser.add_argument("--workers", type=int, default=1, metavar="M", help="number of worker tasks (default 1)")
    parser.add_argument("--chief", action="store_true", help="add a chief task (job 'chief', index 0)")
    parser.add_argument("--port-base", type=int, metavar="P",
                        help="use ports P, P+1, ... in task order ps, chief, workers (default: free ports)")
    parser.add_argument("--timeout", type=float, metavar="S", help="stop every task after S seconds (exit 124)")
    parser.add_argument("--grace", type=float, default=5.0, metavar="S",
                        help="seconds between SIGTERM and SIGKILL when stopping tasks (default 5)")
    parser.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    parser.add_argument("--no-python", action="store_true",
                        help="run the command as it is, not as a Python script")
    ray = parser.add_argument_group("Ray (pip install 'sparseflow[ray]')")
    ray.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                     help="run the tasks as Ray actors: on the cluster at ADDRESS ('auto', 'host:port', "
                          "'ray://host:port'), or on a new local Ray instance on 127.0.0.1 without ADDRESS "
                          "(then put -- before the script)")
    ray.add_argument("--ray-num-cpus", type=float, default=1.0, metavar="C",
                     help="CPUs each task's actor reserves (default 1)")
    ray.add_argument("--ray-working-dir", metavar="DIR",
                     help="upload DIR to the cluster and run the tasks there (Ray's runtime_env working_dir); "
                          "default: the launcher's directory, which must exist on every node")
    ray.add_argument("--ray-start-timeout", type=float, default=120.0, metavar="S",
                     help="seconds to wait for Ray to place and start every task's actor (default 120)")
    parser.add_argument("program", nargs="...", metavar="[--] script.py args",
                        help="the program every task runs, with its arguments")


def _usage_error(message: str) -> int:
    print(f"sparseflow launch: error: {message}", file=sys.stderr)
    return 2


def _make_job(args, command):
    if args.ray is None:
        return LocalCluster(command, num_ps=args.ps, num_workers=args.workers, chief=args.chief,
                            port_base=args.port_base, python=not args.no_python, grace_period=args.grace,
                            die_with_launcher=True)
    from sparseflow._src.distributed.ray_launcher import RayCluster

    return RayCluster(command, num_ps=args.ps, num_workers=args.workers, chief=args.chief, address=args.ray or None,
                      port_base=args.port_base, python=not args.no_python, grace_period=args.grace,
                      num_cpus=args.ray_num_cpus, working_dir=args.ray_working_dir,
                      start_timeout=args.ray_start_timeout)


def run_launch(args) -> int:
    """``sparseflow launch``: starts the job, forwards SIGINT/SIGTERM/SIGHUP, returns the exit status."""
    command = list(args.program)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.ray and (args.ray.endswith(".py") or os.path.isfile(args.ray)):
        return _usage_error(f"--ray took {args.ray!r} as the Ray cluster's address; for a local Ray instance "
                            f"put -- before the script: sparseflow launch --ray -- {args.ray} ...")
    if not command:
        return _usage_error("give the script to run, e.g. sparseflow launch --ps 1 --workers 2 -- train.py")
    if args.module:
        command = ["-m", *command]
    try:
        job = _make_job(args, command)
    except ValueError as e:
        return _usage_error(str(e))
    except ImportError as e:
        print(f"sparseflow launch: {e}", file=sys.stderr)
        return 2
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}

    def forward():
        for s in handlers:
            signal.signal(s, lambda signum, frame: job.request_stop(signum))

    forward()
    try:
        try:
            job.start()
        except OSError:
            return 127
        except RuntimeError as e:  # a Ray cluster that cannot be reached or cannot place the tasks
            job.log(str(e))
            return 1
        forward()  # again: ray.init() installs handlers of its own
        return job.wait(timeout=args.timeout)
    finally:
        job.stop()
        for s, handler in handlers.items():
            signal.signal(s, handler)
