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

The master's own task takes the receives that only signal "the sender's part of the step is done"
(control edges at the end of a ps's updates) from the sender's ``RunGraph`` reply, which it waits
for anyway: ``reply_receives``. That saves a ``RecvTensor`` call per such receive and step.

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


def reply_receives(order, task: str) -> dict[str, list[str]]:
    """Receives of ``task`` (the master's task) whose value its sender returns in the reply to the
    step's ``RunGraph`` call instead of a ``RecvTensor`` call: sender task -> ``_Recv`` names.

    A receive qualifies when it only gates ``task``'s nodes (every consumer takes it as a control
    input, directly or through ``Identity`` nodes: "the sender's updates are done") and nothing the
    sender's partition waits for is at or after it on ``task`` (the reply comes once the sender's
    whole partition has run).

        >>> reply_receives([], "/job:w/replica:0/task:0")
        {}
    """
    mine = [n for n in order if task_of_device(n.device) == task]
    if not mine or len({n.device for n in mine}) != 1:
        return {}
    pos, _sends, latest = _waits(order, task)
    finished_after: dict[str, int] = {}  # other task -> latest node of `task` its partition waits for
    for n in order:
        t = task_of_device(n.device)
        if t != task:
            finished_after[t] = max(finished_after.get(t, -1), latest[n.name])
    data_users: dict[str, list] = {}  # node -> nodes of `task` that take one of its outputs as data
    for n in mine:
        for name, _, control in map(parse_input, n.inputs):
            if not control:
                data_users.setdefault(name, []).append(n)

    def gates_only(name, depth=0):  # its value only orders nodes (through Identity nodes at most)
        return depth < 8 and all(u.op == "Identity" and gates_only(u.name, depth + 1)
                                 for u in data_users.get(name, ()))

    out: dict[str, list[str]] = {}
    for n in mine:
        if n.op != "_Recv" or not gates_only(n.name):
            continue
        src = task_of_device(n.attrs["send_device"])
        if src != task and finished_after.get(src, pos[n.name]) < pos[n.name]:
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
