"""shuffle (determinism, reshuffling), repeat, take, skip, shard and cache."""

import pytest

import sparseflow as tf

D = tf.data.Dataset


def _ints(ds):
    return [int(v) for v in ds]


def test_shuffle_with_a_seed_is_a_permutation_and_repeatable():
    a = _ints(D.range(100).shuffle(20, seed=3))
    b = _ints(D.range(100).shuffle(20, seed=3))
    assert a == b and sorted(a) == list(range(100)) and a != list(range(100))
    assert _ints(D.range(100).shuffle(20, seed=4)) != a


def test_shuffle_buffer_bounds_how_far_an_element_moves_early():
    out = _ints(D.range(1000).shuffle(10, seed=1))
    assert all(v < 10 + i for i, v in enumerate(out))  # output i is one of the first 10 + i inputs
    assert _ints(D.range(10).shuffle(1, seed=1)) == list(range(10))


def test_reshuffle_each_iteration_changes_the_order_per_pass_deterministically():
    def passes(reshuffle):
        ds = D.range(30).shuffle(30, seed=5, reshuffle_each_iteration=reshuffle).repeat(3)
        out = _ints(ds)
        return [out[:30], out[30:60], out[60:]]

    fresh = passes(True)
    assert fresh[0] != fresh[1] != fresh[2] and all(sorted(p) == list(range(30)) for p in fresh)
    assert passes(True) == fresh
    same = passes(False)
    assert same[0] == same[1] == same[2]


def test_shuffle_seed_from_the_graph_seed():
    with tf.Graph().as_default() as g:
        g.seed = 11
        first = _ints(D.range(50).shuffle(50))
    with tf.Graph().as_default() as g:
        g.seed = 11
        second = _ints(D.range(50).shuffle(50))
    assert first == second != list(range(50))


def test_reinitialized_iterator_repeats_its_order_as_tensorflow_does():
    def run():
        with tf.Graph().as_default():
            it = tf.data.make_initializable_iterator(D.range(10).shuffle(10, seed=2).batch(10))
            nxt = it.get_next()
            with tf.Session() as sess:
                epochs = []
                for _ in range(2):
                    sess.run(it.initializer)
                    epochs.append(sess.run(nxt).tolist())
                return epochs

    one, two = run(), run()
    assert one == two and one[0] == one[1] != list(range(10))


def test_shuffle_buffer_size_must_be_positive():
    with pytest.raises(tf.errors.InvalidArgumentError, match="greater than zero"):
        list(D.range(3).shuffle(0))


def test_repeat_counts_and_forever():
    assert _ints(D.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert _ints(D.range(2).repeat().take(5)) == [0, 1, 0, 1, 0]
    assert _ints(D.range(2).repeat(-1).take(3)) == [0, 1, 0]
    assert _ints(D.range(0).repeat()) == []  # an empty input ends an endless repeat
    assert _ints(D.range(3).repeat(0)) == []


def test_take_and_skip():
    assert _ints(D.range(10).take(3)) == [0, 1, 2]
    assert _ints(D.range(3).take(-1)) == [0, 1, 2]
    assert _ints(D.range(3).take(0)) == []
    assert _ints(D.range(5).skip(3)) == [3, 4]
    assert _ints(D.range(5).skip(-1)) == []
    assert _ints(D.range(5).skip(9)) == []


def test_take_stops_pulling_from_its_input():
    pulled = []

    def gen():
        for i in range(100):
            pulled.append(i)
            yield i

    assert _ints(D.from_generator(gen, tf.int64).take(2)) == [0, 1]
    assert pulled == [0, 1]


def test_shard_gives_each_worker_its_share():
    shards = [_ints(D.range(10).shard(3, i)) for i in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Index must be between 0 and 2"):
        D.range(3).shard(3, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="greater than zero"):
        D.range(3).shard(0, 0)


def test_shard_arguments_fed_at_initialization():
    n, i = tf.placeholder(tf.int64, []), tf.placeholder(tf.int64, [])
    it = tf.data.make_initializable_iterator(D.range(7).shard(n, i).batch(10))
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {n: 2, i: 1})
        assert sess.run(nxt).tolist() == [1, 3, 5]
        sess.run(it.initializer, {n: 2, i: 5})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Index must be between"):
            sess.run(nxt)


def test_cache_in_memory_replays_the_first_complete_pass():
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    ds = D.from_generator(gen, tf.int64).cache().repeat(3)
    assert _ints(ds) == [0, 1, 2] * 3
    assert len(calls) == 1


def test_cache_not_completed_is_not_used():
    calls = []

    def gen():
        calls.append(1)
        yield from range(5)

    ds = D.from_generator(gen, tf.int64).cache()
    assert _ints(ds.take(2)) == [0, 1]
    assert _ints(ds) == [0, 1, 2, 3, 4]
    assert _ints(ds) == [0, 1, 2, 3, 4]
    assert len(calls) == 2  # the partial pass under take(2) cached nothing; the first full pass did


def test_cache_to_files_is_reused_by_a_new_pipeline(tmp_path):
    calls = []

    def gen():
        calls.append(1)
        yield from ({"k": i, "s": str(i)} for i in range(3))

    prefix = str(tmp_path / "cache")
    make = lambda: D.from_generator(gen, {"k": tf.int64, "s": tf.string}).cache(prefix)  # noqa: E731
    first = [(int(e["k"]), e["s"]) for e in make()]
    second = [(int(e["k"]), e["s"]) for e in make()]
    assert first == second == [(0, b"0"), (1, b"1"), (2, b"2")]
    assert len(calls) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["cache.elements.sfcache"]


def test_cache_per_initialization_in_a_session():
    x = tf.placeholder(tf.int64, [None])
    it = tf.data.make_initializable_iterator(D.from_tensor_slices(x).cache().repeat(2).batch(10))
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {x: [1, 2]})
        assert sess.run(nxt).tolist() == [1, 2, 1, 2]
        sess.run(it.initializer, {x: [7]})  # a new initialization reads the new feed
        assert sess.run(nxt).tolist() == [7, 7]
