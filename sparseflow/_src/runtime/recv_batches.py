"""Which remote receives of a task may travel in one ``RecvTensors`` call.

Every tensor that crosses tasks would otherwise cost one RPC; a worker reading eight dense
variables from a ps pays eight round trips per step. The master groups a task's receives from one
sender into batches that are pulled in one call, when that is safe: a receiving plan blocks at the
first receive of a batch until the whole batch has arrived, so no tensor of the batch may depend
on anything the receiving task computes at or after that point. With ``pos`` the place of each
node in the step's global order (the order every plan follows), a receive ``k`` joins the batch
that starts at receive ``f`` only when every node of the receiving task that ``k``'s sender
waits for comes before ``f`` — through data and control edges, across tasks, and through the
order of its own plan (a plan runs its device's nodes one after the other, so a send waits for
every node before it on its device, receives included). Variable reads sent by a ps depend on
nothing of the worker: they form one batch; the gradients a ps receives depend only on what the
ps sent before its first gradient receive: they form another.

Batches are formed per receiving device of a task with one device (a task of several devices runs
their plans concurrently, so positions do not order them): receives of other tasks are pulled one
by one, all at once at the start of the step.

Example:
    >>> recv_batches([], "/job:w/replica:0/task:0")
    []
"""

from __future__ import annotations

from sparseflow._src.framework.ir import parse_input
from sparseflow._src.runtime.step import task_of_device


def recv_batches(order, task: str) -> list[list[str]]:
    """Batches (lists of ``_Recv`` node names, each list from one sender task) for ``task``, from the
    step's nodes in global ``order``; receives not listed are pulled alone."""
    mine = [n for n in order if task_of_device(n.device) == task]
    if not mine or len({n.device for n in mine}) != 1:
        return []
    pos = {n.name: i for i, n in enumerate(order)}
    sends = {}
    for n in order:
        if n.op == "_Send":
            sends[(n.attrs["tensor_name"], n.attrs["send_device"], n.attrs["recv_device"])] = n.name
    # latest[n]: the latest position of a node of `task` that n waits for (-1: none). A plan runs its
    # device's nodes one after the other, so a node also waits for everything before it on its device.
    latest: dict[str, int] = {}
    last_on_device: dict[str, int] = {}
    for n in order:
        best = pos[n.name] if task_of_device(n.device) == task else last_on_device.get(n.device, -1)
        for s in n.inputs:
            src = parse_input(s)[0]
            best = max(best, latest.get(src, -1))
        if n.op == "_Recv":
            send = sends.get((n.attrs["tensor_name"], n.attrs["send_device"], n.attrs["recv_device"]))
            if send is not None:
                best = max(best, latest.get(send, -1))
        latest[n.name] = best
        last_on_device[n.device] = best
    batches: dict[str, list[list]] = {}  # sender task -> [[first position, names...], ...]
    for n in mine:
        if n.op != "_Recv":
            continue
        a = n.attrs
        src = task_of_device(a["send_device"])
        if src == task:
            continue
        send = sends.get((a["tensor_name"], a["send_device"], a["recv_device"]))
        waits_for = latest.get(send, -1) if send is not None else pos[n.name]
        groups = batches.setdefault(src, [])
        if groups and waits_for < groups[-1][0]:
            groups[-1].append(n.name)
        else:
            groups.append([pos[n.name], n.name])
    return [g[1:] for src in sorted(batches) for g in batches[src] if len(g) > 2]
