"""The devices of a local session, each with its resource manager and incarnation number.

Example:
    >>> mgr = DeviceMgr.local(num_cpus=2)
    >>> mgr.names
    ['/job:localhost/replica:0/task:0/device:CPU:0', '/job:localhost/replica:0/task:0/device:CPU:1']
"""

from __future__ import annotations

import secrets

from sparseflow._src.framework.device_spec import full_device_name
from sparseflow._src.kernels.resources import ResourceMgr


def cpu_count_of(config) -> int:
    """The CPU devices ``ConfigProto.device_count["CPU"]`` asks for (1 by default)."""
    if config is None:
        return 1
    try:
        return int(dict(config.device_count).get("CPU", 1)) or 1
    except (AttributeError, TypeError):
        return 1


class DeviceMgr:
    def __init__(self, names: list[str]):
        self.names = list(names)
        self._resources = {n: ResourceMgr(n) for n in self.names}
        # A fresh random 64-bit number per process start: stale rendezvous keys never match.
        self.incarnations = {n: secrets.randbits(63) | 1 for n in self.names}

    @staticmethod
    def local(num_cpus: int = 1, job: str = "localhost", task: int = 0) -> DeviceMgr:
        return DeviceMgr([full_device_name(job, 0, task, "CPU", i) for i in range(max(1, num_cpus))])

    def resources(self, device: str) -> ResourceMgr:
        r = self._resources.get(device)
        if r is None:
            raise KeyError(f"Unknown device {device!r}; this session has {', '.join(self.names)}")
        return r

    def clear(self, containers=None):
        for r in self._resources.values():
            r.clear(containers)
