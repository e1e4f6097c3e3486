"""What a training run shows while it runs, and how it stops on Ctrl-C.

:class:`TrainingProgress` draws a ``tqdm`` bar on a terminal (redrawn in place, as wide as the
terminal: it follows resizes, and the line never wraps) and prints nothing but whole lines
elsewhere (a pipe or a log file gets one line per epoch). Lines printed during training go above
the bar (``write``), never onto it. The bar appears after the first step, so that its speed and
remaining time do not count numba's compilation of the first step.

:func:`interrupt_requests` turns Ctrl-C (SIGINT) into a request the training loop sees between
two steps: it saves a checkpoint and stops cleanly; a second Ctrl-C interrupts at once.

Example:
    >>> import io
    >>> log = io.StringIO()
    >>> p = TrainingProgress(log, total=1000, initial=0)
    >>> p.update(500, loss=0.3, auc=0.8)
    >>> p.write("epoch 1/2  loss 0.3000")
    >>> p.close()
    >>> log.getvalue()
    'epoch 1/2  loss 0.3000\\n'
"""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["TrainingProgress", "interrupt_requests"]


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class TrainingProgress:
    """Progress of ``total`` examples (``initial`` of them done before this run) on ``stream``."""

    def __init__(self, stream, total: int, initial: int = 0, desc: str = "train"):
        self.stream, self.total, self.done, self.desc = stream, int(total), int(initial), desc
        self.terminal = _is_terminal(stream)
        self._bar = None
        self._steps = 0

    def update(self, examples: int, **postfix):
        """``examples`` more done; ``postfix`` values (loss, auc) shown after the bar."""
        self.done += int(examples)
        self._steps += 1
        if not self.terminal:
            return
        if self._bar is None:
            if self._steps < 2:  # the first step compiles: its time is not the run's speed
                return
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, initial=self.done, file=self.stream, desc=self.desc, unit="ex",
                             unit_scale=True, dynamic_ncols=True, mininterval=0.2, smoothing=0.1, leave=False,
                             bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                        "[{elapsed}<{remaining}, {rate_fmt}]{postfix}")
            return
        if postfix:
            self._bar.set_postfix({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in postfix.items()},
                                  refresh=False)
        self._bar.update(int(examples))

    def set_description(self, desc: str):
        self.desc = desc
        if self._bar is not None:
            self._bar.set_description_str(desc, refresh=False)

    def write(self, line: str):
        """A whole line above the bar (on a terminal) or on its own."""
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextlib.contextmanager
def interrupt_requests():
    """A ``threading.Event`` set by the first Ctrl-C while the block runs (the second raises
    ``KeyboardInterrupt`` as usual). Outside the main thread, an event nobody sets."""
    requested = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield requested
        return

    def handler(signum, frame):
        if requested.is_set():
            raise KeyboardInterrupt
        requested.set()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield requested
    finally:
        signal.signal(signal.SIGINT, previous)
