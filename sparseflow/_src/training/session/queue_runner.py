"""``tf.train.QueueRunner``: threads that keep running enqueue ops, stopped by a Coordinator.

A QueueRunner holds a queue, the enqueue ops that fill it (one thread each), and the ops that
close it. ``create_threads(sess, coord)`` starts the threads: each runs its enqueue op until
the coordinator asks to stop, or until the op raises one of ``queue_closed_exception_types``
(OutOfRangeError: its input is exhausted), after which the last thread closes the queue so that
its consumers drain it and then see OutOfRangeError. Any other error is reported to the
coordinator (``coord.join()`` re-raises it). With a coordinator, one more thread waits for the
stop request and runs the cancel op (close with ``cancel_pending_enqueues``), which unblocks
enqueues waiting on a full queue.

``tf.train.add_queue_runner`` puts a runner into the graph's QUEUE_RUNNERS collection;
``tf.train.start_queue_runners`` starts every runner of that collection (MonitoredSession does
it for you).

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    ...     counter = tf.Variable(0.0)
    ...     qr = QueueRunner(q, [q.enqueue(tf.assign_add(counter, 1.0))])
    ...     add_queue_runner(qr)
    ...     batch = q.dequeue_many(3)
    ...     with tf.Session() as sess:
    ...         sess.run(counter.initializer)
    ...         coord = tf.train.Coordinator()
    ...         threads = start_queue_runners(sess, coord)
    ...         print(sess.run(batch))
    ...         coord.request_stop()
    ...         coord.join(threads)
    [1. 2. 3.]
"""

from __future__ import annotations

import threading
import weakref

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.default_session import get_default_session
from sparseflow._src.framework.graph import GraphKeys, get_default_graph
from sparseflow._src.framework.proto.queue_runner_pb2 import QueueRunnerDef
from sparseflow._src.training.checkpoint.saver import prepend_name_scope, strip_name_scope

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]


class QueueRunner:
    """Runs ``enqueue_ops`` of ``queue`` in threads; closes the queue when their input ends."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope)
        else:
            self._init_from_args(queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types)
        self._lock = threading.Lock()
        self._runs_per_session: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._exceptions_raised: list = []

    def _init_from_args(self, queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types):
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        if queue_closed_exception_types is not None and (
                not isinstance(queue_closed_exception_types, tuple) or not queue_closed_exception_types
                or not all(isinstance(t, type) and issubclass(t, errors.OpError)
                           for t in queue_closed_exception_types)):
            raise TypeError(f"queue_closed_exception_types, when provided, must be a tuple of tf.error types, but "
                            f"saw: {queue_closed_exception_types}")
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types or (errors.OutOfRangeError,))

    def _init_from_proto(self, queue_runner_def, import_scope):
        if not isinstance(queue_runner_def, QueueRunnerDef):
            raise TypeError(f"queue_runner_def must be a QueueRunnerDef, got {type(queue_runner_def).__name__}.")
        g = get_default_graph()

        def element(name):
            return g.as_graph_element(prepend_name_scope(name, import_scope))

        self._queue = element(queue_runner_def.queue_name)
        self._enqueue_ops = [element(n) for n in queue_runner_def.enqueue_op_name]
        self._close_op = element(queue_runner_def.close_op_name)
        self._cancel_op = element(queue_runner_def.cancel_op_name)
        self._queue_closed_exception_types = tuple(
            errors.exception_type_from_error_code(c) for c in queue_runner_def.queue_closed_exception_types) \
            or (errors.OutOfRangeError,)

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: self._enqueue_ops)
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    queue_closed_exception_types = property(lambda self: self._queue_closed_exception_types)

    @property
    def exceptions_raised(self) -> list:
        """Errors of threads started without a coordinator (with one, they go to the coordinator)."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        """The name of the queue."""
        return self._queue.name

    # ------------------------------------------------------------------ threads
    def _run(self, sess, enqueue_op, coord=None):
        decremented = False
        try:
            enqueue = sess.make_callable(enqueue_op)
            while not (coord and coord.should_stop()):
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:  # the last thread closes the queue
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # noqa: BLE001 - e.g. the session was closed meanwhile
                                logging.debug("Ignored exception while closing %s: %s", self.name, e)
                    return
        except Exception as e:  # noqa: BLE001 - reported to the coordinator or kept in exceptions_raised
            if coord and coord.should_stop():
                # A consequence of the stop (e.g. the session closed under a blocked op), not its cause;
                # TensorFlow's threads raise it (as an unhandled thread error) once the coordinator has joined.
                logging.debug("QueueRunner %s stopped by: %s", self.name, e)
            elif coord:
                coord.request_stop(e)
            else:
                logging.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001 - the session may already be closed
            logging.debug("Ignored exception while cancelling %s: %s", self.name, e)

    def create_threads(self, sess, coord=None, daemon=False, start=False) -> list:
        """The threads that run the enqueue ops in ``sess`` (none if they already run there)."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{op.name}") for op in self._enqueue_ops]
        if coord:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                                            name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for t in threads:
            if coord:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads

    # ------------------------------------------------------------------ MetaGraphDef
    def to_proto(self, export_scope=None):
        """A QueueRunnerDef naming this runner's ops (None if the queue is outside ``export_scope``)."""
        if export_scope is not None and not self.queue.name.startswith(export_scope):
            return None
        d = QueueRunnerDef(queue_name=strip_name_scope(self.queue.name, export_scope))
        d.enqueue_op_name.extend(strip_name_scope(op.name, export_scope) for op in self.enqueue_ops)
        d.close_op_name = strip_name_scope(self.close_op.name, export_scope)
        d.cancel_op_name = strip_name_scope(self.cancel_op.name, export_scope)
        d.queue_closed_exception_types.extend(errors.error_code_from_exception_type(c)
                                              for c in self._queue_closed_exception_types)
        return d

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        """The QueueRunner of a QueueRunnerDef, on the ops of the default graph."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """Adds ``qr`` to ``collection`` of the default graph (started by ``start_queue_runners``)."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every queue runner in ``collection`` of ``sess``'s graph; returns them."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to tf.start_queue_runners(sess=sess)")
    if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
        return []  # a monitored session started them itself (as TensorFlow's does)
    if not (hasattr(sess, "make_callable") and hasattr(sess, "graph")):
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {type(sess)}")
    threads = []
    with sess.graph.as_default():
        for qr in sess.graph.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
