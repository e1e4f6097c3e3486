"""Records TensorFlow's results of the shared TF1 programs into the ``*_expected.py`` modules.

Run with TensorFlow 2.21 (CPU), never as part of the suite::

    /work/tfenv/bin/python tests/record_tf_reference.py

Each program module (``tests/training/partitioned_programs.py``,
``tests/training/device_setter_programs.py``, ``tests/ops/embedding_lookup_programs.py``,
``tests/ops/summary_programs.py``, ``tests/ops/debugging_programs.py``,
``tests/ops/einsum_template_programs.py``) builds
its graphs with whatever TF1-style module it is given; here that is ``tensorflow.compat.v1`` after
``disable_v2_behavior()`` (reference variables, graph mode). The results are written as Python
literals next to the programs; the tests run the same programs with sparseflow and compare.
"""

import os
import pprint
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

from tests.ops import debugging_programs, einsum_template_programs, summary_programs  # noqa: E402
from tests.ops import embedding_lookup_programs as lookup_programs  # noqa: E402
from tests.training import device_setter_programs, partitioned_programs  # noqa: E402


def write(path, results):
    header = (f'"""Expected values recorded with TensorFlow {tf.__version__} (tensorflow.compat.v1, '
              f'disable_v2_behavior) by\ntests/record_tf_reference.py; do not edit by hand."""\n\n')
    body = "".join(f"{name.upper()} = {pprint.pformat(value, width=118 - len(name) - 3, sort_dicts=True)}\n\n"
                   for name, value in results.items())
    with open(os.path.join(HERE, path), "w") as f:
        f.write(header + body.rstrip("\n") + "\n")
    print("wrote", path)


def main():
    with tempfile.TemporaryDirectory() as d:
        write("training/partitioned_expected.py", {
            "shard_layouts": partitioned_programs.shard_layouts(tf),
            "scope_partitioner_and_reuse": partitioned_programs.scope_partitioner_and_reuse(tf),
            "training": {f"{opt}_{strategy}": partitioned_programs.train_partitioned_embedding(tf, opt, strategy)
                         for opt in ("sgd", "adagrad", "adam", "ftrl", "momentum") for strategy in ("mod", "div")},
            "saver_round_trip": partitioned_programs.saver_round_trip(tf, d),
        })
    write("training/device_setter_expected.py", {
        "placements": device_setter_programs.placements(tf),
        "setter_edge_cases": device_setter_programs.setter_edge_cases(tf),
    })
    write("ops/embedding_lookup_expected.py", {
        "lookups": lookup_programs.lookups(tf),
        "lookup_gradients": lookup_programs.lookup_gradients(tf),
        "sparse_lookups": lookup_programs.sparse_lookups(tf),
    })
    write("ops/summary_expected.py", {"summaries": summary_programs.summaries(tf)})
    write("ops/debugging_expected.py", {
        "assertions": debugging_programs.assertions(tf),
        "numerics": debugging_programs.numerics(tf),
        "printing": debugging_programs.printing(tf),
        "python_functions": debugging_programs.python_functions(tf),
    })
    write("ops/einsum_template_expected.py", {
        "einsums": einsum_template_programs.einsums(tf),
        "searchsorteds": einsum_template_programs.searchsorteds(tf),
        "templates": einsum_template_programs.templates(tf),
    })


if __name__ == "__main__":
    main()
