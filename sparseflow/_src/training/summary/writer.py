"""TF1's ``tf.summary.FileWriter``, ``FileWriterCache`` and ``tf.train.summary_iterator``.

A FileWriter turns summaries, graphs, run metadata and session logs into Event protos in an
events file that TensorBoard reads (event_file_writer.py). As TensorFlow's, it keeps a tag's
SummaryMetadata only the first time the tag is written, and refuses a run-metadata tag twice.

Example:
    >>> import tempfile, glob
    >>> import sparseflow as tf
    >>> logdir = tempfile.mkdtemp()
    >>> with tf.Graph().as_default() as g, tf.Session() as sess:
    ...     loss = tf.summary.scalar("loss", tf.constant(0.5))
    ...     with tf.summary.FileWriter(logdir, g) as writer:
    ...         writer.add_summary(sess.run(loss), global_step=7)
    >>> events = list(tf.train.summary_iterator(glob.glob(logdir + "/events.out.tfevents.*")[0]))
    >>> [e.WhichOneof("what") for e in events]
    ['file_version', 'graph_def', 'meta_graph_def', 'summary']
    >>> events[-1].step, events[-1].summary.value[0].simple_value
    (7, 0.5)
"""

from __future__ import annotations

import os
import threading
import time

from sparseflow._src.framework.graph import Graph, get_default_graph
from sparseflow._src.framework.proto import event_pb2, graph_pb2, meta_graph_pb2, summary_pb2
from sparseflow._src.kernels.tfrecord_framing import read_records
from sparseflow._src.training.checkpoint.meta_graph import export_meta_graph
from sparseflow._src.training.summary.event_file_writer import EventFileWriter

__all__ = ["FileWriter", "FileWriterCache", "summary_iterator"]


class FileWriter:
    """Writes Event protos for TensorBoard to an events file in ``logdir`` (TF1's signature)."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        del session  # TensorFlow's summary-writer resource path; events are written from Python here
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._seen_summary_tags: set = set()
        self._session_run_tags: set = set()
        self._closed = False
        if graph is not None or graph_def is not None:
            self.add_graph(graph=graph, graph_def=graph_def)
            source = graph if isinstance(graph, Graph) else graph_def if isinstance(graph_def, Graph) else None
            meta = export_meta_graph(graph=source) if source is not None else export_meta_graph(
                graph_def=graph if isinstance(graph, graph_pb2.GraphDef) else graph_def, graph=Graph())
            self.add_meta_graph(meta)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    # ------------------------------------------------------------------ events
    def add_summary(self, summary, global_step=None):
        """Adds a Summary proto or a serialized one (what a summary op returns)."""
        if isinstance(summary, (bytes, bytearray)) or hasattr(summary, "dtype"):
            summary = summary_pb2.Summary.FromString(bytes(summary.item() if hasattr(summary, "item") else summary))
        elif not isinstance(summary, summary_pb2.Summary):
            summary = summary_pb2.Summary.FromString(summary.SerializeToString())
        out = summary_pb2.Summary()
        for value in summary.value:
            v = out.value.add()
            v.CopyFrom(value)
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                v.ClearField("metadata")  # TensorBoard keeps the first metadata of a tag
            else:
                self._seen_summary_tags.add(value.tag)
        self._add_event(event_pb2.Event(summary=out), global_step)

    def add_session_log(self, session_log, global_step=None):
        """Adds a SessionLog (START, STOP or CHECKPOINT)."""
        self._add_event(event_pb2.Event(session_log=_as(event_pb2.SessionLog, session_log)), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Adds ``graph`` (a Graph, with output shapes) or a GraphDef."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        source = graph if graph is not None else graph_def
        if isinstance(source, Graph):
            gd = source.as_graph_def(add_shapes=True)
        elif hasattr(source, "node") and hasattr(source, "SerializeToString"):
            gd = source
        else:
            raise TypeError("The passed graph must be an instance of `Graph` or the deprecated `GraphDef`")
        self._add_event(event_pb2.Event(graph_def=gd.SerializeToString()), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Adds a MetaGraphDef."""
        if not isinstance(meta_graph_def, meta_graph_pb2.MetaGraphDef):
            raise TypeError(f"meta_graph_def must be type MetaGraphDef, saw type: {type(meta_graph_def)}")
        self._add_event(event_pb2.Event(meta_graph_def=meta_graph_def.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Adds the RunMetadata of one step (TensorBoard's graph view shows it under ``tag``)."""
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags.add(tag)
        tagged = event_pb2.TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)

    def add_event(self, event):
        """Adds an Event proto as it is."""
        self.event_writer.add_event(_as(event_pb2.Event, event))

    def _add_event(self, event, step):
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    # ------------------------------------------------------------------ lifecycle
    def flush(self):
        """Writes pending events to disk."""
        self.event_writer.flush()

    def close(self):
        """Flushes and closes the events file."""
        self.event_writer.close()
        self._closed = True

    def reopen(self):
        """Reopens a closed writer; later events go to a new events file."""
        self.event_writer.reopen()
        self._closed = False


def _as(message_type, value):
    """``value`` as ``message_type``: the same message, or one with the same bytes (TensorFlow's
    generated classes have our field numbers)."""
    if isinstance(value, message_type):
        return value
    return message_type.FromString(value.SerializeToString())


class FileWriterCache:
    """One FileWriter per logdir, shared (hooks and ``MonitoredTrainingSession`` use it)."""

    _cache: dict = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir) -> FileWriter:
        """The FileWriter of ``logdir`` (made with the default graph the first time)."""
        with FileWriterCache._lock:
            key = os.fspath(logdir)
            writer = FileWriterCache._cache.get(key)
            if writer is None:
                writer = FileWriterCache._cache[key] = FileWriter(key, graph=get_default_graph())
            return writer

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache.clear()


def summary_iterator(path):
    """Yields the Event protos of the events file ``path`` (a corrupt record raises DataLossError)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        for record in read_records(f, path):
            yield event_pb2.Event.FromString(record)
