"""``Dataset.shuffle`` gives TensorFlow's orders: recorded from TF 2.21 (``tf.compat.v1``, an
initializable iterator run twice) for op seeds, graph seeds, reshuffling under ``repeat``, buffers
larger than the input, and both the block and the element paths of our shuffle."""

import pytest

import sparseflow as tf

D = tf.data.Dataset

# name: (builder, graph seed, make a random op first, TF's order (the same after re-initialization))
CASES = {
    "op_seed": (lambda src: src(10).shuffle(4, seed=7), None, False, [0, 4, 2, 3, 5, 6, 1, 8, 7, 9]),
    "graph_seed": (lambda src: src(10).shuffle(5), 1234, False, [3, 4, 5, 2, 1, 0, 6, 7, 8, 9]),
    "graph_seed_after_a_random_op": (lambda src: src(10).shuffle(5), 1234, True, [4, 0, 1, 7, 6, 9, 5, 3, 8, 2]),
    "graph_and_op_seed": (lambda src: src(10).shuffle(5, seed=3), 99, False, [4, 5, 6, 0, 8, 7, 1, 3, 2, 9]),
    "reshuffle_under_repeat": (lambda src: src(7).shuffle(3, seed=5).repeat(3), None, False,
                               [1, 3, 4, 5, 2, 0, 6, 2, 1, 0, 4, 5, 6, 3, 2, 0, 4, 1, 6, 5, 3]),
    "no_reshuffle_under_repeat": (lambda src: src(7).shuffle(3, seed=5, reshuffle_each_iteration=False).repeat(3),
                                  None, False, [1, 3, 2, 5, 6, 0, 4] * 3),
    "repeat_then_shuffle": (lambda src: src(5).repeat(3).shuffle(6, seed=2), None, False,
                            [2, 1, 4, 3, 1, 0, 2, 0, 3, 1, 3, 2, 4, 0, 4]),
    "buffer_larger_than_input": (lambda src: src(20).shuffle(100, seed=3), None, False,
                                 [4, 16, 14, 11, 12, 18, 6, 17, 1, 8, 0, 13, 19, 3, 10, 9, 7, 15, 5, 2]),
    "two_shuffles": (lambda src: src(12).shuffle(4, seed=1).shuffle(3), 5, False,
                     [0, 3, 4, 8, 2, 6, 10, 1, 11, 9, 5, 7]),
    "seed_zero": (lambda src: src(10).shuffle(10, seed=0), 0, False, [4, 9, 1, 0, 7, 3, 5, 2, 8, 6]),
    "long_input_take": (lambda src: src(1000).shuffle(100, seed=42).take(50), None, False,
                        [45, 92, 18, 51, 37, 69, 102, 9, 20, 84, 66, 61, 41, 50, 59, 63, 87, 3, 27, 98, 100, 60, 94,
                         70, 112, 103, 68, 71, 111, 11, 8, 49, 17, 26, 5, 104, 36, 62, 35, 43, 136, 23, 28, 95, 116,
                         1, 56, 10, 57, 73]),
}

SOURCES = {
    "blocks": lambda n: D.range(n),  # a block source: the shuffle works on whole NumPy blocks
    "elements": lambda n: D.from_generator(lambda: iter(range(n)), tf.int64, []),  # one element at a time
}


def _orders(build, graph_seed, random_first, inits=2):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        if random_first:
            tf.random_uniform([2])
        it = tf.data.make_initializable_iterator(build())
        nxt = it.get_next()
        out = []
        with tf.Session() as sess:
            for _ in range(inits):
                sess.run(it.initializer)
                vals = []
                while True:
                    try:
                        vals.append(int(sess.run(nxt)))
                    except tf.errors.OutOfRangeError:
                        break
                out.append(vals)
        return out


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_shuffle_order_equals_tensorflows_and_repeats_after_reinitialization(case, source):
    build, graph_seed, random_first, expected = CASES[case]
    assert _orders(lambda: build(SOURCES[source]), graph_seed, random_first) == [expected, expected]


def test_shuffle_then_batch_equals_tensorflow():
    build = lambda: D.range(10).shuffle(10, seed=11).batch(3).map(lambda x: x[0])  # noqa: E731
    assert _orders(build, None, False) == [[1, 0, 2, 8]] * 2


def test_no_seed_gives_a_new_order_per_initialization():
    orders = _orders(lambda: D.range(50).shuffle(50), None, False, inits=3)
    assert all(sorted(o) == list(range(50)) for o in orders) and len({tuple(o) for o in orders}) == 3


def test_python_loops_reshuffle_like_tensorflow_2():
    ds = D.range(30).shuffle(30, seed=4)
    first, second = [int(v) for v in ds], [int(v) for v in ds]
    assert first != second and sorted(first) == sorted(second) == list(range(30))
    assert first == [int(v) for v in D.range(30).shuffle(30, seed=4)]
