"""Records the SavedModel fixtures and TensorFlow's results (run by hand, never in the suite)::

    /work/tfenv/bin/python tests/training/record_saved_model.py          # TF writes tf_written/
    python tests/training/record_saved_model.py --sparseflow /tmp/sf_sm  # sparseflow writes one
    /work/tfenv/bin/python tests/training/record_saved_model.py --load /tmp/sf_sm

The first writes ``saved_model_data/tf_written`` (a SavedModel exported by TensorFlow 2.21's
``tf.compat.v1`` builder) and prints what TensorFlow computes with it; the third prints what
TensorFlow computes after loading a SavedModel that sparseflow wrote, for
``saved_model_expected.py``.
"""

import os
import pprint
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from tests.training import saved_model_programs as programs  # noqa: E402


def main():
    args = sys.argv[1:]
    if args and args[0] == "--sparseflow":
        import sparseflow as tf

        vocab = os.path.join(os.path.dirname(args[1]), "vocab.txt")
        with open(vocab, "w") as f:
            f.write("\n".join(programs.VOCAB) + "\n")
        pprint.pprint(programs.write_model(tf, args[1], vocab))
        return
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    if args and args[0] == "--load":
        pprint.pprint(programs.load_and_run(tf, args[1]))
        return
    target = os.path.join(HERE, "saved_model_data", "tf_written")
    shutil.rmtree(target, ignore_errors=True)
    vocab = os.path.join(HERE, "saved_model_data", "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(programs.VOCAB) + "\n")
    pprint.pprint(programs.write_model(tf, target, vocab))
    pprint.pprint(programs.load_and_run(tf, target))
    pprint.pprint(programs.files(target))


if __name__ == "__main__":
    main()
