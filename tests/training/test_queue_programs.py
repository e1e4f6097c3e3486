"""TF1 programs with queue-runner input pipelines and SyncReplicasOptimizer (``programs/q*.py``) run
with ``import sparseflow as tf`` and print what TensorFlow 2.21 printed.

``programs/NAME.expected`` is the output of the unchanged program under TensorFlow
(``/work/tfenv/bin/python tests/training/programs/NAME.py > tests/training/programs/NAME.expected``;
two runs gave identical output). The programs follow ../shared/tf1-programs: one marked
``# TF_IMPORT`` line, results printed as ``RESULT name values``.
"""

import math
import os
from pathlib import Path

import pytest

from tests.program_pool import run_ahead, sparseflow_program

PROGRAMS = Path(__file__).parent / "programs"
ROOT = Path(__file__).resolve().parents[2]
RTOL, ATOL = 1e-5, 1e-6


def _results(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        if line.startswith("RESULT "):
            _, name, *values = line.split(" ")
            out[name] = values
    return out


def _same(a: str, b: str) -> bool:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    return math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL)


def _run_with_sparseflow(request, tmp_path_factory) -> str:
    """The output of the program of this case's ``name`` (the programs of the test function's cases
    run two at a time: see tests/program_pool.py)."""
    proc = run_ahead(request, "name", sparseflow_program(PROGRAMS, tmp_path_factory), timeout=300,
                     env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", ["q01_sync_replicas_threads", "q02_queue_input_pipeline"])
def test_program_prints_what_tensorflow_printed(name, request, tmp_path_factory):
    expected = _results((PROGRAMS / f"{name}.expected").read_text())
    got = _results(_run_with_sparseflow(request, tmp_path_factory))
    assert list(got) == list(expected), f"result names differ:\n{list(got)}\n{list(expected)}"
    bad = [f"{k}: got {' '.join(got[k])}, TensorFlow {' '.join(v)}" for k, v in expected.items()
           if len(got[k]) != len(v) or not all(_same(a, b) for a, b in zip(got[k], v))]
    assert not bad, "\n".join(bad)
