"""Plain TF1 distributed programs, launched one process per task with --job_name/--task_index, run
unchanged with `import sparseflow as tf` and print what TensorFlow 2.21 printed for them
(`tf1_programs/*.expected`, recorded by `tf1_programs/record_expected.sh`)."""

import os
import subprocess
import sys

import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf1_programs")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# program, ps tasks, workers
PROGRAMS = [("d01_between_graph.py", 1, 1), ("d02_sync_replicas.py", 1, 2), ("d03_partitioned_embedding.py", 2, 1),
            ("d04_local_server.py", 1, 1), ("d05_partial_run.py", 1, 1)]


def run_program(program, ps, workers, *args, timeout=240):
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(HERE, "run_cluster_program.py"), "--module", "sparseflow",
                           "--ps", str(ps), "--workers", str(workers), "--timeout", str(timeout - 20),
                           os.path.join(HERE, program), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def parse(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("RESULT "):
            name, _, rest = line[7:].partition(" ")
            out[name] = rest.split()
    return out


def assert_same(got, expected, rtol=1e-5, atol=2e-6):
    assert set(expected) <= set(got), f"missing results: {sorted(set(expected) - set(got))}"
    for name, exp in expected.items():
        g = got[name]
        assert len(g) == len(exp), (name, g, exp)
        for a, b in zip(g, exp):
            try:
                fa, fb = float(a), float(b)
            except ValueError:
                assert a == b, (name, g, exp)
                continue
            assert abs(fa - fb) <= atol + rtol * abs(fb), (name, g, exp)


@pytest.mark.slow
@pytest.mark.parametrize("program,ps,workers", PROGRAMS, ids=[p[0][:3] for p in PROGRAMS])
def test_program_prints_what_tensorflow_printed(program, ps, workers):
    expected = parse(open(os.path.join(HERE, program.replace(".py", ".expected"))).read())
    got = parse(run_program(program, ps, workers))
    assert_same(got, expected)


@pytest.mark.slow
def test_async_training_with_two_workers_converges_like_tensorflow():
    """Two asynchronous workers: the interleaving differs run to run (in TensorFlow too), so the
    model is compared with what one worker reaches, within tolerance."""
    one = parse(open(os.path.join(HERE, "d01_between_graph.expected")).read())
    got = parse(run_program("d01_between_graph.py", 1, 2))
    assert int(got["global_step"][0]) >= 40
    assert abs(float(got["accuracy"][0]) - float(one["accuracy"][0])) < 0.02
    assert float(got["loss"][0]) < float(one["loss"][0]) + 0.03
    assert got["checkpoint"] == ["True"]
    assert int(got["worker1:local_steps"][0]) >= 1
