"""The same-host lane (kiln.config.lane): when the server listens on a Unix socket beside gRPC
(GetVersion.local_socket) and this process can reach it, Execute goes through it: a call is
two small socket writes instead of an HTTP/2 exchange. Before sending its token, the client
checks that the socket's other end is the server's own process (SO_PEERCRED against
GetVersion.local_pid), and the hello's answer against GetVersion.instance. Each thread has its
own connection; anything that stops the lane from being used sends calls over gRPC instead.
A function's answers are read without protobuf when they keep the last one's layout (Outputs).
A connection asks for the server's shared-memory ring (kiln.config.lane_ring): its calls' frames
then go through a memfd's slots (kiln._core.LaneRing, proto/lane/ring.h), and only frames larger
than a slot over the socket. Over the socket alone, while a call runs, the client polls for
its answer for up to kiln.config.lane_spin seconds (by default 100 µs while the machine has a
core to spare: _spin) before it sleeps: a call that answers within that time costs no wake-up
of this thread. A spin that misses (no answer in
time, or this thread preempted meanwhile) is not tried for the next 1, 2, 4 ... 64 calls
(every call again after one that hits): slow calls, and a server sharing this thread's core on
a busy machine (where the spin would only keep it from running), cost little spinning."""
import os
import resource
import select
import socket
import struct
import threading
import time

import grpc
import numpy as np

from kiln import _core, _pb
from kiln.config import config
from kiln.errors import KilnError
from kiln.wire import _NATIVE

_CODES = {c.value[0]: c.name for c in grpc.StatusCode}
_HEADER = struct.Struct("<I")
_UCRED = struct.Struct("3i")  # pid, uid, gid
_IDLE_LOOK = 1.0  # a connection idle longer is checked for a close by the server before use
_EXECUTE_TAG = b"\x12"  # LaneRequest.execute (field 2, length-delimited)
_TIMEOUT_TAG = b"\x18"  # LaneRequest.timeout_ms (field 3, varint)
_MOST_SKIPPED = 64  # calls that sleep at once after spins (kiln.config.lane_spin) that missed
_HEADS_KEPT = 64  # frame heads kept, by request size
_MOST_DIMS = 32  # NumPy's (1.x) most dimensions of an array

# Bumped in a forked child: a connection made before the fork is its parent's (os.getpid() is
# a system call, too dear to make on every call).
_forks = 0


def _after_fork():
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_after_fork)


def _frame_head(size, tail):
    """The bytes of a frame before an ExecuteRequest of `size` bytes (its length, then
    LaneRequest.execute's tag and length) followed by `tail` bytes."""
    head = _EXECUTE_TAG + _varint(size)
    return _HEADER.pack(len(head) + size + tail) + head


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
        self._heads = {}  # the frame head of a request of each size (with no timeout)
        self.required = mode == "on"
        self.usable = mode != "off" and bool(self._path) and on_this_host(client.address)
        if self.required and not self.usable:
            raise ValueError("kiln.config.lane is on, but the server at %s offers no lane "
                             "reachable from here" % client.address)

    def execute(self, request, timeout=None):
        """Execute's response over the lane; None when this thread cannot use it (then the call
        goes over gRPC). KilnError for the server's errors; LaneError when the connection broke
        after the call was sent."""
        return self.call(request.SerializeToString(), timeout)

    def call(self, body, timeout=None):
        """execute() of an ExecuteRequest already serialized (`body`, bytes)."""
        data = self.exchange([None, body], len(body), timeout)
        if data is None:
            return None
        return parse_response(data).execute

    def exchange(self, parts, size, timeout=None):
        """The frame answering an Execute (its 4-byte length, then a LaneResponse's bytes: see
        parse_response and Outputs) whose ExecuteRequest's bytes are `parts` (`size` bytes in
        all) after a first part left None: the frame's head, written here. None when this
        thread cannot use the lane (nothing was sent: gRPC takes the call); LaneError when the
        connection broke after the call was sent."""
        sock = self._socket()
        if sock is None:
            return None
        if timeout is None:
            head = self._heads.get(size)
            if head is None:  # a new size of request: its head, kept
                if len(self._heads) >= _HEADS_KEPT:
                    self._heads.clear()
                head = self._heads[size] = _frame_head(size, 0)
            parts[0] = head
        else:
            tail = _TIMEOUT_TAG + _varint(max(1, int(timeout * 1000)))
            parts[0] = _frame_head(size, len(tail))
            parts.append(tail)
        local = self._local
        wait = None if timeout is None else timeout + 5
        if local.ring is not None:
            return self._ring_exchange(sock, local, parts, len(parts[0]) + size + (
                len(parts[-1]) if timeout is not None else 0), wait)
        try:
            if sock.gettimeout() != wait:
                sock.settimeout(wait)
            if size < 65536:
                sock.sendall(b"".join(parts))
            else:  # no copy of a large request: its parts go as they are
                _send_parts(sock, parts)
        except OSError:  # the server is gone (a restart): nothing ran, gRPC takes this call
            self._drop()
            return None
        try:
            spin = _spin()
            if spin > 0:
                if local.skip:
                    local.skip -= 1
                elif _await_answer(local.poll, spin):
                    local.backoff = 0
                else:  # no answer in time: the next 1, 2, 4 ... 64 calls sleep at once
                    local.backoff = min(2 * local.backoff or 1, _MOST_SKIPPED)
                    local.skip = local.backoff
            return _read_frame(sock)
        except (OSError, EOFError) as e:
            raise self._broken(e) from None
        finally:
            local.used = time.monotonic()

    def plain_call(self, plain, args, timeout=None):
        """plain.call (a kiln._core.PlainLaneCall: the frame written and the answer read in C++)
        through this thread's ring: the outputs; the answer's frame when it holds more (for
        parse_response); NotImplemented, with nothing sent, when this thread has no ring or
        plain does not take the call; None when the lane cannot be used (nothing was sent: gRPC
        takes the call); LaneError when the connection broke after the call was sent."""
        sock = self._socket()
        local = self._local
        if sock is None or local.ring is None:
            return NotImplemented
        try:
            out = plain.call(local.ring, args, _ring_spin(), timeout, config.shm_min_bytes)
        except (OSError, EOFError) as e:
            raise self._broken(e) from None
        finally:
            local.used = time.monotonic()
        return self.plain_answer(out)

    def plain_answer(self, out):
        """What plain_call returns for what plain.call gave, `out`, after the call was sent:
        the answer's frame read from the socket when `out` is None; None, with the connection
        dropped, when `out` is False (the server is gone: nothing ran); else `out`."""
        if out is None:  # the answer comes over the socket
            try:
                out = _read_frame(self._local.sock)
            except (OSError, EOFError) as e:
                raise self._broken(e) from None
            finally:
                self._local.used = time.monotonic()
        elif out is False:
            self._drop()
            return None
        return out

    def thread_ring(self):
        """This thread's LaneRing (None without one)."""
        return getattr(self._local, "ring", None)

    def _ring_exchange(self, sock, local, parts, frame_bytes, wait):
        """exchange() through this connection's shared-memory ring: the frame goes in its slot
        (or, larger, over the socket), and the answer comes back the same way. Spins in
        kiln._core.LaneRing (without the GIL), which backs off after spins that miss."""
        ring = local.ring
        try:
            if frame_bytes <= ring.slot_bytes:
                sent = ring.post(parts)
            else:
                sent = ring.post_on_socket()
                if sent:
                    if sock.gettimeout() != wait:
                        sock.settimeout(wait)
                    _send_parts(sock, parts)
        except OSError:  # the server is gone (a restart): nothing ran, gRPC takes this call
            sent = False
        if not sent:
            self._drop()
            return None
        try:
            frame = ring.answer(_ring_spin(), wait)
            return _read_frame(sock) if frame is None else frame
        except (OSError, EOFError) as e:
            raise self._broken(e) from None
        finally:
            local.used = time.monotonic()

    def _socket(self):
        """This thread's connection, made (and checked) on first use; None when unusable."""
        local = self._local
        if getattr(local, "forks", None) != _forks:  # a new thread, or a forked child
            # (A parent's ring is not this process's to use: its answers are the parent's.)
            local.sock, local.ring, local.forks, local.failed = None, None, _forks, False
        if local.failed:
            return None
        if local.sock is not None and time.monotonic() - local.used > _IDLE_LOOK:
            # Readable while idle means the server closed it (its --local_timeout): a new one.
            if local.poll.poll(0):
                self._drop()
        if local.sock is None:
            local.sock, local.ring = self._connect_again_if_restarted()
            local.failed = local.sock is None
            local.used = time.monotonic()
            if local.sock is not None:
                # Readable: an answer, or a close. (poll, not select: a descriptor past 1024
                # is fine.)
                local.poll = select.poll()
                local.poll.register(local.sock, select.POLLIN)
                local.skip = local.backoff = 0
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
            return None, None

    def _refresh(self):
        """The server's lane as GetVersion says it now."""
        version = self._client.call("GetVersion", _pb.service_pb2.GetVersionRequest(),
                                    timeout=10)
        self._path, self._pid = version.local_socket, version.local_pid
        self._instance = version.instance
        if not self._path:
            raise LaneRefused("the server at %s has no lane now" % self._client.address)

    def _connect(self):
        """A connection that has said its hello: (socket, kiln._core.LaneRing or None)."""
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
            hello.hello.ring = bool(config.lane_ring)
            frame = hello.SerializeToString()
            sock.sendall(_HEADER.pack(len(frame)) + frame)
            # The ring's memfd, if granted, comes with the answer's first bytes.
            data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 1)
            ring = None
            try:
                resp = _pb.service_pb2.LaneResponse()
                resp.ParseFromString(memoryview(_complete_frame(sock, data))[4:])
                if resp.code != 0:
                    raise LaneRefused("the lane said %s: %s"
                                      % (_CODES.get(resp.code), resp.message))
                if resp.instance != self._instance:
                    raise LaneRefused("%s is another server's" % self._path)
                if resp.ring_slot_bytes and fds:
                    ring = _core.LaneRing(fds.pop(), resp.ring_slot_bytes, sock.fileno())
            finally:
                for fd in fds:
                    os.close(fd)
            sock.settimeout(None)
            return sock, ring
        except BaseException:
            sock.close()
            raise

    def _broken(self, error):
        """The LaneError of a connection that broke during a call (`error`), dropped."""
        self._drop()
        return LaneError("the lane to %s broke during a call: %s" % (self._path, error))

    def _drop(self):
        # (Only this process's connection comes here: _socket forgets a parent's first.)
        if self._local.ring is not None:
            self._local.ring.close()
        self._local.ring = None
        if self._local.sock is not None:
            self._local.sock.close()
            self._local.sock = None


_AUTO_SPIN = 1e-4  # seconds a call polls by default while the machine has a core to spare
_LOAD_LOOK = 1.0  # seconds between looks at the load average for that default
_auto = [0.0, float("-inf")]  # the default spin, and when the load was looked at (shared)


def _spin():
    """The seconds this call polls for its answer: kiln.config.lane_spin, or by default
    _AUTO_SPIN while the 1-minute load average is under this process's cores less one half (a
    spin only pays when the server's thread and this one each have a core; on a busy machine it
    takes the core the other needs), else 0."""
    if config.lane_spin is not None:
        return config.lane_spin
    now = time.monotonic()
    if now - _auto[1] > _LOAD_LOOK:
        cores = len(os.sched_getaffinity(0))
        _auto[0] = _AUTO_SPIN if os.getloadavg()[0] < cores - 0.5 else 0.0
        _auto[1] = now
    return _auto[0]


def _ring_spin():
    """The seconds a call through the ring polls for its answer: kiln.config.lane_spin, or
    _AUTO_SPIN (LaneRing backs off after spins that miss)."""
    return _AUTO_SPIN if config.lane_spin is None else config.lane_spin


def parse_response(frame):
    """The LaneResponse of a `frame` exchange() gave; KilnError when it carries the server's
    error."""
    resp = _pb.service_pb2.LaneResponse()
    resp.ParseFromString(memoryview(frame)[4:])
    if resp.code != 0:
        _raise_for(resp)
    return resp


def _read_frame(sock):
    """The next frame's bytes, its 4-byte length first: one recv for a small answer, its
    length and body together."""
    return _complete_frame(sock, sock.recv(1 << 16))


def _complete_frame(sock, data):
    """The frame whose first bytes are `data`, completed from the socket."""
    if len(data) < 4:
        data += _recv_exact(sock, 4 - len(data))
    missing = _HEADER.unpack_from(data)[0] + 4 - len(data)
    return data if missing <= 0 else data + _recv_exact(sock, missing)


class LaneRefused(Exception):
    """The lane cannot be used from here (another process's socket, another server, full)."""


class Outputs:
    """The outputs of the frames answering one function's calls, read without protobuf in the
    usual case: an answer of outputs alone (no error, nothing printed) laid out as the last one
    (the same bytes outside the outputs' data: the same dtypes and shapes). The first such
    answer, and any other, is read field by field; an answer of another kind gives None (for
    parse_response). Threads may share one: each call reads the kept layout once."""

    def __init__(self):
        # The last layout read: the frame's size, the bytes outside the data as (start, end,
        # bytes), per output (shape, dtype, offset of its data), and the outputs' bytes with
        # 64 more per output (ServerRunner.output_bytes). One tuple, replaced whole.
        self._layout = (-1, (), (), 0)

    @property
    def nbytes(self):
        """The outputs' bytes in the last layout read, 64 more per output."""
        return self._layout[3]

    def __call__(self, frame):
        """The outputs of `frame` as new arrays, or None."""
        size, fixed, outputs, _ = self._layout
        if len(frame) != size:
            return self._read(frame)
        for start, end, piece in fixed:
            if frame[start:end] != piece:
                return self._read(frame)
        return [np.ndarray(shape, dtype, frame, at).copy() for shape, dtype, at in outputs]

    def _read(self, frame):
        """A new layout read from `frame` (kept for the next frames), or None."""
        layout = _outputs_layout(frame)
        if layout is None:
            return None
        fixed, outputs = layout
        nbytes = sum(_product(shape) * dtype.itemsize + 64 for shape, dtype, _ in outputs)
        self._layout = (len(frame), fixed, outputs, nbytes)
        return [np.ndarray(shape, dtype, frame, at).copy() for shape, dtype, at in outputs]


def _outputs_layout(frame):
    """(fixed, outputs) as Outputs keeps them when `frame` (4-byte length, then a LaneResponse)
    holds an ExecuteResponse of outputs alone, each Tensor's fields in the order the server
    writes them (dtype, shape, data: protobuf's own order), with a known dtype and as many data
    bytes as its shape needs; None for any other frame."""
    try:
        if frame[4] != 0x22:  # LaneResponse.execute, first and alone
            return None
        n, i = _read_varint(frame, 5)
        if i + n != len(frame):
            return None
        fixed, outputs, start = [], [], 0
        while i < len(frame):
            if frame[i] != 0x0A:  # ExecuteResponse.outputs: nothing printed, no offsets
                return None
            n, i = _read_varint(frame, i + 1)
            end = i + n
            if end > len(frame):
                return None
            dtype, shape, size = 0, [], 0
            if i < end and frame[i] == 0x08:
                dtype, i = _read_varint(frame, i + 1)
            if i < end and frame[i] == 0x12:
                n, i = _read_varint(frame, i + 1)
                stop = i + n
                while i < stop:
                    d, i = _read_varint(frame, i)
                    shape.append(d)
                if i != stop:
                    return None
            if i < end and frame[i] == 0x1A:
                size, i = _read_varint(frame, i + 1)
            dtype = _NATIVE.get(dtype)
            if (i + size != end or dtype is None or len(shape) > _MOST_DIMS
                    or dtype.itemsize * _product(shape) != size):
                return None
            fixed.append((start, i, frame[start:i]))
            outputs.append((tuple(shape), dtype, i))
            i = start = end
        fixed.append((start, len(frame), frame[start:]))
        return tuple(fixed), tuple(outputs)
    except IndexError:  # a field cut short
        return None


def _read_varint(data, i):
    """The varint at data[i:] and the index after it."""
    value = shift = 0
    while True:
        b = data[i]
        value |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise IndexError("a varint of over 10 bytes")


def _product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


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


def _await_answer(poll, seconds):
    """Polls (without sleeping) until the connection is readable or `seconds` have passed:
    whether it is, and this thread kept its core meanwhile (preempted, it was keeping another
    thread from running: maybe the server's, on a busy machine)."""
    if poll.poll(0):
        return True
    preempted = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        if poll.poll(0):
            return resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw == preempted
    return False


def _raise_for(resp):
    if resp.code != 0:
        raise KilnError.from_status(_CODES.get(resp.code, "UNKNOWN"), resp.message, resp.details)
