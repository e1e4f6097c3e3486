"""Records TensorFlow's results for the op database (``tests/opdb``) into its fixture files.

Run by hand with TensorFlow 2.21 (CPU) in its own environment, never as part of the suite::

    /work/tfenv/bin/python tools/record_opdb.py                 # every family
    /work/tfenv/bin/python tools/record_opdb.py math_reduce     # some families
    /work/tfenv/bin/python tools/record_opdb.py --list          # entries and sample counts
    /work/tfenv/bin/python tools/record_opdb.py --programs      # tests/opdb/programs.py only

For every entry of ``tests/opdb/families/<family>.py`` that is compared with TensorFlow, it builds
the same graphs the test builds (``tests/opdb/harness.py``) with ``tensorflow.compat.v1`` after
``disable_v2_behavior()``, in each mode (constants, placeholders of known shape, of unknown
dimensions, of unknown rank), and writes forward values, dtypes, static shapes, errors and
gradients to ``tests/opdb/fixtures/<family>.json.gz``. Inputs are deterministic (no RNG); the file
notes the TensorFlow version and is byte-for-byte the same on a rerun.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.framework import op_def_registry  # noqa: E402

from tests.opdb import harness, programs, spec, values  # noqa: E402
from tests.opdb.families import FAMILIES, family_entries  # noqa: E402

tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.ERROR)


def tf_allowed_types(op_type: str, attr: str):
    """Names of the types TensorFlow's OpDef allows for ``attr`` (None when the op has no such attr)."""
    op_def = op_def_registry.get(op_type)
    if op_def is None:
        raise KeyError(f"TensorFlow has no op {op_type}")
    for a in op_def.attr:
        if a.name == attr and a.type == "type":
            return [harness.dtype_name(tf.as_dtype(t)) for t in a.allowed_values.list.type]
    return None


def record_family(family: str) -> dict:
    entries = {}
    for entry in family_entries(family):
        if not entry.compared_with_tf:
            continue
        dtypes = harness.entry_dtypes(entry, tf_allowed_types(entry.op_type, entry.type_attr))
        t0 = time.time()
        runs = harness.run_entry(tf, entry, dtypes)
        records = {}
        for mode, run in runs.items():
            for key, rec in run.records.items():
                records[f"{key}|{mode}"] = rec
        entries[entry.id] = {"op_type": entry.op_type, "dtypes": [d for d in dtypes], "records": records}
        print(f"  {entry.id}: {len(records)} records in {time.time() - t0:.1f}s", flush=True)
    return {"tensorflow": tf.__version__, "entries": entries}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("families", nargs="*", help=f"families to record (default: all of {FAMILIES})")
    parser.add_argument("--list", action="store_true", help="list the entries and stop")
    parser.add_argument("--programs", action="store_true", help="record only tests/opdb/programs.py")
    args = parser.parse_args(argv)
    if args.programs or not args.families:
        results = {"tensorflow": tf.__version__, "programs": programs.record(tf)}
        path = values.save_fixture("programs", results)
        print(f"wrote {os.path.relpath(path, ROOT)}", flush=True)
        if args.programs:
            return
    families = args.families or FAMILIES
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}; known: {FAMILIES}")
    for family in families:
        if args.list:
            for e in family_entries(family):
                print(f"{family}:{e.id} ({e.op_type}) {len(e.samples)} samples x {len(spec.MODES)} modes")
            continue
        print(f"{family}:", flush=True)
        path = values.save_fixture(family, record_family(family))
        print(f"wrote {os.path.relpath(path, ROOT)}", flush=True)


if __name__ == "__main__":
    main()
