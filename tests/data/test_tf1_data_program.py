"""The TF1 data programs of tests/data/tf1_programs run unchanged with ``import sparseflow as tf`` and
print exactly what TensorFlow 2.21 printed (``record_expected.sh`` recorded the ``.expected`` files)."""

import glob
import os
import subprocess
import sys

import pytest

HERE = os.path.join(os.path.dirname(__file__), "tf1_programs")
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PROGRAMS = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "p[0-9][0-9]_*.py")))


def _as_sparseflow(source: str) -> str:
    """The program with its marked TensorFlow import replaced by ``import sparseflow as tf``."""
    lines = source.split("\n")
    i = lines.index("# TF_IMPORT")
    lines[i + 1] = "import sparseflow as tf"
    return "\n".join(lines)


@pytest.mark.parametrize("program", PROGRAMS)
def test_program_prints_what_tensorflow_printed(program, tmp_path):
    script = tmp_path / f"{program}.py"
    script.write_text(_as_sparseflow(open(os.path.join(HERE, f"{program}.py")).read()))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    expected = open(os.path.join(HERE, f"{program}.expected")).read().splitlines()
    assert got == expected
