"""``tf.nn.rnn_cell`` cells run by ``dynamic_rnn`` / ``static_rnn`` / the bidirectional forms give
TensorFlow's outputs, states, gradients and variable names (``rnn_programs.py``, recorded with
TensorFlow 2.21 in ``rnn_expected.py`` by ``tests/record_tf_reference.py rnn``)."""

import numpy as np
import pytest

import sparseflow as tf
from tests.layers import rnn_expected as expected
from tests.layers import rnn_programs as programs


@pytest.fixture(scope="module")
def cases():
    return programs.cases(tf)


def _close(got, want, what, atol=2e-5):
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=atol, err_msg=f"{what}[{i}]")


@pytest.mark.parametrize("case", sorted(c for c in expected.CASES if not c.startswith("dropout")))
def test_outputs_states_and_gradients_match_tensorflow(cases, case):
    got, want = cases[case], expected.CASES[case]
    assert [tuple(v) for v in got["variables"]] == [tuple(v) for v in want["variables"]]
    assert got["static_shapes"] == want["static_shapes"]
    _close(got["outputs"], want["outputs"], "outputs")
    _close(got["states"], want["states"], "states")
    _close(got["grads"], want["grads"], "grads", atol=1e-4)


@pytest.mark.parametrize("case", ["dropout_wrapper_seeded", "dropout_wrapper_variational"])
def test_dropout_wrapper_keeps_names_and_drops(cases, case):
    got, want = cases[case], expected.CASES[case]
    assert [tuple(v) for v in got["variables"]] == [tuple(v) for v in want["variables"]]
    assert got["static_shapes"] == want["static_shapes"]
    outs = np.asarray(got["outputs"][0])
    assert outs.shape == np.asarray(want["outputs"][0]).shape
    assert 0 < np.mean(outs == 0) < 0.8  # output_keep_prob=0.6: some, not all, outputs dropped


def test_variable_names_scopes_and_zero_state_match_tensorflow():
    got = programs.names_and_scopes(tf)
    want = expected.NAMES_AND_SCOPES
    assert got == want


def test_lstm_training_reduces_loss_as_tensorflow():
    losses = programs.lstm_training(tf)["losses"]
    want = expected.LSTM_TRAINING["losses"]
    np.testing.assert_allclose(losses, want, rtol=2e-3, atol=2e-4)
    assert losses[-1] < 0.5 * losses[0]


def test_dynamic_rnn_errors_are_clear():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicRNNCell(2)
        with pytest.raises(ValueError, match="dtype must be specified"):
            tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 4]))
        with pytest.raises(ValueError, match="sequence_length must be a vector"):
            tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 4]), sequence_length=[[1]], dtype=tf.float32)
        with pytest.raises(ValueError, match="one length per row"):
            tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 4]), sequence_length=[1, 2, 3], dtype=tf.float32)
        with pytest.raises(TypeError, match="not an RNNCell"):
            tf.nn.dynamic_rnn(object(), tf.zeros([2, 3, 4]), dtype=tf.float32)
        with pytest.raises(ValueError, match="must be between 0 and 1"):
            tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=1.5)
        with pytest.raises(ValueError, match="Expected inputs.shape"):
            tf.nn.rnn_cell.GRUCell(2)(tf.placeholder(tf.float32, [None, None]), tf.zeros([1, 2]))


def test_sequence_length_checked_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 2])
        seq = tf.placeholder(tf.int32, [None])
        out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(2), x, sequence_length=seq, dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="sequence_length"):
                sess.run(out, {x: np.zeros([2, 3, 2]), seq: [1, 2, 3]})
