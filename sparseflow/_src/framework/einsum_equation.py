"""Einsum equations (NumPy's notation) parsed once for the op, its kernel and its gradient.

Example:
    >>> parse_equation("...ij,jk", 2)
    (['.ij', 'jk'], '.ik')
"""

from __future__ import annotations

import re

__all__ = ["parse_equation"]

_TERM = re.compile(r"^(?:[a-zA-Z]|\.\.\.)*$")


def parse_equation(equation: str, num_inputs: int):
    """(input subscripts, output subscripts) of ``equation``: strings of letters, ``...`` kept as ``.``."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != num_inputs:
        raise ValueError(f"Einsum equation {equation!r} names {len(terms)} inputs, but {num_inputs} were given.")
    for t in terms + ([out] if arrow else []):
        if not _TERM.match(t) or t.count("...") > 1:
            raise ValueError(f"Invalid Einsum subscripts {t!r} in {equation!r}: letters and at most one '...'.")
    terms = [t.replace("...", ".") for t in terms]
    if arrow:
        out = out.replace("...", ".")
    else:
        letters = "".join(terms).replace(".", "")
        out = ("." if any("." in t for t in terms) else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    for c in out:
        if c != "." and not any(c in t for t in terms):
            raise ValueError(f"Einsum output subscript {c!r} of {equation!r} is not in any input.")
    return terms, out
