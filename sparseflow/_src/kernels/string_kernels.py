"""CPU kernels of the string ops (hash buckets, join/split, as_string/string_to_number, substr,
length, strip/lower/upper, regex, base64), matching TensorFlow's kernels' results and errors.

String tensors are object arrays of ``bytes``. Hashing runs in numba over packed strings
(farmhash.py, siphash.py); the other kernels are per-string Python loops.
"""

from __future__ import annotations

import base64
import binascii
import math
import re

import numpy as np

from sparseflow._src.framework import dtypes, errors
from sparseflow._src.kernels.farmhash import (
    fingerprint64_strings,
    hash_buckets,
    legacy_hash64_strings,
    pack_strings,
)
from sparseflow._src.kernels.registry import register_kernel
from sparseflow._src.kernels.siphash import siphash24_strings

_WS = b" \t\n\v\f\r"  # C's isspace in the "C" locale


def invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _failing(message: str):
    """A compute function that reports a bad attr when the op runs (TensorFlow's kernel
    construction error, which also surfaces on the first run)."""

    def compute(*_):
        raise invalid(message)

    return compute


def _strs(x) -> np.ndarray:
    return x if isinstance(x, np.ndarray) and x.dtype == object else np.asarray(x, dtype=object)


def _objects(items, shape) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _numeric(arr: np.ndarray):
    """0-d numeric results as NumPy scalars, the way Session.run returns them."""
    return arr[()] if arr.ndim == 0 else arr


def _dbg(shape) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _scalar_bytes(x, what: str) -> bytes:
    arr = _strs(x)
    if arr.ndim != 0:
        raise invalid(f"{what} must be a scalar, got shape: {_dbg(arr.shape)}")
    return arr.item()


def _map(fn, x):
    """``fn`` over every string of ``x``: an object array of the same shape."""
    arr = _strs(x)
    return _objects([fn(s) for s in arr.reshape(-1).tolist()], arr.shape)


# ---------------------------------------------------------------------------- hashing
def _bucket_kernel(hash_fn):
    def factory(node):
        n = int(node.attrs["num_buckets"])
        if n < 1:
            return _failing(f"num_buckets must be >= 1, got {n}")
        return lambda x: _numeric(hash_buckets(hash_fn(_strs(x)), n))

    return factory


register_kernel("StringToHashBucketFast")(_bucket_kernel(fingerprint64_strings))
register_kernel("StringToHashBucket")(_bucket_kernel(legacy_hash64_strings))


@register_kernel("StringToHashBucketStrong")
def _strong(node):
    key = list(node.attrs["key"])
    if len(key) != 2:
        return _failing("Key must have 2 elements")
    k0, k1 = (int(k) for k in key)
    return _bucket_kernel(lambda values: siphash24_strings(values, k0, k1))(node)


# ---------------------------------------------------------------------------- join
@register_kernel("StringJoin")
def _string_join(node):
    sep = node.attrs.get("separator", "").encode("utf-8")

    def compute(*inputs):
        arrs = [_strs(x) for x in inputs]
        shape = None
        for a in arrs:
            if a.ndim:
                if shape is None:
                    shape = a.shape
                elif a.shape != shape:
                    raise invalid(f"Input shapes do not match: {_dbg(shape)} vs. {_dbg(a.shape)}")
        if shape is None:
            return np.array(sep.join(a.item() for a in arrs), dtype=object)
        n = int(np.prod(shape))
        cols = [a.reshape(-1).tolist() if a.ndim else [a.item()] * n for a in arrs]
        return _objects([sep.join(parts) for parts in zip(*cols)], shape)

    return compute


def _reduction_axes(value, rank) -> list:
    out = []
    for a in np.asarray(value).reshape(-1).tolist():
        if a < -rank or a >= rank:  # TensorFlow's ReduceJoin reports OUT_OF_RANGE here
            raise errors.OutOfRangeError(None, None,
                                         f"Invalid reduction dimension {a} for input with {rank} dimension(s)")
        a = a + rank if a < 0 else a
        if a in out:
            raise invalid(f"Duplicate reduction dimension {a}")
        out.append(a)
    return out


@register_kernel("ReduceJoin")
def _reduce_join(node):
    sep = node.attrs.get("separator", "").encode("utf-8")
    keep_dims = bool(node.attrs.get("keep_dims", False))

    def compute(x, reduction_indices):
        x = _strs(x)
        axes = _reduction_axes(reduction_indices, x.ndim)
        kept = [i for i in range(x.ndim) if i not in axes]
        # The first listed axis varies fastest in each joined run.
        y = x.transpose(kept + axes[::-1])
        kept_shape = tuple(x.shape[i] for i in kept)
        m = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
        rows = y.reshape(int(np.prod(kept_shape, dtype=np.int64)), m).tolist()
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keep_dims else kept_shape
        return _objects([sep.join(r) for r in rows], out_shape)

    return compute


# ---------------------------------------------------------------------------- split
def _sparse_tokens(parts: list, batch: int):
    counts = np.fromiter(map(len, parts), np.int64, len(parts))
    total = int(counts.sum())
    rows = np.repeat(np.arange(batch, dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    cols = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
    values = _objects([t for p in parts for t in p], (total,))
    shape = np.array([batch, int(counts.max()) if batch else 0], np.int64)
    return np.stack([rows, cols], axis=1).reshape(total, 2), values, shape


def split_any_char(s: bytes, delimiter: bytes, skip_empty: bool) -> list:
    """TensorFlow's StringSplit of one string: at any byte of ``delimiter``; "" splits into bytes."""
    if not s:
        return []
    if not delimiter:
        return [s[i:i + 1] for i in range(len(s))]
    if len(delimiter) > 1:
        s = s.translate(bytes.maketrans(delimiter, delimiter[:1] * len(delimiter)))
    parts = s.split(delimiter[:1])
    return [p for p in parts if p] if skip_empty else parts


def split_v2(s: bytes, sep: bytes, maxsplit: int) -> list:
    """TensorFlow's StringSplitV2 of one string: Python's ``str.split`` except that reaching
    ``maxsplit`` always appends the (possibly empty) rest, and ``maxsplit=0`` keeps ``s`` whole."""
    if maxsplit == 0:
        return [s]
    if sep:
        return s.split(sep, maxsplit if maxsplit > 0 else -1)
    if maxsplit < 0:
        return s.split()
    parts = s.split(None, maxsplit)
    if len(parts) == maxsplit:
        parts.append(b"")
    return parts


def _split_kernel(split_one, sep_name):
    def compute(x, sep):
        x = _strs(x)
        if x.ndim != 1:
            raise invalid(f"input must be a vector, got shape: {_dbg(x.shape)}")
        d = _scalar_bytes(sep, sep_name)
        return _sparse_tokens([split_one(s, d) for s in x.tolist()], x.shape[0])

    return compute


@register_kernel("StringSplit")
def _string_split(node):
    skip = bool(node.attrs.get("skip_empty", True))
    return _split_kernel(lambda s, d: split_any_char(s, d, skip), "delimiter")


@register_kernel("StringSplitV2")
def _string_split_v2(node):
    maxsplit = int(node.attrs.get("maxsplit", -1))
    return _split_kernel(lambda s, d: split_v2(s, d, maxsplit), "sep")


# ---------------------------------------------------------------------------- as_string
def _format_float(fmt: str, v: float) -> str:
    if math.isnan(v) and math.copysign(1.0, v) < 0:  # C prints the sign of a negative NaN
        return (fmt % -v).replace("nan", "-nan", 1)
    return fmt % v


@register_kernel("AsString")
def _as_string(node):
    a = node.attrs
    dt = dtypes.as_dtype(a["T"])
    precision, width, fill = int(a.get("precision", -1)), int(a.get("width", -1)), a.get("fill", "")
    scientific, shortest = bool(a.get("scientific", False)), bool(a.get("shortest", False))
    is_float = dt.is_floating or dt.is_complex
    if dt != dtypes.string and not is_float:
        if scientific or shortest:
            return _failing(f"scientific and shortest format not supported for datatype {dt.name}")
        if precision >= 0:
            return _failing(f"precision not supported for datatype {dt.name}")
    if len(fill) > 1:
        return _failing("Fill string must be one or fewer characters")
    if scientific and shortest:
        return _failing("Cannot select both scientific and shortest notation")
    if fill and fill not in " +-0#":
        return _failing(f'Fill argument not supported: "{fill}"')
    if dt == dtypes.bool:
        return lambda x: _objects([b"true" if v else b"false" for v in np.asarray(x).reshape(-1).tolist()],
                                  np.shape(x))
    width = max(width, 0)
    if dt == dtypes.string:
        if width == 0:
            return lambda x: x
        bfmt = ("%" + fill + str(width) + (f".{precision}" if precision >= 0 else "") + "s").encode()
        return lambda x: _map(lambda s: bfmt % s, x)
    conv = ("g" if shortest else "e" if scientific else "f") if is_float else "d"
    fmt = "%" + fill + (str(width) if width else "") + (f".{precision}" if precision >= 0 else "") + conv

    def compute(x):
        arr = np.asarray(x)
        if not is_float:
            if fmt == "%d":  # the common case: NumPy's own decimal conversion
                return arr.astype(np.bytes_).astype(object)
            return _objects([(fmt % v).encode() for v in arr.reshape(-1).tolist()], arr.shape)
        if dt.is_complex:
            flat = arr.reshape(-1).tolist()
            return _objects([f"({_format_float(fmt, v.real)},{_format_float(fmt, v.imag)})".encode()
                             for v in flat], arr.shape)
        flat = arr.astype(np.float64).reshape(-1).tolist()
        return _objects([_format_float(fmt, v).encode() for v in flat], arr.shape)

    return compute


# ---------------------------------------------------------------------------- string_to_number
_FLOAT_RE = re.compile(rb"[ \t\n\v\f\r]*[+-]?(?:(0[xX][0-9a-fA-F]+)|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
                       rb"|[iI][nN][fF]|[nN][aA][nN])[ \t\n\v\f\r]*")
_INT_RE = re.compile(rb"[ \t\n\v\f\r]*(-?\d+)[ \t\n\v\f\r]*")
_UINT_RE = re.compile(rb"[ \t\n\v\f\r]*(\d+)[ \t\n\v\f\r]*")
_MAX_FLOAT_TEXT = 32  # TensorFlow's safe_strtof/strtod refuse strings of kFastToBufferSize bytes or more


def _parse_float(s: bytes):
    if 0 < len(s) < _MAX_FLOAT_TEXT and not s.strip(_WS):
        return 0.0  # double-conversion reads a blank (non-empty) string as 0
    m = _FLOAT_RE.fullmatch(s) if len(s) < _MAX_FLOAT_TEXT else None
    if m is None:
        return None
    if m.group(1):
        t = s.strip(_WS)
        return -float(int(m.group(1), 16)) if t[:1] == b"-" else float(int(m.group(1), 16))
    return float(s.strip(_WS))


def _int_parser(regex, lo, hi):
    def parse(s: bytes):
        m = regex.fullmatch(s)
        if m is None:
            return None
        v = int(m.group(1))
        return v if lo <= v <= hi else None

    return parse


@register_kernel("StringToNumber")
def _string_to_number(node):
    dt = dtypes.as_dtype(node.attrs.get("out_type", dtypes.float32))
    np_t = dt.as_numpy_dtype
    if dt.is_floating:
        parse = _parse_float
    else:
        info = np.iinfo(np_t)
        parse = _int_parser(_UINT_RE if dt.is_unsigned else _INT_RE, int(info.min), int(info.max))

    def compute(x):
        arr = _strs(x)
        out = []
        for s in arr.reshape(-1).tolist():
            v = parse(s)
            if v is None:
                raise invalid("StringToNumberOp could not correctly convert string: "
                              + s.decode("utf-8", "backslashreplace"))
            out.append(v)
        with np.errstate(over="ignore"):  # out-of-range floats become +-inf, as in TensorFlow
            return _numeric(np.array(out, dtype=np_t).reshape(arr.shape))

    return compute


# ---------------------------------------------------------------------------- length and substr
@register_kernel("StringLength")
def _string_length(node):
    utf8 = node.attrs.get("unit", "BYTE") == "UTF8_CHAR"

    def compute(x):
        arr = _strs(x)
        buf, offsets = pack_strings(arr)
        if not utf8:
            return _numeric(np.diff(offsets).astype(np.int32).reshape(arr.shape))
        starts = np.concatenate([[0], np.cumsum((buf & 0xC0) != 0x80)])  # non-continuation bytes
        counts = starts[np.minimum(offsets, buf.shape[0])]
        return _numeric(np.diff(counts).astype(np.int32).reshape(arr.shape))

    return compute


def _char_bounds(s: bytes) -> list:
    """Byte offsets of UTF-8 character starts (continuation bytes never start one, except at 0)."""
    return [i for i, b in enumerate(s) if i == 0 or (b & 0xC0) != 0x80] + [len(s)]


def substr_bytes(s: bytes, pos: int, length: int):
    n = len(s)
    p = pos + n if pos < 0 else pos
    if not 0 <= p <= n:
        return None
    return s[p:] if length < 0 else s[p:p + length]


def substr_utf8(s: bytes, pos: int, length: int):
    bounds = _char_bounds(s)
    nchars = len(bounds) - 1
    if pos >= 0:
        if pos > nchars:
            return None
        end = pos if length < 0 else min(pos + length, nchars)
        return s[bounds[pos]:bounds[end]]
    skip = max(-pos - length, 0)  # characters left out at the end
    start = nchars + pos
    if skip > nchars or start < 0 or -pos < skip:  # a negative len with a negative pos is an error too
        return None
    return s[bounds[start]:bounds[nchars - skip]]


@register_kernel("Substr")
def _substr(node):
    one = substr_utf8 if node.attrs.get("unit", "BYTE") == "UTF8_CHAR" else substr_bytes

    def compute(x, pos, length):
        x, pos, length = _strs(x), np.asarray(pos), np.asarray(length)
        if pos.shape != length.shape:
            raise invalid(f"pos and len should have the same shape, got: {_dbg(pos.shape)} vs. "
                          f"{_dbg(length.shape)}")
        try:
            xb, pb, lb = np.broadcast_arrays(x, pos, length)
        except ValueError:
            raise invalid(f"Incompatible shapes: {_dbg(x.shape)} vs. {_dbg(pos.shape)}") from None
        out = []
        for i, (s, p, n) in enumerate(zip(xb.reshape(-1).tolist(), pb.reshape(-1).tolist(),
                                          lb.reshape(-1).tolist())):
            r = one(s, p, n)
            if r is None:
                raise invalid(f"pos {p} out of range for string b'{s.decode('utf-8', 'backslashreplace')}' "
                              f"at index {i}")
            out.append(r)
        return _objects(out, xb.shape)

    return compute


# ---------------------------------------------------------------------------- case, strip, base64
register_kernel("StringStrip")(lambda node: lambda x: _map(lambda s: s.strip(_WS), x))


def _case_kernel(ascii_fn, unicode_fn):
    def factory(node):
        enc = node.attrs.get("encoding", "")
        if enc == "":
            return lambda x: _map(ascii_fn, x)
        if enc.lower().replace("-", "") != "utf8":
            return _failing(f"Unsupported encoding: {enc}")
        return lambda x: _map(lambda s: unicode_fn(s.decode("utf-8")).encode("utf-8"), x)

    return factory


register_kernel("StringLower")(_case_kernel(bytes.lower, str.lower))
register_kernel("StringUpper")(_case_kernel(bytes.upper, str.upper))


@register_kernel("EncodeBase64")
def _encode_base64(node):
    pad = bool(node.attrs.get("pad", False))
    return lambda x: _map(lambda s: base64.urlsafe_b64encode(s) if pad else base64.urlsafe_b64encode(s).rstrip(b"="),
                          x)


def _b64decode(s: bytes) -> bytes:
    try:
        return base64.b64decode(s.rstrip(b"=") + b"=" * (-len(s.rstrip(b"=")) % 4), altchars=b"-_",
                                validate=True)
    except (binascii.Error, ValueError):
        raise invalid("Invalid character found in base64.") from None


register_kernel("DecodeBase64")(lambda node: lambda x: _map(_b64decode, x))


# ---------------------------------------------------------------------------- regular expressions
def _compile(pattern: bytes):
    try:
        return re.compile(pattern)
    except re.error as e:
        raise invalid(f"Invalid pattern: {pattern.decode('utf-8', 'backslashreplace')}, error: {e}") from None


def rewrite_fn(regex, rewrite: bytes):
    """RE2's rewrite string (``\\0``-``\\9`` groups, ``\\\\`` a backslash) as a re.sub function."""
    parts, lit, i = [], bytearray(), 0
    while i < len(rewrite):
        c = rewrite[i:i + 1]
        if c != b"\\":
            lit += c
            i += 1
            continue
        nxt = rewrite[i + 1:i + 2]
        if nxt == b"\\":
            lit += b"\\"
        elif nxt.isdigit() and int(nxt) <= regex.groups:
            parts.append(bytes(lit))
            parts.append(int(nxt))
            lit = bytearray()
        else:
            raise invalid(f"Invalid rewrite pattern: {rewrite.decode('utf-8', 'backslashreplace')}")
        i += 2
    parts.append(bytes(lit))
    return lambda m: b"".join(p if isinstance(p, bytes) else (m.group(p) or b"") for p in parts)


def _replacer(pattern: bytes, rewrite: bytes, replace_global: bool):
    regex = _compile(pattern)
    fn = rewrite_fn(regex, rewrite)
    count = 0 if replace_global else 1
    return lambda s: regex.sub(fn, s, count=count)


@register_kernel("RegexReplace")
def _regex_replace(node):
    glob = bool(node.attrs.get("replace_global", True))

    def compute(x, pattern, rewrite):
        return _map(_replacer(_scalar_bytes(pattern, "Pattern"), _scalar_bytes(rewrite, "Rewrite"), glob), x)

    return compute


@register_kernel("StaticRegexReplace")
def _static_regex_replace(node):
    a = node.attrs
    try:
        sub = _replacer(a["pattern"].encode(), a["rewrite"].encode(), bool(a.get("replace_global", True)))
    except errors.InvalidArgumentError as e:
        return _failing(e.message)
    return lambda x: _map(sub, x)


def _full_match(regex, x):
    arr = _strs(x)
    return _numeric(np.array([regex.fullmatch(s) is not None for s in arr.reshape(-1).tolist()],
                             dtype=bool).reshape(arr.shape))


register_kernel("RegexFullMatch")(
    lambda node: lambda x, pattern: _full_match(_compile(_scalar_bytes(pattern, "Pattern")), x))


@register_kernel("StaticRegexFullMatch")
def _static_full_match(node):
    try:
        regex = _compile(node.attrs["pattern"].encode())
    except errors.InvalidArgumentError as e:
        return _failing(e.message)
    return lambda x: _full_match(regex, x)
