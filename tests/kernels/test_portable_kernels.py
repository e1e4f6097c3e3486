"""Training gives the same results on kernels without AVX-512: the same program run as is and with
numba compiling for a generic x86-64 CPU (``NUMBA_CPU_NAME=generic``) and NumPy's AVX-512 loops
disabled (``NPY_DISABLE_CPU_FEATURES``). The BLAS library's choice is left to it."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _run(extra_env, program="portable_program.py"):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra_env}
    proc = subprocess.run([sys.executable, os.path.join(HERE, program)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _avx512_dispatch_targets():
    import numpy._core._multiarray_umath as umath

    available = getattr(umath, "__cpu_features__", {})
    dispatch = getattr(umath, "__cpu_dispatch__", [])
    return [f for f in dispatch if ("AVX512" in f or f == "X86_V4") and available.get(f, False)]


@pytest.mark.slow
def test_training_matches_with_portable_kernels():
    native = _run({})
    portable = _run({"NUMBA_CPU_NAME": "generic", "NUMBA_CPU_FEATURES": "",
                     "NPY_DISABLE_CPU_FEATURES": " ".join(_avx512_dispatch_targets())})
    np.testing.assert_allclose(portable["losses"], native["losses"], rtol=1e-5)
    assert native["losses"][-1] < native["losses"][0]
    for a, b in zip(portable["weights"], native["weights"]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_embedding_table_rows_are_bit_identical_with_portable_kernels():
    """The table's row initializers (vectorized with AVX-512 where the CPU has it) and optimizer
    updates give the same bits when numba compiles for a generic x86-64 CPU."""
    native = _run({}, "portable_table_program.py")
    portable = _run({"NUMBA_CPU_NAME": "generic", "NUMBA_CPU_FEATURES": ""}, "portable_table_program.py")
    assert native.keys() == portable.keys()
    for name in native:
        pairs = zip(native[name], portable[name]) if name.startswith("table/") else [(native[name], portable[name])]
        for a, b in pairs:
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)
