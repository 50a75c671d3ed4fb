"""Same-host shared memory for Execute (kiln.config.shm): when the server runs on this host, a
call's arguments are written into a shared-memory region registered with the session, and its
outputs come back through the same region, instead of being copied into gRPC messages. The
region's name is unlinked once the server has opened it, so nothing is left behind if this
process dies; the server closes its side when the session ends or after --shm_ttl idle."""
import ipaddress
import math
import secrets
import threading
import weakref
from multiprocessing import shared_memory

import numpy as np

from kiln import _pb, wire
from kiln.errors import KilnError
from kiln.config import config

_ALIGN = 64                 # offsets of arguments and outputs in the region
_MIN_BYTES = 1 << 20        # the smallest region
_MAX_BYTES = 1 << 30        # past this, calls use messages
_REGION = "py"              # the region's name in the session (one per client)


def on_this_host(address):
    """True when `address` (host:port, [v6]:port or unix:path) is a loopback address."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0].strip("[]") if ":" in address else address
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _aligned(n):
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


class Channel:
    """One client's region. A call borrows it (one call at a time: a call that finds it in use
    sends messages), writes its arguments, and reads its outputs."""

    def __init__(self, client):
        self._client = client
        self._shm = None
        self._lock = threading.Lock()
        mode = config.shm
        if mode not in ("auto", "on", "off"):
            raise ValueError("kiln.config.shm %r: expected auto, on or off" % (mode,))
        self.enabled = mode == "on" or (mode == "auto" and on_this_host(client.address))

    def borrow(self):
        """The channel, locked for one call, or None (off, or in use by another thread)."""
        if not self.enabled or not self._lock.acquire(blocking=False):
            return None
        return self

    def release(self):
        self._lock.release()

    def fill(self, req, args, output_bytes):
        """Puts args in req as region references (a resident tensor by its handle), with room
        for `output_bytes` of outputs after them; False (req untouched) when no region fits or
        the call moves fewer than kiln.config.shm_min_bytes."""
        if sum(getattr(a, "nbytes", 0) for a in args) + output_bytes < config.shm_min_bytes:
            return False  # lists and scalars counted as nothing: their bytes are few
        layout, end = [], 0
        for data in args:
            if isinstance(data, Resident):
                layout.append(None)
                continue
            a = np.asarray(data)
            at = _aligned(end) if a.nbytes else 0
            layout.append((a, at))
            end = max(end, at + a.nbytes)
        need = _aligned(end) + output_bytes
        if need < config.shm_min_bytes or not self._reserve(need):
            return False
        for k, (data, place) in enumerate(zip(args, layout)):
            ref = req.arg_refs.add(index=k)
            if place is None:
                ref.handle = data.handle
                continue
            a, at = place
            ref.dtype = wire.dtype_to_proto(a.dtype)
            ref.shape.extend(int(s) for s in a.shape)
            ref.region.region, ref.region.offset, ref.region.size = _REGION, at, a.nbytes
            if a.nbytes:
                np.copyto(np.ndarray(a.shape, a.dtype.newbyteorder("="), self._shm.buf, at), a)
        out = _aligned(end)
        req.output_region.region, req.output_region.offset = _REGION, out
        req.output_region.size = self._shm.size - out
        return True

    def outputs(self, resp):
        """The outputs of a response to a request that fill() prepared, copied out."""
        out = []
        for k, msg in enumerate(resp.outputs):
            at = resp.output_offsets[k] if k < len(resp.output_offsets) else -1
            if at < 0:
                out.append(wire.tensor_from_proto(msg))
                continue
            dtype = wire.dtype_from_proto(msg.dtype)
            shape = tuple(msg.shape)
            if not math.prod(shape):
                out.append(np.empty(shape, dtype))
            else:
                out.append(np.ndarray(shape, dtype, self._shm.buf, at).copy())
        return out

    def forget(self):
        """Drops the region (the server lost it): the next call registers a new one."""
        if self._shm is not None:
            self._shm.close()
            self._shm = None

    def _reserve(self, nbytes):
        """A registered region of at least `nbytes`; False when there can be none."""
        if self._shm is not None and self._shm.size >= nbytes:
            return True
        if nbytes > _MAX_BYTES:
            return False
        size = max(_MIN_BYTES, 1 << (max(nbytes, 1) - 1).bit_length())
        shm = shared_memory.SharedMemory("kiln-" + secrets.token_hex(16), create=True, size=size)
        try:
            req = _pb.service_pb2.RegisterRegionRequest(
                session=self._client.session(), region=_REGION, shm_name="/" + shm.name,
                byte_size=size)
            self._client.call("RegisterRegion", req)
        except Exception as e:
            shm.close()
            shm.unlink()
            if isinstance(e, KilnError) and config.shm != "on":
                self.enabled = False  # another host, a container, or --shm=false: messages
                return False
            raise
        shm.unlink()  # the server holds it open now; nothing stays behind if this process dies
        self.forget()
        self._shm = shm
        return True


class Resident:
    """A tensor uploaded once to the server (kiln.resident), passed to functions by handle:
    calls then send no data for it. Deleted from the server with delete(), or when this object
    is garbage collected, or after the server's --session_ttl without use."""

    def __init__(self, value, client):
        a = np.asarray(value)
        req = _pb.service_pb2.PutTensorRequest()
        wire.tensor_to_proto(a, req.value)
        self.handle = client.call("PutTensor", req).handle
        self.dtype = a.dtype.newbyteorder("=").name
        self.shape = a.shape
        self.ndim = a.ndim
        self.client = client
        self._finalizer = weakref.finalize(self, _delete_resident, client, self.handle)
        self._finalizer.atexit = False

    def delete(self):
        """Deletes the tensor on the server now."""
        self._finalizer()

    def __repr__(self):
        return "Resident(handle=%s, dtype=%s, shape=%s)" % (self.handle, self.dtype, self.shape)


def _delete_resident(client, handle):
    try:
        client.call("DeleteTensor", _pb.service_pb2.DeleteTensorRequest(handle=handle))
    except Exception:  # the server is gone or the tensor expired: nothing to delete
        pass
