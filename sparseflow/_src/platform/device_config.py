"""``tf.config`` for a CPU-only runtime: the devices a process has, and the switches that make
sense without accelerators or eager execution.

A process has one physical CPU, ``/physical_device:CPU:0`` (sessions may split it into several
logical CPUs with ``ConfigProto(device_count={"CPU": n})``). Soft placement is on (what Session
does unless its ConfigProto says otherwise); functions never run eagerly.

Example:
    >>> import sparseflow as tf
    >>> tf.config.list_physical_devices()
    [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    >>> tf.config.list_physical_devices("GPU")
    []
"""

from __future__ import annotations

import collections

__all__ = ["PhysicalDevice", "LogicalDevice", "list_physical_devices", "list_logical_devices",
           "get_visible_devices", "set_visible_devices", "get_soft_device_placement", "functions_run_eagerly",
           "run_functions_eagerly", "experimental_functions_run_eagerly", "experimental_run_functions_eagerly"]

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")


def list_physical_devices(device_type=None):
    """The process's physical devices (of ``device_type`` if given): its CPU."""
    return [d for d in (_CPU,) if device_type is None or d.device_type == str(device_type).upper()]


def list_logical_devices(device_type=None):
    """The logical devices sessions place ops on by default: ``/device:CPU:0``."""
    return [LogicalDevice("/device:CPU:0", d.device_type) for d in list_physical_devices(device_type)]


def get_visible_devices(device_type=None):
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    """Accepts any list that keeps the CPU visible (there is nothing else to hide)."""
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    unknown = [d for d in devices if d not in list_physical_devices()]
    if unknown:
        raise ValueError(f"Unrecognized device: {unknown[0]!r}; this process has only {_CPU!r}")
    if device_type in (None, "CPU") and _CPU not in devices:
        raise ValueError("sparseflow runs every kernel on the CPU: it cannot be made invisible")


def get_soft_device_placement() -> bool:
    return True


def functions_run_eagerly() -> bool:
    return False


def run_functions_eagerly(run_eagerly):
    if run_eagerly:
        raise NotImplementedError("sparseflow has no eager execution: functions always run as graphs")


experimental_functions_run_eagerly = functions_run_eagerly
experimental_run_functions_eagerly = run_functions_eagerly
