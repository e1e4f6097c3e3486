"""``tf.train.Scaffold``: the init, ready and saver ops a monitored session needs, with defaults.

``finalize()`` fills in what was not given (from the graph's collections INIT_OP, READY_OP,
READY_FOR_LOCAL_INIT_OP, LOCAL_INIT_OP, SUMMARY_OP and SAVERS when they hold one item, else a
default: initialize all global variables; report uninitialized variables; initialize local
variables and tables; a sharded ``Saver``), then finalizes the graph.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default() as g:
    ...     v = tf.Variable(1.0)
    ...     s = Scaffold().finalize()
    ...     print(s.init_op.type, s.saver is not None, g.finalized)
    NoOp True True
"""

from __future__ import annotations

from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.ops import core_ops, summary_ops, variables
from sparseflow._src.training.checkpoint.saver import _get_saver_or_default

__all__ = ["Scaffold"]


class Scaffold:
    """Structure of a model for a MonitoredSession: how to initialize it, check it is ready, save it."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None,
                 local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            c = copy_from_scaffold
            init_op = c.init_op if init_op is None else init_op
            init_feed_dict = c._init_feed_dict if init_feed_dict is None else init_feed_dict
            init_fn = c._user_init_fn if init_fn is None else init_fn
            ready_op = c.ready_op if ready_op is None else ready_op
            ready_for_local_init_op = c.ready_for_local_init_op if ready_for_local_init_op is None \
                else ready_for_local_init_op
            local_init_op = c.local_init_op if local_init_op is None else local_init_op
            local_init_feed_dict = c._local_init_feed_dict if local_init_feed_dict is None else local_init_feed_dict
            summary_op = c.summary_op if summary_op is None else summary_op
            saver = c.saver if saver is None else saver
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Creates the missing ops and the saver, then finalizes the default graph."""
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default("init_op", GraphKeys.INIT_OP, _default_init_op)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default("ready_op", GraphKeys.READY_OP,
                                                     variables.report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default("local_init_op", GraphKeys.LOCAL_INIT_OP,
                                                          Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP, summary_ops.merge_all)
        if self._saver is None:
            self._saver = _get_saver_or_default()
        self._saver.build()
        get_default_graph().finalize()
        logging.info("Graph was finalized.")
        return self

    init_fn = property(lambda self: self._init_fn)
    init_op = property(lambda self: self._init_op)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    local_init_feed_dict = property(lambda self: self._local_init_feed_dict)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)
    init_feed_dict = property(lambda self: self._init_feed_dict)

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The single item of ``collection_key``, else ``default_constructor()`` (added to it)."""
        elements = get_default_graph().get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(f'More than one item in the collection "{collection_key}". Please indicate which '
                                   f"one to use by passing it to the tf.Scaffold constructor as:  "
                                   f"tf.Scaffold({arg_name}=item to use)")
            return elements[0]
        op = default_constructor()
        if op is not None:
            get_default_graph().add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initializes local variables and lookup tables."""
        g = get_default_graph()
        return core_ops.group(variables.local_variables_initializer(), *g.get_collection(GraphKeys.TABLE_INITIALIZERS))


def _default_init_op():
    return core_ops.group(variables.global_variables_initializer())
