"""The README's quick start on a real (non-editable) install: ``sparseflow demo``, ``train``,
``evaluate`` and ``predict`` write nothing inside the installed package, so ``pip uninstall``
leaves no folder behind (a leftover ``site-packages/sparseflow`` of numba cache files became a
namespace package that shadowed a later ``pip install -e``)."""

import os
import shutil
import site
import subprocess
import sys
import sysconfig

import pytest

from tests.models.test_models import _write_synthetic
from tests.test_cli import CONFIG

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 600


def _run(cmd, cwd, env):
    """stdout + stderr of a command that must succeed."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stderr + proc.stdout


def _snapshot(directory):
    files = {}
    for dirpath, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(dirpath, name)
            st = os.stat(path)
            files[os.path.relpath(path, directory)] = (st.st_size, st.st_mtime_ns)
    return files


def _source_copy(dest):
    """The project's files a build reads, so that the build writes nothing into the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    shutil.copytree(os.path.join(ROOT, "sparseflow"), os.path.join(dest, "sparseflow"), ignore=ignore)
    for name in os.listdir(ROOT):
        if name in ("pyproject.toml", "README.md") or name.startswith("LICENSE"):
            shutil.copy(os.path.join(ROOT, name), dest)
    return dest


def _venv(path):
    """A venv without pip whose own site-packages come first and that sees this interpreter's
    packages (numpy, numba, ...) after them; returns (python, site-packages, bin)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(path)], check=True,
                   timeout=TIMEOUT)
    python = os.path.join(path, "bin", "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = [p for p in site.getsitepackages() + [sysconfig.get_paths()["purelib"]] if os.path.isdir(p)]
    with open(os.path.join(purelib, "_parent_env.pth"), "w") as f:  # when this test itself runs in a venv
        f.write("\n".join(dict.fromkeys(ours)) + "\n")
    return python, purelib, os.path.join(path, "bin")


@pytest.mark.slow
def test_cli_writes_nothing_inside_the_installed_package_and_uninstall_leaves_nothing(tmp_path):
    python, purelib, bindir = _venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "SPARSEFLOW_CACHE_DIR")}
    env["SPARSEFLOW_CACHE_DIR"] = str(tmp_path / "cache")
    pip = [sys.executable, "-m", "pip", "--python", python]
    try:
        import setuptools  # the build backend pyproject.toml names (>=77), when already here

        isolation = [] if int(setuptools.__version__.split(".")[0]) < 77 else ["--no-build-isolation"]
    except ImportError:
        isolation = []
    _run(pip + ["install", "--no-deps", *isolation, _source_copy(tmp_path / "src")], tmp_path, env)
    package = os.path.join(purelib, "sparseflow")
    work = tmp_path / "work"
    work.mkdir()
    where = _run([python, "-c", "import sparseflow; print(sparseflow.__file__)"], work, env).splitlines()[-1]
    assert where.strip() == os.path.join(package, "__init__.py")
    before = _snapshot(package)

    sparseflow = os.path.join(bindir, "sparseflow")
    demo = _run([sparseflow, "demo", "--epochs", "1"], work, env).strip().splitlines()
    assert demo[-1].startswith('{"auc"')
    _write_synthetic(work / "train.csv", 600, 0)
    _write_synthetic(work / "test.csv", 200, 1)
    (work / "small.toml").write_text(CONFIG.replace('model_dir = "model"\n', ""))
    trained = _run([sparseflow, "train", "small.toml"], work, env)
    assert f"checkpoints: {work / 'sparseflow_runs' / 'small'}" in trained
    _run([sparseflow, "evaluate", "small.toml"], work, env)
    _run([sparseflow, "predict", "small.toml", "--output", "p.txt"], work, env)

    after = _snapshot(package)
    written = sorted(name for name in after.keys() | before.keys() if after.get(name) != before.get(name))
    assert not written, f"written inside the installed package {package}: {written[:10]}"
    assert os.listdir(work / "sparseflow_runs") == ["small"]
    assert any(name.endswith(".nbi") for _, _, names in os.walk(tmp_path / "cache") for name in names)
    _run(pip + ["uninstall", "-y", "sparseflow"], tmp_path, env)
    assert not os.path.exists(package)
