"""The TF1 programs of ``tests/opdb/programs.py`` give TensorFlow's recorded results."""

import numpy as np
import pytest

import sparseflow as tf
from tests.opdb import programs
from tests.opdb.values import load_fixture


@pytest.mark.parametrize("reduction", programs.REDUCTIONS)
def test_linear_regression_on_scalar_placeholders_trains_like_tensorflow(reduction):
    want = load_fixture("programs")["programs"][f"linear_regression_{reduction}"]
    got = programs.linear_regression(tf, reduction, steps=7)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
