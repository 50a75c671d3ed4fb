"""The connection to a Kiln server: one gRPC channel and one session per address, and the
server's errors as Python exceptions carrying its message and its machine-readable reason."""
import hashlib
import json
import os
import threading

import grpc

from kiln import _pb
from kiln.config import config
from kiln.errors import KilnError
from kiln.lane import Lane, LaneError

PROTOCOL = 2


# gRPC retries a call that finds a replica gone (UNAVAILABLE) on another, after a short backoff:
# a replica's death behind the front costs latency, not errors.
RETRY_POLICY = json.dumps({"methodConfig": [{
    "name": [{"service": "kiln.v1.Kiln"}],
    "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.05s", "maxBackoff": "1s",
                    "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]})


def route_of(method, request):
    """The `kiln-route` key a front hashes to pick a replica: the session for the calls of a
    session (its updates then take turns on one replica), else the function id, else a hash of
    the compile request (the same graph goes to the replica that has it); None: any replica."""
    session = getattr(request, "session", "")
    if session:
        return session
    function_id = getattr(request, "function_id", "")
    if function_id:
        return function_id
    if method == "Compile":
        return route_of_bytes(request.SerializeToString(deterministic=True))
    return None


def route_of_bytes(body):
    """route_of a serialized CompileRequest."""
    return hashlib.sha256(body).hexdigest()[:32]


def _read(path):
    with open(path, "rb") as f:
        return f.read()


class Client:
    """Calls of kiln.v1.Kiln on one server, or on a front of several. `token`, `tls_ca`,
    `tls_cert` and `tls_key` default to kiln.config's (KILN_TOKEN, KILN_TLS_CA...)."""

    def __init__(self, address, token=None, tls_ca=None, tls_cert=None, tls_key=None):
        self.address = address
        token = token or config.token
        tls_ca, tls_cert = tls_ca or config.tls_ca, tls_cert or config.tls_cert
        tls_key = tls_key or config.tls_key
        self._auth = [("authorization", "Bearer " + token)] if token else []
        options = [("grpc.max_receive_message_length", -1),
                   ("grpc.max_send_message_length", -1),
                   ("grpc.enable_retries", 1), ("grpc.service_config", RETRY_POLICY)]
        if tls_ca or tls_cert:
            if bool(tls_cert) != bool(tls_key):
                raise ValueError("mutual TLS needs both KILN_TLS_CERT and KILN_TLS_KEY")
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read(tls_ca) if tls_ca else None,
                private_key=_read(tls_key) if tls_key else None,
                certificate_chain=_read(tls_cert) if tls_cert else None)
            self._channel = grpc.secure_channel(address, credentials, options=options)
        else:
            self._channel = grpc.insecure_channel(address, options=options)
        self._stub = _pb.service_pb2_grpc.KilnStub(self._channel)
        self._raw_stubs = {}  # per method, its call of serialized requests (call_serialized)
        self._session = None
        self._channel_of_shm = None  # kiln.shm.Channel, made on first use
        self._lock = threading.Lock()
        version = self.call("GetVersion", _pb.service_pb2.GetVersionRequest(
            client_protocol=PROTOCOL), wait_for_ready=True, timeout=10)
        self.server_version = version.server_version
        self._lane = Lane(self, version)

    def call(self, method, request, route=None, **kwargs):
        """The RPC `method` with `request`; KilnError on a non-OK status. Each call carries
        its route (`route`, else route_of's) and a call id, the same on its retries, so a
        retried update applies once."""
        kwargs.setdefault("timeout", config.timeout)
        if method == "Execute" and self._lane.usable:
            resp = self._execute_on_lane(request, kwargs["timeout"])
            if resp is not None:
                return resp
        metadata = list(kwargs.pop("metadata", ()))
        stub = kwargs.pop("_stub", None) or getattr(self._stub, method)
        route = route or route_of(method, request)
        if route:
            metadata.append(("kiln-route", route))
        metadata.append(("kiln-call-id", os.urandom(16).hex()))
        kwargs["metadata"] = metadata + self._auth
        try:
            return stub(request, **kwargs)
        except grpc.RpcError as e:
            code = e.code().name if e.code() is not None else "UNKNOWN"
            if code == "UNAVAILABLE":
                raise KilnError(code, "cannot reach the Kiln server at %s: %s"
                                % (self.address, e.details())) from None
            details = dict(e.trailing_metadata() or ()).get("grpc-status-details-bin")
            raise KilnError.from_status(code, e.details(), details) from None

    def call_serialized(self, method, body, route, **kwargs):
        """call() of a request already serialized (`body`, bytes), so that a large request
        (a model's CompileRequest takes milliseconds) is serialized once for its route and the
        wire."""
        stub = self._raw_stubs.get(method)
        if stub is None:
            response = getattr(_pb.service_pb2, method + "Response")
            stub = self._raw_stubs[method] = self._channel.unary_unary(
                "/kiln.v1.Kiln/" + method, request_serializer=None,
                response_deserializer=response.FromString)
        return self.call(method, body, route=route, _stub=stub, **kwargs)

    def _execute_on_lane(self, request, timeout):
        """Execute over the same-host lane (kiln.lane); None when this thread cannot use it."""
        return self.lane_call(request.SerializeToString(), timeout)

    def lane_call(self, body, timeout):
        """Execute's response to a serialized ExecuteRequest over the same-host lane; None when
        this thread cannot use it (the caller then sends it over gRPC)."""
        try:
            return self._lane.call(body, timeout)
        except LaneError as e:
            raise KilnError("UNAVAILABLE", str(e)) from None

    def session(self):
        """This process's session on the server, created on first use."""
        with self._lock:
            if self._session is None:
                self._session = self.call("CreateSession",
                                          _pb.service_pb2.CreateSessionRequest()).session
            return self._session

    def channel(self):
        """This client's shared-memory channel (kiln.shm), made on first use."""
        with self._lock:
            if self._channel_of_shm is None:
                from kiln.shm import Channel
                self._channel_of_shm = Channel(self)
            return self._channel_of_shm

    def resident(self, value):
        """kiln.resident on this client's server."""
        from kiln.shm import Resident
        return Resident(value, self)


_clients = {}
_clients_lock = threading.Lock()


def get_client(address=None):
    """The client of `address` (default: kiln.config.server), connected once."""
    address = address or config.server
    with _clients_lock:
        if address not in _clients:
            _clients[address] = Client(address)
        return _clients[address]
