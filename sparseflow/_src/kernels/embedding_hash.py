"""Numba kernels of the embedding hash table: an open-addressing index over NumPy arrays.

One shard of a table is:

* the **index**: ``skeys: uint64[cap]`` and ``srows: int32[cap]`` (``cap`` a power of two, linear
  probing from ``mix(key ^ salt) & (cap - 1)``). ``srows[i]`` is the row of the key in slot ``i``
  (``>= 0``), ``EMPTY`` (-1), ``TOMB`` (-2, a deleted key: probes walk over it, inserts reuse it)
  or, for a key that is not admitted yet, ``CANDIDATE_BASE - count`` (``<= -3``: the key was seen
  ``count`` times and owns no row). Any uint64 is a valid key: emptiness lives in ``srows``.
* the **rows**, dense in ``[0, n_rows)``: ``data: float32[rcap, dim + S + 3]``: the embedding,
  ``S`` floats of optimizer state, then the ``show`` and ``click`` counters and ``seen``, the table
  step at which the row was last pulled or pushed in training, an int32 stored in the float32
  column (kernels write it through ``idata = data.view(int32)``). One row is one contiguous
  record: a pull or push touches one place in memory per key.

Eviction tombstones the slots and compacts the rows in place (live rows move down, ``srows``
is remapped), so the row arrays can be shrunk and their memory handed back.

Row initial values depend only on ``(seed, key, column)`` (embedding_init: a counter-based
generator), so a row's start value does not depend on batch order, sharding or which process
creates it. All functions release the GIL.
"""

from __future__ import annotations

import numba
import numpy as np

from sparseflow._src.kernels.embedding_init import (
    INIT_CONSTANT,
    INIT_NORMAL,
    INIT_TRUNCATED_NORMAL,
    INIT_UNIFORM,
    INIT_ZEROS,  # noqa: F401  (re-exported: embedding_table names the initializers through this module)
    in_tail,
    mix64,
    normal_probability,
    normal_tail_value,
    normal_value,
    row_stream,
    truncated_normal_value,
    uniform_value,
)
from sparseflow._src.kernels.embedding_prefetch import AHEAD, prefetch, prefetch_row
from sparseflow._src.kernels.jit_cache import cached_njit

EMPTY = -1
TOMB = -2
CANDIDATE_BASE = -2  # a candidate seen c times stores CANDIDATE_BASE - c (c >= 1)

_S32 = np.uint64(32)

_JIT = dict(nogil=True)


@numba.njit(inline="always")
def _slot_of(key, salt, mask):
    return np.int64(mix64(key ^ salt) & np.uint64(mask))


PART_SALT = np.uint64(0x9E3779B97F4A7C15)  # routes keys to the parts (devices) of a table
SHARD_SALT = np.uint64(0xD6E8FEB86659FD93)  # routes a part's keys to its local shards


@cached_njit(**_JIT)
def shard_ids(keys, num_shards, salt, out):
    """``out[i]``: the shard of ``keys[i]`` among ``num_shards``: the high bits of a mix of the
    key with ``salt`` (so parts, local shards and slots use independent bits)."""
    n = np.uint64(num_shards)
    for i in range(keys.shape[0]):
        out[i] = np.int32((mix64(keys[i] ^ salt) >> _S32) % n)


@cached_njit(**_JIT)
def partition(ids, num_parts):
    """(permutation grouping positions by ``ids`` stably, offsets[num_parts + 1])."""
    offsets = np.zeros(num_parts + 1, dtype=np.int64)
    for i in range(ids.shape[0]):
        offsets[ids[i] + 1] += 1
    for p in range(num_parts):
        offsets[p + 1] += offsets[p]
    fill = offsets[:num_parts].copy()
    perm = np.empty(ids.shape[0], dtype=np.int64)
    for i in range(ids.shape[0]):
        p = ids[i]
        perm[fill[p]] = i
        fill[p] += 1
    return perm, offsets


# ---------------------------------------------------------------------------- probing
# Kernels over a batch run a pipeline: the home slot of key ``i + 2 * AHEAD`` is computed and its
# lines prefetched (two lines of keys: a probe often runs past the first 8), key ``i + AHEAD`` is
# probed (its lines have arrived) and its row prefetched, and key ``i`` is served. Home slots and
# probe results wait in rings of RING entries. (The stages are written out in each kernel: numba
# adds reference counting around inlined helpers that take arrays the kernel allocated, an atomic
# operation per key.)
RING = 4 * AHEAD  # a power of two above 2 * AHEAD
_RMASK = RING - 1


@numba.njit(inline="always")
def _find_from(skeys, srows, key, i, mask):
    """(slot holding ``key`` or -1, slot where it would be inserted), probing from slot ``i``."""
    ins = -1
    while True:
        r = srows[i]
        if r == EMPTY:
            return -1, (i if ins < 0 else ins)
        if r == TOMB:
            if ins < 0:
                ins = i
        elif skeys[i] == key:
            return i, i
        i = (i + 1) & mask


@numba.njit(inline="always")
def _find(skeys, srows, key, salt, mask):
    """(slot holding ``key`` or -1, slot where it would be inserted)."""
    return _find_from(skeys, srows, key, _slot_of(key, salt, mask), mask)


@cached_njit(**_JIT)
def probe(skeys, srows, salt, keys, lo, hi, rows, slots):
    """For the positions ``lo..hi``: ``rows[i]``, the row of ``keys[i]`` (-1: none, absent or not
    admitted) and, for the keys without a row unless ``slots`` is empty, ``slots[i]``: the slot
    holding the key (a candidate), else ``-1 - s`` for the slot ``s`` where it would be inserted
    (see :func:`pull`)."""
    mask = np.int64(skeys.shape[0] - 1)
    want_slots = slots.shape[0] > 0
    homes = np.empty(RING, dtype=np.int64)
    for j in range(lo, min(hi, lo + AHEAD)):
        h = _slot_of(keys[j], salt, mask)
        homes[j & _RMASK] = h
        prefetch(skeys, h, 0)
        prefetch(skeys, h, 64)
        prefetch(srows, h, 0)
    for i in range(lo, hi):
        j = i + AHEAD
        if j < hi:
            h = _slot_of(keys[j], salt, mask)
            homes[j & _RMASK] = h
            prefetch(skeys, h, 0)
            prefetch(skeys, h, 64)
            prefetch(srows, h, 0)
        s, ins = _find_from(skeys, srows, keys[i], homes[i & _RMASK], mask)
        r = srows[s] if s >= 0 else EMPTY
        rows[i] = r if r >= 0 else -1
        if want_slots and r < 0:
            slots[i] = s if s >= 0 else -1 - ins


@cached_njit(**_JIT)
def lookup_rows(skeys, srows, salt, keys, out):
    """``out[i]``: the row of ``keys[i]``, or -1 when it has none (absent or not admitted)."""
    probe(skeys, srows, salt, keys, 0, keys.shape[0], out, np.empty(0, dtype=np.int64))


@cached_njit(**_JIT)
def read_rows(data, idata, rows, out, training, step, lo, hi):
    """``out[i] = data[rows[i], :dim]`` for the positions ``lo..hi`` that have a row (``rows[i] >= 0``),
    and ``seen = step`` on those rows in training: the part of :func:`pull` for keys already admitted,
    which touches only their own rows (so ranges may run at once on several threads)."""
    dim = out.shape[1]
    mc = meta_column(data)
    row_bytes = data.shape[1] * 4
    for i in range(lo, hi):
        if i + AHEAD < hi and rows[i + AHEAD] >= 0:
            prefetch_row(data, rows[i + AHEAD], row_bytes)
        r = rows[i]
        if r >= 0:
            if training:
                idata[r, mc + 2] = step
            for j in range(dim):
                out[i, j] = data[r, j]


@cached_njit(**_JIT)
def reinsert_all(old_keys, old_rows, new_keys, new_rows, salt):
    """Rehash: every live or candidate slot of the old index into the (empty) new one."""
    mask = np.int64(new_keys.shape[0] - 1)
    for j in range(old_keys.shape[0]):
        r = old_rows[j]
        if r == EMPTY or r == TOMB:
            continue
        i = _slot_of(old_keys[j], salt, mask)
        while new_rows[i] != EMPTY:
            i = (i + 1) & mask
        new_keys[i] = old_keys[j]
        new_rows[i] = r


# ---------------------------------------------------------------------------- pull
@numba.njit(inline="always")
def meta_column(data):
    """The column of ``show``; ``click`` and ``seen`` follow."""
    return data.shape[1] - 3


@cached_njit(nogil=True, error_model="numpy")  # x / 0 needs no check: the initializers' loops vectorize
def pull(skeys, srows, salt, data, idata, n_rows, keys, counts, training, min_count, step,
         dim, state_init, init_kind, p0, p1, seed, out, stats, rows_out, slots):
    """Reads the rows of ``keys`` into ``out`` ([n, dim]); zeros for keys without a row. ``rows_out[i]``
    gets the row of ``keys[i]`` after the pull (-1: none), as :func:`lookup_rows` would find it.

    With ``training`` a key without a slot is inserted: as a row at once when ``min_count <= 1``,
    else as a candidate whose count grows by ``counts[i]`` (1 when ``counts`` is empty) and which
    becomes a row when the count reaches ``min_count``. Rows read in training get ``seen = step``. The caller
    guarantees room: ``keys.shape[0]`` free slots under the load limit and as many free rows.
    ``stats`` (int64[4]) gets: new rows, new candidates, candidates admitted, reused tombstones.
    Returns the new ``n_rows``.

    With ``slots`` empty the pull probes the index itself. Else :func:`probe` and :func:`read_rows`
    ran on all the keys already (``rows_out`` and ``slots`` are theirs: a large pull's chunks on
    all cores) and the pull serves the positions without a row only, in order, probing none again.

    A key probed absent goes to the slot the probe found for it unless that slot was taken since
    (only insertions happen meanwhile: had an earlier copy of the key in the batch been inserted,
    it would have taken that slot); then it is probed again.
    """
    mask = np.int64(skeys.shape[0] - 1)
    has_counts = counts.shape[0] > 0
    mc = meta_column(data)
    n = keys.shape[0]
    row_bytes = data.shape[1] * 4
    n_state = state_init.shape[0]
    probs = np.empty(dim, dtype=np.float64)  # the normal initializer's working space
    tails = np.empty(dim, dtype=np.int64)
    homes = np.empty(RING, dtype=np.int64)
    found = np.empty(RING, dtype=np.int64)  # probe results: the slot, or -1 - the slot to insert at
    new_rows = new_candidates = admitted = reused = 0  # counted here, added to ``stats`` at the end
    probed = slots.shape[0] > 0
    for j in range(0 if probed else min(n, 2 * AHEAD)):
        h = _slot_of(keys[j], salt, mask)
        homes[j & _RMASK] = h
        prefetch(skeys, h, 0)
        prefetch(skeys, h, 64)
        prefetch(srows, h, 0)
    for j in range(0 if probed else min(n, AHEAD)):
        s, ins = _find_from(skeys, srows, keys[j], homes[j & _RMASK], mask)
        found[j & _RMASK] = s if s >= 0 else -1 - ins
    for i in range(n):
        if probed:
            j = i + AHEAD
            if j < n and rows_out[j] < 0:  # the index lines the key's insertion writes
                h = slots[j] if slots[j] >= 0 else -1 - slots[j]
                prefetch(skeys, h, 0)
                prefetch(srows, h, 0)
            if rows_out[i] >= 0:  # read by read_rows
                continue
            code = slots[i]
        else:
            j = i + 2 * AHEAD
            if j < n:
                h = _slot_of(keys[j], salt, mask)
                homes[j & _RMASK] = h
                prefetch(skeys, h, 0)
                prefetch(skeys, h, 64)
                prefetch(srows, h, 0)
            j = i + AHEAD
            if j < n:
                s, ins = _find_from(skeys, srows, keys[j], homes[j & _RMASK], mask)
                found[j & _RMASK] = s if s >= 0 else -1 - ins
                if s >= 0 and srows[s] >= 0:
                    prefetch_row(data, srows[s], row_bytes)
            code = found[i & _RMASK]
        key = keys[i]
        if code >= 0:
            s = ins = code
        else:  # absent when probed: see the docstring
            s, ins = -1, -1 - code
            if srows[ins] != EMPTY and srows[ins] != TOMB:
                s, ins = _find(skeys, srows, key, salt, mask)
        r = srows[s] if s >= 0 else EMPTY
        if r < 0 and training:
            c = np.int64(counts[i]) if has_counts else np.int64(1)
            if c < 1:
                c = 1
            if s < 0:  # first sight
                if srows[ins] == TOMB:
                    reused += 1
                skeys[ins] = key
                s = ins
                seen_before = np.int64(0)
            else:
                seen_before = np.int64(CANDIDATE_BASE) - r
            total = seen_before + c
            if total >= min_count:
                r = n_rows
                n_rows += 1
                # the initial row (written out here, not in a helper taking arrays: see RING)
                for j in range(n_state):
                    data[r, dim + j] = state_init[j]
                if init_kind == INIT_UNIFORM:
                    stream = row_stream(seed, key)
                    for j in range(dim):
                        data[r, j] = uniform_value(stream, j, p0, p1)
                elif init_kind == INIT_TRUNCATED_NORMAL:
                    stream = row_stream(seed, key)
                    for j in range(dim):
                        data[r, j] = truncated_normal_value(stream, j, p0, p1)
                elif init_kind == INIT_NORMAL:
                    stream = row_stream(seed, key)
                    for j in range(dim):
                        probs[j] = normal_probability(stream, j)
                        data[r, j] = normal_value(probs[j], p0, p1)
                    n_tails = 0
                    for j in range(dim):  # the columns in the tails, listed without a branch to mispredict
                        tails[n_tails] = j
                        n_tails += in_tail(probs[j])
                    for t in range(n_tails):
                        data[r, tails[t]] = normal_tail_value(probs[tails[t]], p0, p1)
                else:
                    v = np.float32(p0) if init_kind == INIT_CONSTANT else np.float32(0.0)
                    for j in range(dim):
                        data[r, j] = v
                data[r, mc] = 0.0
                data[r, mc + 1] = 0.0
                srows[s] = r
                new_rows += 1
                if seen_before > 0:
                    admitted += 1
            else:
                if seen_before == 0:
                    new_candidates += 1
                srows[s] = np.int32(max(CANDIDATE_BASE - total, -2147483647))
                r = -1
        if r >= 0:
            rows_out[i] = r
            if training:
                idata[r, mc + 2] = step
            for j in range(dim):
                out[i, j] = data[r, j]
        else:
            rows_out[i] = -1
            for j in range(dim):
                out[i, j] = 0.0
    stats[0] += new_rows
    stats[1] += new_candidates
    stats[2] += admitted
    stats[3] += reused
    return n_rows


@cached_njit(**_JIT)
def init_rows(keys, dim, init_kind, p0, p1, seed):
    """The initial embeddings of ``keys`` ([n, dim] float32): what a table (of any optimizer) with
    this initializer and seed returns on their first pull."""
    n = keys.shape[0]
    cap = 16
    while cap < 2 * n:
        cap *= 2
    skeys = np.zeros(cap, dtype=np.uint64)
    srows = np.full(cap, EMPTY, dtype=np.int32)
    data = np.empty((n, dim + 3), dtype=np.float32)
    out = np.empty((n, dim), dtype=np.float32)
    pull(skeys, srows, np.uint64(0), data, data.view(np.int32), 0, keys, np.empty(0, dtype=np.int32), True, 1, 0,
         dim, np.empty(0, dtype=np.float32), init_kind, p0, p1, seed, out, np.zeros(4, dtype=np.int64),
         np.empty(n, dtype=np.int32), np.empty(0, dtype=np.int64))
    return out


# ---------------------------------------------------------------------------- push
@cached_njit(**_JIT)
def resolve_unique(skeys, srows, salt, keys, rows, first):
    """``rows[i]``: the row of ``keys[i]`` (-1 if none); ``first[i]``: the position of the first
    occurrence of the same key (``i`` itself for the first). Returns the number of duplicates."""
    lookup_rows(skeys, srows, salt, keys, rows)
    return first_occurrences(keys, first)


@cached_njit(**_JIT)
def first_occurrences(keys, first):
    """``first[i]``: the position of the first occurrence of ``keys[i]``; returns the number of duplicates."""
    n = keys.shape[0]
    cap = 1
    while cap < 2 * n:
        cap *= 2
    tab = np.full(cap, -1, dtype=np.int64)
    m = cap - 1
    dups = 0
    for i in range(n):
        k = keys[i]
        first[i] = i
        h = np.int64(mix64(k) & np.uint64(m))
        while True:
            p = tab[h]
            if p < 0:
                tab[h] = i
                break
            if keys[p] == k:
                first[i] = p
                dups += 1
                break
            h = (h + 1) & m
    return dups


@cached_njit(**_JIT)
def aggregate(grads, counts, clicks, first):
    """Sums the gradients and counters of duplicate keys into their first position."""
    g = grads.copy()
    c = counts.copy()
    k = clicks.copy()
    for i in range(first.shape[0]):
        p = first[i]
        if p != i:
            for j in range(g.shape[1]):
                g[p, j] += g[i, j]
            if c.shape[0]:
                c[p] += c[i]
            if k.shape[0]:
                k[p] += k[i]
    return g, c, k


# ---------------------------------------------------------------------------- eviction
@cached_njit(**_JIT)
def evict_mark(srows, data, idata, step, max_age, min_show, drop_candidates):
    """Tombstones the slots of rows with ``step - seen > max_age`` (when ``max_age >= 0``) or
    ``show < min_show`` (when ``min_show > 0``), and candidates when ``drop_candidates``.
    Returns (rows evicted, candidates dropped)."""
    rows_out = 0
    cands_out = 0
    mc = meta_column(data)
    for s in range(srows.shape[0]):
        r = srows[s]
        if r >= 0:
            age = np.int64(step) - np.int64(idata[r, mc + 2])
            if (max_age >= 0 and age > max_age) or (min_show > 0.0 and data[r, mc] < min_show):
                srows[s] = TOMB
                rows_out += 1
        elif r <= CANDIDATE_BASE - 1 and drop_candidates:
            srows[s] = TOMB
            cands_out += 1
    return rows_out, cands_out


@cached_njit(**_JIT)
def compact_rows(srows, idata, n_rows):
    """Moves the rows still referenced by ``srows`` down to ``[0, live)`` keeping their order and
    remaps ``srows``. Returns ``live``."""
    new_index = np.full(n_rows, -1, dtype=np.int32)
    for s in range(srows.shape[0]):
        r = srows[s]
        if r >= 0:
            new_index[r] = 1
    live = 0
    for r in range(n_rows):
        if new_index[r] >= 0:
            new_index[r] = live
            if live != r:
                for j in range(idata.shape[1]):  # as int32: every bit pattern is kept
                    idata[live, j] = idata[r, j]
            live += 1
    for s in range(srows.shape[0]):
        r = srows[s]
        if r >= 0:
            srows[s] = new_index[r]
    return live


@cached_njit(**_JIT)
def decay_counters(data, n_rows, rate):
    mc = meta_column(data)
    for r in range(n_rows):
        data[r, mc] *= rate
        data[r, mc + 1] *= rate


# ---------------------------------------------------------------------------- export / import
@cached_njit(**_JIT)
def live_slots(skeys, srows, out_keys, out_rows):
    """The keys and rows of all admitted slots, in slot order. Returns the count."""
    n = 0
    for s in range(srows.shape[0]):
        r = srows[s]
        if r >= 0:
            out_keys[n] = skeys[s]
            out_rows[n] = r
            n += 1
    return n


@cached_njit(**_JIT)
def insert_rows(skeys, srows, salt, data, idata, n_rows, keys, values, state, shows, clicks, seens, select):
    """Inserts (or overwrites) the rows ``keys[i]`` for which ``select[i]``; room is guaranteed by
    the caller. Returns the new ``n_rows``."""
    mask = np.int64(skeys.shape[0] - 1)
    dim = values.shape[1]
    for i in range(keys.shape[0]):
        if not select[i]:
            continue
        key = keys[i]
        s, ins = _find(skeys, srows, key, salt, mask)
        r = srows[s] if s >= 0 else EMPTY
        if r < 0:
            if s < 0:
                s = ins
                skeys[s] = key
            r = n_rows
            n_rows += 1
            srows[s] = r
        for j in range(dim):
            data[r, j] = values[i, j]
        for j in range(state.shape[1]):
            data[r, dim + j] = state[i, j]
        mc = meta_column(data)
        data[r, mc] = shows[i]
        data[r, mc + 1] = clicks[i]
        idata[r, mc + 2] = seens[i]
    return n_rows


# ---------------------------------------------------------------------------- unique
@cached_njit(**_JIT)
def unique_keys(keys):
    """(unique keys in order of first appearance, index of each key into them, counts)."""
    n = keys.shape[0]
    cap = 16
    while cap < 2 * n:
        cap *= 2
    m = np.int64(cap - 1)
    tab = np.full(cap, -1, dtype=np.int32)
    uniq = np.empty(n, dtype=keys.dtype)
    idx = np.empty(n, dtype=np.int32)
    cnt = np.zeros(n, dtype=np.int32)
    u = 0
    for i in range(n):
        k = keys[i]
        h = np.int64(mix64(np.uint64(k)) & np.uint64(m))
        while True:
            p = tab[h]
            if p < 0:
                tab[h] = u
                uniq[u] = k
                idx[i] = u
                cnt[u] = 1
                u += 1
                break
            if uniq[p] == k:
                idx[i] = p
                cnt[p] += 1
                break
            h = (h + 1) & m
    return uniq[:u].copy(), idx, cnt[:u].copy()
