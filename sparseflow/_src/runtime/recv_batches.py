"""Which remote receives of a task may travel in one ``RecvTensorStream`` call.

Every tensor that crosses tasks would otherwise cost one RPC; a worker reading eight dense
variables from a ps pays eight round trips per step. The master groups a task's receives from one
sender into batches that are pulled in one call (``RecvTensorStream``: each value lands as soon
as its sender has it, one message per arrival, so a ps applies a step's first gradients while the
worker computes the others). Batches are formed only where that is safe
whatever the arrival order: no tensor of a batch may depend on anything the receiving task
computes at or after the batch's first receive. With ``pos`` the place of each
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

The master's own task takes no part in this: every value another task sends it comes in the
response stream of that task's ``RunGraph`` call as soon as it is sent (``streamed_receives``), so
its receives cost no call at all. Batches serve the other tasks (a ps receiving gradients).

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
    pos, sends, latest = _waits(order, task)
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


def streamed_receives(order, task: str) -> dict[str, list[str]]:
    """Receives of ``task`` (the master's task) whose values come in the response stream of their
    sender's ``RunGraph`` call, as the sender sends them, instead of with ``RecvTensor`` calls: every
    ``_Recv`` of ``task`` from another task (that task runs a partition of the step, so the master
    calls its ``RunGraph``); sender task -> ``_Recv`` names.

        >>> streamed_receives([], "/job:w/replica:0/task:0")
        {}
    """
    out: dict[str, list[str]] = {}
    for n in order:
        if n.op == "_Recv" and task_of_device(n.device) == task:
            src = task_of_device(n.attrs["send_device"])
            if src != task:
                out.setdefault(src, []).append(n.name)
    return out


def _waits(order, task: str):
    """(position of each node, _Send of each (tensor, send device, recv device), latest[n]: the latest
    position of a node of ``task`` that node n waits for, -1 for none)."""
    pos = {n.name: i for i, n in enumerate(order)}
    sends = {}
    for n in order:
        if n.op == "_Send":
            sends[(n.attrs["tensor_name"], n.attrs["send_device"], n.attrs["recv_device"])] = n.name
    # A plan runs its device's nodes one after the other, so a node also waits for everything before
    # it on its device.
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
    return pos, sends, latest
