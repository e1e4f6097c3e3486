"""TF1 programs of the RNN / sampled-loss family and the SavedModel / flags family run unchanged
with ``import sparseflow as tf`` and print what TensorFlow 2.21 printed (``programs/NAME.expected``:
``TF_USE_LEGACY_KERAS=1 /work/tfenv/bin/python programs/NAME.py | grep RESULT > programs/NAME.expected``
from that folder, with ``tf-keras`` installed for ``tf.nn.rnn_cell``; two runs gave identical output)."""

import pytest

from tests.training.test_queue_programs import PROGRAMS, _results, _run_with_sparseflow, _same


@pytest.mark.slow
@pytest.mark.parametrize("name", ["r01_rnn_sampled_softmax", "s01_saved_model_flags"])
def test_program_prints_what_tensorflow_printed(name, request, tmp_path_factory):
    expected = _results((PROGRAMS / f"{name}.expected").read_text())
    got = _results(_run_with_sparseflow(request, tmp_path_factory))
    assert list(got) == list(expected), f"result names differ:\n{list(got)}\n{list(expected)}"
    bad = [f"{k}: got {' '.join(got[k])}, TensorFlow {' '.join(v)}" for k, v in expected.items()
           if len(got[k]) != len(v) or not all(_same(a, b) for a, b in zip(got[k], v))]
    assert not bad, "\n".join(bad)
