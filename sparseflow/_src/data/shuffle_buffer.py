"""TensorFlow's shuffle buffer and its seeds, draw for draw, so ``Dataset.shuffle`` gives TF's orders.

The buffer is a sequence ``L`` of at most ``buffer_size`` elements. An incoming element is
appended; whenever ``L`` is full (and, at the end of the input, until it is empty) one element is
drawn: ``j = sample % len(L)``, the output is ``L[j]``, ``L[0]`` takes its place and the front is
dropped. ``sample`` is the next 32-bit output of a Philox4x32-10 stream keyed by the iterator's
seeds (TensorFlow's ``SingleSampleAdapter<PhiloxRandom>``), one per draw.

The iterator's seeds come from a seed generator that belongs to one run of the dataset's graph
(one iterator initialization): with ``reshuffle_each_iteration`` every new iterator over the
shuffled dataset (e.g. each pass of a following ``repeat``) takes the next two 32-bit samples of
a Philox stream keyed by ``(seed, seed2)``; without it every iterator uses ``(seed, seed2)``.
Re-initializing an iterator makes a new generator, so it repeats the first order, as in TF.
Seeds ``(0, 0)`` (no op seed and no graph seed) mean fresh random seeds for every generator.

Example:
    >>> s = Samples(*SeedGenerator(87654321, 7, reshuffle=True).next())  # tf: range(10).shuffle(4, seed=7)
    >>> shuffled_ids(range(10), 4, s).tolist()
    [0, 4, 2, 3, 5, 6, 1, 8, 7, 9]
"""

from __future__ import annotations

import secrets

import numpy as np

from sparseflow._src.kernels.jit_cache import cached_njit
from sparseflow._src.kernels.philox import PhiloxRandom

_CHUNK = 1024  # 32-bit samples generated at a time


class Samples:
    """The 32-bit samples of a Philox stream, in order, handed out in runs."""

    def __init__(self, seed: int, seed2: int):
        self._gen = PhiloxRandom(seed, seed2)
        self._left = np.empty(0, np.uint32)

    def take(self, n: int) -> np.ndarray:
        n = int(n)
        if n > len(self._left):
            blocks = (n - len(self._left) + _CHUNK + 3) // 4
            fresh = self._gen.blocks(blocks).reshape(-1)
            self._gen.skip(blocks)
            self._left = np.concatenate([self._left, fresh])
        out, self._left = self._left[:n], self._left[n:]
        return out

    def next(self) -> int:
        return int(self.take(1)[0])


class SeedGenerator:
    """The seeds of each new iterator over one shuffled dataset (TensorFlow's Random/FixedSeedGenerator)."""

    def __init__(self, seed: int, seed2: int, reshuffle: bool):
        seed, seed2 = int(seed), int(seed2)
        if seed == 0 and seed2 == 0:
            seed, seed2 = secrets.randbits(63), secrets.randbits(63)
        self._seeds = (seed, seed2)
        self._stream = Samples(seed, seed2) if reshuffle else None

    def next(self) -> tuple[int, int]:
        if self._stream is None:
            return self._seeds
        return self._stream.next(), self._stream.next()


class Ring:
    """The shuffle buffer over int64 ids (a ring that grows up to ``buffer_size``)."""

    def __init__(self, buffer_size: int):
        self.size = int(buffer_size)
        self.ids = np.empty(min(self.size, 1024), np.int64)
        self.start = 0
        self.count = 0

    def _reserve(self, n: int):
        need = min(self.size, self.count + n)
        cap = len(self.ids)
        if need <= cap:
            return
        new_cap = min(self.size, max(need, 2 * cap))
        ordered = np.concatenate([self.ids[self.start:], self.ids[:self.start]])[:self.count]
        self.ids = np.empty(new_cap, np.int64)
        self.ids[:self.count] = ordered
        self.start = 0

    def feed(self, new_ids: np.ndarray, samples: Samples) -> np.ndarray:
        """Appends ``new_ids``; returns the ids drawn on the way (one per append that fills the buffer)."""
        new_ids = np.ascontiguousarray(new_ids, dtype=np.int64)
        draws = max(0, self.count + len(new_ids) - self.size + 1)
        self._reserve(len(new_ids))
        out = np.empty(draws, np.int64)
        self.start, self.count = _feed(self.ids, self.start, self.count, self.size, new_ids, samples.take(draws), out)
        return out

    def drain(self, samples: Samples) -> np.ndarray:
        """Draws every remaining id (the end of the input)."""
        out = np.empty(self.count, np.int64)
        self.start, self.count = _drain(self.ids, self.start, self.count, samples.take(self.count), out)
        return out

    def held(self) -> np.ndarray:
        """The ids in the buffer (any order)."""
        if self.start + self.count <= len(self.ids):
            return self.ids[self.start:self.start + self.count]
        return np.concatenate([self.ids[self.start:], self.ids[:(self.start + self.count) % len(self.ids)]])

    def renumber(self, ids: np.ndarray):
        """Replaces the held ids (in buffer order) by ``ids``."""
        cap = len(self.ids)
        pos = (self.start + np.arange(self.count)) % cap
        self.ids[pos] = ids


@cached_njit(nogil=True)
def _draw(ring, start, count, sample):  # pragma: no cover - compiled
    cap = ring.shape[0]
    idx = (start + np.int64(sample) % count) % cap
    out = ring[idx]
    ring[idx] = ring[start]
    return out


@cached_njit(nogil=True)
def _feed(ring, start, count, size, new_ids, samples, out):  # pragma: no cover - compiled
    cap = ring.shape[0]
    k = 0
    for i in range(new_ids.shape[0]):
        ring[(start + count) % cap] = new_ids[i]
        count += 1
        if count == size:
            out[k] = _draw(ring, start, count, samples[k])
            k += 1
            start = (start + 1) % cap
            count -= 1
    return start, count


@cached_njit(nogil=True)
def _drain(ring, start, count, samples, out):  # pragma: no cover - compiled
    cap = ring.shape[0]
    for k in range(count):
        out[k] = _draw(ring, start, count - k, samples[k])
        start = (start + 1) % cap
    return start, 0


def shuffled_ids(ids, buffer_size: int, samples: Samples) -> np.ndarray:
    """The order in which a shuffle buffer of ``buffer_size`` emits ``ids``."""
    ring = Ring(buffer_size)
    return np.concatenate([ring.feed(np.asarray(ids, np.int64), samples), ring.drain(samples)])
