"""Every op-database entry run by sparseflow and compared with TensorFlow's recorded fixture.

For each entry, in each mode (constants folded by the passes, placeholders of known shape, of
unknown dimensions, of unknown rank) and each dtype of its OpDef: forward values, output dtypes,
runtime and static shapes and errors must be TensorFlow's; static shapes must admit the runtime
shape; gradients (float and complex inputs and outputs) must be TensorFlow's, and a directional
finite-difference check runs on the samples marked ``fd``; gradients in every mode must equal those
of known shapes. Entries not compared with TensorFlow (no TF equivalent) still run every mode and
must agree across modes.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.framework.op_def import get_op_def
from tests.opdb import compare, harness, spec
from tests.opdb.families import FAMILIES, family_entries
from tests.opdb.values import decode, load_fixture

# Kernels compute inf/NaN inputs silently, as TensorFlow's do; NumPy's warnings about them are noise here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# Families whose whole run takes more than a few seconds.
SLOW_FAMILIES = {"math_cwise_unary", "math_cwise_binary", "math_reduce"}


@functools.cache
def _fixture(family):
    return load_fixture(family)


def sf_allowed_types(entry):
    attr = get_op_def(entry.op_type).attrs.get(entry.type_attr)
    if attr is None or attr.type != "type":
        return None
    if attr.allowed_values is None:
        raise AssertionError(f"{entry.id}: attr {entry.type_attr} allows any type; give the entry dtypes=")
    return [harness.dtype_name(d) for d in attr.allowed_values]


def _params():
    out = []
    for family in FAMILIES:
        for entry in family_entries(family):
            marks = [pytest.mark.slow] if family in SLOW_FAMILIES else []
            out.append(pytest.param(family, entry, id=f"{family}:{entry.id}", marks=marks))
    return out


def _check_dtypes(entry, fixture_entry) -> list[str]:
    if entry.dtypes is not None:
        return []
    mine = harness.entry_dtypes(entry, sf_allowed_types(entry))
    theirs = fixture_entry["dtypes"]
    if set(map(str, mine)) != set(map(str, theirs)):
        return [f"OpDef types of {entry.type_attr} differ from TensorFlow's: only sparseflow "
                f"{sorted(set(map(str, mine)) - set(map(str, theirs)))}, only TensorFlow "
                f"{sorted(set(map(str, theirs)) - set(map(str, mine)))}"]
    return []


def _cross_mode(entry, runs) -> list[str]:
    """Entries without a TF fixture: every mode must give the static-shape mode's results."""
    out = []
    ref = runs["static"].records
    for mode, run in runs.items():
        for key, rec in run.records.items():
            want = ref.get(key)
            if want is not None and mode != "static":
                out += [p.replace("TensorFlow", "static mode") for p in
                        compare.compare_record(entry, f"{key}|{mode}", rec, want, check_static=False)]
    return out


@pytest.mark.parametrize("family,entry", _params())
def test_entry(family, entry):
    fixture = _fixture(family)
    fixture_entry = (fixture or {}).get("entries", {}).get(entry.id)
    if entry.compared_with_tf and fixture_entry is None:
        pytest.fail(f"{entry.id} has no TensorFlow fixture in tests/opdb/fixtures/{family}.json.gz: run "
                    f"`/work/tfenv/bin/python tools/record_opdb.py {family}` (or give the entry tf='why not')")
    problems = _check_dtypes(entry, fixture_entry) if fixture_entry else []
    dtypes = fixture_entry["dtypes"] if fixture_entry else harness.entry_dtypes(entry, sf_allowed_types(entry))
    runs = harness.run_entry(tf, entry, dtypes)
    check_static = not entry.static_shape_differs
    for mode, run in runs.items():
        built_types = {op.type for g in run.graphs for op in g.get_operations()}
        if not entry.runtime_op and entry.op_type not in built_types and any(not b.error for b in run.builts):
            problems.append(f"mode {mode}: the entry built no {entry.op_type} op (built {sorted(built_types)})")
        for key, rec in run.records.items():
            full = f"{key}|{mode}"
            problems += compare.self_consistency(full, rec)
            if not fixture_entry:
                continue
            want = fixture_entry["records"].get(full)
            skip_all, skip_grad = spec.differs_for(entry, full)
            if want is None:
                problems.append(f"{full}: no TensorFlow record (re-run tools/record_opdb.py {family})")
            elif skip_all:  # a known difference: TensorFlow's values are not kept, only the inputs' fingerprint
                if want.get("fp") != rec.get("fp"):
                    problems.append(f"{full}: the fixture was recorded from other inputs (re-run "
                                    f"tools/record_opdb.py {family})")
            else:
                if skip_grad:
                    rec, want = ({k: v for k, v in r.items() if k != "grad"} for r in (rec, want))
                problems += compare.compare_record(entry, full, rec, want, check_static)
    if fixture_entry:
        mine = {f"{k}|{m}" for m, r in runs.items() for k in r.records}
        stale = sorted(set(fixture_entry["records"]) - mine)
        if stale:
            problems.append(f"the fixture has records of samples the entry no longer has: {stale[:5]}")
    else:
        problems += _cross_mode(entry, runs)
    problems += _own_checks(runs)
    problems += _gradients_across_modes(entry, runs)
    problems += _finite_differences(entry, runs["static"])
    assert not problems, f"{entry.id}: {len(problems)} problems\n" + summarize(problems)


def summarize(problems: list[str], limit: int = 60) -> str:
    """Problems of one sample that differ only by dtype and mode, as one line naming them all."""
    groups: dict = {}
    for p in problems:
        head, _, msg = p.partition(": ")
        parts = head.split("|")
        if len(parts) != 3:
            groups.setdefault((p, ""), [])
            continue
        sample, dtype, mode = parts
        groups.setdefault((sample, msg), []).append(f"{dtype}/{mode}")
    lines = []
    for (sample, msg), where in groups.items():
        dts = list(dict.fromkeys(w.split("/")[0] for w in where))
        modes = list(dict.fromkeys(w.split("/")[1] for w in where))
        if len(set(where)) == len(dts) * len(modes):
            where_text = f" [{','.join(dts)} x {','.join(modes)}]"
        else:
            where_text = f" [{', '.join(dict.fromkeys(where))}]" if where else ""
        lines.append(f"  {sample}{where_text}: {msg}" if msg else f"  {sample}")
    return "\n".join(lines[:limit]) + (f"\n  ... {len(lines) - limit} more" if len(lines) > limit else "")


def _own_checks(runs) -> list[str]:
    """The samples' own ``check`` functions (entries without a TensorFlow equivalent), every mode."""
    out = []
    for mode, run in runs.items():
        for b in run.builts:
            if b.sample.check is None:
                continue
            rec = run.records[b.key]
            outs = [decode(o["value"]) for o in rec["out"]] if "out" in rec else None
            inputs = {k: (v.value if isinstance(v, spec.Const) else v) for k, v in run.resolved[b.key].items()}
            msg = b.sample.check(inputs, b.sample.attrs, outs)
            if msg:
                out.append(f"{b.key}|{mode}: {msg}")
    return out


def _gradients_across_modes(entry, runs) -> list[str]:
    """Gradients at unknown dimensions and unknown rank (and of folded constants) must be those of
    known shapes, also where TensorFlow's are not compared (it has none, or a known difference)."""
    out = []
    ref = runs["static"].records
    for mode, run in runs.items():
        if mode == "static":
            continue
        for key, rec in run.records.items():
            want = ref.get(key, {}).get("grad")
            if isinstance(want, list) and isinstance(rec.get("grad"), list):
                out += [p.replace("TensorFlow", "static mode") for p in
                        compare._compare_grads(entry, f"{key}|{mode}", rec["grad"], want)]
    return out


def _finite_differences(entry, run) -> list[str]:
    keys = [b.key for b in run.builts if spec.fd_applies(b.sample, b.dtype) and b.x_values
            and all(harness.array_dtype(np.asarray(x)) in harness.FD_DTYPES for x in b.x_values)]
    out = [f"{key}|static: a finite-difference sample without a gradient to check ({run.records[key].get('grad')})"
           for key in keys if not isinstance(run.records[key].get("grad"), list)]
    for key, (analytic, numeric) in run.directional_derivatives(keys).items():
        if not np.isclose(analytic, numeric, rtol=1e-5, atol=1e-6):
            out.append(f"{key}|static: u.J.v by the gradient {analytic!r}, by finite differences {numeric!r}")
    return out


def _runtime_params():
    return [pytest.param(family, e, id=f"{family}:{e.id}") for family in FAMILIES for e in family_entries(family)
            if e.runtime_op]


@pytest.mark.parametrize("family,entry", _runtime_params())
def test_runtime_inserted_op_is_in_the_optimized_graph(family, entry):
    """A runtime-inserted op's entry checks that op only if its programs make the runtime use it:
    the partition graphs of at least one sample (forward and gradient, static shapes) hold it."""
    dtypes = list(entry.dtypes) if entry.dtypes is not None else harness.entry_dtypes(entry, sf_allowed_types(entry))
    run = harness.EntryRun(tf, entry, "static", dtypes)
    run.forward()
    run.gradients()
    seen = set()
    for b in run.builts:
        if b.error or "error" in run.records[b.key]:
            continue
        with run._session(b.graph) as sess:
            if b.init is not None:
                sess.run(b.init, b.feeds)
            meta = tf.RunMetadata()
            sess.run([b.outputs, b.targets, b.grad_fetch], {**b.feeds, **b.grad_feeds},
                     options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
        seen |= {n.op for g in meta.partition_graphs for n in g.node}
    assert entry.op_type in seen, f"{entry.id}: no sample's optimized graph has {entry.op_type} (has {sorted(seen)})"


def test_fixture_records_decode():
    """Every fixture file decodes and names the TensorFlow version it was recorded with."""
    for family in FAMILIES:
        fixture = _fixture(family)
        if fixture is None:
            continue
        assert fixture["tensorflow"].startswith("2."), family
        for entry in fixture["entries"].values():
            for rec in entry["records"].values():
                for o in rec.get("out", []):
                    assert decode(o["value"]).shape == tuple(o["value"]["shape"])


def test_modes_cover_unknown_rank_and_dims():
    assert set(spec.MODES) == {"const", "static", "dims", "rank"}
