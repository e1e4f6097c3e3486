"""The feature-column TF1 programs (t12-t16 of ../shared/tf1-programs) print what TensorFlow printed,
with TensorFlow's random streams (the runner's default, exact mode). The runner's ``--rng-agnostic``
mode is not run again here: it runs the same programs and only widens tolerances or skips results
(``tolerances.json``), so the exact comparison of this test implies it."""

import os
import subprocess
import sys

import pytest

RUNNER = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "tf1-programs", "run_programs.py")
PROGRAMS = "t12_fc_dense_inputs,t13_fc_hash_cross,t14_fc_embeddings,t15_fc_linear_model,t16_wide_deep"


@pytest.mark.slow
def test_feature_column_programs_match_tensorflow():
    if not os.path.exists(RUNNER):
        pytest.skip("../shared/tf1-programs is not beside this checkout")
    # two programs at a time (each in its own process, as one at a time): both cores of a two-core machine
    proc = subprocess.run([sys.executable, RUNNER, "--module", "sparseflow", "--only", PROGRAMS, "--timeout", "120",
                           "--jobs", "2"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 passed, 0 failed" in proc.stdout, proc.stdout
