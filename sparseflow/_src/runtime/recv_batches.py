"""Which remote receives of a task travel in one call, and which need no call at all.

Every tensor that crosses tasks would otherwise cost one RPC; a ps reading a step's dozen gradients
from a worker pays a dozen round trips. A task's receives from one sender are pulled in one call,
``RecvTensorStream``, which brings each value as soon as its sender has it, one message per
arrival, so a ps applies a step's first gradients while the worker computes the others. A stream
never waits for one value to deliver another, so any receives of one sender may share it, in any
order, whatever they depend on: a value the sender computes from the receiver's own later sends
(a round trip) simply arrives later in the same stream.

The master's own task pulls nothing: every value another task sends it comes in the response
stream of that task's ``RunGraph`` call as soon as it is sent (``streamed_receives``). With one ps
and one worker, a step's tensors cross in two calls per ps: its ``RunGraph``, and the ps's stream of
the worker's gradients.

Example:
    >>> recv_batches([], "/job:w/replica:0/task:0")
    []
"""

from __future__ import annotations

from sparseflow._src.runtime.step import task_of_device


def recv_batches(order, task: str) -> list[list[str]]:
    """Batches (lists of ``_Recv`` node names, one list per sender task, in the step's global
    ``order``) for ``task``: each is pulled in one ``RecvTensorStream`` call; a receive of a sender
    with no other receive is pulled alone (``RecvTensor``)."""
    return [names for src, names in sorted(streamed_receives(order, task).items()) if len(names) > 1]


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
