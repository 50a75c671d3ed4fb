"""The same-host lane (kiln.config.lane): when the server listens on a Unix socket beside gRPC
(GetVersion.local_socket) and this process can reach it, Execute goes through it: a call is
two small socket writes instead of an HTTP/2 exchange. Before sending its token, the client
checks that the socket's other end is the server's own process (SO_PEERCRED against
GetVersion.local_pid), and the hello's answer against GetVersion.instance. Each thread has its
own connection; anything that stops the lane from being used sends calls over gRPC instead."""
import os
import select
import socket
import struct
import threading
import time

import grpc

from kiln import _pb
from kiln.config import config
from kiln.errors import KilnError

_CODES = {c.value[0]: c.name for c in grpc.StatusCode}
_HEADER = struct.Struct("<I")
_UCRED = struct.Struct("3i")  # pid, uid, gid
_IDLE_LOOK = 1.0  # a connection idle longer is checked for a close by the server before use


class LaneError(Exception):
    """A lane failure after the call was sent: whether it ran is unknown."""


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class Lane:
    """The lane of one client, or none: `usable` says whether calls may try it."""

    def __init__(self, client, version):
        mode = config.lane
        if mode not in ("auto", "on", "off"):
            raise ValueError("kiln.config.lane %r: expected auto, on or off" % (mode,))
        from kiln.shm import on_this_host
        self._client = client
        self._path = version.local_socket
        self._pid = version.local_pid
        self._instance = version.instance
        self._authorization = dict(client._auth).get("authorization", "")
        self._local = threading.local()
        self.required = mode == "on"
        self.usable = mode != "off" and bool(self._path) and on_this_host(client.address)
        if self.required and not self.usable:
            raise ValueError("kiln.config.lane is on, but the server at %s offers no lane "
                             "reachable from here" % client.address)

    def execute(self, request, timeout=None):
        """Execute's response over the lane; None when this thread cannot use it (then the call
        goes over gRPC). KilnError for the server's errors; LaneError when the connection broke
        after the call was sent."""
        sock = self._socket()
        if sock is None:
            return None
        body = request.SerializeToString()
        head = b"\x12" + _varint(len(body))  # LaneRequest.execute, then the request's bytes
        tail = b"" if timeout is None else b"\x18" + _varint(max(1, int(timeout * 1000)))
        parts = [_HEADER.pack(len(head) + len(body) + len(tail)), head, body, tail]
        try:
            wait = None if timeout is None else timeout + 5
            if sock.gettimeout() != wait:
                sock.settimeout(wait)
            if len(body) < 65536:
                sock.sendall(b"".join(parts))
            else:  # no copy of a large request: its parts go as they are
                _send_parts(sock, parts)
        except OSError:  # the server is gone (a restart): nothing ran, gRPC takes this call
            self._drop()
            return None
        try:
            resp = self._read(sock)
        except (OSError, EOFError) as e:
            self._drop()
            raise LaneError("the lane to %s broke during a call: %s" % (self._path, e)) from None
        finally:
            self._local.used = time.monotonic()
        _raise_for(resp)
        return resp.execute

    def _socket(self):
        """This thread's connection, made (and checked) on first use; None when unusable."""
        local = self._local
        if getattr(local, "pid", None) != os.getpid():  # a new thread, or a forked child
            local.sock, local.pid, local.failed = None, os.getpid(), False
        if local.failed:
            return None
        if local.sock is not None and time.monotonic() - local.used > _IDLE_LOOK:
            # Readable while idle means the server closed it (its --local_timeout): a new one.
            # (poll, not select: a descriptor past 1024 is fine.)
            idle = select.poll()
            idle.register(local.sock, select.POLLIN)
            if idle.poll(0):
                self._drop()
        if local.sock is None:
            local.sock = self._connect_again_if_restarted()
            local.failed = local.sock is None
            local.used = time.monotonic()
        return local.sock

    def _connect_again_if_restarted(self):
        """A new connection; if none can be had, a second try after asking GetVersion where the
        lane is now (a restarted server: its new socket, process and instance). None when the
        lane cannot be used from here (an error instead with kiln.config.lane "on")."""
        try:
            return self._connect()
        except (OSError, LaneRefused):
            pass
        try:
            self._refresh()
            return self._connect()
        except (OSError, LaneRefused):
            if self.required:
                raise
            return None

    def _refresh(self):
        """The server's lane as GetVersion says it now."""
        version = self._client.call("GetVersion", _pb.service_pb2.GetVersionRequest(),
                                    timeout=10)
        self._path, self._pid = version.local_socket, version.local_pid
        self._instance = version.instance
        if not self._path:
            raise LaneRefused("the server at %s has no lane now" % self._client.address)

    def _connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(10)
            sock.connect(self._path)
            pid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                _UCRED.size))[0]
            if pid != self._pid:
                raise LaneRefused("%s is held by process %d, not the server's %d"
                                  % (self._path, pid, self._pid))
            hello = _pb.service_pb2.LaneRequest()
            hello.hello.authorization = self._authorization
            frame = hello.SerializeToString()
            sock.sendall(_HEADER.pack(len(frame)) + frame)
            resp = self._read(sock)
            if resp.code != 0:
                raise LaneRefused("the lane said %s: %s" % (_CODES.get(resp.code), resp.message))
            if resp.instance != self._instance:
                raise LaneRefused("%s is another server's" % self._path)
            sock.settimeout(None)
            return sock
        except BaseException:
            sock.close()
            raise

    def _drop(self):
        if self._local.sock is not None:
            self._local.sock.close()
            self._local.sock = None

    @staticmethod
    def _read(sock):
        """The next LaneResponse: one recv for a small answer, its header and body together."""
        data = sock.recv(1 << 16)
        if len(data) < 4:
            data += _recv_exact(sock, 4 - len(data))
        n = _HEADER.unpack_from(data)[0]
        body = data[4:]
        if len(body) < n:
            body += _recv_exact(sock, n - len(body))
        resp = _pb.service_pb2.LaneResponse()
        resp.ParseFromString(body)
        return resp


class LaneRefused(Exception):
    """The lane cannot be used from here (another process's socket, another server, full)."""


def _recv_exact(sock, n):
    """Exactly n bytes; EOFError when the connection ends first."""
    if n <= 0:
        return b""
    first = sock.recv(n)
    if len(first) == n:
        return first
    buf = bytearray(first)
    while len(buf) < n:
        if not first:
            raise EOFError("the server closed the lane")
        first = sock.recv(n - len(buf))
        buf += first
    return bytes(buf)


def _send_parts(sock, parts):
    """sendmsg of every byte of `parts`, resuming after a partial send."""
    views = [memoryview(p) for p in parts if p]
    while views:
        sent = sock.sendmsg(views)
        while views and sent >= len(views[0]):
            sent -= len(views[0])
            views.pop(0)
        if views and sent:
            views[0] = views[0][sent:]


def _raise_for(resp):
    if resp.code != 0:
        raise KilnError.from_status(_CODES.get(resp.code, "UNKNOWN"), resp.message, resp.details)
