"""Records TensorFlow's results of the shared TF1 programs into the ``*_expected.py`` modules.

Run with TensorFlow 2.21 (CPU), never as part of the suite::

    /work/tfenv/bin/python tests/record_tf_reference.py [GROUP ...]

GROUP is one of ``partitioned``, ``device_setter``, ``embedding_lookup``, ``rnn``, ``sampled``,
``conv3d``, ``summaries``, ``debugging``, ``einsum_template`` (default: all).
The ``rnn`` programs need TF1's ``tf.nn.rnn_cell``, which TensorFlow 2.16+ serves from the
``tf-keras`` package (``pip install tf-keras==<TensorFlow's version>``); this script sets
``TF_USE_LEGACY_KERAS=1`` so that ``tf.compat.v1.nn.rnn_cell`` resolves to it.

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

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

from tests.layers import rnn_programs  # noqa: E402
from tests.ops import (  # noqa: E402  # noqa: E402
    conv3d_programs,
    debugging_programs,
    einsum_template_programs,
    sampled_loss_programs,
    summary_programs,
)
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
    groups = set(sys.argv[1:]) or {"partitioned", "device_setter", "embedding_lookup", "rnn", "sampled", "conv3d",
                                   "summaries", "debugging", "einsum_template"}
    if "rnn" in groups:
        write("layers/rnn_expected.py", {
            "cases": rnn_programs.cases(tf),
            "names_and_scopes": rnn_programs.names_and_scopes(tf),
            "lstm_training": rnn_programs.lstm_training(tf),
        })
    if "sampled" in groups:
        write("ops/sampled_loss_expected.py", {
            "samplers": sampled_loss_programs.samplers(tf),
            "losses": sampled_loss_programs.losses(tf),
            "word2vec_training": sampled_loss_programs.word2vec_training(tf),
        })
    if "conv3d" in groups:
        write("ops/conv3d_expected.py", {"convolutions": conv3d_programs.convolutions(tf)})
    if "partitioned" in groups:
        with tempfile.TemporaryDirectory() as d:
            write("training/partitioned_expected.py", {
                "shard_layouts": partitioned_programs.shard_layouts(tf),
                "scope_partitioner_and_reuse": partitioned_programs.scope_partitioner_and_reuse(tf),
                "training": {f"{opt}_{strategy}": partitioned_programs.train_partitioned_embedding(tf, opt, strategy)
                             for opt in ("sgd", "adagrad", "adam", "ftrl", "momentum")
                             for strategy in ("mod", "div")},
                "saver_round_trip": partitioned_programs.saver_round_trip(tf, d),
            })
    if "device_setter" in groups:
        write("training/device_setter_expected.py", {
            "placements": device_setter_programs.placements(tf),
            "setter_edge_cases": device_setter_programs.setter_edge_cases(tf),
        })
    if "embedding_lookup" in groups:
        write("ops/embedding_lookup_expected.py", {
            "lookups": lookup_programs.lookups(tf),
            "lookup_gradients": lookup_programs.lookup_gradients(tf),
            "sparse_lookups": lookup_programs.sparse_lookups(tf),
        })
    if "summaries" in groups:
        write("ops/summary_expected.py", {"summaries": summary_programs.summaries(tf)})
    if "debugging" in groups:
        write("ops/debugging_expected.py", {
            "assertions": debugging_programs.assertions(tf),
            "numerics": debugging_programs.numerics(tf),
            "printing": debugging_programs.printing(tf),
            "python_functions": debugging_programs.python_functions(tf),
        })
    if "einsum_template" in groups:
        write("ops/einsum_template_expected.py", {
            "einsums": einsum_template_programs.einsums(tf),
            "searchsorteds": einsum_template_programs.searchsorteds(tf),
            "templates": einsum_template_programs.templates(tf),
        })

if __name__ == "__main__":
    main()
