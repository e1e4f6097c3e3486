"""Crash injection for tests of atomic saves: every file-system step of a save can be the last.

``FileSystemSteps`` patches the calls that change files (``open`` for writing and each ``write``
on such a file, ``os.fdopen``, ``os.fsync``, ``os.replace``, ``os.rename``, ``os.remove``,
``os.unlink``, ``os.link``) and counts them. With ``crash_at=k`` the k-th step raises
:class:`SimulatedCrash` (a BaseException, so no ``except Exception`` handler swallows it) and
every later step raises too, as if the process had died there: no cleanup or rollback reaches
the disk. Reads of existing files are not steps.

Example::

    with FileSystemSteps() as rec:
        save()                      # rec.count: how many steps a save takes
    for k in range(rec.count):
        ...set up the old checkpoint...
        with FileSystemSteps(crash_at=k):
            with pytest.raises(BaseException):
                save()
        ...restore: the old or the new checkpoint, in full...
"""

from __future__ import annotations

import builtins
import os


class SimulatedCrash(BaseException):
    """The process 'died' at this file-system step."""


_WRITE_MODES = ("w", "a", "x", "+")


class _File:
    """A file opened for writing whose writes and flushes are steps."""

    def __init__(self, f, steps):
        self._f, self._steps = f, steps

    def write(self, data):
        self._steps.step("write", getattr(self._f, "name", "?"))
        return self._f.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()
        return False

    def __iter__(self):
        return iter(self._f)

    def __getattr__(self, name):
        return getattr(self._f, name)


class FileSystemSteps:
    """Counts the file-system steps inside the ``with`` block; raises SimulatedCrash at ``crash_at``."""

    def __init__(self, crash_at: int | None = None):
        self.crash_at = crash_at
        self.count = 0
        self.log: list[tuple[str, str]] = []
        self.crashed = False
        self._saved = {}

    def step(self, what: str, path):
        if self.crashed:
            raise SimulatedCrash(f"dead process: {what} {path}")
        if self.crash_at is not None and self.count == self.crash_at:
            self.crashed = True
            raise SimulatedCrash(f"crash at step {self.count}: {what} {path}")
        self.count += 1
        self.log.append((what, str(path)))

    def __enter__(self):
        real_open, real_fdopen = builtins.open, os.fdopen

        def fake_open(file, mode="r", *args, **kwargs):
            writing = any(c in mode for c in _WRITE_MODES)
            if writing:
                self.step("open", file)
            elif self.crashed:
                raise SimulatedCrash(f"dead process: read {file}")
            f = real_open(file, mode, *args, **kwargs)
            return _File(f, self) if writing else f

        def fake_fdopen(fd, mode="r", *args, **kwargs):
            self.step("fdopen", fd)
            return _File(real_fdopen(fd, mode, *args, **kwargs), self)

        def wrap(name):
            real = getattr(os, name)

            def call(*args, **kwargs):
                self.step(name, args[-1] if args else "")
                return real(*args, **kwargs)

            return call

        self._saved = {(builtins, "open"): real_open, (os, "fdopen"): real_fdopen}
        builtins.open = fake_open
        os.fdopen = fake_fdopen
        for name in ("fsync", "replace", "rename", "remove", "unlink", "link"):
            self._saved[(os, name)] = getattr(os, name)
            setattr(os, name, wrap(name))
        return self

    def __exit__(self, *exc):
        for (mod, name), real in self._saved.items():
            setattr(mod, name, real)
        return False
