"""numba's on-disk cache for sparseflow's own functions, kept outside the installed package.

numba's ``cache=True`` writes next to the source file (``site-packages/sparseflow/.../__pycache__``):
files pip does not know about, left behind by ``pip uninstall`` (the leftover folder becomes a
namespace package that shadows a later install) and shared by every user of the install.
:func:`cached_njit` is ``numba.njit`` with the cache in a per-user directory instead:

- ``$NUMBA_CACHE_DIR`` when the user set it (numba's own choice of subfolders);
- else :func:`jit_cache_dir`: ``cache_root()/numba/sparseflow-<v>_numba-<v>_py<XY>``, where
  :func:`cache_root` is ``$SPARSEFLOW_CACHE_DIR``, else ``$XDG_CACHE_HOME/sparseflow``, else
  ``~/.cache/sparseflow``.

When that directory cannot be created or written, the function is compiled in every process
instead: nothing is written next to sparseflow's sources, and nothing fails. Only functions
defined in the sparseflow package are cached this way (others are not cached by
``cached_njit``); ``numba.njit(cache=True)`` in user code behaves as numba documents.

Example::

    @cached_njit(nogil=True)      # in a module of the sparseflow package
    def _add_one(x):
        return x + 1
"""

from __future__ import annotations

import os
import sys

import numba
from numba.core import caching, config
from numba.core.dispatcher import Dispatcher

from sparseflow._src.version import __version__

__all__ = ["cached_njit", "cache_root", "jit_cache_dir", "PACKAGE_DIR"]

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def cache_root() -> str:
    """sparseflow's per-user cache directory: ``$SPARSEFLOW_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/sparseflow``, else ``~/.cache/sparseflow``."""
    own = os.environ.get("SPARSEFLOW_CACHE_DIR")
    if own:
        return os.path.abspath(os.path.expanduser(own))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")  # XDG: relative = unset
    return os.path.join(base, "sparseflow")


def jit_cache_dir() -> str:
    """The directory numba caches sparseflow's compiled functions in (one subfolder per source
    folder below it, named by numba)."""
    if config.CACHE_DIR:
        return config.CACHE_DIR
    version = f"sparseflow-{__version__}_numba-{numba.__version__}_py{sys.version_info[0]}{sys.version_info[1]}"
    return os.path.join(cache_root(), "numba", version)


def _inside_package(path: str) -> bool:
    path = os.path.realpath(path)
    return os.path.commonpath([path, PACKAGE_DIR]) == PACKAGE_DIR


class _PerUserCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Locates the cache of a function of the sparseflow package in :func:`jit_cache_dir`;
    no locator (so no cache) for other functions or when the directory is not writable."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(jit_cache_dir(), self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if not _inside_package(py_file) or _inside_package(jit_cache_dir()):
            return None  # not ours; or a cache root pointing into the package
        return super().from_function(py_func, py_file)  # None when the directory is not writable


class _CacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_PerUserCacheLocator]  # never numba's in-tree __pycache__ locator


class _FunctionCache(caching.FunctionCache):
    _impl_class = _CacheImpl


def cached_njit(**options):
    """``numba.njit(**options)`` whose compiled code is cached on disk per user (see the module
    docstring), never inside the package. ``options`` must not contain ``cache``."""
    if "cache" in options:
        raise TypeError("cached_njit chooses the cache itself; do not pass cache=")

    def decorate(py_func):
        dispatcher = numba.njit(**options)(py_func)
        if isinstance(dispatcher, Dispatcher):  # not under NUMBA_DISABLE_JIT
            try:
                dispatcher._cache = _FunctionCache(py_func)  # what numba's enable_caching() sets
            except (RuntimeError, OSError):
                pass  # no writable cache directory: compile in every process instead
        return dispatcher

    return decorate
