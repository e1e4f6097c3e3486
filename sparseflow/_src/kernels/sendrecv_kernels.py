"""CPU kernels of _Send and _Recv: they meet at the step's rendezvous.

``_Recv`` also offers ``start_async(ctx, done)``, so a dataflow executor waits for a tensor
without holding a thread.
"""

from __future__ import annotations

from sparseflow._src.framework.rendezvous_key import create_key
from sparseflow._src.kernels.registry import register_kernel


def _key(node, frame="0:0"):
    a = node.attrs
    return create_key(a["send_device"], a["send_device_incarnation"], a["recv_device"], a["tensor_name"], frame)


@register_kernel("_Send", needs_context=True)
def _send(node):
    key = _key(node)

    def compute(ctx, value):
        ctx.rendezvous.send(key if ctx.frame == "0:0" else _key(node, ctx.frame), value)

    return compute


@register_kernel("_Recv", needs_context=True)
def _recv(node):
    key = _key(node)

    def compute(ctx):
        k = key if ctx.frame == "0:0" else _key(node, ctx.frame)
        return ctx.rendezvous.recv(k, ctx.remaining())

    def start_async(ctx, done):
        """For dataflow executors: ``done(value, error)`` is called when the tensor arrives."""
        ctx.rendezvous.recv_async(key if ctx.frame == "0:0" else _key(node, ctx.frame), done)

    compute.start_async = start_async
    return compute
