"""Runs the child processes of a parametrized test two at a time, ahead of the tests that read them.

Tests that each run one independent program in a child process (the TF1 program corpora) spend
their time waiting for it while the second core of a two-core machine idles. ``run_ahead`` starts
the programs of every selected case of the calling test function on a small pool when the first of
them runs, in collection order; each case then waits for its own program and checks its output as
before. The command each case runs is the same as it would run alone, only started earlier;
deselected cases (``-k``, node ids) run nothing.

Example (in a test)::

    proc = run_ahead(request, "program", lambda program: {"args": [sys.executable, RUNNER, "--only", program]})
    assert proc.returncode == 0, proc.stdout + proc.stderr
"""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys

WORKERS = min(2, os.cpu_count() or 1)

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_futures: dict = {}


def _run(command, kwargs):
    return subprocess.run(capture_output=True, text=True, **{**kwargs, **command})


def _cases(request, argname):
    """The values of ``argname`` of the selected cases of the calling test function, in run order."""
    fn = request.node.function
    return [item.callspec.params[argname] for item in request.session.items
            if getattr(item, "function", None) is fn and hasattr(item, "callspec")]


def run_ahead(request, argname, command, **kwargs) -> subprocess.CompletedProcess:
    """The finished ``subprocess.run(capture_output=True, text=True, **kwargs, **command(value))`` of
    this case's ``argname`` value (``command`` returns the ``args`` and any other ``subprocess.run``
    arguments of one case); the first case of the function starts all selected cases."""
    global _pool
    fn, value = request.node.function, request.node.callspec.params[argname]
    if (fn, value) not in _futures:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(WORKERS, thread_name_prefix="program-pool")
            request.session.config.add_cleanup(_shutdown)
        for v in [value] + [v for v in _cases(request, argname) if (fn, v) not in _futures and v != value]:
            _futures[(fn, v)] = _pool.submit(_run, command(v), kwargs)
    return _futures.pop((fn, value)).result()


def _shutdown():
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)
        _pool = None
    _futures.clear()


def sparseflow_program(directory, tmp_path_factory):
    """A ``command`` for :func:`run_ahead`: program ``name`` of ``directory`` (a TF1 corpus, whose
    line after ``# TF_IMPORT`` imports TensorFlow) copied to a fresh directory with that line
    replaced by ``import sparseflow as tf``, run there with this interpreter."""

    def command(name):
        lines = (directory / f"{name}.py").read_text().split("\n")
        i = lines.index("# TF_IMPORT")
        lines[i + 1] = "import sparseflow as tf"
        work = tmp_path_factory.mktemp(name)
        program = work / f"{name}.py"
        program.write_text("\n".join(lines))
        return {"args": [sys.executable, str(program)], "cwd": work}

    return command
