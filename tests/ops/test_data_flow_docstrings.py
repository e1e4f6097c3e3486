"""The examples in the docstrings of the queue, accumulator and input-pipeline modules run and print
what they show."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", [
    "sparseflow._src.ops.queue_ops", "sparseflow._src.ops.accumulator_ops", "sparseflow._src.kernels.blocking",
    "sparseflow._src.kernels.queue_resources", "sparseflow._src.kernels.accumulator_kernels",
    "sparseflow._src.training.input_pipeline", "sparseflow.queue"])
def test_docstring_examples(module):
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
