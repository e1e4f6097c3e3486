"""TF1 programs run unchanged with ``import sparseflow as tf`` and print what TensorFlow printed: the
corpus of ../shared/tf1-programs (bit-exact random streams: the runner's default mode), and this
suite's own programs in tf1_programs/ (summaries and TensorBoard, debugging ops and Python functions,
einsum and templates, linear algebra/sorting/scattering, readers/sets/sparse utilities, an image
pipeline; ``tf1_programs/NAME.expected`` recorded by ``tf1_programs/record_expected.sh``).
"""

import math
import os
import sys
from pathlib import Path

import pytest

from tests.program_pool import run_ahead, sparseflow_program

RUNNER = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "tf1-programs", "run_programs.py")

# Feature-column programs (t12-t16) belong to the sparse / Wide&Deep issue.
PROGRAMS = [
    "t01_array_ops", "t02_variables_scopes", "t03_session_fetches", "t04_gradients", "t05_control_flow",
    "t06_optimizers", "t07_lr_decay_clipping", "t08_losses", "t09_streaming_metrics",
    "t10_embeddings_sparse", "t11_segments_partition", "t17_deepfm", "t18_logreg_hashed", "t19_cnn_shapes",
    "t20_mlp_dropout_batchnorm", "t21_saver_restore", "t22_graphdef_roundtrip", "t23_random_streams",
    "t24_rnn_while_loop",
]


@pytest.mark.slow
@pytest.mark.parametrize("program", PROGRAMS)
def test_program_matches_tensorflow(program, request):
    if not os.path.exists(RUNNER):
        pytest.skip("../shared/tf1-programs is not beside this checkout")
    # (run two at a time: the next case's program starts while this one's runs)
    proc = run_ahead(request, "program", lambda p: {
        "args": [sys.executable, RUNNER, "--module", "sparseflow", "--only", p, "--timeout", "120"]}, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 0 failed" in proc.stdout, proc.stdout


OWN_PROGRAMS = Path(__file__).parent / "tf1_programs"
ROOT = Path(__file__).resolve().parents[1]


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
    if math.isnan(x) or math.isnan(y):
        return a == b
    return math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in OWN_PROGRAMS.glob("s[0-9][0-9]_*.py")))
def test_own_program_prints_what_tensorflow_printed(name, request, tmp_path_factory):
    # (run two at a time: the next case's program starts while this one's runs)
    proc = run_ahead(request, "name", sparseflow_program(OWN_PROGRAMS, tmp_path_factory), timeout=300,
                     env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    got, expected = _results(proc.stdout), _results((OWN_PROGRAMS / f"{name}.expected").read_text())
    assert list(got) == list(expected), f"result names differ:\n{list(got)}\n{list(expected)}"
    bad = [f"{k}: got {' '.join(got[k])}, TensorFlow {' '.join(v)}" for k, v in expected.items()
           if len(got[k]) != len(v) or not all(_same(a, b) for a, b in zip(got[k], v))]
    assert not bad, "\n".join(bad)
