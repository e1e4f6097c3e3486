"""``tf.train.SessionManager``: makes sessions whose model is ready, from a checkpoint or from scratch.

The chief calls :meth:`SessionManager.prepare_session`: it restores the latest checkpoint of
``checkpoint_dir`` when there is one, else runs ``init_op`` / ``init_fn``, then the local init op,
and checks ``ready_op`` (an empty result means every variable is initialized). Other workers
call :meth:`wait_for_session`, which polls until the chief has made the model ready.

Example:
    >>> import sparseflow as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(3.0)
    ...     sm = SessionManager(ready_op=tf.report_uninitialized_variables())
    ...     sess = sm.prepare_session("", init_op=tf.global_variables_initializer())
    ...     print(sess.run(v))
    3.0
"""

from __future__ import annotations

import time

from sparseflow._src.framework import errors
from sparseflow._src.framework import tf_logging as logging
from sparseflow._src.framework.graph import get_default_graph
from sparseflow._src.runtime.session import Session
from sparseflow._src.training.checkpoint import checkpoint_management as cm

__all__ = ["SessionManager"]


def _maybe_name(obj):
    if obj is None:
        return "None"
    return getattr(obj, "name", str(obj))


class SessionManager:
    """Creates sessions and makes sure the model is initialized (restored or freshly initialized)."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None, graph=None,
                 recovery_wait_secs=30, local_init_run_options=None, local_init_feed_dict=None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target = None
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError(f"If you pass a ready_for_local_init_op you must also pass a local_init_op , "
                             f"ready_for_local_init_op [{ready_for_local_init_op}]")

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                            wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        self._target = master
        sess = Session(self._target, graph=self._graph, config=config)
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        wait_time = 0
        ckpt = cm.get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if wait_for_checkpoint and wait_time < max_wait_secs:
                logging.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                wait_time += self._recovery_wait_secs
                ckpt = cm.get_checkpoint_state(checkpoint_dir)
            else:
                return sess, False
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False, max_wait_secs=7200, config=None,
                        init_feed_dict=None, init_fn=None):
        """A session with the model restored from a checkpoint, or initialized by init_op / init_fn."""
        sess, loaded = self._restore_checkpoint(master, saver, checkpoint_dir=checkpoint_dir,
                                                checkpoint_filename_with_path=checkpoint_filename_with_path,
                                                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                                                config=config)
        if not loaded:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, msg = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for local_init.  Init op: "
                               f"{_maybe_name(init_op)}, init fn: {init_fn}, error: {msg}")
        ready, msg = self._model_ready(sess)
        if not ready:
            raise RuntimeError(f"Init operations did not make model ready.  Init op: {_maybe_name(init_op)}, init fn: "
                               f"{init_fn}, local_init_op: {_maybe_name(self._local_init_op)}, error: {msg}")
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                        wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        """(session, initialized): a session restored from a checkpoint if possible, and whether it is ready."""
        sess, loaded = self._restore_checkpoint(master, saver, checkpoint_dir=checkpoint_dir,
                                                checkpoint_filename_with_path=checkpoint_filename_with_path,
                                                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                                                config=config)
        ok, msg = self._try_run_local_init_op(sess)
        if not loaded:
            return sess, False
        if not ok:
            logging.info("Restoring model from %s did not make model ready for local init: %s",
                         checkpoint_dir or checkpoint_filename_with_path, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            logging.info("Restoring model from %s did not make model ready: %s",
                         checkpoint_dir or checkpoint_filename_with_path, msg)
            return sess, False
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A session once the model is ready (made so by the chief); DeadlineExceededError after max_wait_secs.

        Polls first after 0.25 s, doubling up to ``recovery_wait_secs`` (TensorFlow always waits the full
        ``recovery_wait_secs``, 30 s by default, so a worker that starts just before its chief idles).
        """
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.monotonic() + max_wait_secs
        pause = min(0.25, self._recovery_wait_secs)
        while True:
            sess = Session(self._target, graph=self._graph, config=config)
            ok, local_msg = self._try_run_local_init_op(sess)
            msg = None
            if ok:
                ready, msg = self._model_ready(sess)
                if ready:
                    return sess
            try:
                sess.close()
            except Exception:  # noqa: BLE001 - closing a session that is being thrown away
                pass
            if deadline - time.monotonic() - pause < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs} secs: {msg or local_msg}. The "
                                f"chief (is_chief=True) initializes or restores the model: check that it runs, and "
                                f"that it uses the same graph and cluster.")
            logging.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s", local_msg, msg)
            time.sleep(pause)
            pause = min(pause * 2, self._recovery_wait_secs)

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ready, msg = _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")
        if not ready:
            return False, msg
        logging.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict, options=self._local_init_run_options)
        logging.info("Done running local_init_op.")
        return True, None

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")


def _ready(op, sess, msg):
    """(True, None) when ``op`` is None or yields an empty result, else (False, "Variables not initialized: ...")."""
    del msg
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            logging.warning("Model not ready raised: %s", e)
            raise
        return False, str(e)
    if value is None or getattr(value, "dtype", None) == "int32" or getattr(value, "size", 0) == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in value.ravel())
    return False, "Variables not initialized: " + names
