"""One stable topological sort for every graph form (GraphIR, plans, GraphDef import).

Example:
    >>> stable_toposort(3, lambda i: {2: [0], 0: [1]}.get(i, []))
    [1, 0, 2]
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable


class CycleError(ValueError):
    """The graph has a cycle; ``stuck`` holds the indices that could not be ordered."""

    def __init__(self, message: str, stuck: list[int]):
        super().__init__(message)
        self.stuck = stuck


def stable_toposort(count: int, sources_of: Callable[[int], Iterable[int]],
                    rank: Callable[[int], int] | None = None) -> list[int]:
    """Indices ``0..count-1`` with each after its sources; among ready ones the smallest first,
    so an already ordered graph keeps its order (with ``rank``: the lowest ``(rank(i), i)`` first).
    Sources outside the range are ignored."""
    indeg = [0] * count
    users: list[list[int]] = [[] for _ in range(count)]
    for i in range(count):
        srcs = {s for s in sources_of(i) if 0 <= s < count and s != i} if count else set()
        indeg[i] = len(srcs)
        for s in srcs:
            users[s].append(i)
    key = (lambda i: (rank(i), i)) if rank is not None else (lambda i: i)
    ready = [key(i) for i, d in enumerate(indeg) if d == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        i = k[1] if rank is not None else k
        order.append(i)
        for u in users[i]:
            indeg[u] -= 1
            if indeg[u] == 0:
                heapq.heappush(ready, key(u))
    if len(order) != count:
        stuck = [i for i, d in enumerate(indeg) if d > 0]
        raise CycleError(f"cycle through {len(stuck)} nodes", stuck)
    return order
