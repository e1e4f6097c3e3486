"""Training gives the same results on kernels without AVX-512: the same program run as is and with
numba compiling for a generic x86-64 CPU (``NUMBA_CPU_NAME=generic``) and NumPy's AVX-512 loops
disabled (``NPY_DISABLE_CPU_FEATURES``). The BLAS library's choice is left to it."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _run(native_env, portable_env, program="portable_program.py"):
    """The program's JSON output as is and with ``portable_env``; the two processes run side by side
    (their output goes to files: neither waits on a full pipe while the other is read)."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with tempfile.TemporaryFile("w+") as out0, tempfile.TemporaryFile("w+") as out1, \
            tempfile.TemporaryFile("w+") as err0, tempfile.TemporaryFile("w+") as err1:
        files = [(out0, err0), (out1, err1)]
        procs = [subprocess.Popen([sys.executable, os.path.join(HERE, program)], env={**env, **extra_env},
                                  stdout=out, stderr=err)
                 for extra_env, (out, err) in zip((native_env, portable_env), files)]
        try:
            for proc in procs:
                proc.wait(timeout=600)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        results = []
        for proc, (out, err) in zip(procs, files):
            out.seek(0)
            err.seek(0)
            assert proc.returncode == 0, err.read()[-3000:]
            results.append(json.loads(out.read()))
    return results


def _avx512_dispatch_targets():
    import numpy._core._multiarray_umath as umath

    available = getattr(umath, "__cpu_features__", {})
    dispatch = getattr(umath, "__cpu_dispatch__", [])
    return [f for f in dispatch if ("AVX512" in f or f == "X86_V4") and available.get(f, False)]


@pytest.mark.slow
def test_training_matches_with_portable_kernels():
    native, portable = _run({}, {"NUMBA_CPU_NAME": "generic", "NUMBA_CPU_FEATURES": "",
                                 "NPY_DISABLE_CPU_FEATURES": " ".join(_avx512_dispatch_targets())})
    np.testing.assert_allclose(portable["losses"], native["losses"], rtol=1e-5)
    assert native["losses"][-1] < native["losses"][0]
    for a, b in zip(portable["weights"], native["weights"]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_embedding_table_rows_are_bit_identical_with_portable_kernels():
    """The table's row initializers (vectorized with AVX-512 where the CPU has it) and optimizer
    updates give the same bits when numba compiles for a generic x86-64 CPU."""
    native, portable = _run({}, {"NUMBA_CPU_NAME": "generic", "NUMBA_CPU_FEATURES": ""}, "portable_table_program.py")
    assert native.keys() == portable.keys()
    for name in native:
        pairs = zip(native[name], portable[name]) if name.startswith("table/") else [(native[name], portable[name])]
        for a, b in pairs:
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)
