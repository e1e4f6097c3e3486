"""Waiting inside a kernel: on a condition variable, but never past the step's cancellation or deadline.

A kernel that may block (a dequeue from an empty queue, an enqueue into a full one, a
``take_grad`` waiting for gradients) is registered with ``needs_context=True`` and waits with
:func:`wait_until`. The wait is cut into slices of at most :data:`POLL_SECONDS`, so the kernel
notices ``ctx.cancelled`` (set by ``Session.close()`` from another thread, a failed parallel
step, or the distributed runtime) and the step's deadline (``RunOptions.timeout_in_ms`` /
``ConfigProto.operation_timeout_in_ms``) promptly, and raises ``CancelledError`` /
``DeadlineExceededError``; the plan adds the op's name, type, device and creation line.

Example:
    >>> import threading
    >>> cond = threading.Condition()
    >>> with cond:
    ...     wait_until(cond, lambda: True, None, "waiting for nothing")
"""

from __future__ import annotations

import threading

from sparseflow._src.framework import errors

__all__ = ["POLL_SECONDS", "check_step", "wait_until"]

# The longest a blocked kernel sleeps before it looks at cancellation and the deadline again.
POLL_SECONDS = 0.05

_DEADLINE_HINT = ("the step's deadline (RunOptions.timeout_in_ms or ConfigProto.operation_timeout_in_ms) passed "
                  "first; raise the timeout, or make sure the producer of what this op waits for is running "
                  "(e.g. tf.train.start_queue_runners).")


def check_step(ctx, what: str) -> None:
    """Raises CancelledError if the step was cancelled (the error that aborted it, when one did: a
    failed op elsewhere, a dead peer), DeadlineExceededError if its deadline passed."""
    if ctx is None:
        return
    if ctx.cancelled.is_set():
        cause = getattr(getattr(ctx, "rendezvous", None), "aborted", None)
        if isinstance(cause, errors.OpError) and not isinstance(cause, errors.CancelledError):
            raise cause
        raise errors.CancelledError(None, None, f"Cancelled while {what}: the step was cancelled (its session "
                                                f"was closed, or another op of the step failed).")
    remaining = ctx.remaining()
    if remaining is not None and remaining <= 0:
        raise errors.DeadlineExceededError(None, None, f"Timed out {what}: {_DEADLINE_HINT}")


def wait_until(cond: threading.Condition, ready, ctx, what: str) -> None:
    """Waits on ``cond`` (held by the caller) until ``ready()`` is true.

    ``what`` says what the kernel waits for ("waiting for 2 elements of FIFOQueue 'q'"); it is the
    message of the CancelledError / DeadlineExceededError raised when the step ends first.
    """
    while not ready():
        check_step(ctx, what)
        timeout = POLL_SECONDS
        if ctx is not None:
            remaining = ctx.remaining()
            if remaining is not None:
                timeout = max(0.0, min(timeout, remaining))
        cond.wait(timeout)
