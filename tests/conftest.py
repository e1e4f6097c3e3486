"""Shared fixtures: every test starts with a fresh default graph. With ``--doctest-modules`` (the
README's test command runs the package's docstring examples too), only test modules are collected
here: the TF1 programs and reference recorders beside them run when imported."""

import os
import tempfile

import pytest

import sparseflow as tf

SHARED = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "shared"))


def _share_bytecode_with_subprocesses():
    """The suite starts a few hundred Python processes (servers, launched tasks, TF1 programs), each
    importing sparseflow. Where the environment sets ``PYTHONDONTWRITEBYTECODE``, each of them would
    compile every module from source again (~0.5 s of CPU per process); they share one bytecode
    cache in the temporary directory instead, which keeps the source tree free of .pyc files all the
    same. A ``PYTHONPYCACHEPREFIX`` the user set is left as it is."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(),
                                                         f"sparseflow-tests-pycache-{os.getuid()}")


_share_bytecode_with_subprocesses()


def pytest_ignore_collect(collection_path, config):
    if config.getoption("doctestmodules", False) and collection_path.suffix == ".py":
        return not collection_path.name.startswith(("test_", "conftest"))
    return None


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    with tf.Graph().as_default() as g:
        yield g


@pytest.fixture
def shared_dir():
    if not os.path.isdir(SHARED):
        pytest.skip("../shared is not beside this checkout")
    return SHARED
