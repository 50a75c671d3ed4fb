"""The machine-readable reasons of the server's errors (proto/kiln/v1/errors.proto) reach the
Python client over gRPC and over the same-host lane (KilnError.reason and .metadata), and the
client acts on them: an evicted function is compiled again, a lost region sends the call in
messages and the next call registers a new one."""
import contextlib

import numpy as np
import pytest

import kiln
import kiln.tensor as at
from kiln import _pb, wire
from kiln.client import Client, KilnError, get_client
from conftest import running_server


def stats(client):
    return client.call("GetStats", _pb.service_pb2.GetStatsRequest())


@pytest.fixture(params=["auto", "off"], ids=["lane", "grpc"])
def lane(request):
    """Execute over the same-host lane, or over gRPC."""
    kiln.config.lane = request.param
    yield request.param
    kiln.config.lane = "auto"


@contextlib.contextmanager
def serving(*flags):
    """A server of its own with these flags as kiln.config.server, for the with-block: its
    client."""
    before = kiln.config.server
    with running_server(*flags) as address:
        kiln.config.server = address
        try:
            yield get_client(address)
        finally:
            kiln.config.server = before


def test_an_evicted_function_is_compiled_again(lane):
    with serving("--cache_bytes=1") as client:  # one function at a time
        assert client._lane.usable == (lane == "auto")
        x = at.dvector("x")
        f = kiln.function([x], x + 1)
        g = kiln.function([x], x * 3)  # evicts f
        req = _pb.service_pb2.ExecuteRequest(function_id=f.function_id)
        wire.tensor_to_proto(np.ones(3), req.args.add())
        with pytest.raises(KilnError) as e:
            client.call("Execute", req)
        assert e.value.code == "NOT_FOUND" and e.value.reason == "FUNCTION_NOT_FOUND"
        assert e.value.metadata == {"function_id": f.function_id}
        np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))  # compiled again
        np.testing.assert_array_equal(g(np.ones(3)), np.full(3, 3.0))  # and g
        assert stats(client).compiles == 4
        assert stats(client).lane_connections == (1 if lane == "auto" else 0)


def test_a_lost_region_sends_the_call_in_messages(lane):
    kiln.config.shm_min_bytes = 0  # every call through the region
    try:
        with serving() as client:
            x = at.dvector("x")
            f = kiln.function([x], x + 1)
            np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))
            assert stats(client).shm_regions == 1
            drop = _pb.service_pb2.UnregisterRegionRequest(session=client.session(), region="py")
            client.call("UnregisterRegion", drop)
            with pytest.raises(KilnError) as e:
                client.call("UnregisterRegion", drop)
            assert e.value.reason == "REGION_UNKNOWN" and e.value.metadata == {"region": "py"}
            np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))  # in messages
            assert stats(client).shm_regions == 0
            np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))  # a new region
            assert stats(client).shm_regions == 1

            req = _pb.service_pb2.ExecuteRequest(function_id=f.function_id,
                                                 session=client.session())
            ref = req.arg_refs.add(index=0, dtype=_pb.types_pb2.DTYPE_FLOAT64, shape=[3])
            ref.region.region, ref.region.size = "never-registered", 24
            with pytest.raises(KilnError) as e:
                client.call("Execute", req)  # over the lane too, with its reason
            assert e.value.code == "NOT_FOUND" and e.value.reason == "REGION_UNKNOWN"
            assert stats(client).lane_connections == (1 if lane == "auto" else 0)
    finally:
        kiln.config.shm_min_bytes = 32768


def test_quota_protocol_and_session_reasons():
    with running_server("--quota_sessions=1") as address:
        client = Client(address)
        client.session()  # the tenant's one session
        with pytest.raises(KilnError) as e:
            client.call("CreateSession", _pb.service_pb2.CreateSessionRequest())
        assert e.value.code == "RESOURCE_EXHAUSTED" and e.value.reason == "QUOTA_EXCEEDED"
        assert e.value.metadata["quota"] == "sessions"
        with pytest.raises(KilnError) as e:
            client.call("GetVersion", _pb.service_pb2.GetVersionRequest(client_protocol=99))
        assert e.value.code == "FAILED_PRECONDITION" and e.value.reason == "PROTOCOL_MISMATCH"
        assert e.value.metadata == {"client_protocol": "99", "server_protocol": "2"}
        with pytest.raises(KilnError) as e:
            client.call("GetShared", _pb.service_pb2.GetSharedRequest(session="0" * 32, name="w"))
        assert e.value.code == "NOT_FOUND" and e.value.reason == "SESSION_NOT_FOUND"
        with pytest.raises(KilnError) as e:  # a bad graph: its code and message alone
            client.call("Compile", _pb.service_pb2.CompileRequest(
                graph=_pb.graph_pb2.Graph(outputs=[_pb.graph_pb2.ValueRef(input=7)])))
        assert e.value.code == "INVALID_ARGUMENT" and e.value.reason is None
        assert e.value.metadata == {}
