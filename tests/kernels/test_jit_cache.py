"""numba's on-disk cache of sparseflow's compiled functions lives in a per-user directory, never
in the package; numba's own behaviour for user code and for NUMBA_CACHE_DIR is kept."""

import glob
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import textwrap

from numba.core import caching, config
from numba.core.dispatcher import Dispatcher

import sparseflow
from sparseflow._src.kernels import jit_cache
from sparseflow._src.kernels.jit_cache import PACKAGE_DIR, cache_root, jit_cache_dir

ROOT = os.path.dirname(PACKAGE_DIR)

# Run in a fresh process (the cache is chosen when a module is imported): compiles or loads one
# sparseflow function and one user function with numba's own cache=True, and reports where each
# is cached and whether it was a cache hit.
PROBE = textwrap.dedent("""
    import json, sys
    import numba, numpy as np
    from sparseflow._src.kernels import philox
    sys.path.insert(0, sys.argv[1])
    import user_module
    u = np.full(8, 0.5)
    o0, o1 = np.zeros(8), np.zeros(8)
    philox._box_muller_f64(u, u, o0, o1)
    user_module.add_one(1.0)
    s, us = philox._box_muller_f64.stats, user_module.add_one.stats
    print(json.dumps({"path": s.cache_path, "hits": sum(s.cache_hits.values()),
                      "misses": sum(s.cache_misses.values()), "user_path": us.cache_path,
                      "finite": bool(np.isfinite(o0).all())}))
""")


def _probe(tmp_path, **env):
    user_dir = tmp_path / "user"
    user_dir.mkdir(exist_ok=True)
    (user_dir / "user_module.py").write_text("import numba\n\n\n@numba.njit(cache=True)\ndef add_one(x):\n"
                                             "    return x + 1\n")
    full_env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "SPARSEFLOW_CACHE_DIR")}
    full_env.update(PYTHONPATH=ROOT, **env)
    proc = subprocess.run([sys.executable, "-c", PROBE, str(user_dir)], env=full_env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), str(user_dir)


def _cache_files_in_package():
    return glob.glob(os.path.join(PACKAGE_DIR, "**", "*.nb[ic]"), recursive=True)


def test_cache_root_follows_sparseflow_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("SPARSEFLOW_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_root() == str(tmp_path / "mine")
    monkeypatch.delenv("SPARSEFLOW_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == str(tmp_path / "xdg" / "sparseflow")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: relative paths are invalid
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == str(tmp_path / "home" / ".cache" / "sparseflow")


def test_jit_cache_dir_is_per_version_and_honours_numba_cache_dir(monkeypatch, tmp_path):
    import numba

    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("SPARSEFLOW_CACHE_DIR", str(tmp_path))
    d = jit_cache_dir()
    assert os.path.dirname(d) == str(tmp_path / "numba")
    assert sparseflow.__version__ in d and numba.__version__ in d and f"py{sys.version_info[0]}" in d
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba_own"))
    assert jit_cache_dir() == str(tmp_path / "numba_own")


def test_every_compiled_function_of_the_package_is_cached_outside_it():
    for mod in pkgutil.walk_packages(sparseflow.__path__, "sparseflow."):
        importlib.import_module(mod.name)
    cached = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("sparseflow."):
            continue
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == name:
                cache = value._cache
                assert isinstance(cache, (caching.NullCache, jit_cache._FunctionCache)), (name, value)
                if cache.cache_path is not None:
                    assert not cache.cache_path.startswith(PACKAGE_DIR + os.sep), cache.cache_path
                    cached += 1
    assert cached >= 50  # hashing, tables, optimizers, readers: the functions that were cache=True


def test_compiled_code_is_cached_in_sparseflow_cache_dir_and_reused(tmp_path):
    before = _cache_files_in_package()
    first, user_dir = _probe(tmp_path, SPARSEFLOW_CACHE_DIR=str(tmp_path / "cache"))
    assert first["finite"] and first["misses"] == 1 and first["hits"] == 0
    assert first["path"].startswith(str(tmp_path / "cache" / "numba") + os.sep)
    assert glob.glob(os.path.join(first["path"], "philox._box_muller_f64-*.nbi"))
    # numba's behaviour for functions outside sparseflow is unchanged: next to their source
    assert first["user_path"] == os.path.join(user_dir, "__pycache__")
    second, _ = _probe(tmp_path, SPARSEFLOW_CACHE_DIR=str(tmp_path / "cache"))
    assert second["path"] == first["path"] and second["hits"] == 1 and second["misses"] == 0
    assert _cache_files_in_package() == before


def test_numba_cache_dir_set_by_the_user_is_used(tmp_path):
    result, _ = _probe(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"),
                       SPARSEFLOW_CACHE_DIR=str(tmp_path / "unused"))
    assert result["path"].startswith(str(tmp_path / "numba_cache") + os.sep)
    assert not (tmp_path / "unused").exists()


def test_unwritable_cache_dir_compiles_without_cache_and_writes_nothing_in_the_package(tmp_path):
    before = _cache_files_in_package()
    (tmp_path / "a_file").write_text("")  # a directory below a regular file cannot be created
    result, _ = _probe(tmp_path, SPARSEFLOW_CACHE_DIR=str(tmp_path / "a_file" / "cache"))
    assert result["finite"] and result["path"] is None and result["misses"] == 1
    assert _cache_files_in_package() == before
