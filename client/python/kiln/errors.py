"""The server's errors as Python exceptions: the ground floor of the package (beside the kiln.v1
stubs whose ErrorInfo it reads), so that every layer may raise and catch them."""
from kiln import _pb


class KilnError(Exception):
    """An error answered by the server: `code` is the gRPC status name (INVALID_ARGUMENT...)
    and the message is the server's; `reason` is its kiln.v1.ErrorReason's name
    (FUNCTION_NOT_FOUND, QUOTA_EXCEEDED...) or None, and `metadata` what the reason is about
    ({"quota": "executions"}). Act on `code` and `reason`, never on the message's text (see
    proto/README.md)."""

    def __init__(self, code, message, reason=None, metadata=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})

    @classmethod
    def from_status(cls, code, message, details):
        """The error of a status whose binary details (`grpc-status-details-bin`, or
        LaneResponse.details) may hold a kiln.v1.ErrorInfo."""
        reason, metadata = None, {}
        if details:
            status = _pb.errors_pb2.RpcStatus()
            try:
                status.ParseFromString(details)
            except Exception:  # not ours (a proxy's): the code alone
                status.Clear()
            for any_detail in status.details:
                info = _pb.errors_pb2.ErrorInfo()
                if any_detail.Is(info.DESCRIPTOR) and any_detail.Unpack(info):
                    known = info.reason in _pb.errors_pb2.ErrorReason.values()
                    reason = _pb.errors_pb2.ErrorReason.Name(info.reason) if known else None
                    reason = None if reason == "ERROR_REASON_UNSPECIFIED" else reason
                    metadata = dict(info.metadata)
        return cls(code, message, reason, metadata)

    def __str__(self):
        return "%s: %s" % (self.code, self.message)
