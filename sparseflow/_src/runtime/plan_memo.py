"""Steps of a plan whose values depend only on the shapes of some tensors: kept from the last run
with the same shapes instead of run again.

A training step's gradient reads many shapes (``Shape``, ``ShapeN``, ``Size``, ``Rank``) and
computes from them with small ops (``BroadcastGradientArgs``, ``Prod``, ``FloorDiv``,
``ConcatOffset``, ``StridedSlice``, ...): W1 has ~45 such steps, each a kernel call of a few
microseconds on one thread, giving the same values every step of a fixed batch size. Such a step
is *shape-only* when its op is a shape reader, or one of :data:`PURE_OPS` whose inputs are all
constants or shape-only steps. The plan keeps, per shape-only step, its last value with the shapes
it came from (the shapes read by the shape readers it depends on) and runs the kernel only when
those shapes differ. Each entry is one tuple ``(shapes, value)``, replaced in one assignment, so
runs of one plan on several threads at once (with different batch sizes) never mix up values.

The values are exactly what the kernels return for those shapes: the ops are deterministic
functions of their inputs. Steps with control inputs, a step context or a non-array input (no
``shape``) are never kept. ``SPARSEFLOW_PLAN_SHAPE_MEMO=0`` turns it off.

    >>> import numpy as np
    >>> cache = [(NEVER, None)]
    >>> key = (shape_key(np.zeros((2, 3))),)
    >>> remember(cache, 0, key, "value")
    'value'
    >>> cache[0][0] == (shape_key(np.ones((2, 3))),), cache[0][0] == (shape_key(np.ones((4, 3))),)
    (True, False)
"""

from __future__ import annotations

import os

SHAPE_READERS = frozenset({"Shape", "ShapeN", "Size", "Rank"})
# Deterministic, stateless ops whose value is a function of their inputs only (small shape arithmetic).
PURE_OPS = frozenset({
    "BroadcastGradientArgs", "Prod", "Sum", "Max", "Min", "FloorDiv", "FloorMod", "RealDiv", "Maximum", "Minimum",
    "Mul", "Add", "AddV2", "Sub", "Neg", "Cast", "ExpandDims", "Squeeze", "Reshape", "StridedSlice", "Slice",
    "ConcatV2", "ConcatOffset", "Pack", "GatherV2", "Identity",
})
CONST_OPS = frozenset({"Const", "HostConst"})

ENABLED = os.environ.get("SPARSEFLOW_PLAN_SHAPE_MEMO", "1").strip().lower() not in ("0", "false", "no", "off")


class _Never:
    """The key of an empty entry: equal to nothing."""

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__


NEVER = _Never()


def shape_only_steps(steps, after: dict[int, set[int]]) -> dict[int, tuple[int, ...]]:
    """``{step: the shape readers (steps) its value depends on}`` for the shape-only steps."""
    consts: set[int] = set()
    sources: dict[int, tuple[int, ...]] = {}
    for st in steps:
        op = st.node.op
        if op in CONST_OPS and not st.inputs:
            consts.add(st.index)
            continue
        if st.needs_context or st.index in after or st.num_outputs < 1 or any(st.deref):
            continue
        if op in SHAPE_READERS and st.inputs:
            sources[st.index] = (st.index,)
        elif op in PURE_OPS and st.inputs and all(p in consts or p in sources for p, _ in st.inputs):
            deps = sorted({s for p, _ in st.inputs for s in sources.get(p, ())})
            if deps:
                sources[st.index] = tuple(deps)
    return sources


def shape_key(x):
    """The shape of an array input (a tuple), or a new object equal to nothing (never kept)."""
    shape = getattr(x, "shape", None)
    return shape if type(shape) is tuple else object()


def remember(cache: list, index: int, key: tuple, value):
    """Stores ``value`` computed for ``key`` as step ``index``'s entry; returns it."""
    cache[index] = (key, value)
    return value
