"""Shared-memory links between collective members on one host.

Each process's executor listens on a Unix socket (``ShmEndpoint``, a 0600 socket file under
``/dev/shm``) whose path travels in the member's ``CollectiveMember.shm_endpoint`` (the gRPC
group join is the handshake). A link to a member on the same host (``ShmLink``) connects to its
endpoint, creates a file of ``slots`` x ``slot_bytes`` under ``/dev/shm``, mmaps it, says HELLO with
its path, and unlinks it once the receiver mapped it too (so nothing is left behind when a process
dies). Then, per piece: the sender copies the bytes into a free slot and rings DATA (a small
fixed-format frame: slot, size, run id, ranks, step, piece, metadata); the receiver merges straight
from the slot and answers FREE when done. Pieces larger than a slot travel inline in the frame.

Frames are ``struct``-packed integers (and inline bytes): nothing received is unpickled. A
connection that closes (a process exited or died) fails the runs that wait on it at once, naming
the member. Any failure to set a link up falls back to gRPC. An endpoint's socket file is removed
at close or exit; ones of processes killed before that are removed by the next endpoint created.

Example:
    >>> ep = ShmEndpoint(lambda *a: None, lambda *a: None)
    >>> ep.path.endswith(".sock")
    True
    >>> ep.close()
"""

from __future__ import annotations

import atexit
import logging
import mmap
import os
import re
import secrets
import socket
import struct
import tempfile
import threading

import numpy as np

from sparseflow._src.framework import errors
from sparseflow._src.kernels import collective_ring as R

_log = logging.getLogger("sparseflow.collectives")

_HELLO, _ACK, _DATA, _INLINE, _FREE = 1, 2, 3, 4, 5
_HEAD = struct.Struct("<BI")  # frame type, body length
# slot, nbytes, group, generation, instance, seq, src rank, dst rank, step, piece, metadata count
_DATA_HEAD = struct.Struct("<iqqqqqiiiii")
_HELLO_HEAD = struct.Struct("<iqI")  # slots, slot_bytes, path length
_FREE_BODY = struct.Struct("<i")
SLOTS = 8


def _shm_dir() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


_SOCKET_NAME = re.compile(r"sparseflow-coll-(\d+)-[0-9a-f]+\.sock")


def _unlink_at_exit(path: str):
    try:
        os.unlink(path)
    except OSError:
        pass


def remove_stale_sockets() -> int:
    """Removes endpoint sockets of this user's processes that are gone (killed before they could
    remove their own); returns how many."""
    removed = 0
    d = _shm_dir()
    try:
        names = os.listdir(d)
    except OSError:
        return 0
    for name in names:
        m = _SOCKET_NAME.fullmatch(name)
        if m is None:
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # alive (or its pid was reused: the file stays, harmless)
        except PermissionError:
            continue  # another user's process
        except ProcessLookupError:
            pass
        except (OverflowError, ValueError):
            continue
        path = os.path.join(d, name)
        try:
            if os.lstat(path).st_uid == os.geteuid():
                os.unlink(path)
                removed += 1
        except OSError:
            pass
    return removed


def _recv_exact(sock, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("connection closed")
        got += k
    return buf


def _send_frame(sock, lock, kind: int, *parts):
    body = b"".join(bytes(p) if not isinstance(p, (bytes, bytearray)) else p for p in parts)
    with lock:
        sock.sendall(_HEAD.pack(kind, len(body)) + body)


class ShmEndpoint:
    """The listening side: accepts links from members on this host and delivers their pieces.

    ``deliver(key, message)`` puts a piece into the executor's mailbox; ``peer_lost(device, error)``
    fails the runs that wait on a member whose connection closed."""

    def __init__(self, deliver, peer_lost):
        self._deliver = deliver
        self._peer_lost = peer_lost
        remove_stale_sockets()
        self.path = os.path.join(_shm_dir(), f"sparseflow-coll-{os.getpid()}-{secrets.token_hex(6)}.sock")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)
        try:
            self._sock.bind(self.path)
        finally:
            os.umask(old)
        self._sock.listen(64)
        self._closed = False
        self._conns: list = []
        atexit.register(_unlink_at_exit, self.path)
        threading.Thread(target=self._accept, name="sparseflow-shm-accept", daemon=True).start()

    def _accept(self):
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), name="sparseflow-shm-recv", daemon=True).start()

    def _serve(self, conn):
        lock = threading.Lock()
        peer = "a member on this host"
        mm = None
        try:
            kind, body = self._read(conn)
            if kind != _HELLO:
                raise ConnectionError(f"expected HELLO, got frame {kind}")
            slots, slot_bytes, n = _HELLO_HEAD.unpack_from(body)
            path, peer = body[_HELLO_HEAD.size:_HELLO_HEAD.size + n].decode(), \
                body[_HELLO_HEAD.size + n:].decode()
            if slots < 1 or slot_bytes < 1 or os.path.dirname(path) != _shm_dir():
                raise ConnectionError(f"bad HELLO from {peer}")
            fd = os.open(path, os.O_RDWR)
            try:
                if os.fstat(fd).st_size < slots * slot_bytes:
                    raise ConnectionError(f"shared-memory file of {peer} is too small")
                mm = mmap.mmap(fd, slots * slot_bytes)
            finally:
                os.close(fd)
            _send_frame(conn, lock, _ACK)
            buf = np.frombuffer(mm, dtype=np.uint8)
            while True:
                kind, body = self._read(conn)
                if kind not in (_DATA, _INLINE):
                    raise ConnectionError(f"unexpected frame {kind} from {peer}")
                slot, nbytes, key, gen, inst, seq, src, dst, step, piece, nmeta = _DATA_HEAD.unpack_from(body)
                off = _DATA_HEAD.size
                meta = struct.unpack_from(f"<{nmeta}q", body, off) if nmeta else ()
                off += 8 * nmeta
                if kind == _INLINE:
                    data, release = bytes(body[off:off + nbytes]), None
                else:
                    if not 0 <= slot < slots or nbytes > slot_bytes or nbytes < 0:
                        raise ConnectionError(f"bad slot {slot} ({nbytes} bytes) from {peer}")
                    data = buf[slot * slot_bytes: slot * slot_bytes + nbytes]
                    release = _freer(conn, lock, slot)
                self._deliver(((key, gen, inst, seq), dst, step, piece), R.Message(meta, data, release, src))
        except (ConnectionError, OSError, struct.error, UnicodeDecodeError) as e:
            if not self._closed:
                self._peer_lost(peer, errors.UnavailableError(
                    None, None, f"{peer} closed its shared-memory link ({e}): its process exited or failed."))
        finally:
            try:
                conn.close()
            except OSError:
                pass

    @staticmethod
    def _read(conn):
        kind, n = _HEAD.unpack(_recv_exact(conn, _HEAD.size))
        return kind, (_recv_exact(conn, n) if n else b"")

    def close(self):
        self._closed = True
        try:
            self._sock.close()
        finally:
            try:
                os.unlink(self.path)
            except OSError:
                pass
        for c in self._conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _freer(conn, lock, slot):
    def release():
        try:
            _send_frame(conn, lock, _FREE, _FREE_BODY.pack(slot))
        except OSError:
            pass  # the sender is gone; nothing to free

    return release


class ShmLink(R.Link):
    """Sends pieces to a member on this host through shared-memory slots (module docstring)."""

    def __init__(self, endpoint_path: str, src_name: str, peer: str, slot_bytes: int, connect_timeout: float = 10.0):
        super().__init__(peer)
        self.slot_bytes = int(slot_bytes)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(connect_timeout)
        self._lock = threading.Lock()
        path = os.path.join(_shm_dir(), f"sparseflow-coll-{os.getpid()}-{secrets.token_hex(6)}.buf")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, SLOTS * self.slot_bytes)
            self._mm = mmap.mmap(fd, SLOTS * self.slot_bytes)
        finally:
            os.close(fd)
        try:
            self._sock.connect(endpoint_path)
            p, s = path.encode(), src_name.encode()
            _send_frame(self._sock, self._lock, _HELLO, _HELLO_HEAD.pack(SLOTS, self.slot_bytes, len(p)), p, s)
            kind, _ = ShmEndpoint._read(self._sock)
            if kind != _ACK:
                raise ConnectionError(f"expected ACK, got frame {kind}")
        except BaseException:
            self._sock.close()
            self._mm.close()
            raise
        finally:
            os.unlink(path)
        self._sock.settimeout(None)
        self._buf = np.frombuffer(self._mm, dtype=np.uint8)
        self._free = list(range(SLOTS))
        self._slot_cv = threading.Condition()
        self._broken: BaseException | None = None
        threading.Thread(target=self._read_frees, name="sparseflow-shm-free", daemon=True).start()

    def _read_frees(self):
        try:
            while True:
                kind, body = ShmEndpoint._read(self._sock)
                if kind != _FREE:
                    raise ConnectionError(f"unexpected frame {kind}")
                (slot,) = _FREE_BODY.unpack(body)
                with self._slot_cv:
                    if 0 <= slot < SLOTS and slot not in self._free:
                        self._free.append(slot)
                    self._slot_cv.notify_all()
        except (ConnectionError, OSError, struct.error) as e:
            with self._slot_cv:
                self._broken = errors.UnavailableError(
                    None, None, f"{self.peer} closed its shared-memory link ({e}): its process exited or failed.")
                self._slot_cv.notify_all()

    def _ready(self) -> bool:
        return bool(self._free) and self._broken is None

    def _transmit(self, exec_id, dst_rank, step, piece, src_rank, meta, array):
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        n = raw.shape[0]
        head = _DATA_HEAD.pack(-1, n, *exec_id, src_rank, dst_rank, step, piece, len(meta)) + \
            struct.pack(f"<{len(meta)}q", *meta)
        if n > self.slot_bytes:
            _send_frame(self._sock, self._lock, _INLINE, head, raw.tobytes())
            return
        with self._slot_cv:
            while not self._free:
                if self._broken is not None:
                    raise self._broken
                if not self._slot_cv.wait(5.0) and self._closed:
                    raise errors.CancelledError(None, None, f"The link to {self.peer} was closed.")
            if self._broken is not None:
                raise self._broken
            slot = self._free.pop()
        off = slot * self.slot_bytes
        self._buf[off:off + n] = raw
        head = _DATA_HEAD.pack(slot, n, *exec_id, src_rank, dst_rank, step, piece, len(meta)) + \
            struct.pack(f"<{len(meta)}q", *meta)
        try:
            _send_frame(self._sock, self._lock, _DATA, head)
        except OSError as e:
            raise errors.UnavailableError(None, None, f"{self.peer} closed its shared-memory link ({e}): its "
                                                      f"process exited or failed.") from None

    def close(self, timeout: float = 5.0):
        super().close(timeout)
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()


def connect_or_none(endpoint_path: str, src_name: str, peer: str, slot_bytes: int):
    """A ShmLink, or None (logged) when shared memory cannot be set up with that member."""
    try:
        return ShmLink(endpoint_path, src_name, peer, slot_bytes)
    except (OSError, ConnectionError, ValueError) as e:
        _log.warning("Collectives: no shared memory with %s (%s); using gRPC.", peer, e)
        return None
