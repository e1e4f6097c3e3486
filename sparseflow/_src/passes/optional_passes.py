"""The passes after prune, in the order the Session runs them.

Each module owns one pass, a pure function ``(GraphIR, PassContext) -> GraphIR``; its name is
what ``ctx.log``, ``Session.explain`` and ``ctx.disabled`` (ConfigProto optimizer options) use.
To add a pass, insert one ``(name, fn)`` row at its place: rewrites of values (cse, folding,
simplification) come before ``place``; ``coalesce`` and ``fuse`` follow it (they merge only nodes
of one device), and ``partition`` stays last because it needs every node placed.

Example:
    >>> [name for name, _ in PASSES]
    ['cse', 'constant_fold', 'simplify', 'place', 'coalesce', 'remap', 'group_updates', 'fuse', 'partition']
"""

from __future__ import annotations

from sparseflow._src.passes.coalesce import coalesce
from sparseflow._src.passes.constant_fold import constant_fold
from sparseflow._src.passes.cse import cse
from sparseflow._src.passes.fuse import fuse
from sparseflow._src.passes.group_updates import group_updates
from sparseflow._src.passes.partition import partition
from sparseflow._src.passes.place import place
from sparseflow._src.passes.remap import remap
from sparseflow._src.passes.simplify import simplify

PASSES = [
    ("cse", cse),
    ("constant_fold", constant_fold),
    ("simplify", simplify),
    ("place", place),
    ("coalesce", coalesce),  # after placement: one request per device and step
    ("remap", remap),  # dense layers' MatMul+BiasAdd+Relu and ReluGrad+BiasAddGrad, before fuse takes a Relu
    ("group_updates", group_updates),  # dense optimizer updates sharing their scalars: one node
    ("fuse", fuse),  # after placement: never fuses across devices
    ("partition", partition),
]
