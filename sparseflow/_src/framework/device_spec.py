"""Device names ``/job:J/replica:R/task:T/device:TYPE:ID``: parsing, merging, canonical form.

Example:
    >>> DeviceSpec.from_string("/cpu:0").to_string()
    '/device:CPU:0'
    >>> merge_device("/job:ps", "/device:CPU:1")
    '/job:ps/device:CPU:1'
"""

from __future__ import annotations

import dataclasses
import functools


@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None  # None means any ("*")

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def from_string(spec: str | None) -> DeviceSpec:
        if not spec:
            return DeviceSpec()
        job = replica = task = dtype = index = None
        for part in spec.split("/"):
            if not part:
                continue
            bits = part.split(":")
            key = bits[0].lower()
            if key == "job" and len(bits) == 2:
                job = bits[1]
            elif key == "replica" and len(bits) == 2:
                replica = int(bits[1])
            elif key == "task" and len(bits) == 2:
                task = int(bits[1])
            elif key == "device" and len(bits) in (2, 3):
                dtype = bits[1].upper()
                if len(bits) == 3 and bits[2] != "*":
                    index = int(bits[2])
            elif key in ("cpu", "gpu", "tpu") and len(bits) in (1, 2):
                dtype = key.upper()
                if len(bits) == 2 and bits[1] != "*":
                    index = int(bits[1])
            elif len(bits) == 2 and bits[0].isupper():
                dtype = bits[0]
                if bits[1] != "*":
                    index = int(bits[1])
            else:
                raise ValueError(f"Unknown device specification part {part!r} in {spec!r}. Expected "
                                 f"'/job:J/replica:R/task:T/device:TYPE:ID' or '/cpu:0'.")
        return DeviceSpec(job, replica, task, dtype, index)

    def to_string(self) -> str:
        out = []
        if self.job is not None:
            out.append(f"/job:{self.job}")
        if self.replica is not None:
            out.append(f"/replica:{self.replica}")
        if self.task is not None:
            out.append(f"/task:{self.task}")
        if self.device_type is not None:
            idx = "*" if self.device_index is None else self.device_index
            out.append(f"/device:{self.device_type}:{idx}")
        return "".join(out)

    def merge_from(self, other: DeviceSpec) -> DeviceSpec:
        """Fields set in ``other`` override ours."""
        return DeviceSpec(
            other.job if other.job is not None else self.job,
            other.replica if other.replica is not None else self.replica,
            other.task if other.task is not None else self.task,
            other.device_type if other.device_type is not None else self.device_type,
            other.device_index if other.device_type is not None else self.device_index,
        )

    def is_compatible_with(self, full: DeviceSpec) -> bool:
        """True when every field we set matches ``full``'s."""
        for a, b in ((self.job, full.job), (self.replica, full.replica), (self.task, full.task),
                     (self.device_type, full.device_type), (self.device_index, full.device_index)):
            if a is not None and b is not None and a != b:
                return False
        return True


@functools.lru_cache(maxsize=4096)
def canonical_name(spec: str | None) -> str:
    return DeviceSpec.from_string(spec).to_string()


@functools.lru_cache(maxsize=4096)
def merge_device(outer: str | None, inner: str | None) -> str:
    """The device of a scope ``inner`` nested in ``outer``; inner fields win."""
    return DeviceSpec.from_string(outer).merge_from(DeviceSpec.from_string(inner)).to_string()


def full_device_name(job: str, replica: int, task: int, device_type: str, index: int) -> str:
    return f"/job:{job}/replica:{replica}/task:{task}/device:{device_type}:{index}"


def task_of_device(device: str) -> str:
    """``/job:J/replica:R/task:T`` of a full device name (the name itself when it has no device part).

    >>> task_of_device("/job:ps/replica:0/task:1/device:CPU:0")
    '/job:ps/replica:0/task:1'
    """
    i = device.find("/device:")
    return device if i < 0 else device[:i]
