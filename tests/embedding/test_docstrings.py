"""The examples in the embedding modules' docstrings run and print what they show."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["embedding", "embedding.config", "kernels.embedding_table", "embedding.sharding",
                                    "embedding.cluster_ops", "kernels.embedding_service", "kernels.embedding_restore",
                                    "passes.coalesce", "distributed.table_service", "distributed.allocator",
                                    "embedding.sync", "embedding.sync_ops", "kernels.embedding_sync",
                                    "kernels.embedding_init", "kernels.embedding_rows"])
def test_docstring_examples(module):
    mod = importlib.import_module(f"sparseflow._src.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
