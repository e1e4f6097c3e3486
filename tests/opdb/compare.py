"""Compares sparseflow's records of an entry with TensorFlow's (values, dtypes, shapes, errors, gradients).

Each function returns a list of human-readable problems (empty when everything agrees); the test
prints them all at once, so one run shows every difference of an entry.
"""

from __future__ import annotations

import numpy as np

from tests.opdb.values import decode

# (rtol, atol) of forward values per dtype; gradients get GRAD_FACTOR times more.
TOLERANCE = {"float16": (2e-3, 2e-3), "float32": (2e-6, 1e-6), "float64": (1e-12, 1e-13),
             "complex64": (2e-6, 1e-6), "complex128": (1e-12, 1e-13)}
GRAD_FACTOR = 10.0
# TensorFlow errors that leave nothing to compare: no CPU kernel for the dtype, or TensorFlow aborted
# (a failed CHECK) or hung on the input (tools/record_opdb.py narrows these down to one record).
NOTHING_TO_COMPARE = ("NoKernel", "Crash", "Timeout")


def _close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str:
    """'' when equal within tolerance (NaN where NaN, infinities exact), else what differs."""
    if got.dtype.kind in "fc":
        g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64).reshape(-1)
        w = want.astype(g.dtype).reshape(-1)
        parts = [(g.real, w.real), (g.imag, w.imag)] if g.dtype.kind == "c" else [(g, w)]
        for gp, wp in parts:
            nan_g, nan_w = np.isnan(gp), np.isnan(wp)
            bad = nan_g != nan_w
            inf = np.isinf(wp) | np.isinf(gp)
            bad |= inf & ~nan_g & ~nan_w & (gp != wp)
            fin = ~(nan_g | nan_w | inf)
            with np.errstate(over="ignore", invalid="ignore"):
                bad[fin] |= np.abs(gp[fin] - wp[fin]) > atol + rtol * np.abs(wp[fin])
            if bad.any():
                i = int(np.argmax(bad))
                return f"{int(bad.sum())} of {bad.size} values differ, first at flat index {i}: got {gp[i]!r}, " \
                       f"TensorFlow {wp[i]!r}"
        return ""
    g, w = got.reshape(-1), want.reshape(-1)
    bad = np.array([a != b for a, b in zip(g, w)], dtype=bool)
    if bad.any():
        i = int(np.argmax(bad))
        return f"{int(bad.sum())} of {bad.size} values differ, first at flat index {i}: got {g[i]!r}, " \
               f"TensorFlow {w[i]!r}"
    return ""


def compatible(static, shape) -> bool:
    """Whether a static shape (None: unknown rank; None dims unknown) admits the runtime ``shape``."""
    if static is None:
        return True
    return len(static) == len(shape) and all(s is None or s == d for s, d in zip(static, shape))


def knows_as_much(mine, theirs) -> bool:
    """Whether static shape ``mine`` agrees with ``theirs`` and knows every rank and dimension it knows
    (knowing more is fine: that it is right is checked against the runtime shape)."""
    if theirs is None:
        return True
    if mine is None or len(mine) != len(theirs):
        return False
    return all(t is None or m == t for m, t in zip(mine, theirs))


def tolerance(dtype: str, rtol_override, grad: bool):
    rtol, atol = TOLERANCE.get(dtype, (0.0, 0.0))
    if isinstance(rtol_override, dict):
        rtol_override = rtol_override.get(dtype)
    if rtol_override is not None:
        rtol, atol = rtol_override, max(atol, rtol_override * 0.1)
    if grad:
        rtol, atol = rtol * GRAD_FACTOR, atol * GRAD_FACTOR
    return rtol, atol


def self_consistency(key: str, rec: dict) -> list[str]:
    """Static shapes that claim to know something must agree with the runtime shape."""
    out = []
    for k, o in enumerate(rec.get("out", [])):
        shape = o["value"]["shape"]
        if not compatible(o["static"], shape):
            out.append(f"{key}: output {k}: static shape {o['static']} but the runtime shape is {shape}")
        if o["value"]["dtype"] != _np_name(o["dtype"]):
            out.append(f"{key}: output {k}: declared dtype {o['dtype']} but the kernel returned "
                       f"{o['value']['dtype']}")
    return out


def _np_name(dtype: str) -> str:
    return {"string": "string"}.get(dtype, dtype)


def compare_record(entry, key: str, got: dict, want: dict, check_static: bool) -> list[str]:
    out = []
    if want.get("fp") != got.get("fp"):
        return [f"{key}: the fixture was recorded from other inputs (re-run tools/record_opdb.py)"]
    w_err, g_err = want.get("error"), got.get("error")
    if w_err and w_err[1] in NOTHING_TO_COMPARE:
        return out
    if w_err or g_err:
        if not (w_err and g_err):
            what = f"raised {g_err[1]} at {g_err[0]} time" if g_err else "returned values"
            out.append(f"{key}: sparseflow {what}, TensorFlow " +
                       (f"raised {w_err[1]} at {w_err[0]} time" if w_err else "returned values"))
        elif w_err[1] != g_err[1] or w_err[0] != g_err[0]:
            out.append(f"{key}: sparseflow raised {g_err[1]} at {g_err[0]} time, TensorFlow {w_err[1]} at "
                       f"{w_err[0]} time")
        return out
    g_outs, w_outs = got["out"], want["out"]
    if len(g_outs) != len(w_outs):
        return [f"{key}: {len(g_outs)} outputs, TensorFlow {len(w_outs)}"]
    for k, (g, w) in enumerate(zip(g_outs, w_outs)):
        where = f"{key}: output {k}"
        if g["dtype"] != w["dtype"]:
            out.append(f"{where}: dtype {g['dtype']}, TensorFlow {w['dtype']}")
            continue
        if g["value"]["shape"] != w["value"]["shape"]:
            out.append(f"{where}: shape {g['value']['shape']}, TensorFlow {w['value']['shape']}")
            continue
        if check_static and not knows_as_much(g["static"], w["static"]):
            out.append(f"{where}: static shape {g['static']}, TensorFlow's {w['static']}")
        rtol, atol = tolerance(w["dtype"], entry.rtol, False)
        gv, wv = decode(g["value"]), decode(w["value"])
        if entry.canonical is not None:  # encodings that legitimately differ byte for byte (PNG): compare content
            gv, wv = entry.canonical(gv), entry.canonical(wv)
        msg = _close(gv, wv, rtol, atol)
        if msg:
            out.append(f"{where}: {msg}")
    out.extend(_compare_grads(entry, key, got.get("grad"), want.get("grad")))
    return out


def _compare_grads(entry, key, got, want) -> list[str]:
    if got is None and want is None:
        return []
    if got is None or want is None:
        return [f"{key}: gradient {'checked' if got is not None else 'not checked'} here, "
                f"{'recorded' if want is not None else 'not recorded'} from TensorFlow"]
    if isinstance(want, dict) or isinstance(got, dict):
        w = want.get("error") if isinstance(want, dict) else None
        g = got.get("error") if isinstance(got, dict) else None
        if w == ["build", "LookupError"] and isinstance(got, list):
            # TensorFlow has no gradient for the op: here it is NotDifferentiable (None) or has one (checked
            # by finite differences where the entry asks for it).
            return []
        if w != g:
            return [f"{key}: gradient " + (f"raised {g[1]} at {g[0]} time" if g else "returned values") +
                    ", TensorFlow's " + (f"raised {w[1]} at {w[0]} time" if w else "returned values")]
        return []
    if len(got) != len(want):
        return [f"{key}: {len(got)} input gradients, TensorFlow {len(want)}"]
    out = []
    for i, (g, w) in enumerate(zip(got, want)):
        if (g is None) != (w is None):
            out.append(f"{key}: gradient of input {i} is {'None' if g is None else 'a value'}, "
                       f"TensorFlow's {'None' if w is None else 'a value'}")
            continue
        if g is None:
            continue
        if g["shape"] != w["shape"]:
            out.append(f"{key}: gradient of input {i} has shape {g['shape']}, TensorFlow's {w['shape']}")
            continue
        rtol, atol = tolerance(w["dtype"], entry.grad_rtol, True)
        msg = _close(decode(g), decode(w), rtol, atol)
        if msg:
            out.append(f"{key}: gradient of input {i}: {msg}")
    return out
