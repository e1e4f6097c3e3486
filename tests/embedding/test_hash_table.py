"""The runtime hash table (kernels/embedding_table.py, embedding_hash.py) against a dict reference:
lookup-or-insert, growth by rehash, admission, eviction with tombstones and compaction, memory
accounting, key routing, hash unique, and concurrent pull/push."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from sparseflow._src.framework import errors
from sparseflow._src.kernels import embedding_hash as H
from sparseflow._src.kernels.embedding_table import EmbeddingTableResource, TableSpec

DIM = 3


def _spec(**kw):
    base = dict(dim=DIM, optimizer="sgd", optimizer_params=(), initializer="uniform", initializer_params=(-1.0, 1.0),
                seed=11)
    base.update(kw)
    return TableSpec(**base)


class DictTable:
    """The reference: a dict of rows with the table's documented semantics (SGD)."""

    def __init__(self, spec):
        self.spec = spec
        self.rows = {}  # key -> [w, show, seen]
        self.cands = {}
        self.step = 0

    def init(self, key):
        return H.init_rows(np.array([key], np.uint64), DIM, H.INIT_UNIFORM, -1.0, 1.0, np.uint64(self.spec.seed))[0]

    def pull(self, keys, counts, training=True):
        out = np.zeros((len(keys), DIM), np.float32)
        for i, (k, c) in enumerate(zip(keys.tolist(), counts.tolist())):
            if k not in self.rows and training:
                total = self.cands.pop(k, 0) + c
                if total >= self.spec.min_count:
                    self.rows[k] = [self.init(k), 0.0, 0]
                else:
                    self.cands[k] = total
            if k in self.rows:
                if training:
                    self.rows[k][2] = self.step
                out[i] = self.rows[k][0]
        return out

    def push(self, keys, grads, counts, lr):
        agg = {}
        for k, g, c in zip(keys.tolist(), grads, counts.tolist()):
            a = agg.setdefault(k, [np.zeros(DIM, np.float32), 0.0])
            a[0] = a[0] + g
            a[1] += c
        dropped = 0
        for k, (g, c) in agg.items():
            if k in self.rows:
                r = self.rows[k]
                r[0] = r[0] - np.float32(lr) * g
                r[1] += c
                r[2] = self.step
            else:
                dropped += 1
        self.step += 1
        return dropped

    def evict(self, max_age, min_show):
        gone = [k for k, (_, show, seen) in self.rows.items()
                if (max_age >= 0 and self.step - seen > max_age) or (min_show > 0 and show < min_show)]
        for k in gone:
            del self.rows[k]
        self.cands.clear()
        return len(gone)


def _check_equal(table, ref):
    e = table.export()
    assert e["keys"].tolist() == sorted(ref.rows), "key sets differ"
    if ref.rows:
        want = np.stack([ref.rows[k][0] for k in e["keys"].tolist()])
        np.testing.assert_allclose(e["values"], want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(e["show"], [ref.rows[k][1] for k in e["keys"].tolist()])
        assert e["seen"].tolist() == [ref.rows[k][2] for k in e["keys"].tolist()]
    assert table.size() == len(ref.rows)
    assert table.num_candidates() == len(ref.cands)


@pytest.mark.parametrize("num_shards,min_count", [(1, 1), (3, 1), (1, 3), (2, 2)])
def test_random_ops_match_a_dict_reference(num_shards, min_count):
    rng = np.random.default_rng(num_shards * 10 + min_count)
    spec = _spec(min_count=min_count)
    table = EmbeddingTableResource("t", spec, num_shards=num_shards)
    ref = DictTable(spec)
    # keys that collide in their low bits, the extreme values, and random 64-bit keys
    pool = np.concatenate([np.arange(300, dtype=np.uint64) << np.uint64(40),
                           np.array([0, 1, 2**63, 2**64 - 1], np.uint64),
                           rng.integers(0, 2**63, 700, dtype=np.int64).astype(np.uint64) * np.uint64(2)])
    caps = set()
    for it in range(120):
        op = rng.random()
        if op < 0.55:
            keys = np.unique(rng.choice(pool, rng.integers(1, 200)))
            rng.shuffle(keys)
            counts = rng.integers(1, 3, keys.size).astype(np.int32)
            training = rng.random() < 0.9
            got = table.pull(keys, counts, training=training)
            want = ref.pull(keys, counts, training=training)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        elif op < 0.9:
            keys = rng.choice(pool, rng.integers(1, 150))  # duplicates: summed by the push
            grads = rng.standard_normal((keys.size, DIM)).astype(np.float32)
            counts = rng.integers(1, 4, keys.size).astype(np.float32)
            dropped_before = table.dropped
            table.push(keys, grads, counts, learning_rate=0.1)
            assert table.dropped - dropped_before == ref.push(keys, grads, counts, 0.1)
        else:
            max_age = int(rng.integers(-1, 6))
            min_show = float(rng.choice([0.0, 2.0, 5.0]))
            assert table.evict(max_age, min_show) == ref.evict(max_age, min_show)
        caps.add(table.shards[0].capacity)
        if it % 10 == 0:
            _check_equal(table, ref)
    _check_equal(table, ref)
    assert len(caps) > 2, "the test never rehashed the index"


def test_tombstones_are_reused_and_cleared_by_rehash():
    table = EmbeddingTableResource("t", _spec())
    shard = table.shards[0]
    keys = np.arange(1, 201, dtype=np.uint64)
    table.pull(keys)
    table.push(keys[:100], np.zeros((100, DIM), np.float32))  # step 1: keys[:100] seen at 0, others at 0 too
    table.pull(keys[100:])  # seen = 1
    assert table.evict(max_age=0) == 100
    assert shard.n_tombs + shard.n_rows <= shard.capacity
    assert table.size() == 100
    # re-inserting evicted keys gives fresh rows with the initializer's values, through tombstones
    again = table.pull(keys[:100])
    np.testing.assert_array_equal(again, H.init_rows(keys[:100], DIM, H.INIT_UNIFORM, -1.0, 1.0, np.uint64(11)))
    assert table.size() == 200
    e = table.export()
    assert e["keys"].tolist() == keys.tolist()


def test_eviction_compacts_rows_and_returns_memory():
    table = EmbeddingTableResource("t", _spec(dim=8, optimizer="adagrad", optimizer_params=(0.1, 0.0)))
    n = 50_000
    keys = np.arange(n, dtype=np.uint64) * np.uint64(7919)
    table.pull(keys)
    table.push(keys[: n // 10], np.ones((n // 10, 8), np.float32), counts=np.full(n // 10, 5.0, np.float32))
    full = table.memory_bytes()
    kept_values = table.pull(keys[: n // 10], training=False)
    assert table.evict(min_show=1.0) == n - n // 10
    assert table.size() == n // 10
    assert table.memory_bytes() < 0.25 * full, (table.memory_bytes(), full)
    np.testing.assert_array_equal(table.pull(keys[: n // 10], training=False), kept_values)
    assert not table.pull(keys[n // 10:], training=False).any()  # gone: read zeros


def test_admission_creates_rows_after_min_count_sightings():
    table = EmbeddingTableResource("t", _spec(min_count=3))
    k = np.array([5, 6], np.uint64)
    assert not table.pull(k, np.array([1, 2], np.int32)).any()
    assert table.size() == 0 and table.num_candidates() == 2
    table.push(k, np.ones((2, DIM), np.float32))
    assert table.dropped == 2  # gradients of unadmitted keys are dropped and counted
    out = table.pull(k, np.array([1, 1], np.int32))  # key 6 reaches 3 sightings, key 5 has 2
    assert not out[0].any() and out[1].any()
    assert table.size() == 1 and table.num_candidates() == 1 and table.admitted == 1
    out = table.pull(k[:1])
    assert out[0].any() and table.size() == 2 and table.num_candidates() == 0
    # evaluation never inserts nor counts
    assert not table.pull(np.array([9], np.uint64), np.array([5], np.int32), training=False).any()
    assert table.num_candidates() == 0


def test_eviction_forgets_candidates():
    table = EmbeddingTableResource("t", _spec(min_count=2))
    table.pull(np.array([1], np.uint64))
    table.evict()
    assert table.num_candidates() == 0
    assert not table.pull(np.array([1], np.uint64)).any()  # counted from scratch: 1 of 2


def test_automatic_eviction_every_n_steps_with_show_decay():
    table = EmbeddingTableResource("t", _spec(evict_max_age=1, evict_every_n_steps=2, show_decay=0.5))
    old, hot = np.array([1], np.uint64), np.array([2], np.uint64)
    table.pull(np.concatenate([old, hot]))
    g = np.zeros((1, DIM), np.float32)
    table.push(hot, g, counts=np.array([4.0], np.float32))  # step 0 -> 1
    table.pull(hot)
    table.push(hot, g, counts=np.array([4.0], np.float32))  # step 1 -> 2: pass evicts key 1 (age 2 > 1)
    e = table.export()
    assert e["keys"].tolist() == [2]
    assert e["show"].tolist() == [4.0]  # (4 + 4) * 0.5


def test_growth_keeps_every_row_and_memory_per_key_is_tight():
    spec = _spec(dim=16, optimizer="adagrad", optimizer_params=(0.1, 0.0))
    table = EmbeddingTableResource("t", spec)
    rng = np.random.default_rng(3)
    keys = np.unique(rng.integers(0, 2**63, 200_000, dtype=np.int64)).astype(np.uint64)
    for chunk in np.array_split(keys, 37):
        table.pull(chunk)
    assert table.size() == keys.size
    np.testing.assert_array_equal(table.pull(keys, training=False),
                                  H.init_rows(keys, 16, H.INIT_UNIFORM, -1.0, 1.0, np.uint64(11)))
    assert table.bytes_per_key() < 1.5 * spec.raw_bytes_per_key
    table.shrink_to_fit()
    # row + state + show/click/seen (12 bytes) + index slots (12 bytes) at load >= 0.375
    assert table.bytes_per_key() <= 4 * (16 + 16) + 12 + 12 / 0.375


def test_keys_of_any_integer_type_share_rows():
    table = EmbeddingTableResource("t", _spec())
    a = table.pull(np.array([-1, 3], np.int64))
    b = table.pull(np.array([2**64 - 1, 3], np.uint64), training=False)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(errors.InvalidArgumentError, match="integers"):
        table.pull(np.array([1.5]))
    with pytest.raises(errors.InvalidArgumentError, match="gradients of shape"):
        table.push(np.array([3], np.int64), np.zeros((1, DIM + 1), np.float32))


def test_bad_specs_are_refused():
    with pytest.raises(errors.InvalidArgumentError, match="takes 2 parameters"):
        TableSpec(dim=2, optimizer="adagrad", optimizer_params=(0.1,))
    with pytest.raises(errors.InvalidArgumentError, match="Unknown embedding-table optimizer"):
        TableSpec(dim=2, optimizer="lamb", optimizer_params=())
    with pytest.raises(errors.InvalidArgumentError, match="dim >= 1"):
        TableSpec(dim=0)


def test_unique_keys_matches_numpy_in_first_appearance_order():
    rng = np.random.default_rng(0)
    for dtype in (np.int64, np.uint64, np.int32):
        x = rng.integers(-50, 50, 1000).astype(dtype)
        u, idx, counts = H.unique_keys(x)
        _, first = np.unique(x, return_index=True)
        np.testing.assert_array_equal(u, x[np.sort(first)])
        np.testing.assert_array_equal(u[idx], x)
        np.testing.assert_array_equal(counts, np.bincount(idx))
    u, idx, counts = H.unique_keys(np.zeros(0, np.uint64))
    assert u.size == idx.size == counts.size == 0


def test_shard_routing_is_balanced_and_independent_of_part_routing():
    keys = np.arange(100_000, dtype=np.uint64)
    parts = np.empty(keys.size, np.int32)
    shards = np.empty(keys.size, np.int32)
    H.shard_ids(keys, 2, H.PART_SALT, parts)
    H.shard_ids(keys, 2, H.SHARD_SALT, shards)
    for p in range(2):
        share = np.bincount(shards[parts == p], minlength=2) / np.count_nonzero(parts == p)
        np.testing.assert_allclose(share, [0.5, 0.5], atol=0.02)


def test_initial_rows_depend_only_on_seed_and_key():
    keys = np.array([3, 2**63 + 5, 77, 0], np.uint64)
    a = EmbeddingTableResource("a", _spec(initializer="truncated_normal", initializer_params=(0.0, 0.5)))
    b = EmbeddingTableResource("b", _spec(initializer="truncated_normal", initializer_params=(0.0, 0.5)),
                               num_shards=4)
    va = a.pull(keys)
    vb = b.pull(keys[::-1])[::-1]
    np.testing.assert_array_equal(va, vb)
    big = H.init_rows(np.arange(20_000, dtype=np.uint64), 8, H.INIT_TRUNCATED_NORMAL, 0.0, 0.5, np.uint64(1))
    assert np.abs(big).max() <= 1.0 + 1e-6  # truncated at two standard deviations
    assert abs(big.mean()) < 0.01 and 0.40 < big.std() < 0.46  # std of N(0, .5) truncated at 2 sigma: 0.44
    normal = H.init_rows(np.arange(20_000, dtype=np.uint64), 8, H.INIT_NORMAL, 1.0, 2.0, np.uint64(1))
    assert abs(normal.mean() - 1.0) < 0.03 and abs(normal.std() - 2.0) < 0.03
    uni = H.init_rows(np.arange(20_000, dtype=np.uint64), 8, H.INIT_UNIFORM, -3.0, 1.0, np.uint64(1))
    assert uni.min() >= -3.0 and uni.max() < 1.0 and abs(uni.mean() + 1.0) < 0.03
    other_seed = H.init_rows(keys, DIM, H.INIT_UNIFORM, -1.0, 1.0, np.uint64(12))
    assert not np.allclose(other_seed, H.init_rows(keys, DIM, H.INIT_UNIFORM, -1.0, 1.0, np.uint64(11)))


def test_concurrent_pulls_and_pushes_keep_the_table_consistent():
    spec = _spec(initializer="zeros", initializer_params=())
    table = EmbeddingTableResource("t", spec, num_shards=4)
    keys = np.arange(5000, dtype=np.uint64) * np.uint64(0x10001)
    n_threads, rounds = 4, 30
    errors_seen, pushed = [], []

    def worker(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(rounds):
                k = np.unique(rng.choice(keys, 800))
                pushed.append(k.size)
                table.pull(k)
                table.push(k, np.ones((k.size, DIM), np.float32), learning_rate=1.0)
        except Exception as e:  # noqa: BLE001 - reported below
            errors_seen.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors_seen
    e = table.export()
    # every push of a key subtracted exactly 1 from each column and added 1 to its show count
    np.testing.assert_array_equal(-e["values"][:, 0], e["show"])
    assert e["show"].sum() == sum(pushed)  # no update lost
    assert table.step == n_threads * rounds
    assert table.size() == np.unique(e["keys"]).size == e["keys"].size


@pytest.mark.parametrize("min_count", [1, 3])
def test_pulls_with_repeated_keys_match_the_reference(min_count):
    """A batch may name a key several times (and batches of every length around the kernel's
    look-ahead): the first sighting inserts, later ones read the same row or count on."""
    rng = np.random.default_rng(min_count)
    spec = _spec(min_count=min_count)
    table = EmbeddingTableResource("t", spec)
    ref = DictTable(spec)
    pool = rng.integers(0, 2**63, 400, dtype=np.int64).astype(np.uint64)
    for it, n in enumerate(list(range(1, 41)) + [200, 1000]):
        keys = rng.choice(pool[: 40 + 9 * it], n)  # many repeats, old and new keys
        counts = rng.integers(1, 3, n).astype(np.int32)
        np.testing.assert_allclose(table.pull(keys, counts), ref.pull(keys, counts), rtol=1e-6, atol=1e-6)
        assert table.size() == len(ref.rows) and table.num_candidates() == len(ref.cands)
        if it % 7 == 6:  # tombstones in the probe chains
            assert table.evict(max_age=0, min_show=0.0) == ref.evict(max_age=0, min_show=0.0)
        table.push(keys[:1], np.zeros((1, DIM), np.float32), learning_rate=0.1)
        ref.push(keys[:1], np.zeros((1, DIM), np.float32), np.ones(1), 0.1)
    _check_equal(table, ref)


@pytest.mark.parametrize("optimizer", ["adagrad", "adam"])
def test_a_large_push_in_chunks_on_several_threads_equals_one_thread(optimizer, monkeypatch):
    from sparseflow._src.kernels import embedding_table, intra_op

    rng = np.random.default_rng(5)
    keys = rng.integers(0, 30_000, 12_000).astype(np.uint64)  # duplicates summed first; some keys never pulled
    grads = rng.standard_normal((keys.size, 4)).astype(np.float32)
    params = {"adagrad": (0.1, 0.0), "adam": (0.9, 0.999, 1e-8)}[optimizer]
    got = {}
    for threads in (1, 3):
        monkeypatch.setattr(intra_op, "_threads", threads)
        monkeypatch.setattr(embedding_table, "PUSH_CHUNK_KEYS", 1000)
        t = EmbeddingTableResource("t", TableSpec(dim=4, optimizer=optimizer, optimizer_params=params,
                                                  initializer="uniform", initializer_params=(-0.1, 0.1), seed=3))
        t.pull(keys[: keys.size // 2])
        dropped = t.push(keys, grads, learning_rate=0.05)
        got[threads] = (dropped, t.pull(keys, training=False))
    assert got[1][0] == got[3][0] > 0
    np.testing.assert_array_equal(got[1][1], got[3][1])


@pytest.mark.parametrize("min_count,training", [(1, True), (3, True), (1, False)])
def test_a_large_pull_in_chunks_on_several_threads_equals_one_thread(min_count, training, monkeypatch):
    from sparseflow._src.kernels import embedding_table, intra_op

    rng = np.random.default_rng(6)
    batches = [rng.integers(0, 20_000, 9_000).astype(np.uint64) for _ in range(4)]  # duplicates, new and old keys
    got = {}
    for threads in (1, 3):
        monkeypatch.setattr(intra_op, "_threads", threads)
        monkeypatch.setattr(embedding_table, "PULL_CHUNK_KEYS", 1000)
        t = EmbeddingTableResource("t", _spec(dim=4, min_count=min_count, optimizer="adagrad",
                                              optimizer_params=(0.1, 0.0)))
        outs = []
        for b in batches:
            outs.append(t.pull(b, np.ones(b.size, np.int32), training=training))
            t.push(b, np.ones((b.size, 4), np.float32), learning_rate=0.1)
        stats = {k: v for k, v in t.stats().items() if k != "bytes_per_key"}  # NaN for an empty table
        got[threads] = (outs, stats, t.shards[0].export())  # keys in slot order, their rows with state
    for a, b in zip(got[1][0], got[3][0]):
        np.testing.assert_array_equal(a, b)
    assert got[1][1] == got[3][1]
    for a, b in zip(got[1][2], got[3][2]):  # the same keys in the same slots, the same rows (seen steps too)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("num_shards,min_count", [(1, 1), (2, 2)])
def test_a_push_of_the_pulled_keys_matches_the_reference_across_evictions_and_admissions(num_shards, min_count):
    """A push of the keys of the last training pull reuses that pull's rows: evictions (rows move),
    admissions by other pulls and inference pulls between the two must not misplace a gradient."""
    rng = np.random.default_rng(40 + num_shards)
    spec = _spec(min_count=min_count)
    table = EmbeddingTableResource("t", spec, num_shards=num_shards)
    ref = DictTable(spec)
    pool = rng.integers(0, 2**63, 400, dtype=np.int64).astype(np.uint64)
    for it in range(80):
        keys = rng.choice(pool, rng.integers(1, 120))  # duplicates too
        counts = np.ones(keys.size, np.int32)
        np.testing.assert_allclose(table.pull(keys, counts), ref.pull(keys, counts), rtol=1e-6, atol=1e-6)
        between = rng.random()
        if between < 0.3:
            max_age, min_show = int(rng.integers(0, 4)), float(rng.choice([0.0, 2.0]))
            assert table.evict(max_age, min_show) == ref.evict(max_age, min_show)
        elif between < 0.5:  # another training pull: admits candidates of ``keys``, inserts keys
            other = np.concatenate([keys[: keys.size // 2], rng.choice(pool, 30)])
            c = np.ones(other.size, np.int32)
            np.testing.assert_allclose(table.pull(other, c), ref.pull(other, c), rtol=1e-6, atol=1e-6)
        elif between < 0.6:
            other = rng.choice(pool, 30)
            c = np.ones(other.size, np.int32)
            np.testing.assert_allclose(table.pull(other, c, training=False), ref.pull(other, c, training=False),
                                       rtol=1e-6, atol=1e-6)
        grads = rng.standard_normal((keys.size, DIM)).astype(np.float32)
        pushed = keys if rng.random() < 0.5 else keys.copy()
        dropped_before = table.dropped
        table.push(pushed, grads, np.ones(keys.size, np.float32), learning_rate=0.1)
        assert table.dropped - dropped_before == ref.push(keys, grads, np.ones(keys.size), 0.1)
        if it % 10 == 0:
            _check_equal(table, ref)
    _check_equal(table, ref)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_push_of_the_keys_just_pulled_does_not_probe_the_index_again(threads, monkeypatch):
    from sparseflow._src.kernels import embedding_table, intra_op

    monkeypatch.setattr(intra_op, "_threads", threads)
    monkeypatch.setattr(embedding_table, "PUSH_CHUNK_KEYS", 500)
    probes = []
    for name in ("lookup_rows", "resolve_unique"):
        fn = getattr(H, name)
        monkeypatch.setattr(H, name, lambda *a, _fn=fn, _name=name: probes.append(_name) or _fn(*a))
    table = EmbeddingTableResource("t", _spec())
    keys = np.arange(3000, dtype=np.uint64) * np.uint64(7919)
    table.pull(keys)
    probes.clear()
    table.push(keys, np.ones((keys.size, DIM), np.float32), learning_rate=0.1)
    assert probes == []
    table.push(keys[::-1].copy(), np.ones((keys.size, DIM), np.float32), learning_rate=0.1)  # other keys: probed
    assert probes
