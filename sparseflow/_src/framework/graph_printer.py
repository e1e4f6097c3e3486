"""Stable text form of graphs and ops: ``%name = Op[attrs](inputs) @device``, one per line.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default() as g:
    ...     two = tf.constant(2.0, name="two")
    >>> print(format_graph(g))
    %two = Const[dtype=float32, value=float32[][2.]]()
"""

from __future__ import annotations

from sparseflow._src.framework.ir import GraphIR


def format_op(op) -> str:
    return GraphIR.from_graph(op.graph, [op]).node(op.name).format()


def format_graph(graph) -> str:
    return GraphIR.from_graph(graph).format()
