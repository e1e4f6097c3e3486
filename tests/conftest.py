"""Shared fixtures: every test starts with a fresh default graph. With ``--doctest-modules`` (the
README's test command runs the package's docstring examples too), only test modules are collected
here: the TF1 programs and reference recorders beside them run when imported."""

import os

import pytest

import sparseflow as tf

SHARED = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "shared"))


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
