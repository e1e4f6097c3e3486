"""CPU kernels of the candidate samplers and ``ComputeAccidentalHits``, drawing TensorFlow's streams.

Each sampler kernel owns a Philox generator seeded from ``(seed, seed2)`` and reserves
``2048 * num_sampled`` 32-bit samples per run; draws read that stream in order (32 bits for a
float, two words for a double or a 64-bit integer, rejection for exact uniform integers), so a
seeded sampler returns TensorFlow's candidates run after run. With ``unique`` it draws until it has
``num_sampled`` distinct ids and reports expected counts ``1 - (1 - p) ** tries``; otherwise
``p * num_sampled``. The learned unigram sampler counts each true class after sampling.
"""

from __future__ import annotations

import math

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import philox
from sparseflow._src.kernels.registry import register_kernel

_MASK32 = (1 << 32) - 1
_MASK64 = (1 << 64) - 1
_CHUNK_BLOCKS = 64


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


class _Stream:
    """TensorFlow's ``SimplePhilox`` over a reserved Philox stream: 32-bit words in order."""

    def __init__(self, gen: philox.PhiloxRandom):
        self._gen = gen
        self._buf: list[int] = []
        self._pos = 0
        self._offset = 0

    def rand32(self) -> int:
        if self._pos == len(self._buf):
            blocks = self._gen.blocks_at(np.arange(self._offset, self._offset + _CHUNK_BLOCKS, dtype=np.uint64))
            self._offset += _CHUNK_BLOCKS
            self._buf, self._pos = blocks.reshape(-1).tolist(), 0
        value = self._buf[self._pos]
        self._pos += 1
        return value

    def rand64(self) -> int:
        lo = self.rand32()
        return lo | (self.rand32() << 32)

    def rand_float(self) -> float:
        return float(philox.uint32_to_float(np.uint32(self.rand32())))

    def rand_double(self) -> float:
        x0 = self.rand32()
        return float(philox.uint64_to_double(np.uint64(x0), np.uint64(self.rand32())))

    def _exact_uniform(self, n: int, draw, bits_mask: int) -> int:
        if n == 0:
            draw()
            return 0
        if n & (n - 1) == 0:
            return draw() & (n - 1)
        rem = (bits_mask % n) + 1
        while True:
            r = draw()
            if r >= rem:
                return r % n

    def uniform(self, n: int) -> int:
        return self._exact_uniform(n, self.rand32, _MASK32)

    def uniform64(self, n: int) -> int:
        return self._exact_uniform(n, self.rand64, _MASK64)


class _UniformSampler:
    def __init__(self, range_max):
        self.range = range_max

    def sample(self, rnd):
        return rnd.uniform64(self.range)

    def probability(self, value):
        return np.float32(1.0 / self.range)


class _LogUniformSampler:
    def __init__(self, range_max):
        self.range = range_max
        self._log_range = math.log1p(range_max)

    def sample(self, rnd):
        return (int(math.exp(rnd.rand_double() * self._log_range)) - 1) % self.range

    def probability(self, value):
        return np.float32(math.log((value + 2.0) / (value + 1.0)) / self._log_range)


class _LearnedUnigramSampler:
    """Weights start at 1 per id; each true class seen adds 1 (TensorFlow's WeightedPicker)."""

    def __init__(self, range_max):
        self.range = range_max
        self._weights = np.ones(range_max, dtype=np.int64)
        self._cumsum = None

    def sample(self, rnd):
        if self._cumsum is None:
            self._cumsum = np.cumsum(self._weights)
        total = int(self._cumsum[-1])
        return int(np.searchsorted(self._cumsum, rnd.uniform(total), side="right"))

    def probability(self, value):
        return np.float32(np.float32(self._weights[value]) / np.float32(self._weights.sum()))

    def update(self, values):
        room = (2**31 - 1) - int(self._weights.sum())
        for v in values[:max(0, room)]:
            self._weights[int(v)] += 1
        self._cumsum = None


class _FixedUnigramSampler:
    """Fixed weights ``w ** distortion`` sampled with Walker's alias table, as TensorFlow builds it."""

    def __init__(self, node):
        a = node.attrs
        self.range = a["range_max"]
        vocab_file, unigrams = a.get("vocab_file", ""), list(a.get("unigrams") or [])
        if not vocab_file and not unigrams:
            raise _invalid("Must provide either vocab_file or unigrams.")
        if vocab_file and unigrams:
            raise _invalid("Must only provide one of vocab_file and unigrams.")
        shards, shard = a.get("num_shards", 1), a.get("shard", 0)
        distortion = np.float32(a.get("distortion", 1.0))
        weights = [np.float32(0.0) for i in range(a.get("num_reserved_ids", 0)) if i % shards == shard]
        word_id = len(weights)
        for w in self._raw_weights(vocab_file, unigrams):
            if word_id % shards == shard:
                weights.append(np.float32(np.power(np.float32(w), distortion)))
            word_id += 1
        if len(weights) != self.range:
            raise _invalid(f"range is {self.range} must be equal to weights size  {len(weights)}")
        self._weights = np.asarray(weights, dtype=np.float32)
        self._total = float(sum(float(w) for w in weights))
        self._prob, self._alt = self._alias_table(self._weights)

    @staticmethod
    def _raw_weights(vocab_file, unigrams):
        if not vocab_file:
            return unigrams
        from sparseflow._src.framework.file_io import GFile

        out = []
        with GFile(vocab_file, "r") as f:
            for line in f.read().splitlines():
                cols = line.split(",")
                try:
                    out.append(float(cols[-1]))
                except ValueError:
                    raise _invalid(f"Wrong vocabulary format at line: {line}") from None
        return out

    @staticmethod
    def _alias_table(weights):
        n = len(weights)
        total = 0.0
        for w in weights:
            total += float(w)
        pr = [float(w) * n / total for w in weights]
        alt = [-1] * n
        low = [i for i in range(n) if pr[i] < 1.0]
        high = [i for i in range(n) if pr[i] >= 1.0]
        while high and low:
            small, large = low.pop(), high.pop()
            alt[small] = large
            pr[large] = pr[large] - (1.0 - pr[small])
            (low if pr[large] < 1.0 else high).append(large)
        prob = [np.float32(p) for p in pr]
        for idx in high + low:
            prob[idx], alt[idx] = np.float32(1.0), idx
        return prob, alt

    def sample(self, rnd):
        r = np.float32(rnd.rand_float())
        idx = rnd.uniform(len(self._prob))
        return idx if r < self._prob[idx] else self._alt[idx]

    def probability(self, value):
        if value < 0 or value >= len(self._weights):
            return np.float32(0.0)
        return np.float32(float(self._weights[value]) / self._total)


def _expected_count(p, batch_size, num_tries):
    p = np.float32(p)
    if num_tries == batch_size:
        return np.float32(p * np.float32(batch_size))
    return np.float32(-np.expm1(np.float32(num_tries) * np.log1p(-p)))


def _sampler_kernel(make_sampler):
    def factory(node):
        num_true, num_sampled, unique = node.attrs["num_true"], node.attrs["num_sampled"], node.attrs["unique"]
        gen = philox.GuardedPhiloxRandom(node.attrs.get("seed", 0), node.attrs.get("seed2", 0))
        if "range_max" in node.attrs and node.attrs["range_max"] <= 0:
            raise _invalid("range_max must be positive")
        sampler = make_sampler(node)

        def compute(true_classes):
            true_classes = np.asarray(true_classes)
            if true_classes.ndim != 2:
                raise _invalid("true_classes must be a matrix")
            if true_classes.shape[1] != num_true:
                raise _invalid(f"true_classes must have num_true columns, expected: {true_classes.shape[1]} "
                               f"was: {num_true}")
            if unique and num_sampled > sampler.range:
                raise _invalid("Sampler's range is too small.")
            flat_true = true_classes.reshape(-1).tolist()
            for c in flat_true:
                if c < 0 or c >= sampler.range:
                    raise _invalid(f"`true_candidate` out of range [0, {sampler.range}), received {c}")
            rnd = _Stream(gen.reserve_samples32(2048 * num_sampled))
            sampled, tries = _draw(sampler, rnd, num_sampled, unique)
            sampled_counts = np.array([_expected_count(sampler.probability(v), num_sampled, tries) for v in sampled],
                                      dtype=np.float32)
            true_counts = np.array([_expected_count(sampler.probability(v), num_sampled, tries) for v in flat_true],
                                   dtype=np.float32).reshape(true_classes.shape)
            if hasattr(sampler, "update"):
                sampler.update(flat_true)
            return np.asarray(sampled, dtype=np.int64), true_counts, sampled_counts

        return compute

    return factory


def _draw(sampler, rnd, num_sampled, unique):
    if not unique:
        return [sampler.sample(rnd) for _ in range(num_sampled)], num_sampled
    used, picked, tries = set(), [], 0
    while len(picked) < num_sampled:
        tries += 1
        value = sampler.sample(rnd)
        if value not in used:
            used.add(value)
            picked.append(value)
    return picked, tries


def _all_candidates(node):
    num_true, num_sampled = node.attrs["num_true"], node.attrs["num_sampled"]

    def compute(true_classes):
        true_classes = np.asarray(true_classes)
        if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
            raise _invalid("true_classes must be a matrix with num_true columns")
        for c in true_classes.reshape(-1).tolist():  # the ids "sampled" are 0 .. num_sampled - 1
            if c < 0 or c >= num_sampled:
                raise _invalid(f"`true_candidate` out of range [0, {num_sampled}), received {c}")
        return (np.arange(num_sampled, dtype=np.int64), np.ones(true_classes.shape, dtype=np.float32),
                np.ones(num_sampled, dtype=np.float32))

    return compute


register_kernel("UniformCandidateSampler", stateful=True)(
    _sampler_kernel(lambda node: _UniformSampler(node.attrs["range_max"])))
register_kernel("LogUniformCandidateSampler", stateful=True)(
    _sampler_kernel(lambda node: _LogUniformSampler(node.attrs["range_max"])))
register_kernel("LearnedUnigramCandidateSampler", stateful=True)(
    _sampler_kernel(lambda node: _LearnedUnigramSampler(node.attrs["range_max"])))
register_kernel("ThreadUnsafeUnigramCandidateSampler", stateful=True)(
    _sampler_kernel(lambda node: _LearnedUnigramSampler(node.attrs["range_max"])))
register_kernel("FixedUnigramCandidateSampler", stateful=True)(_sampler_kernel(_FixedUnigramSampler))
register_kernel("AllCandidateSampler", stateful=True)(_all_candidates)


@register_kernel("ComputeAccidentalHits")
def _compute_accidental_hits(node):
    num_true = node.attrs["num_true"]

    def compute(true_classes, sampled):
        true_classes, sampled = np.asarray(true_classes), np.asarray(sampled)
        if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
            raise _invalid("true_candidates must be a batch_size * num_true matrix")
        if sampled.ndim != 1:
            raise _invalid("sampled_candidates must be a vector, which is typically an output from "
                           "CandidateSampler")
        position = {int(v): i for i, v in enumerate(sampled.tolist())}  # the last position of a repeated id
        indices, ids = [], []
        for row, values in enumerate(true_classes.tolist()):
            for v in values:
                if v in position:
                    indices.append(row)
                    ids.append(position[v])
        weights = np.full(len(ids), -np.finfo(np.float32).max, dtype=np.float32)
        return np.asarray(indices, dtype=np.int32), np.asarray(ids, dtype=np.int64), weights

    return compute
