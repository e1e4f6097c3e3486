"""The op database covers the registry: every op type has an entry (or is listed below as not yet
covered, so the gap is visible), every entry names a registered op, and every differentiable op's
gradient is checked on empty inputs too (all samples also run at unknown rank)."""

from __future__ import annotations

import numpy as np

import sparseflow  # noqa: F401 - registers every op
from sparseflow._src.framework.op_def import registered_ops
from sparseflow._src.grad.registry import is_differentiable
from tests.opdb import spec
from tests.opdb.families import FAMILIES, family_entries

# Op types without an op-database entry yet. Shrink this list; never grow it for a new op.
NOT_COVERED: set[str] = set()


def _entries():
    return [(family, e) for family in FAMILIES for e in family_entries(family)]


def _covered():
    return {e.op_type for _, e in _entries()}


def test_every_registered_op_type_has_an_entry():
    missing = sorted(set(registered_ops()) - _covered() - NOT_COVERED)
    assert not missing, f"{len(missing)} op types have no tests/opdb entry: {', '.join(missing)}"


def test_not_covered_list_is_current():
    stale = sorted(NOT_COVERED & _covered())
    unknown = sorted(NOT_COVERED - set(registered_ops()))
    assert not stale, f"now covered, remove from NOT_COVERED: {stale}"
    assert not unknown, f"not registered, remove from NOT_COVERED: {unknown}"


def test_entries_name_registered_ops_and_unique_ids():
    registered = set(registered_ops())
    ids = {}
    for family, e in _entries():
        assert e.op_type in registered, f"{family}:{e.id} names unregistered op {e.op_type}"
        assert (family, e.id) not in ids, f"duplicate entry id {family}:{e.id}"
        ids[(family, e.id)] = e
        assert e.tf is True or (isinstance(e.tf, str) and e.tf), \
            f"{family}:{e.id}: an entry not compared with TensorFlow must say why (tf='...')"
        assert all(isinstance(v, str) and v for v in e.differs.values()), f"{family}:{e.id}: differs needs reasons"
        names = [s.name for s in e.samples]
        assert len(names) == len(set(names)), f"{family}:{e.id}: duplicate sample names"


def _has_empty_input(sample) -> bool:
    for dtype in ("float32", "float64", None):
        try:
            resolved = spec.with_dtype(sample, dtype)
        except ValueError:
            continue
        arrays = []
        for v in resolved.values():
            for x in (v if isinstance(v, list) else [v]):
                arrays.append(np.asarray(x.value if isinstance(x, spec.Const) else x))
        return any(a.size == 0 and a.dtype.kind == "f" for a in arrays)
    return False


# Differentiable ops without a float64 finite-difference sample here, and where they are checked instead.
FD_ELSEWHERE = {
    **{op: "complex-valued: tests/grad/cases_math.py" for op in ("Angle", "Complex", "ComplexAbs", "Conj", "Imag",
                                                                  "Real")},
    **{op: "no float64 kernel (TensorFlow's OpDef): tests/grad/cases_nn.py" for op in (
        "FusedBatchNormV3", "FusedBatchNormGradV3", "LRN")},
    **{op + rank: "complex-valued: tests/grad/test_spectral_grad.py" for op in ("FFT", "IFFT", "RFFT", "IRFFT")
       for rank in ("", "2D", "3D")},
    "SparseMatMul": "float32 only (TensorFlow's OpDef): tests/grad/cases_tf1core.py",
    "RandomGamma": "a sample is not a smooth function of alpha at a fixed seed: tests/grad/test_special_grad.py "
                   "checks the implicit derivative against the quantile function's",
}


def test_every_differentiable_op_has_a_finite_difference_sample():
    checked = {e.op_type for _, e in _entries() for s in e.samples
               if s.fd and s.grad and (e.dtypes is None or "float64" in e.dtypes or s.kinds is not None)}
    missing = sorted(op for op in _covered() if is_differentiable(op) and op not in checked and op not in FD_ELSEWHERE)
    assert not missing, f"differentiable op types without a float64 finite-difference sample (fd=True): {missing}"


def test_every_differentiable_op_checks_gradients_on_empty_inputs_and_at_unknown_rank():
    checked = {}
    for _, e in _entries():
        for s in e.samples:
            # An empty float input, or a sample named "empty..." whose output is empty (Fill of dims [0, 3]).
            if s.grad and "rank" in s.modes and (_has_empty_input(s) or s.name.startswith("empty")):
                checked.setdefault(e.op_type, s.name)
    missing = sorted(op for op in _covered() if is_differentiable(op) and op not in checked)
    assert not missing, f"differentiable op types without a gradient sample on an empty float input: {missing}"
