"""Candidate samplers draw TensorFlow's candidates and expected counts (bit-exact streams), and
``nce_loss`` / ``sampled_softmax_loss`` give TensorFlow's losses and gradients
(``sampled_loss_programs.py``, recorded in ``sampled_loss_expected.py``)."""

import numpy as np
import pytest

import sparseflow as tf
from sparseflow._src.grad.grad_check import check_gradients
from tests.ops import sampled_loss_expected as expected
from tests.ops import sampled_loss_programs as programs


@pytest.fixture(scope="module")
def sampled():
    return programs.samplers(tf)


@pytest.fixture(scope="module")
def losses():
    return programs.losses(tf)


@pytest.mark.parametrize("name", sorted(expected.SAMPLERS))
def test_sampler_matches_tensorflow(sampled, name):
    got, want = sampled[name], expected.SAMPLERS[name]
    if name == "accidental_hits":
        assert got == want
        return
    for run, (g, w) in enumerate(zip(got, want)):
        assert g[0] == w[0], f"run {run}: candidates"
        np.testing.assert_allclose(g[1], w[1], rtol=1e-6, err_msg=f"run {run}: true_expected_count")
        np.testing.assert_allclose(g[2], w[2], rtol=1e-6, err_msg=f"run {run}: sampled_expected_count")


@pytest.mark.parametrize("name", sorted(expected.LOSSES))
def test_sampled_losses_match_tensorflow(losses, name):
    got, want = losses[name], expected.LOSSES[name]
    if name.endswith("_grads"):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_word2vec_nce_training_matches_tensorflow():
    got = programs.word2vec_training(tf)["losses"]
    np.testing.assert_allclose(got, expected.WORD2VEC_TRAINING["losses"], rtol=1e-4, atol=1e-5)
    assert np.mean(got[-4:]) < np.mean(got[:4])


@pytest.mark.parametrize("loss_fn", ["nce_loss", "sampled_softmax_loss"])
def test_sampled_loss_gradients_match_finite_differences(loss_fn):
    r = np.random.RandomState(0)

    def build(w, b, x):
        given = (tf.constant([1, 4, 9], dtype=tf.int64), tf.constant([[0.2], [0.3]], dtype=tf.float64),
                 tf.constant([0.2, 0.5, 0.1], dtype=tf.float64))
        return getattr(tf.nn, loss_fn)(w, b, [[2], [4]], x, 3, 12, sampled_values=given)

    check_gradients(build, [r.uniform(-1, 1, size=(12, 3)), r.uniform(-1, 1, size=12), r.uniform(-1, 1, size=(2, 3))])


def test_sampler_errors_name_the_problem():
    with tf.Graph().as_default():
        too_many = tf.nn.uniform_candidate_sampler([[1]], 1, 5, True, 3)
        out_of_range = tf.nn.log_uniform_candidate_sampler([[12]], 1, 2, False, 10)
        wrong_cols = tf.nn.uniform_candidate_sampler(tf.placeholder_with_default(
            np.array([[1, 2]], dtype=np.int64), [None, None]), 1, 2, False, 10)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
                sess.run(too_many)
            with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
                sess.run(out_of_range)
            with pytest.raises(tf.errors.InvalidArgumentError, match="num_true columns"):
                sess.run(wrong_cols)
        with pytest.raises(tf.errors.InvalidArgumentError, match="either vocab_file or unigrams"):
            tf.Session().run(tf.nn.fixed_unigram_candidate_sampler([[1]], 1, 2, False, 10))


def test_fixed_unigram_reads_a_vocab_file(tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("".join(f"w{i},{c}\n" for i, c in enumerate([3, 1, 4, 1, 5, 9, 2, 6])))
    with tf.Graph().as_default():
        from_file = tf.nn.fixed_unigram_candidate_sampler([[1]], 1, 6, False, 8, vocab_file=str(vocab), seed=4)
        from_list = tf.nn.fixed_unigram_candidate_sampler([[1]], 1, 6, False, 8, unigrams=[3, 1, 4, 1, 5, 9, 2, 6],
                                                          seed=4)
        with tf.Session() as sess:
            a, b = sess.run([from_file, from_list])
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
