"""Same-host shared memory (kiln.config.shm) and resident tensors (kiln.resident): calls through
the client's region give the same bits as calls in messages, for every dtype, empty tensors and
a region reused and grown across calls; a killed client leaves nothing behind; resident tensors
and shared variables' minibatches cost no transfer; small updating calls run inline."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import kiln
import kiln.tensor as at
from kiln import _pb
from kiln.client import Client, KilnError, get_client
from kiln.shm import on_this_host
from conftest import running_server
from test_local_execution import assert_bitwise

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


@pytest.fixture(autouse=True)
def small_calls_through_the_region():
    """Every call of these tests through the region, however small."""
    kiln.config.shm_min_bytes = 0
    yield
    kiln.config.shm_min_bytes = 32768


def stats(client=None):
    client = client or get_client()
    return client.call("GetStats", _pb.service_pb2.GetStatsRequest())


def channel_on(on):
    """Turns this process's channel to the test server on or off."""
    get_client().channel().enabled = on


def both_ways(f, *args):
    """f(*args) through the region, then in messages; the messages' bytes received for each."""
    channel_on(True)
    try:
        before = stats().bytes_received
        through_region = f(*args)
        region_bytes = stats().bytes_received - before
        channel_on(False)
        before = stats().bytes_received
        in_messages = f(*args)
        message_bytes = stats().bytes_received - before
    finally:
        channel_on(True)
    return through_region, in_messages, region_bytes, message_bytes


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)


def test_the_test_server_is_on_this_host(server):
    assert on_this_host(server)
    assert on_this_host("localhost:1") and on_this_host("[::1]:1") and on_this_host("unix:/x")
    assert not on_this_host("10.0.0.1:50051") and not on_this_host("kiln.example.com:443")
    assert get_client().channel().enabled


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_through_the_region_equals_messages(server, dtype):
    x = at.tensor(dtype, shape=(None, None), name="x")
    f = kiln.function([x], [x, x[::-1].T, at.zeros_like(x)])
    for shape in [(3, 4), (0, 4), (2, 0), (300, 50)]:
        value = sample(dtype, shape)
        a, b, region_bytes, message_bytes = both_ways(f, value)
        assert_bitwise(a, b)
        assert_bitwise(a[0], value)
        assert region_bytes == 0
        assert message_bytes == value.nbytes


def test_region_reused_and_grown_across_calls(server):
    x = at.dvector("x")
    y = at.lvector("y")
    f = kiln.function([x, y], [x * 2, y.sum(), at.outer(x, x)])
    client = get_client()
    client.channel().forget()  # the next call registers a region of the smallest size
    regions = stats().shm_regions
    first = None
    for n in [5, 0, 100000, 7, 2000, 100000, 3]:
        value = np.arange(n, dtype=float)
        ints = np.arange(3, dtype=np.int64)
        a, b, region_bytes, _ = both_ways(f, value[: min(n, 600)], ints)
        assert_bitwise(a, b)
        assert region_bytes == 0
        if first is None:
            first = client.channel()._shm.name
    # Outputs larger than the room kept for them came back in messages and grew the region.
    big = np.ones(600)
    out = f(big, np.zeros(1, np.int64))
    assert out[2].shape == (600, 600)
    assert client.channel()._shm.size >= 600 * 600 * 8
    assert client.channel()._shm.name != first
    assert stats().shm_regions == regions  # the new region replaced the old one


def test_strided_big_endian_and_list_arguments(server):
    x = at.dmatrix("x")
    f = kiln.function([x], x + 1)
    base = np.arange(24.0).reshape(4, 6)
    for value in [base[:, ::2], base.T, base.astype(">f8"), base.tolist()]:
        a, b, _, _ = both_ways(f, value)
        assert_bitwise(a, b)
        np.testing.assert_array_equal(a, np.asarray(value, dtype=float) + 1)


def test_outputs_are_copies_not_views_of_the_region(server):
    x = at.dvector("x")
    f = kiln.function([x], x * 3)
    first = f(np.ones(4))
    second = f(np.full(4, 2.0))
    np.testing.assert_array_equal(first, np.full(4, 3.0))
    np.testing.assert_array_equal(second, np.full(4, 6.0))
    first[:] = 0  # writable, and writing it changes nothing else
    np.testing.assert_array_equal(f(np.ones(4)), np.full(4, 3.0))


def test_a_region_the_server_lost_is_registered_again(server):
    x = at.dvector("x")
    f = kiln.function([x], x + 1)
    f(np.ones(3))
    client = get_client()
    regions = stats().shm_regions
    client.call("UnregisterRegion", _pb.service_pb2.UnregisterRegionRequest(
        session=client.session(), region="py"))
    assert stats().shm_regions == regions - 1
    np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))  # this one in messages
    np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))  # a new region
    assert stats().shm_regions == regions


def test_updates_and_shared_variables_through_the_region(server):
    w = kiln.shared(np.zeros(3), name="w_region")
    x = at.dvector("x")
    step = kiln.function([x], w.sum(), updates=[(w, w + x)])
    for _ in range(5):
        step(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), np.full(3, 5.0))


def test_bad_requests_name_their_error(server):
    client = get_client()
    session = client.session()
    reg = _pb.service_pb2.RegisterRegionRequest
    with pytest.raises(KilnError) as e:
        client.call("RegisterRegion", reg(session=session, region="r", shm_name="/etc/passwd",
                                          byte_size=8))
    assert e.value.code == "INVALID_ARGUMENT" and "/kiln-" in e.value.message
    with pytest.raises(KilnError) as e:
        client.call("RegisterRegion", reg(session=session, region="r",
                                          shm_name="/kiln-nosuchobject0123456789", byte_size=8))
    assert e.value.code == "NOT_FOUND" and "another host" in e.value.message
    x = at.dvector("x")
    f = kiln.function([x], x + 1)
    req = _pb.service_pb2.ExecuteRequest(function_id=f.function_id, session=session)
    ref = req.arg_refs.add(index=0, dtype=_pb.types_pb2.DTYPE_FLOAT64, shape=[4])
    ref.region.region, ref.region.offset, ref.region.size = "py", (1 << 40), 32
    with pytest.raises(KilnError) as e:
        client.call("Execute", req)
    assert e.value.code == "INVALID_ARGUMENT" and "outside the region" in e.value.message


def test_a_server_that_cannot_open_the_region_means_messages(server):
    with running_server("--shm=false") as address:
        client = Client(address)
        assert client.channel().enabled
        kiln.config.server = address
        try:
            x = at.dvector("x")
            f = kiln.function([x], x * 2)
            np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 2.0))
            assert not get_client(address).channel().enabled
            assert stats(get_client(address)).shm_regions == 0
        finally:
            kiln.config.server = server
    kiln.config.shm = "off"
    try:
        assert not Client(server).channel().enabled
    finally:
        kiln.config.shm = "auto"


KILLED_CLIENT = """
import os, signal, sys
import numpy as np
import kiln, kiln.tensor as at
x = at.dvector("x")
f = kiln.function([x], x * 2)
f(np.ones(100000))
print(kiln.client.get_client().channel()._shm.name, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_client_leaves_nothing_behind():
    with running_server("--shm_ttl=1s") as address:
        env = dict(os.environ, KILN_SERVER=address,
                   PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        proc = subprocess.run([sys.executable, "-c", KILLED_CLIENT], env=env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        name = proc.stdout.strip()
        assert name.startswith("kiln-")
        assert not os.path.exists("/dev/shm/" + name)  # unlinked once registered
        client = Client(address)
        deadline = time.time() + 10
        while stats(client).shm_regions and time.time() < deadline:
            time.sleep(0.1)
        assert stats(client).shm_regions == 0 and stats(client).shm_bytes == 0


def test_resident_tensors_cost_no_transfer(server):
    x = at.dmatrix("x")
    w = at.dvector("w")
    f = kiln.function([x, w], at.dot(x, w))
    data = np.random.default_rng(1).standard_normal((2000, 50))
    weights = np.ones(50)
    resident = kiln.resident(data)
    assert resident.shape == (2000, 50) and resident.dtype == "float64"
    channel_on(False)  # messages: the handle alone travels
    try:
        before = stats().bytes_received
        for _ in range(5):
            out = f(resident, weights)
        assert stats().bytes_received - before == 5 * weights.nbytes
    finally:
        channel_on(True)
    np.testing.assert_allclose(out, data @ weights)
    np.testing.assert_allclose(f(resident, weights), data @ weights)  # through the region
    with pytest.raises(TypeError, match="does not fit"):
        f(kiln.resident(np.ones(3)), weights)
    local = kiln.function([x, w], at.dot(x, w), mode=kiln.Mode(execute="local"))
    with pytest.raises(TypeError, match="runs locally"):
        local(resident, weights)
    resident.delete()
    with pytest.raises(KilnError) as e:
        f(resident, weights)
    assert e.value.code == "NOT_FOUND" and "resident tensor" in e.value.message


def test_resident_tensors_go_when_collected_or_expired():
    with running_server("--session_ttl=1s") as address:
        kiln_client = Client(address)
        kept = kiln_client.resident(np.ones(4))
        dropped = kiln_client.resident(np.ones(4))
        sessions = stats(kiln_client).sessions
        handle = dropped.handle
        del dropped  # garbage collected: deleted on the server
        assert stats(kiln_client).sessions == sessions - 1
        req = _pb.service_pb2.DeleteTensorRequest(handle=handle)
        with pytest.raises(KilnError, match="NOT_FOUND"):
            kiln_client.call("DeleteTensor", req)
        time.sleep(2.5)  # idle past --session_ttl
        with pytest.raises(KilnError, match="NOT_FOUND"):
            kiln_client.call("DeleteTensor", _pb.service_pb2.DeleteTensorRequest(
                handle=kept.handle))


def test_minibatches_of_a_shared_dataset_cost_no_transfer(server):
    """Aesara's minibatch pattern: the dataset in a shared variable, each call names a batch
    by index through givens; after the first upload the calls send nothing but the index."""
    rng = np.random.default_rng(2)
    data = rng.standard_normal((1000, 20))
    labels = (data[:, 0] > 0).astype(float)
    X, Y = kiln.shared(data, name="X_batches"), kiln.shared(labels, name="Y_batches")
    w = kiln.shared(np.zeros(20), name="w_batches")
    i = at.lscalar("i")
    x, y = at.dmatrix("x"), at.dvector("y")
    bs = 100
    p = at.sigmoid(at.dot(x, w))
    cost = ((p - y) ** 2).mean()
    train = kiln.function([i], cost, updates=[(w, w - 0.5 * kiln.grad(cost, w))],
                          givens={x: X[i * bs:(i + 1) * bs], y: Y[i * bs:(i + 1) * bs]})
    first = train(0)
    before = stats().bytes_received
    for epoch in range(3):
        for k in range(10):
            last = train(k)
    index_bytes = 30 * 8
    assert stats().bytes_received - before <= index_bytes
    assert last < first


@pytest.mark.parametrize("bound,inline", [("1s", True), ("0s", False)])
def test_small_updating_calls_run_inline_under_the_bound(server, bound, inline):
    """With --inline_max_call above every call's time, small updating calls over gRPC all run on
    the gRPC thread; with 0 none does. (The default, 100us, depends on the machine's speed.)"""
    with running_server("--inline_max_call=" + bound) as address:
        kiln.config.server, kiln.config.lane = address, "off"
        try:
            acc = kiln.shared(np.zeros(()), name="acc_inline")
            bump = kiln.function([], [], updates=[(acc, acc + 1)])
            for shm in (True, False):
                channel_on(shm)
                try:
                    bump()
                    before = stats().inline_executions
                    for _ in range(50):
                        bump()
                    assert stats().inline_executions - before == (50 if inline else 0)
                finally:
                    channel_on(True)
            assert acc.get_value() == 102
        finally:
            kiln.config.server, kiln.config.lane = server, "auto"


def test_small_calls_go_in_messages_by_default(server):
    kiln.config.shm_min_bytes = 32768
    x = at.dvector("x")
    f = kiln.function([x], x * 2)
    for n, in_messages in [(10, 80), (100000, 0)]:
        before = stats().bytes_received
        np.testing.assert_array_equal(f(np.ones(n)), np.full(n, 2.0))
        assert stats().bytes_received - before == in_messages
