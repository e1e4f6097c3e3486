"""The runtime embedding table: a device resource of shards over the numba hash kernels.

:class:`TableShard` is one open-addressing table (see embedding_hash for the layout) behind a
lock; :class:`EmbeddingTableResource` is what a device holds for one table (or for one *part* of a
table split over devices): ``num_shards`` shards routed by a hash of the key, one step counter,
the optimizer and lifecycle settings (:class:`TableSpec`).

A large push finds its rows and applies the optimizer in chunks of keys on all cores (each row is
updated from one position: the values of one thread); a large pull reads the rows of admitted keys
so, then inserts the others in their order on one thread (the rows and values of a one-thread pull).
A shard keeps the keys and rows of its last training pull: the push of the same keys (a training
step pushes the keys it pulled) takes their rows from there instead of probing the index again.
Only an eviction, a load or a clear moves rows of existing keys, and each forgets them; a later
training pull replaces them.

Growth is by rehash (index) and by resizing the rows' block (embedding_rows: re-mapped, not
copied), never by a fixed reservation. Eviction tombstones slots and compacts the rows in place,
then shrinks the arrays, so memory goes back to the operating system.

Example:
    >>> import numpy as np
    >>> t = EmbeddingTableResource("t", TableSpec(dim=2, optimizer="sgd", optimizer_params=(),
    ...                                            initializer="constant",
    ...                                            initializer_params=(0.5,)))
    >>> keys = np.array([7, 2**64 - 1], dtype=np.uint64)
    >>> t.pull(keys).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    >>> t.push(keys, np.ones((2, 2), np.float32), learning_rate=0.25)  # keys whose gradient was dropped (no row)
    0
    >>> t.pull(keys).tolist(), t.size()
    ([[0.25, 0.25], [0.25, 0.25]], 2)
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from sparseflow._src.kernels import embedding_hash as H
from sparseflow._src.kernels import embedding_optim as O
from sparseflow._src.kernels import intra_op
from sparseflow._src.kernels.embedding_rows import RowStore

PUSH_CHUNK_KEYS = 2048  # a push of at least two chunks finds and updates its rows on all cores
PULL_CHUNK_KEYS = 2048  # a pull of at least two chunks reads the admitted keys' rows on all cores
INITIALIZERS = {"zeros": H.INIT_ZEROS, "constant": H.INIT_CONSTANT, "uniform": H.INIT_UNIFORM,
                "normal": H.INIT_NORMAL, "truncated_normal": H.INIT_TRUNCATED_NORMAL}
_INIT_NPARAMS = {"zeros": 0, "constant": 1, "uniform": 2, "normal": 2, "truncated_normal": 2}

MAX_LOAD = 0.75  # slots used (rows + candidates + tombstones) per slot before a rehash
ROW_GROWTH = 1.125  # the row arrays grow by this factor (bounded slack: memory per key stays tight)
_MIN_CAP = 16
_MIN_ROWS = 64
_MAX_ROWS = 2**31 - 1  # rows are int32 in the index: one shard holds up to 2**31 - 1 rows
_MAX_STEP = 2**31 - 1  # last-seen steps are int32 in the rows
_EMPTY_F = np.zeros(0, dtype=np.float32)
_EMPTY_I = np.zeros(0, dtype=np.int32)
_EMPTY_I64 = np.zeros(0, dtype=np.int64)


def _bad(msg):
    from sparseflow._src.framework import errors

    return errors.InvalidArgumentError(None, None, msg)


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """Everything that defines a table's behaviour (all of it travels as op attrs).

    ``optimizer`` is one of embedding_optim.OPTIMIZERS with ``optimizer_params`` in the order that
    module documents; ``initializer`` one of INITIALIZERS with ``initializer_params`` (constant:
    value; uniform: minval, maxval; (truncated_)normal: mean, stddev). ``min_count``: a key becomes
    a row after being pulled this many times (1 = at once). ``evict_max_age`` (steps since last
    seen, -1 = never), ``evict_min_show`` (0 = never) and ``show_decay`` apply on every eviction
    pass, automatically every ``evict_every_n_steps`` pushes (0 = only when asked).
    """

    dim: int
    optimizer: str = "adagrad"
    optimizer_params: tuple = (0.1, 0.0)
    initializer: str = "truncated_normal"
    initializer_params: tuple = (0.0, 0.1)
    seed: int = 0
    min_count: int = 1
    evict_max_age: int = -1
    evict_min_show: float = 0.0
    evict_every_n_steps: int = 0
    show_decay: float = 1.0

    def __post_init__(self):
        if int(self.dim) < 1:
            raise _bad(f"An embedding table needs dim >= 1, got {self.dim}.")
        if self.optimizer not in O.OPTIMIZERS:
            raise _bad(f"Unknown embedding-table optimizer {self.optimizer!r}; one of {sorted(O.OPTIMIZERS)}.")
        want = O.NUM_HPARAMS[O.OPTIMIZERS[self.optimizer]]
        if len(self.optimizer_params) != want:
            raise _bad(f"Optimizer {self.optimizer!r} takes {want} parameters, got {list(self.optimizer_params)}.")
        if self.initializer not in INITIALIZERS:
            raise _bad(f"Unknown embedding-table initializer {self.initializer!r}; one of {sorted(INITIALIZERS)}.")
        if len(self.initializer_params) != _INIT_NPARAMS[self.initializer]:
            raise _bad(f"Initializer {self.initializer!r} takes {_INIT_NPARAMS[self.initializer]} parameters, "
                       f"got {list(self.initializer_params)}.")
        if int(self.min_count) < 1:
            raise _bad(f"min_count must be >= 1, got {self.min_count}.")

    @property
    def kind(self) -> int:
        return O.OPTIMIZERS[self.optimizer]

    @property
    def state_width(self) -> int:
        return O.state_width(self.kind, self.dim)

    @property
    def raw_bytes_per_key(self) -> int:
        """Bytes of information per key: the uint64 key, the row and its optimizer state."""
        return 8 + 4 * (self.dim + self.state_width)


class TableShard:
    """One hash table: index, rows, counters. All methods take the shard's lock."""

    def __init__(self, spec: TableSpec, salt: int):
        self.spec = spec
        self.salt = np.uint64(salt)
        self.lock = threading.Lock()
        self._hp = np.asarray(spec.optimizer_params, dtype=np.float64)
        self._state_init = O.state_init(spec.kind, spec.dim, self._hp)
        p = list(spec.initializer_params) + [0.0, 0.0]
        self._init = (INITIALIZERS[spec.initializer], float(p[0]), float(p[1]), np.uint64(spec.seed % 2**64))
        self._clear()

    def _clear(self):
        self._pulled = None
        self.skeys = np.zeros(_MIN_CAP, dtype=np.uint64)
        self.srows = np.full(_MIN_CAP, H.EMPTY, dtype=np.int32)
        self._alloc_rows(_MIN_ROWS)
        self.n_rows = 0
        self.n_candidates = 0
        self.n_tombs = 0

    def _alloc_rows(self, rcap):
        self.row_store = RowStore(self.width, rcap)

    @property
    def data(self):
        """The rows (float32 ``[row_capacity, width]``). A view: never kept across a resize."""
        return self.row_store.array

    @property
    def width(self) -> int:
        """Floats per row: embedding, optimizer state, show, click, seen (int32 bits)."""
        return self.spec.dim + self.spec.state_width + 3

    @property
    def idata(self):
        """The rows as int32 (for the ``seen`` column). A fresh view: never kept across a resize."""
        return self.data.view(np.int32)

    # ------------------------------------------------------------------ capacity
    @property
    def capacity(self) -> int:
        return self.skeys.shape[0]

    @property
    def row_capacity(self) -> int:
        return self.row_store.capacity

    def _ensure_room(self, n_new: int, rows: bool):
        """Room for ``n_new`` more slots (and rows when ``rows``): rehash / grow as needed."""
        need = self.n_rows + self.n_candidates + n_new
        if need + self.n_tombs > MAX_LOAD * self.capacity:
            cap = self.capacity
            while need > MAX_LOAD * cap:
                cap *= 2
            self._rehash(cap)
        if rows and self.n_rows + n_new > self.row_capacity:
            need_rows = self.n_rows + n_new
            if need_rows > _MAX_ROWS:
                raise _bad(f"An embedding-table shard holds at most {_MAX_ROWS} rows; use more shards.")
            self._resize_rows(min(_MAX_ROWS, max(need_rows, int(self.row_capacity * ROW_GROWTH) + _MIN_ROWS)))

    def _rehash(self, cap: int):
        keys = np.zeros(cap, dtype=np.uint64)
        rows = np.full(cap, H.EMPTY, dtype=np.int32)
        H.reinsert_all(self.skeys, self.srows, keys, rows, self.salt)
        self.skeys, self.srows, self.n_tombs = keys, rows, 0

    def _resize_rows(self, rcap: int, exact: bool = False):
        if rcap > _MAX_ROWS:
            raise _bad(f"An embedding-table shard holds at most {_MAX_ROWS} rows; use more shards.")
        self.row_store.resize(rcap, exact)

    def shrink_to_fit(self):
        """Trims the row arrays to the live rows and the index to the smallest capacity in load."""
        with self.lock:
            self._shrink(slack=1.0)

    def _shrink(self, slack: float):
        target = max(_MIN_ROWS, int(self.n_rows * slack))
        if target < self.row_capacity:
            self._resize_rows(target, exact=True)
        cap = _MIN_CAP  # the smallest index that holds the keys under the load limit
        while self.n_rows + self.n_candidates > MAX_LOAD * cap:
            cap *= 2
        if cap < self.capacity or self.n_tombs:
            self._rehash(cap)

    def memory_bytes(self) -> int:
        return self.skeys.nbytes + self.srows.nbytes + self.row_store.nbytes

    # ------------------------------------------------------------------ pull / push
    def pull(self, keys, counts, training: bool, step: int, out=None):
        dim = self.spec.dim
        if out is None:
            out = np.empty((keys.shape[0], dim), dtype=np.float32)
        stats = np.zeros(4, dtype=np.int64)
        n = keys.shape[0]
        rows = np.empty(n, dtype=np.int32)
        with self.lock:  # held while the chunks run on other threads too: they finish before it is released
            if training:
                self._ensure_room(n, rows=True)
            kind, p0, p1, seed = self._init
            if n >= 2 * PULL_CHUNK_KEYS and intra_op.total_threads() > 1:
                # the probes, and the rows of the keys that have one (read and marked seen), by chunks on all
                # cores; then the others (new keys, candidates) in their order, as the one-thread pull serves them
                skeys, srows, salt, data, idata = self.skeys, self.srows, self.salt, self.data, self.idata
                slots = np.empty(n, dtype=np.int64)

                def chunk(lo, hi):
                    H.probe(skeys, srows, salt, keys, lo, hi, rows, slots)
                    H.read_rows(data, idata, rows, out, training, step, lo, hi)

                intra_op.parallel_for(chunk, n, PULL_CHUNK_KEYS)
            else:
                slots = _EMPTY_I64
            if slots.shape[0] == 0 or rows.min() < 0:
                self.n_rows = H.pull(self.skeys, self.srows, self.salt, self.data, self.idata, self.n_rows, keys,
                                     counts, training, self.spec.min_count, step, dim, self._state_init, kind, p0,
                                     p1, seed, out, stats, rows, slots)
            self.n_candidates += int(stats[1]) - int(stats[2])
            self.n_tombs -= int(stats[3])
            # the push of these keys finds their rows here (see push); not when a key was admitted by a later
            # sighting in this pull (min_count > 1): its earlier positions read no row, but it has one now
            if training:  # (an inference pull changes no row: the last training pull's rows stay valid)
                self._pulled = None if stats[2] else (keys.copy(), rows)
        return out, stats

    def push(self, keys, grads, counts, clicks, step: int, lr: float) -> int:
        """Applies the optimizer to the rows of ``keys``; returns the number of distinct keys whose
        gradient was dropped (no row: not admitted, evicted, or never pulled)."""
        n = keys.shape[0]
        rows = np.empty(n, dtype=np.int32)
        first = np.empty(n, dtype=np.int64)
        with self.lock:  # held while the chunks run on other threads too: they finish before it is released
            skeys, srows, salt = self.skeys, self.srows, self.salt
            pulled = self._pulled
            if pulled is not None and pulled[0].shape == keys.shape and np.array_equal(pulled[0], keys):
                rows = pulled[1]  # the keys of the last training pull (a step's push): their rows, not looked up again
                dups = H.first_occurrences(keys, first)
            elif n >= 2 * PUSH_CHUNK_KEYS and intra_op.total_threads() > 1:
                # the lookups only read the index: by chunks of keys on all cores, the duplicates after
                intra_op.parallel_for(lambda lo, hi: H.lookup_rows(skeys, srows, salt, keys[lo:hi], rows[lo:hi]),
                                      n, PUSH_CHUNK_KEYS)
                dups = H.first_occurrences(keys, first)
            else:
                dups = H.resolve_unique(skeys, srows, salt, keys, rows, first)
            if dups:
                grads, counts, clicks = H.aggregate(grads, counts, clicks, first)
            dropped = []  # per chunk (list.append is atomic)
            kind, data, idata, hp, dim = self.spec.kind, self.data, self.idata, self._hp, self.spec.dim
            intra_op.parallel_for(lambda lo, hi: dropped.append(O.push_rows(kind, data, idata, rows, first, grads,
                                                                            counts, clicks, step, lr, hp, dim, lo, hi)),
                                  n, PUSH_CHUNK_KEYS)
            return int(sum(dropped))

    # ------------------------------------------------------------------ lifecycle
    def evict(self, step, max_age, min_show, drop_candidates, decay):
        with self.lock:
            self._pulled = None  # rows move (compaction) and keys lose them
            rows_out, cands_out = H.evict_mark(self.srows, self.data, self.idata, step, max_age, min_show,
                                               drop_candidates)
            self.n_tombs += rows_out + cands_out
            self.n_candidates -= cands_out
            if rows_out:
                self.n_rows = H.compact_rows(self.srows, self.idata, self.n_rows)
            if decay != 1.0:
                H.decay_counters(self.data, self.n_rows, decay)
            if rows_out or cands_out:
                self._shrink(slack=1.0)
            return rows_out, cands_out

    def export(self):
        """(keys, rows) of the admitted keys, in slot order: the keys and a copy of their rows."""
        with self.lock:
            keys = np.empty(self.n_rows, dtype=np.uint64)
            rows = np.empty(self.n_rows, dtype=np.int32)
            n = H.live_slots(self.skeys, self.srows, keys, rows)
            assert n == self.n_rows, (n, self.n_rows)
            return keys, self.data[rows]

    def insert(self, keys, values, state, show, click, seen, select):
        with self.lock:
            self._pulled = None
            n = int(np.count_nonzero(select))
            self._ensure_room(n, rows=True)
            self.n_rows = H.insert_rows(self.skeys, self.srows, self.salt, self.data, self.idata, self.n_rows, keys,
                                        values, state, show, click, seen, select)

    def clear(self):
        with self.lock:
            self._clear()


class EmbeddingTableResource:
    """A table (or one part of a table split over devices) on a device: ``num_shards`` shards.

    ``part``/``num_parts`` say which keys belong here when the table is split over devices (keys
    are routed by ``shard_ids(key, num_parts, PART_SALT)``); restore keeps only those keys.
    """

    def __init__(self, name: str, spec: TableSpec, num_shards: int = 1, part: int = 0, num_parts: int = 1):
        if num_shards < 1 or num_parts < 1 or not 0 <= part < num_parts:
            raise _bad(f"Bad table sharding: num_shards={num_shards}, part={part} of {num_parts}.")
        self.name = name
        self.spec = spec
        self.part, self.num_parts = part, num_parts
        self.shards = [TableShard(spec, salt=int(H.mix64(np.uint64(spec.seed + 7919 * (i + 1)))))
                       for i in range(num_shards)]
        self.lock = threading.Lock()  # guards the counters below; shards have their own locks
        self.step = 0
        self.dropped = 0  # distinct pushed keys whose gradient was dropped
        self.evicted = 0
        self.admitted = 0  # candidates that became rows
        self._since_evict = 0
        self.grad_accumulator = None  # synchronous training's per-step pushes (embedding_sync.py), on first use

    # ------------------------------------------------------------------ routing
    def _route(self, keys):
        ids = np.empty(keys.shape[0], dtype=np.int32)
        H.shard_ids(keys, len(self.shards), H.SHARD_SALT, ids)
        return H.partition(ids, len(self.shards))

    @staticmethod
    def _keys(keys):
        keys = np.asarray(keys)
        if keys.ndim != 1:
            raise _bad(f"Embedding-table keys must be a vector, got shape {list(keys.shape)}.")
        if keys.dtype == np.uint64:
            return np.ascontiguousarray(keys)
        if keys.dtype == np.int64:
            return np.ascontiguousarray(keys).view(np.uint64)
        if keys.dtype.kind in "iu":
            return keys.astype(np.int64).view(np.uint64)
        raise _bad(f"Embedding-table keys must be integers, got {keys.dtype}.")

    # ------------------------------------------------------------------ pull / push
    def pull(self, keys, counts=None, training: bool = True):
        """The rows of ``keys`` ([n, dim] float32). With ``training`` unseen keys are inserted
        (subject to admission: candidates read zeros); without it they read zeros."""
        keys = self._keys(keys)
        counts = _EMPTY_I if counts is None or np.size(counts) == 0 else np.ascontiguousarray(counts, np.int32)
        if counts.shape[0] not in (0, keys.shape[0]):
            raise _bad(f"pull: {counts.shape[0]} counts for {keys.shape[0]} keys.")
        step = self.step
        if len(self.shards) == 1:
            out, stats = self.shards[0].pull(keys, counts, training, step)
            self._count_admitted(stats)
            return out
        out = np.empty((keys.shape[0], self.spec.dim), dtype=np.float32)
        perm, off = self._route(keys)
        for s, shard in enumerate(self.shards):
            pos = perm[off[s]:off[s + 1]]
            if pos.size:
                part, stats = shard.pull(keys[pos], counts[pos] if counts.size else counts, training, step)
                out[pos] = part
                self._count_admitted(stats)
        return out

    def _count_admitted(self, stats):
        if stats[2]:
            with self.lock:
                self.admitted += int(stats[2])

    def push(self, keys, grads, counts=None, clicks=None, learning_rate: float = 0.01):
        """Applies the table's optimizer to the rows of ``keys`` with ``grads`` ([n, dim]; rows of
        duplicate keys are summed), adds ``counts`` to show (1 each when None) and ``clicks`` to
        click, then advances the table step (and evicts when the spec says so). Returns the number
        of distinct keys whose gradient was dropped (no row)."""
        keys = self._keys(keys)
        grads = np.asarray(grads)
        if grads.shape != (keys.shape[0], self.spec.dim):
            raise _bad(f"push: gradients of shape {list(grads.shape)} for {keys.shape[0]} keys of a table of "
                       f"dim {self.spec.dim} (want [{keys.shape[0]}, {self.spec.dim}]).")
        grads = np.ascontiguousarray(grads, dtype=np.float32)
        counts = _EMPTY_F if counts is None or np.size(counts) == 0 else np.ascontiguousarray(counts, np.float32)
        clicks = _EMPTY_F if clicks is None or np.size(clicks) == 0 else np.ascontiguousarray(clicks, np.float32)
        for what, arr in (("counts", counts), ("clicks", clicks)):
            if arr.shape[0] not in (0, keys.shape[0]):
                raise _bad(f"push: {arr.shape[0]} {what} for {keys.shape[0]} keys.")
        lr = float(learning_rate)
        with self.lock:
            step = self.step
        if step >= _MAX_STEP:
            raise _bad(f"Embedding table {self.name!r} reached {_MAX_STEP} steps (its last-seen steps are int32).")
        if len(self.shards) == 1:
            dropped = self.shards[0].push(keys, grads, counts, clicks, step, lr)
        else:
            dropped = 0
            perm, off = self._route(keys)
            for s, shard in enumerate(self.shards):
                pos = perm[off[s]:off[s + 1]]
                if pos.size:
                    dropped += shard.push(keys[pos], grads[pos], counts[pos] if counts.size else counts,
                                          clicks[pos] if clicks.size else clicks, step, lr)
        spec = self.spec
        with self.lock:
            self.dropped += dropped
            self.step += 1
            self._since_evict += 1
            due = spec.evict_every_n_steps > 0 and self._since_evict >= spec.evict_every_n_steps
        if due:
            self.evict()
        return dropped

    def evict(self, max_age=None, min_show=None, drop_candidates=True, decay=None):
        """One eviction pass (defaults from the spec); returns the number of rows evicted.

        Rows not seen for more than ``max_age`` steps or with ``show < min_show`` are removed; with
        ``drop_candidates`` the counts of keys not yet admitted are forgotten (the admission window is
        the time between two passes); show and click are then multiplied by ``decay``."""
        spec = self.spec
        max_age = spec.evict_max_age if max_age is None else int(max_age)
        min_show = spec.evict_min_show if min_show is None else float(min_show)
        decay = spec.show_decay if decay is None else float(decay)
        with self.lock:
            step = self.step
            self._since_evict = 0
        total = 0
        for shard in self.shards:
            total += shard.evict(step, max_age, min_show, bool(drop_candidates), decay)[0]
        with self.lock:
            self.evicted += total
        return total

    # ------------------------------------------------------------------ introspection
    def size(self) -> int:
        return sum(s.n_rows for s in self.shards)

    def num_candidates(self) -> int:
        return sum(s.n_candidates for s in self.shards)

    def memory_bytes(self) -> int:
        return sum(s.memory_bytes() for s in self.shards)

    def bytes_per_key(self) -> float:
        n = self.size()
        return self.memory_bytes() / n if n else float("nan")

    def shrink_to_fit(self):
        for s in self.shards:
            s.shrink_to_fit()

    def stats(self) -> dict:
        return {"keys": self.size(), "candidates": self.num_candidates(), "memory_bytes": self.memory_bytes(),
                "bytes_per_key": self.bytes_per_key(), "raw_bytes_per_key": self.spec.raw_bytes_per_key,
                "step": self.step, "dropped_gradients": self.dropped, "evicted": self.evicted,
                "admitted": self.admitted, "capacity": sum(s.capacity for s in self.shards),
                "row_capacity": sum(s.row_capacity for s in self.shards),
                "stale_pushes": self.grad_accumulator.stale if self.grad_accumulator is not None else 0}

    # ------------------------------------------------------------------ export / import
    def export(self):
        """All rows sorted by key: ``dict`` of keys (uint64 [n]), values [n, dim], state [n, S],
        show, click [n] (float32) and seen [n] (int64), plus the table step."""
        parts = [s.export() for s in self.shards]
        keys = np.concatenate([p[0] for p in parts])
        order = np.argsort(keys, kind="stable")
        data = np.concatenate([p[1] for p in parts])[order]
        dim, mc = self.spec.dim, self.spec.dim + self.spec.state_width
        return {"keys": keys[order], "values": np.ascontiguousarray(data[:, :dim]),
                "state": np.ascontiguousarray(data[:, dim:mc]), "show": data[:, mc].copy(),
                "click": data[:, mc + 1].copy(),
                "seen": np.ascontiguousarray(data[:, mc + 2]).view(np.int32).astype(np.int64), "step": self.step}

    def check_load(self, keys, values, state, show, click, seen, optimizer=None):
        """Raises InvalidArgumentError when these rows (saved by a table with the optimizer kind
        ``optimizer``, when given) cannot be loaded into this table; changes nothing."""
        if optimizer is not None and optimizer != self.spec.optimizer:
            raise _bad(f"Embedding table {self.name!r} uses optimizer {self.spec.optimizer!r}, but the checkpoint was "
                       f"saved with {optimizer!r}: its optimizer state does not fit.")
        n = np.shape(keys)[0] if np.ndim(keys) == 1 else None
        if n is None:
            raise _bad(f"Restoring embedding table {self.name!r}: the keys have shape {list(np.shape(keys))}; "
                       f"they must be a vector.")
        dim, width = self.spec.dim, self.spec.state_width
        if np.shape(values) != (n, dim):
            raise _bad(f"Restoring embedding table {self.name!r} (dim {dim}): the checkpoint has values of shape "
                       f"{list(np.shape(values))} for {n} keys; it was saved from a table of another dimension.")
        if np.shape(state) != (n, width):
            raise _bad(f"Restoring embedding table {self.name!r} ({self.spec.optimizer}, {width} floats of state "
                       f"per row): the checkpoint has state of shape {list(np.shape(state))}; it was saved with "
                       f"another optimizer.")
        for what, arr in (("show", show), ("click", click), ("seen", seen)):
            if np.shape(arr) != (n,):
                raise _bad(f"Restoring embedding table {self.name!r}: '{what}' has shape {list(np.shape(arr))} for "
                           f"{n} keys.")

    def load(self, keys, values, state, show, click, seen, step):
        """Replaces the contents with the rows of this part among ``keys`` (from any sharding)."""
        self.check_load(keys, values, state, show, click, seen)
        keys = self._keys(keys)
        n, dim, width = keys.shape[0], self.spec.dim, self.spec.state_width
        values = np.ascontiguousarray(values, dtype=np.float32).reshape(n, dim) if n else \
            np.zeros((0, dim), np.float32)
        state = np.ascontiguousarray(state, dtype=np.float32).reshape(n, width) if n else \
            np.zeros((0, width), np.float32)
        show = np.ascontiguousarray(show, dtype=np.float32).reshape(n)
        click = np.ascontiguousarray(click, dtype=np.float32).reshape(n)
        seen = np.ascontiguousarray(seen, dtype=np.int32).reshape(n)
        mine = np.ones(n, dtype=np.bool_)
        if self.num_parts > 1:
            ids = np.empty(n, dtype=np.int32)
            H.shard_ids(keys, self.num_parts, H.PART_SALT, ids)
            mine = ids == self.part
        ids = np.empty(n, dtype=np.int32)
        H.shard_ids(keys, len(self.shards), H.SHARD_SALT, ids)
        for s, shard in enumerate(self.shards):
            shard.clear()
            shard.insert(keys, values, state, show, click, seen, mine & (ids == s))
        with self.lock:
            self.step = int(step)
            self._since_evict = 0
