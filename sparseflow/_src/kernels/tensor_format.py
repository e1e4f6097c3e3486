"""Tensors as text, the way TensorFlow's kernels print them (``Tensor::SummarizeValue``).

- ``summarize_value(a, n)``: Print's and Assert's form: at most ``n`` elements in row-major order,
  rows in brackets without separators (``[1 2][3...]...``), strings unquoted.
- ``summarize_value(a, n, print_v2=True)``: tf.print's form, like NumPy: the first and last ``n``
  entries of each dimension around ``...``, rows on new lines, strings quoted. ``n < 0``: all.

Floats print as C's ``%.6g`` (``%.15g`` for float64), with more digits only when needed to read the
same value back; booleans as 1/0.

Example:
    >>> import numpy as np
    >>> summarize_value(np.array([[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32), 4)
    '[1.5 2 3][4...]...'
    >>> print(summarize_value(np.arange(12).reshape(3, 4), 1, print_v2=True))
    [[0 ... 3]
     ...
     [8 ... 11]]
"""

from __future__ import annotations

import numpy as np

__all__ = ["summarize_value", "format_element"]

_ESCAPES = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}


def _escape(b: bytes) -> str:
    """C-style escapes for control characters, quotes and backslashes; UTF-8 text kept, invalid
    bytes as ``\\xNN``."""
    out = []
    for ch in b.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # a byte that is not UTF-8
            out.append(f"\\x{o - 0xDC00:02x}")
        else:
            out.append(_ESCAPES[o] if o in _ESCAPES else f"\\x{o:02x}" if o < 0x20 or o == 0x7F else ch)
    return "".join(out)


def _float_text(v, digits: int, more: int, dtype) -> str:
    s = f"{float(v):.{digits}g}"
    if np.isfinite(v) and dtype(float(s)) != v:
        s = f"{float(v):.{more}g}"
    if s in ("inf", "-inf", "nan", "-nan"):
        return {"inf": "inf", "-inf": "-inf"}.get(s, "nan")
    return s


def format_element(v, print_v2: bool = False) -> str:
    """One element as TensorFlow prints it."""
    if isinstance(v, (bytes, str)):
        b = v.encode() if isinstance(v, str) else v
        return f'"{_escape(b)}"' if print_v2 else _escape(b)
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, np.float64):
        return _float_text(v, 15, 17, np.float64)
    if isinstance(v, (np.floating, float)):
        return _float_text(np.float32(v), 6, 9, np.float32)
    if isinstance(v, (np.complexfloating, complex)):
        return f"({format_element(np.real(v), print_v2)},{format_element(np.imag(v), print_v2)})"
    return str(int(v))


def _v1(flat, shape, limit) -> str:
    out: list[str] = []
    index = [0]

    def dim(d):
        if index[0] >= limit:
            return
        if d == len(shape) - 1:
            for i in range(shape[d]):
                if index[0] >= limit:
                    if d != 0:
                        out.append("...")
                    return
                if i > 0:
                    out.append(" ")
                out.append(format_element(flat[index[0]]))
                index[0] += 1
            return
        for _ in range(shape[d]):
            opened = index[0] < limit
            if opened:
                out.append("[")
            dim(d + 1)
            if index[0] < limit or opened:
                out.append("]")

    dim(0)
    if flat.size > limit:
        out.append("...")
    return "".join(out)


def _v2(a, ends) -> str:
    nd = a.ndim

    def spacing(d):
        return " " if d == nd - 1 else "\n" * (nd - d - 1) + " " * (d + 1)

    def dim(d, sub):
        if d == nd:
            return format_element(sub[()] if isinstance(sub, (np.ndarray, np.generic)) else sub, True)
        n = sub.shape[0]
        parts = [dim(d + 1, sub[i]) for i in range(min(ends, n))]
        if n > 2 * ends:
            parts.append("...")
        parts += [dim(d + 1, sub[i]) for i in range(max(ends, n - ends), n)]
        return "[" + spacing(d).join(parts) + "]"

    return dim(0, a)


def summarize_value(value, max_entries: int, print_v2: bool = False) -> str:
    """``value`` as text (see the module docstring)."""
    a = np.asarray(value)
    if a.dtype.kind in "fc" and a.dtype.itemsize < 4:
        a = a.astype(np.float32)
    n = a.size if max_entries < 0 else int(max_entries)
    limit = min(n, a.size)
    if a.ndim == 0:
        return format_element(a[()], print_v2) if limit > 0 else ""
    if a.size == 0 and a.dtype == np.bool_:  # TensorFlow's text of an empty bool tensor is empty, not "[]"
        return ""
    if print_v2:
        return _v2(a, n)
    return _v1(a.reshape(-1), a.shape, limit)
