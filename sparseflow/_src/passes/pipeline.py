"""The named graph pipeline a Session runs for each new signature.

``prune -> cse -> constant_fold -> simplify -> place -> partition``; each pass is a pure
function ``(GraphIR, PassContext) -> GraphIR`` and shows in ``ctx.log`` and ``Session.explain``.

Example:
    >>> [name for name, _ in default_pipeline()][:2]
    ['prune', 'cse']
"""

from __future__ import annotations

import time

from sparseflow._src.framework.ir import GraphIR
from sparseflow._src.passes.context import PassContext
from sparseflow._src.passes.prune import prune


def default_pipeline() -> list[tuple[str, object]]:
    from sparseflow._src.passes import optional_passes

    return [("prune", prune)] + optional_passes.PASSES


def run_pipeline(ir: GraphIR, ctx: PassContext, passes=None, verify: bool = False) -> GraphIR:
    for name, fn in passes or default_pipeline():
        if name in ctx.disabled:
            continue
        t0 = time.perf_counter()
        before = len(ir)
        try:
            ir = fn(ir, ctx)
        except MemoryError as e:
            from sparseflow._src.framework import errors

            raise errors.ResourceExhaustedError(None, None, f"Out of memory in graph pass '{name}' (a constant or "
                                                            f"folded value is too large): {e}") from None
        except OverflowError as e:
            from sparseflow._src.framework import errors

            raise errors.InvalidArgumentError(None, None, f"Graph pass '{name}': a value does not fit its dtype "
                                                          f"(e.g. a dimension beyond int32 in an int32 shape): "
                                                          f"{e}") from None
        if verify:
            ir.topological_order()
        ctx.log.append((name, before, len(ir), (time.perf_counter() - t0) * 1e3))
    return ir
