"""What every pass may read: the run signature, the devices, the options, and a pass log.

Example:
    >>> PassContext(feeds=["x:0"], fetches=["y:0"]).devices
    ['/job:localhost/replica:0/task:0/device:CPU:0']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

LOCAL_CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


@dataclasses.dataclass
class PassContext:
    feeds: list[str] = dataclasses.field(default_factory=list)  # tensor names, in feed order
    fetches: list[str] = dataclasses.field(default_factory=list)  # tensor names, in fetch order
    targets: list[str] = dataclasses.field(default_factory=list)  # op names
    devices: list[str] = dataclasses.field(default_factory=lambda: [LOCAL_CPU0])  # full names
    client_device: str = LOCAL_CPU0  # where feeds enter and fetches leave
    allow_soft_placement: bool = True
    # Soft placement may also move a node to another job/task (a local session running a graph built
    # for a cluster); on a cluster it only relaxes the device type and index.
    soft_placement_across_tasks: bool = True
    log_device_placement: bool = False
    # Evaluates a GraphIR subgraph on the CPU: fn(ir, fetch tensor names) -> list of arrays.
    # Injected by the runtime so that passes never import kernels.
    evaluate: Callable | None = None
    # Names of passes to skip (e.g. {"constant_fold"}); set by ConfigProto's optimizer options.
    disabled: set = dataclasses.field(default_factory=set)
    incarnations: dict = dataclasses.field(default_factory=dict)  # device -> int64 incarnation
    log: list = dataclasses.field(default_factory=list)  # (pass name, nodes before, nodes after, ms)
    partitions: dict = dataclasses.field(default_factory=dict)  # device -> GraphIR, set by partition
    stateful_ops: set = dataclasses.field(default_factory=set)  # op types never folded / merged
