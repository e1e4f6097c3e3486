"""The examples in the models layer's docstrings run and print what they show."""

import doctest
import importlib

import pytest

MODULES = ["config", "config_schema", "features", "input_data", "run_record", "progress", "metrics"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(f"sparseflow._src.models.{name}")
    result = doctest.testmod(module, extraglobs={"os": importlib.import_module("os")}, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
