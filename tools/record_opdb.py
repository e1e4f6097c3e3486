"""Records TensorFlow's results for the op database (``tests/opdb``) into its fixture files.

Run by hand with TensorFlow 2.21 (CPU) in its own environment, never as part of the suite::

    /work/tfenv/bin/python tools/record_opdb.py                 # every family and the programs
    /work/tfenv/bin/python tools/record_opdb.py math_reduce     # some families
    /work/tfenv/bin/python tools/record_opdb.py --list          # entries and sample counts
    /work/tfenv/bin/python tools/record_opdb.py --programs      # tests/opdb/programs.py only

For every entry of ``tests/opdb/families/<family>.py`` that is compared with TensorFlow, it builds
the same graphs the test builds (``tests/opdb/harness.py``) with ``tensorflow.compat.v1`` after
``disable_v2_behavior()``, in each mode (constants, placeholders of known shape, of unknown
dimensions, of unknown rank), and writes forward values, dtypes, static shapes, errors and
gradients to ``tests/opdb/fixtures/<family>.json.gz``. Inputs are deterministic (no RNG); the file
notes the TensorFlow version and is byte-for-byte the same on a rerun.

TensorFlow runs in a worker process: an input that aborts it (a failed CHECK) or hangs is narrowed
down to its sample, dtype and mode, recorded as the error ``Crash`` or ``Timeout``, and the
recording goes on in a new worker.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tests.opdb import harness, programs, spec, values  # noqa: E402
from tests.opdb.families import FAMILIES, family_entries  # noqa: E402

UNIT_TIMEOUT_S = 300


# ---------------------------------------------------------------- the worker (imports TensorFlow)
def _tf():
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    return tf


def tf_allowed_types(tf, op_type: str, attr: str):
    """Names of the types TensorFlow's OpDef allows for ``attr`` (None when the op has no such attr)."""
    from tensorflow.python.framework import op_def_registry

    op_def = op_def_registry.get(op_type)
    if op_def is None:
        raise KeyError(f"TensorFlow has no op {op_type}")
    for a in op_def.attr:
        if a.name == attr and a.type == "type":
            return list(dict.fromkeys(harness.dtype_name(tf.as_dtype(t)) for t in a.allowed_values.list.type))
    return None


def _entry(family, entry_id):
    return next(e for e in family_entries(family) if e.id == entry_id)


def worker_main(conn):
    tf = _tf()
    while True:
        request = conn.recv()
        if request is None:
            return
        kind, args = request
        try:
            if kind == "dtypes":
                entry = _entry(*args)
                allowed = None if entry.dtypes is not None else tf_allowed_types(tf, entry.op_type, entry.type_attr)
                result = harness.entry_dtypes(entry, allowed)
            elif kind == "programs":
                result = {"tensorflow": tf.__version__, "programs": programs.record(tf)}
            else:  # ("unit", (family, entry id, sample names, dtypes, mode))
                family, entry_id, samples, dtypes, mode = args
                entry = dataclasses.replace(_entry(family, entry_id))
                entry.samples = [s for s in entry.samples if s.name in samples]
                run = harness.run_entry(tf, entry, dtypes, (mode,), graph_per_dtype=True)[mode]
                result = {f"{k}|{mode}": r for k, r in run.records.items()}
                result["__version__"] = tf.__version__
        except Exception as e:  # noqa: BLE001 - reported to the parent, which stops
            conn.send(("error", f"{type(e).__name__}: {e}"))
            continue
        conn.send(("ok", result))


class Worker:
    """A TensorFlow process; ``ask`` raises ``WorkerDied`` when it aborts or exceeds the timeout."""

    class Died(Exception):
        pass

    def __init__(self):
        self.proc = None

    def _start(self):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker_main, args=(child,), daemon=True)
        self.proc.start()
        child.close()

    def ask(self, kind, args, timeout=UNIT_TIMEOUT_S):
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send((kind, args))
        if not self.conn.poll(timeout):
            self.kill()
            raise Worker.Died("Timeout")
        try:
            status, result = self.conn.recv()
        except EOFError:
            self.kill()
            raise Worker.Died("Crash") from None
        if status == "error":
            raise RuntimeError(f"{kind} {args}: {result}")
        return result

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
            self.proc = None

    def close(self):
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(timeout=30)
        self.kill()


# ---------------------------------------------------------------- the parent (no TensorFlow)
def _crash_records(family, entry, sample_name, dtype, mode, why):
    sample = next(s for s in entry.samples if s.name == sample_name)
    fp = harness.fingerprint(spec.with_dtype(sample, dtype), sample.attrs)
    return {f"{sample_name}|{dtype}|{mode}": {"fp": fp, "error": ["run", why]}}


def _kept(entry, key, rec):
    """What is kept of a record: where the entry says sparseflow differs, TensorFlow's values are not
    compared and often not reproducible (uninitialized memory), so only the fingerprint stays."""
    skip_all, skip_grad = spec.differs_for(entry, key)
    if skip_all:
        return {"fp": rec["fp"], "differs": True}
    if skip_grad:
        return {k: v for k, v in rec.items() if k != "grad"}
    return rec


def record_entry(worker, family, entry, versions):
    dtypes = worker.ask("dtypes", (family, entry.id))
    names = tuple(s.name for s in entry.samples)
    todo = [(names, tuple(dtypes), mode) for mode in spec.MODES]
    records = {}
    while todo:
        samples, dts, mode = todo.pop(0)
        try:
            got = worker.ask("unit", (family, entry.id, samples, dts, mode))
        except Worker.Died as died:
            if len(samples) > 1:
                todo[:0] = [((s,), dts, mode) for s in samples]
            elif len(dts) > 1:
                todo[:0] = [(samples, (d,), mode) for d in dts]
            else:
                print(f"    TensorFlow: {died} in {entry.id} {samples[0]}|{dts[0]}|{mode}", flush=True)
                for key, rec in _crash_records(family, entry, samples[0], dts[0], mode, str(died)).items():
                    records[key] = _kept(entry, key, rec)
            continue
        versions.add(got.pop("__version__"))
        for key, rec in got.items():
            records[key] = _kept(entry, key, rec)
    return {"op_type": entry.op_type, "dtypes": list(dtypes), "records": records}


def record_family(worker, family: str) -> dict:
    entries, versions = {}, set()
    for entry in family_entries(family):
        if not entry.compared_with_tf:
            continue
        t0 = time.time()
        entries[entry.id] = record_entry(worker, family, entry, versions)
        print(f"  {entry.id}: {len(entries[entry.id]['records'])} records in {time.time() - t0:.1f}s", flush=True)
    if len(versions) > 1:
        raise RuntimeError(f"several TensorFlow versions recorded: {versions}")
    return {"tensorflow": versions.pop() if versions else "", "entries": entries}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("families", nargs="*", help=f"families to record (default: all of {FAMILIES})")
    parser.add_argument("--list", action="store_true", help="list the entries and stop")
    parser.add_argument("--programs", action="store_true", help="record only tests/opdb/programs.py")
    args = parser.parse_args(argv)
    families = args.families or FAMILIES
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}; known: {FAMILIES}")
    if args.list:
        for family in families:
            for e in family_entries(family):
                print(f"{family}:{e.id} ({e.op_type}) {len(e.samples)} samples x {len(spec.MODES)} modes")
        return
    worker = Worker()
    try:
        if args.programs or not args.families:
            path = values.save_fixture("programs", worker.ask("programs", ()))
            print(f"wrote {os.path.relpath(path, ROOT)}", flush=True)
            if args.programs:
                return
        for family in families:
            if not any(e.compared_with_tf for e in family_entries(family)):
                print(f"{family}: no entry is compared with TensorFlow", flush=True)
                continue
            print(f"{family}:", flush=True)
            path = values.save_fixture(family, record_family(worker, family))
            print(f"wrote {os.path.relpath(path, ROOT)}", flush=True)
    finally:
        worker.close()


if __name__ == "__main__":
    main()
