"""Every gradient case of every ``tests/grad/cases_*.py`` module, checked against finite differences,
and every differentiable op type of the gradient registry covered by at least one case."""

from __future__ import annotations

import importlib
import pathlib

import pytest

import sparseflow  # noqa: F401 - registers every op and gradient
from sparseflow._src.framework.op_def import is_registered
from sparseflow._src.grad.grad_check import check_gradients
from sparseflow._src.grad.registry import NOT_DIFFERENTIABLE, gradient_registry

_HERE = pathlib.Path(__file__).parent


def _case_modules():
    return sorted(p.stem for p in _HERE.glob("cases_*.py"))


def _all_cases():
    cases = []
    for name in _case_modules():
        module = importlib.import_module(f"tests.grad.{name}")
        for case in module.CASES:
            cases.append(pytest.param(case, id=f"{name[6:]}:{case.id}"))
    return cases


_CASES = _all_cases()


@pytest.mark.parametrize("case", _CASES)
def test_gradient_matches_finite_differences(case):
    check_gradients(case.fn, case.inputs, delta=case.delta, rtol=case.rtol, atol=case.atol, name=case.id)


def _differentiable_op_types():
    """Op types with a gradient function registered by the library (not by a test)."""
    registry = gradient_registry()
    out = []
    for op_type, fn in registry.items():
        site = registry.site(op_type) or ""
        if fn is NOT_DIFFERENTIABLE or "/tests/" in site.replace("\\", "/") or not is_registered(op_type):
            continue
        out.append(op_type)
    return sorted(out)


# Differentiable op types whose gradient a finite difference of the op cannot check, and where it is checked.
CHECKED_ELSEWHERE = {
    **{op: "tests/opdb/families/fake_quant.py: a step function whose straight-through gradient is no finite "
           "difference; compared with TensorFlow's"
       for op in ("FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsPerChannel")},
    "RandomGamma": "tests/grad/test_special_grad.py: its draws change from run to run (the implicit derivative is "
                   "compared with the quantile function's)",
}


def test_every_differentiable_op_has_a_case():
    covered = {p.values[0].op_type for p in _CASES} | set(CHECKED_ELSEWHERE)
    missing = [t for t in _differentiable_op_types() if t not in covered]
    assert not missing, (f"{len(missing)} op types have a registered gradient but no gradient check case in "
                         f"tests/grad/cases_*.py: {', '.join(missing)}")


def test_cases_name_registered_differentiable_ops():
    registry = gradient_registry()
    unknown = sorted({p.values[0].op_type for p in _CASES
                      if registry.lookup(p.values[0].op_type, None) in (None, NOT_DIFFERENTIABLE)})
    assert not unknown, f"cases name op types without a gradient function: {', '.join(unknown)}"
