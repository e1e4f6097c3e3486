"""Local file access with TensorFlow's ``tf.gfile`` API, and ``tf.train.write_graph``.

Paths are local (optionally ``file://``); other URL schemes raise UnimplementedError. Missing files
raise ``errors.NotFoundError``, existing targets ``errors.AlreadyExistsError``, like TensorFlow.
Whole-file writes (``write_graph``, ``atomic_write_string_to_file``) go to a temporary file that
is renamed into place, so readers never see half a file.

Example:
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with GFile(os.path.join(d, "a.txt"), "w") as f:
    ...     _ = f.write("hello\\n")
    >>> ListDirectory(d), GFile(os.path.join(d, "a.txt")).read()
    (['a.txt'], 'hello\\n')
"""

from __future__ import annotations

import collections
import errno
import glob as _glob
import os
import shutil
import tempfile
import types

from sparseflow._src.framework import errors

FileStatistics = collections.namedtuple("FileStatistics", ["length", "mtime_nsec", "is_directory"])


def _path(name) -> str:
    name = os.fspath(name)
    if isinstance(name, bytes):
        name = name.decode("utf-8")
    if name.startswith("file://"):
        return name[len("file://"):]
    if "://" in name:
        scheme = name.split("://")[0]
        raise errors.UnimplementedError(None, None, f"File system scheme '{scheme}' is not implemented (path "
                                                    f"{name!r}); sparseflow reads local files.")
    return name


def _os_error(e: OSError, path: str):
    if e.errno == errno.ENOENT:
        return errors.NotFoundError(None, None, f"{path}; No such file or directory")
    if e.errno == errno.EEXIST:
        return errors.AlreadyExistsError(None, None, f"{path}; File exists")
    if e.errno in (errno.EACCES, errno.EPERM):
        return errors.PermissionDeniedError(None, None, f"{path}; Permission denied")
    if e.errno == errno.ENOTDIR:
        return errors.FailedPreconditionError(None, None, f"{path}; Not a directory")
    if e.errno == errno.EISDIR:
        return errors.FailedPreconditionError(None, None, f"{path}; Is a directory")
    return errors.UnknownError(None, None, f"{path}; {e.strerror}")


class GFile:
    """A file object: ``"r"``/``"w"``/``"a"`` read and write text (str), with ``"b"`` bytes.

    Writes in text mode also accept bytes, as in TensorFlow. The file opens on first use, so
    constructing a GFile for a missing file fails only when it is read.
    """

    def __init__(self, name, mode="r"):
        if mode not in ("r", "rb", "w", "wb", "a", "ab", "r+", "rb+", "w+", "wb+", "a+", "ab+"):
            raise errors.InvalidArgumentError(None, None, f"mode {mode!r} not supported; use r, rb, w, wb, a "
                                                          f"or ab (optionally with +).")
        self._name = _path(name)
        self._mode = mode
        self._binary = "b" in mode
        self._f = None

    name = property(lambda self: self._name)
    mode = property(lambda self: self._mode)

    def _file(self):
        if self._f is None:
            raw_mode = self._mode.replace("b", "") + "b"
            try:
                self._f = open(self._name, raw_mode)  # noqa: SIM115 - closed by close()/__exit__
            except OSError as e:
                raise _os_error(e, self._name) from None
        return self._f

    def _out(self, data: bytes):
        return data if self._binary else data.decode("utf-8")

    def read(self, n=-1):
        """Up to ``n`` bytes (all with -1), as str in text mode."""
        return self._out(self._file().read(n))

    def readline(self):
        return self._out(self._file().readline())

    def readlines(self):
        return [self._out(line) for line in self._file().readlines()]

    def __iter__(self):
        while True:
            line = self.readline()
            if not line:
                return
            yield line

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    def write(self, data):
        """Writes str (UTF-8) or bytes; returns None like TensorFlow."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        self._file().write(bytes(data))

    def flush(self):
        if self._f is not None:
            self._f.flush()

    def seek(self, offset=None, whence=0, position=None):
        if position is not None:
            offset = position
        self._file().seek(offset, whence)

    def tell(self) -> int:
        return self._file().tell()

    def size(self) -> int:
        return Stat(self._name).length

    def seekable(self) -> bool:
        return True

    def close(self):
        if self._f is not None:
            self._f.close()
            self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        f = getattr(self, "_f", None)
        if f is not None:
            f.close()


FastGFile = GFile
Open = GFile


def Exists(filename) -> bool:  # noqa: N802 - TensorFlow's names
    """Whether a file or directory exists."""
    return os.path.exists(_path(filename))


def IsDirectory(dirname) -> bool:  # noqa: N802
    return os.path.isdir(_path(dirname))


def MakeDirs(dirname):  # noqa: N802
    """Creates a directory and its parents; fine if it exists."""
    path = _path(dirname)
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise errors.FailedPreconditionError(None, None, f"{path}; exists and is not a directory") from None
    except OSError as e:
        raise _os_error(e, path) from None


def MkDir(dirname):  # noqa: N802
    """Creates one directory; AlreadyExistsError if it exists, NotFoundError if its parent is missing."""
    path = _path(dirname)
    try:
        os.mkdir(path)
    except OSError as e:
        raise _os_error(e, path) from None


def ListDirectory(dirname) -> list:  # noqa: N802
    """Names of the entries of a directory (not paths; no "." or "..")."""
    path = _path(dirname)
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {path}")
    return sorted(os.listdir(path))


def Glob(pattern) -> list:  # noqa: N802
    """Paths matching a pattern (or any of a list of patterns)."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    out = []
    for p in patterns:
        out.extend(_glob.glob(_path(p)))
    return sorted(set(out))


def Remove(filename):  # noqa: N802
    """Deletes a file; NotFoundError if it does not exist."""
    path = _path(filename)
    try:
        os.remove(path)
    except OSError as e:
        raise _os_error(e, path) from None


def DeleteRecursively(dirname):  # noqa: N802
    """Deletes a directory tree (or a file); NotFoundError if it does not exist."""
    path = _path(dirname)
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory")
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    """Renames a file; AlreadyExistsError if ``newname`` exists and not ``overwrite``."""
    old, new = _path(oldname), _path(newname)
    if not overwrite and os.path.exists(new):
        raise errors.AlreadyExistsError(None, None, f"{new}; File already exists")
    try:
        os.replace(old, new)
    except OSError as e:
        raise _os_error(e, old) from None


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    """Copies a file; AlreadyExistsError if ``newpath`` exists and not ``overwrite``."""
    old, new = _path(oldpath), _path(newpath)
    if not overwrite and os.path.exists(new):
        raise errors.AlreadyExistsError(None, None, f"{new}; File already exists")
    try:
        shutil.copyfile(old, new)
    except OSError as e:
        raise _os_error(e, old) from None


def Stat(filename) -> FileStatistics:  # noqa: N802
    """Size in bytes, modification time in ns, and whether it is a directory."""
    path = _path(filename)
    try:
        st = os.stat(path)
    except OSError as e:
        raise _os_error(e, path) from None
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(path))


def Walk(top, in_order=True):  # noqa: N802
    """(dirname, subdirs, files) for each directory under ``top``; nothing if ``top`` is missing."""
    path = _path(top)
    if not os.path.isdir(path):
        return
    yield from os.walk(path, topdown=in_order)


def atomic_write_string_to_file(filename, contents, overwrite=True):
    """Writes ``contents`` (str or bytes) to a temporary file, then renames it to ``filename``."""
    path = _path(filename)
    if not overwrite and os.path.exists(path):
        raise errors.AlreadyExistsError(None, None, f"{path}; File already exists")
    data = contents.encode("utf-8") if isinstance(contents, str) else bytes(contents)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp_" + os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    fsync_dir(os.path.dirname(path))


def fsync_dir(directory: str):
    """Makes a rename in ``directory`` durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_graph(graph_or_graph_def, logdir, name, as_text=True) -> str:
    """Writes a Graph's GraphDef (or a GraphDef) to ``logdir/name``, as text or binary; returns the path."""
    from sparseflow._src.framework.graph_io import message_to_text

    gd = graph_or_graph_def
    if hasattr(gd, "as_graph_def"):
        gd = gd.as_graph_def()
    if not hasattr(gd, "SerializeToString"):
        raise TypeError(f"write_graph needs a Graph or a GraphDef, got {type(graph_or_graph_def).__name__}.")
    logdir = _path(logdir)
    if not os.path.isdir(logdir):
        MakeDirs(logdir)
    path = os.path.join(logdir, os.fspath(name))
    if as_text:
        atomic_write_string_to_file(path, message_to_text(gd))
    else:
        atomic_write_string_to_file(path, gd.SerializeToString(deterministic=True))
    return path


# TF2 spellings, as ``tf.io.gfile``.
io_gfile = types.SimpleNamespace(
    GFile=GFile, exists=Exists, isdir=IsDirectory, makedirs=MakeDirs, mkdir=MkDir, listdir=ListDirectory,
    glob=Glob, remove=Remove, rmtree=DeleteRecursively, rename=Rename, copy=Copy, stat=Stat, walk=Walk,
)

__all__ = ["GFile", "FastGFile", "Open", "Exists", "IsDirectory", "MakeDirs", "MkDir", "ListDirectory",
           "Glob", "Remove", "DeleteRecursively", "Rename", "Copy", "Stat", "Walk", "FileStatistics",
           "atomic_write_string_to_file", "write_graph", "io_gfile"]
