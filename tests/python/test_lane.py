"""The same-host lane (kiln.config.lane): Execute over the server's Unix socket gives the same bits
as over gRPC, with shared variables, regions and resident tensors; it is used by itself on this
host, never with a socket of another process, per thread and per forked process; a client
killed while connected leaves no connection behind; a restarted server is found again."""
import gc
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
import weakref

import numpy as np
import pytest

import kiln
import kiln.tensor as at
from kiln import _pb
from kiln.client import Client, KilnError, get_client
from kiln.lane import Lane
from conftest import running_server
from test_local_execution import assert_bitwise
from test_tutorial import logistic_regression


def stats(client=None):
    return (client or get_client()).call("GetStats", _pb.service_pb2.GetStatsRequest())


def without_grpc_execute(client):
    """A stub whose Execute fails: a call that still works went over the lane."""
    class Stub:
        def __init__(self, stub):
            self._stub = stub

        def __getattr__(self, name):
            if name == "Execute":
                raise AssertionError("Execute went over gRPC")
            return getattr(self._stub, name)
    client._stub = Stub(client._stub)


def test_calls_take_the_lane_by_themselves(server):
    client = Client(server)
    assert client._lane.usable
    version = client.call("GetVersion", _pb.service_pb2.GetVersionRequest())
    assert version.local_socket and version.local_pid > 0 and len(version.instance) == 32
    without_grpc_execute(client)
    req = _pb.service_pb2.ExecuteRequest()
    x = at.dvector("x")
    f = kiln.function([x], x + x ** 10)
    req.function_id = f.function_id
    from kiln import wire
    wire.tensor_to_proto(np.array([1.0, 2.0, 3.0]), req.args.add())
    resp = client.call("Execute", req)
    np.testing.assert_array_equal(wire.tensor_from_proto(resp.outputs[0]), [2.0, 1026.0, 59052.0])
    assert stats(client).lane_connections >= 1


@pytest.mark.parametrize("shm", [False, True])
def test_lane_and_grpc_give_the_same_bits(server, shm):
    """The tutorial's training step with updates, three steps each way, outputs and shared
    variables compared bit for bit; through the region and in messages."""
    results = []
    for lane in ("auto", "off"):
        kiln.config.lane = lane
        kiln.config.shm_min_bytes = 0 if shm else 1 << 40
        try:
            client = Client(server)
            X, Y, _, w, b, train, _ = logistic_regression(0.01)
            train._runner.client = client
            assert client._lane.usable == (lane == "auto")
            outs = [train(X, Y) for _ in range(3)]
            results.append((outs, w.get_value(), b.get_value()))
        finally:
            kiln.config.lane, kiln.config.shm_min_bytes = "auto", 32768
    (lane_outs, lane_w, lane_b), (grpc_outs, grpc_w, grpc_b) = results
    for a, b in zip(lane_outs, grpc_outs):
        for u, v in zip(a, b):
            assert_bitwise(u, v)
    assert_bitwise(lane_w, grpc_w)
    assert_bitwise(np.asarray(lane_b), np.asarray(grpc_b))


def test_errors_over_the_lane_are_the_servers(server):
    client = Client(server)
    req = _pb.service_pb2.ExecuteRequest(function_id="f" * 64)
    with pytest.raises(KilnError) as e:
        client.call("Execute", req)
    assert e.value.code == "NOT_FOUND" and "compile it again" in e.value.message
    assert client._lane._local.sock is not None  # the connection stays


def test_off_means_grpc_and_on_without_a_lane_is_an_error(server):
    kiln.config.lane = "off"
    try:
        assert not Client(server)._lane.usable
    finally:
        kiln.config.lane = "auto"
    with running_server("--local_socket=") as address:
        assert not Client(address)._lane.usable
        kiln.config.lane = "on"
        try:
            with pytest.raises(ValueError, match="offers no lane"):
                Client(address)
        finally:
            kiln.config.lane = "auto"
    with pytest.raises(ValueError, match="expected auto, on or off"):
        kiln.config.lane = "maybe"
        try:
            Client(server)
        finally:
            kiln.config.lane = "auto"


def test_a_socket_held_by_another_process_gets_no_token(server):
    """The lane checks the socket's owner (SO_PEERCRED) against GetVersion's local_pid before its
    hello: a listener of another process sees no byte, and calls go over gRPC."""
    path = os.path.join(tempfile.mkdtemp(), "fake.sock")
    fake = socket.socket(socket.AF_UNIX)
    fake.bind(path)
    fake.listen(1)
    fake.settimeout(30)  # a lane that never connects fails the test, never hangs the run
    received = []

    def serve():
        try:
            conn, _ = fake.accept()
        except OSError:
            received.append(None)
            return
        conn.settimeout(2)
        try:
            received.append(conn.recv(100))
        except OSError:
            received.append(b"")
        conn.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    client = Client(server)
    client._auth = [("authorization", "Bearer secret-token")]
    version = types.SimpleNamespace(local_socket=path, local_pid=os.getpid() + 1,
                                    instance=client._lane._instance)
    lane = Lane(client, version)
    lane._refresh = lambda: None  # keep the fake: no second look at the server's lane
    x = at.dvector("x")
    f = kiln.function([x], x * 2)
    assert lane.execute(_pb.service_pb2.ExecuteRequest(function_id=f.function_id)) is None
    t.join()
    fake.close()
    assert received == [b""]


def _child_call(address, conn):
    kiln.config.server = address
    x = at.dvector("x")
    f = kiln.function([x], x * 3)
    conn.send((f(np.arange(4.0)).tolist(), get_client()._lane._local.sock is not None))


def test_threads_and_forked_children_have_their_own_connections(server):
    x = at.dvector("x")
    f = kiln.function([x], x + 1)
    f(np.zeros(2))  # this process's connection exists before the fork
    outs, errors = [], []

    def work(k):
        try:
            for _ in range(50):
                outs.append(float(f(np.full(3, float(k)))[0]) == k + 1)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(outs) == 200 and all(outs)
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_child_call, args=(server, child))
    p.start()
    result, used_lane = parent.recv()
    p.join(timeout=30)
    assert result == [0.0, 3.0, 6.0, 9.0] and used_lane
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])  # the parent's still works


CLIENT = """
import sys, numpy as np
import kiln, kiln.tensor as at
kiln.config.server = sys.argv[1]
x = at.dvector("x")
f = kiln.function([x], x * 2)
f(np.ones(3))
print("ready", flush=True)
sys.stdin.read()
"""


def test_a_killed_client_leaves_no_connection(server):
    with running_server() as address:
        client = Client(address)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen([sys.executable, "-c", CLIENT, address], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == b"ready"
        assert stats(client).lane_connections == 1
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        for _ in range(200):
            if stats(client).lane_connections == 0:
                break
            time.sleep(0.05)
        assert stats(client).lane_connections == 0


def test_a_restarted_server_is_found_again(server):
    """A server restarted on the same port (a new process behind the same socket path): the
    client's next calls reach it, over the lane again, with no error."""
    with running_server() as address:
        port = address.rsplit(":", 1)[1]
    x = at.dvector("x")
    kiln.config.server = address
    try:
        with running_server("--port", port):
            f = kiln.function([x], x - 1)
            np.testing.assert_array_equal(f(np.ones(2)), [0.0, 0.0])
            lane = get_client(address)._lane
            old_pid = lane._pid
            assert lane._local.sock is not None
        with running_server("--port", port):
            for _ in range(3):
                np.testing.assert_array_equal(f(np.ones(2)), [0.0, 0.0])
            assert lane._pid != old_pid and lane._local.sock is not None
    finally:
        kiln.config.server = server


def test_large_arguments_and_outputs_in_messages_over_the_lane(server):
    """2.4 MB each way in the messages (no region): sent in parts, read in pieces, bit for bit."""
    kiln.config.shm = "off"
    try:
        client = Client(server)
        without_grpc_execute(client)
        x = at.dvector("x")
        f = kiln.function([x], [x * 2, x.sum()])
        f._runner.client = client
        a = np.random.default_rng(2).standard_normal(300_000)
        doubled, total = f(a)
        assert_bitwise(doubled, a * 2)
        np.testing.assert_allclose(total, a.sum(), rtol=1e-12)
    finally:
        kiln.config.shm = "auto"


def test_a_server_killed_mid_call_is_unavailable_not_a_hang(server):
    """The lane breaks under a call (the server SIGKILLed): the call ends with UNAVAILABLE
    saying so, since whether it ran is unknown; nothing waits forever."""
    with running_server() as address:
        kiln.config.server = address
        try:
            m = at.dmatrix("m")
            y = m
            for _ in range(60):  # over a second of products at 1024x1024
                y = at.tanh(at.dot(y, m))
            f = kiln.function([m], y)
            lane = get_client(address)._lane
            outcome = {}

            def call():
                try:
                    f(np.full((1024, 1024), 1e-3))
                    outcome["done"] = True
                except KilnError as e:
                    outcome["error"] = e
            t = threading.Thread(target=call)
            t.start()
            time.sleep(0.3)
            os.kill(lane._pid, signal.SIGKILL)
            t.join(timeout=60)
            assert not t.is_alive()
            error = outcome.get("error")
            assert error is not None and error.code == "UNAVAILABLE", outcome
            assert "broke during a call" in error.message
        finally:
            kiln.config.server = server


def test_a_connection_the_server_closed_while_idle_is_made_again(server):
    """--local_timeout closes an idle connection; the client's next call notices (it looks at a
    connection idle for over a second) and connects again, still over the lane."""
    from kiln import wire
    with running_server("--local_timeout=300ms") as address:
        kiln.config.server = address
        try:
            client = get_client(address)
            without_grpc_execute(client)
            x = at.dvector("x")
            f = kiln.function([x], x + 2)
            req = _pb.service_pb2.ExecuteRequest(function_id=f.function_id)
            wire.tensor_to_proto(np.ones(2), req.args.add())
            for _ in range(2):
                resp = client.call("Execute", req)
                np.testing.assert_array_equal(wire.tensor_from_proto(resp.outputs[0]),
                                              [3.0, 3.0])
                time.sleep(1.3)
                assert stats(client).lane_connections == 0  # closed by the server
        finally:
            kiln.config.server = server


def _fast_answers(runner):
    """Records, per call of runner.fast, whether it answered (rather than NotImplemented), or
    "raised"."""
    answered = []
    real = runner.fast

    def recorded(args):
        try:
            out = real(args)
        except Exception:
            answered.append("raised")
            raise
        answered.append(out is not NotImplemented)
        return out
    runner.fast = recorded
    return answered


def test_plain_calls_take_the_fast_path_with_the_same_bits(server):
    """Arrays that fit the inputs as they are go over the lane with the request written by the
    runner (ServerRunner.fast): the same bits as the general path and gRPC; anything else
    (another dtype, a list, a wrong shape, a keyword) takes the general path, with its
    conversions and its errors."""
    theta = at.TensorType("float64", shape=(4,))("theta")
    m = at.dmatrix("m")
    k = at.lscalar("k")
    outs = [(theta ** 2).sum() * k, at.dot(m, theta) + k, m > 0, k * 2, m[:0]]
    fast = kiln.function([theta, m, k], outs)
    general = kiln.function([theta, m, k], outs)
    general._runner.fast = None
    assert fast._runner.fast is not None
    fast._runner.client = Client(server)  # a client of its own, without gRPC's Execute
    without_grpc_execute(fast._runner.client)
    answered = _fast_answers(fast._runner)
    rng = np.random.default_rng(5)
    t, mat, kk = rng.standard_normal(4), rng.standard_normal((3, 4)), np.array(3, dtype="int64")
    want = general(t, mat, kk)
    assert_bitwise(fast(t, mat, kk), want)
    # Another shape of the dynamic input (a new kept head), a non-contiguous view, Fortran order.
    big = rng.standard_normal((6, 8))
    for x in (rng.standard_normal((5, 4)), big[::2, ::2], np.asfortranarray(mat)):
        assert_bitwise(fast(t, x, kk), general(t, x, kk))
    assert answered == [True] * 4
    # Not as they are: the general path converts or refuses.
    assert_bitwise(fast(t.tolist(), mat, kk), want)
    assert_bitwise(fast(t, mat, kk.astype("int32")), want)
    assert_bitwise(fast(t, mat.astype("float32"), kk), general(t, mat.astype("float32"), kk))
    with pytest.raises(TypeError, match="not compatible"):
        fast(np.zeros(5), mat, kk)
    with pytest.raises(TypeError, match="Wrong number of dimensions"):
        fast(t, np.zeros(4), kk)
    with pytest.raises(TypeError, match="without risking loss"):
        fast(t.astype("complex128"), mat, kk)
    assert answered == [True] * 4 + [False] * 6
    assert_bitwise(fast(t, mat, k=kk), want)  # a keyword: no fast path tried
    assert len(answered) == 10
    # The server's errors are raised as they are; the connection stays.
    with pytest.raises(KilnError) as e:
        fast(t, np.zeros((2, 5)), kk)
    assert e.value.code == "INVALID_ARGUMENT"
    assert fast._runner.client._lane._local.sock is not None
    # The lane turned off (as the benchmark's over_grpc does): gRPC, the same bits.
    g = kiln.function([theta, m, k], outs)
    lane = g._runner.client._lane
    lane.usable = False
    try:
        assert_bitwise(g(t, mat, kk), want)
    finally:
        lane.usable = True


def _slow_sum(x):
    """The function of sum(y), y six products from outer(x, x): a dozen long steps."""
    y = at.outer(x, x)
    for _ in range(6):
        y = at.tanh(at.dot(y, y) * 1e-3)
    return kiln.function([x], y.sum())


def _deadline_passes(f, a):
    """f(a) under kiln.config.timeout = 1 ms ends with the server's DEADLINE_EXCEEDED."""
    kiln.config.timeout = 1e-3
    try:
        with pytest.raises(KilnError) as e:
            f(a)
        assert e.value.code == "DEADLINE_EXCEEDED", e.value
    finally:
        kiln.config.timeout = None


def _fast_and_general(seed):
    """(f, g, args, g(*args)): f and g compute [m @ x, sum(x ** 2)], g without a fast path."""
    x, m = at.dvector("x"), at.dmatrix("m")
    f = kiln.function([x, m], [at.dot(m, x), (x ** 2).sum()])
    g = kiln.function([x, m], [at.dot(m, x), (x ** 2).sum()])
    g._runner.fast = None
    rng = np.random.default_rng(seed)
    args = rng.standard_normal(4), rng.standard_normal((3, 4))
    return f, g, args, g(*args)


def test_plain_calls_through_the_ring_are_framed_and_read_in_cpp(server, monkeypatch):
    """A call of C-ordered arrays whose frame fits the ring's slot is written into the slot and
    read from it by kiln._core.PlainLaneCall: no frame is built in Python (Lane.exchange is not
    called); a Fortran-ordered argument, or one too large for the slot, is framed in Python.
    Both give the general path's bits, and the server's errors still reach Python."""
    f, g, (v, mat), want = _fast_and_general(3)
    rng = np.random.default_rng(3)
    lane = f._runner.client._lane
    f(v, mat)  # (the connection and its ring, made)
    slot = lane._local.ring.slot_bytes
    wide = rng.standard_normal((2, slot // 16 + 8))
    ones = np.ones(wide.shape[1])
    want_wide = g(ones, wide)
    framed_here = []  # the calls framed in Python (g's too: it shares f's lane)
    real_exchange = lane.exchange
    monkeypatch.setattr(lane, "exchange",
                        lambda *a, **k: framed_here.append(1) or real_exchange(*a, **k))
    for _ in range(3):
        assert_bitwise(f(v, mat), want)
    assert framed_here == []
    assert_bitwise(f(v, np.asfortranarray(mat)), want)
    assert framed_here == [1]
    # Larger than the ring's slot (with the region out of the way): over the socket.
    monkeypatch.setattr(kiln.config, "shm_min_bytes", 1 << 40)
    assert_bitwise(f(ones, wide), want_wide)
    assert framed_here == [1, 1]
    with pytest.raises(KilnError) as e:  # the server's error, from the answer's bytes
        f(v, np.zeros((2, 5)))
    assert e.value.code == "INVALID_ARGUMENT" and framed_here == [1, 1]
    assert_bitwise(f(v, mat), want)


def test_plain_calls_are_taken_whole_in_cpp_once_one_went_through_the_ring(server, monkeypatch):
    """After one plain call through a thread's ring, that thread's next calls are taken whole in
    C++ (kiln._core.LaneFastCall: Lane.plain_call is not called) with the general path's bits.
    Whatever the Python path would look at sends the call back to it: another thread, a changed
    function id (FUNCTION_NOT_FOUND: compiled again), a dropped connection; the server's
    errors and kiln.config.timeout still reach the caller."""
    f, _, (v, mat), want = _fast_and_general(4)
    x = f.inputs[0].variable
    lane = f._runner.client._lane
    in_python = []
    real_plain_call = Lane.plain_call
    monkeypatch.setattr(Lane, "plain_call",
                        lambda *a, **k: in_python.append(1) or real_plain_call(*a, **k))
    assert type(f._runner.fast).__name__ == "LaneFastCall"
    for _ in range(5):
        assert_bitwise(f(v, mat), want)
    assert len(in_python) == 1  # the first call armed it
    # Another thread takes the Python path, then its own ring.
    out, errors = [], []

    def work():
        try:
            for _ in range(5):
                out.append(f(v, mat))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors and len(out) == 5 and len(in_python) == 2
    for o in out:
        assert_bitwise(o, want)
    # The function's id changed: the Python path, which recompiles on FUNCTION_NOT_FOUND.
    real_id = f.function_id
    f.function_id = "0" * 64
    assert_bitwise(f(v, mat), want)
    assert f.function_id == real_id and len(in_python) == 3
    # A dropped connection: the Python path connects again.
    lane._drop()
    assert_bitwise(f(v, mat), want)
    assert len(in_python) == 4 and lane._local.ring is not None
    assert_bitwise(f(v, mat), want)
    assert len(in_python) == 4
    with pytest.raises(KilnError) as e:  # the server's error, from the answer's bytes
        f(v, np.zeros((2, 5)))
    assert e.value.code == "INVALID_ARGUMENT"
    assert_bitwise(f(v, mat), want)  # (armed again by the Python path)
    # A lane made unusable: gRPC takes the call.
    lane.usable = False
    went_over_grpc = []
    real_stub = f._runner.client._stub
    monkeypatch.setattr(f._runner.client, "_stub", types.SimpleNamespace(
        Execute=lambda *a, **k: went_over_grpc.append(1) or real_stub.Execute(*a, **k)))
    try:
        assert_bitwise(f(v, mat), want)
    finally:
        lane.usable = True
    assert went_over_grpc == [1]
    n = len(in_python)
    slow = _slow_sum(x)
    a = np.full(600, 0.5)
    slow(a)
    _deadline_passes(slow, a)
    assert len(in_python) == n + 1  # slow's first call alone
    # The function, its runner and its LaneFastCall hold one another: the collector frees them.
    gone = weakref.ref(f)
    del f, e  # (the error's traceback holds the call's frames)
    gc.collect()
    assert gone() is None


def test_the_collector_may_run_while_functions_are_made_and_called(server):
    """With a collection at nearly every allocation, making and calling functions (each with its
    kiln._core.LaneFastCall, which the collector looks at, made or not) is safe."""
    x = at.dvector("x")
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    try:
        for i in range(20):
            f = kiln.function([x], x + float(i))
            for _ in range(3):
                assert f(np.zeros(2))[0] == i
    finally:
        gc.set_threshold(*thresholds)


def test_a_server_killed_mid_call_taken_whole_in_cpp_is_unavailable(server, monkeypatch):
    """A call taken whole in C++ when the server is SIGKILLed under it ends with UNAVAILABLE
    saying the lane broke, as on the Python path; nothing waits forever."""
    with running_server() as address:
        kiln.config.server = address
        try:
            x = at.dvector("x")
            y = at.outer(x, x)
            for _ in range(40):  # about a second of products at 1024x1024
                y = at.tanh(at.dot(y, y) * 1e-3)
            f = kiln.function([x], y.sum())
            a = np.full(1024, 0.5)
            f(a)  # through the Python path, which arms the C++ one
            in_python = []
            monkeypatch.setattr(Lane, "plain_call", lambda *a, **k: in_python.append(1))
            lane = get_client(address)._lane
            killer = threading.Timer(0.3, os.kill, (lane._pid, signal.SIGKILL))
            killer.start()
            with pytest.raises(KilnError) as e:
                f(a)
            killer.join()
            assert e.value.code == "UNAVAILABLE" and "broke during a call" in e.value.message
            assert in_python == []
        finally:
            kiln.config.server = server


def test_fast_path_leaves_regions_shared_variables_and_lost_functions_to_the_general_path(
        server):
    """A call that moves kiln.config.shm_min_bytes goes through the region; a function with a
    shared variable or a kept value has no fast path; a function the server lost
    (FUNCTION_NOT_FOUND) is compiled again by the general path."""
    x = at.dvector("x")
    f = kiln.function([x], x * 2)
    answered = _fast_answers(f._runner)
    a = np.arange(10_000.0)  # 80 kB: the region
    assert_bitwise(f(a), a * 2)
    assert answered == [False]
    s = kiln.shared(np.ones(3), name="s")
    assert kiln.function([x], x + s)._runner.fast is None
    assert kiln.function([kiln.In(x, value=np.ones(2))], x * 2)._runner.fast is None
    g = kiln.function([x], x - 1)
    answered = _fast_answers(g._runner)
    real_id = g.function_id
    g.function_id = "0" * 64  # an id the server never compiled
    assert_bitwise(g(np.ones(3)), np.zeros(3))
    assert g.function_id == real_id and answered == [False]
    assert_bitwise(g(np.ones(3)), np.zeros(3))
    assert answered == [False, True]


def test_fast_path_calls_keep_their_deadline(server):
    """kiln.config.timeout reaches the server on a fast-path call as on the general path: a call
    past it ends with DEADLINE_EXCEEDED from the server (a program of a dozen long steps polls
    its deadline between them), and the next call (no timeout) runs."""
    x = at.dvector("x")
    f = _slow_sum(x)
    answered = _fast_answers(f._runner)
    a = np.full(600, 0.5)
    _deadline_passes(f, a)
    assert np.isfinite(f(a)) and answered == ["raised", True]


def test_a_spin_that_misses_backs_off(server):
    """kiln.config.lane_spin on a connection without the ring (whose spins back off in C++, as
    proto/lane/ring_test.cc checks): a call slower than the spin makes the next calls sleep at
    once (1, then 2, 4 ... 64 of them); the answers are the same either way."""
    m = at.dmatrix("m")
    y = m
    for _ in range(4):
        y = at.tanh(at.dot(y, m))
    f = kiln.function([m], y)
    a = np.full((300, 300), 1e-3)
    want = f(a)
    lane = f._runner.client._lane
    spin, kiln.config.lane_spin = kiln.config.lane_spin, 1e-6
    kiln.config.lane_ring = False
    lane._drop()
    try:
        assert_bitwise(f(a), want)
        local = lane._local
        assert local.sock is not None and local.ring is None
        local.backoff = local.skip = 0
        assert_bitwise(f(a), want)
        assert (local.backoff, local.skip) == (1, 1)
        assert_bitwise(f(a), want)  # slept at once
        assert (local.backoff, local.skip) == (1, 0)
        assert_bitwise(f(a), want)  # spun, missed again
        assert (local.backoff, local.skip) == (2, 2)
    finally:
        kiln.config.lane_spin = spin
        kiln.config.lane_ring = True
        lane._drop()


@pytest.mark.parametrize("spin", [None, 0.0, 1e-6])
def test_calls_through_the_ring_give_the_socket_s_bits(server, spin):
    """The shared-memory ring (kiln.config.lane_ring, on by default) carries the calls of a lane
    connection, spinning or sleeping for the answer: the same bits as the socket alone and as
    gRPC, through the fast path and the general one (shared variables, updates)."""
    x = at.dvector("x")
    acc = kiln.shared(np.zeros(3), "acc")
    f = kiln.function([x], [at.exp(x) * 2.0, at.sum(x ** 2)])
    g = kiln.function([x], acc + x, updates=[(acc, acc + x)])
    lane = f._runner.client._lane
    args = [np.array([0.5, -1.0, 2.0]) * k for k in range(5)]
    results = {}
    before = kiln.config.lane_spin
    try:
        kiln.config.lane_spin = spin
        for ring in (True, False):
            kiln.config.lane_ring = ring
            lane._drop()
            acc.set_value(np.zeros(3))
            results[ring] = [f(a) for a in args] + [g(a) for a in args]
            assert (lane._local.ring is not None) == ring
    finally:
        kiln.config.lane_ring, kiln.config.lane_spin = True, before
        lane._drop()
    for a, b in zip(results[True], results[False]):
        assert_bitwise(a, b)
    kiln.config.lane = "off"
    try:
        h = kiln.function([x], [at.exp(x) * 2.0, at.sum(x ** 2)])
        for a, want in zip(args, results[True]):
            assert_bitwise(h(a), want)
    finally:
        kiln.config.lane = "auto"


def test_frames_larger_than_the_ring_slot_go_over_the_socket(server):
    """A server with rings of 4 KiB slots: calls of 16 KiB in and out (under the shared-memory
    regions' threshold, so in messages) go over the socket, announced in the ring, and the small
    calls between them through the ring."""
    with running_server("--local_ring_bytes=4096") as address:
        kiln.config.server = address
        try:
            client = Client(address)
            without_grpc_execute(client)
            x = at.dvector("x")
            f = kiln.function([x], x * 3.0 + 1.0)
            f._runner.client = client
            for n in (2000, 3, 2000, 1, 2048):
                a = np.linspace(-1.0, 1.0, n)
                assert_bitwise(f(a), a * 3.0 + 1.0)
                assert client._lane._local.ring.slot_bytes == 4096
        finally:
            kiln.config.server = server


def _frame(msg):
    data = msg.SerializeToString()
    return len(data).to_bytes(4, "little") + data


def _read_frame(sock):
    n = int.from_bytes(sock.recv(4, socket.MSG_WAITALL), "little")
    resp = _pb.service_pb2.LaneResponse()
    resp.ParseFromString(sock.recv(n, socket.MSG_WAITALL) if n else b"")
    return resp


def test_frames_sent_together_or_byte_by_byte_are_each_answered(server):
    """The server reads a connection through a buffer: a hello and two Executes in one write are
    three answers, in order; a frame trickled a byte at a time is one."""
    from kiln import wire
    client = Client(server)
    x = at.dvector("x")
    f = kiln.function([x], x + 5)
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(30)
    sock.connect(client._lane._path)
    hello = _pb.service_pb2.LaneRequest()
    hello.hello.authorization = ""
    calls = []
    for v in (1.0, 2.0, 3.0):
        req = _pb.service_pb2.LaneRequest()
        req.execute.function_id = f.function_id
        wire.tensor_to_proto(np.full(2, v), req.execute.args.add())
        calls.append(_frame(req))
    sock.sendall(_frame(hello) + calls[0] + calls[1])
    assert _read_frame(sock).instance == client._lane._instance
    for v in (1.0, 2.0):
        resp = _read_frame(sock)
        assert resp.code == 0
        np.testing.assert_array_equal(wire.tensor_from_proto(resp.execute.outputs[0]), [v + 5] * 2)
    for byte in calls[2]:
        sock.sendall(bytes([byte]))
    resp = _read_frame(sock)
    np.testing.assert_array_equal(wire.tensor_from_proto(resp.execute.outputs[0]), [8.0, 8.0])
    sock.close()


def _answer_frame(arrays=(), code=0, printed=False):
    """A LaneResponse frame as the server writes it: `arrays` as outputs, or an error."""
    from kiln import wire
    resp = _pb.service_pb2.LaneResponse()
    if code:
        resp.code, resp.message = code, "refused"
    else:
        resp.execute.SetInParent()
        for a in arrays:
            wire.tensor_to_proto(np.asarray(a), resp.execute.outputs.add())
        if printed:
            resp.execute.printed.add(message="p")
    return _frame(resp)


def test_outputs_are_read_without_protobuf_as_protobuf_reads_them():
    """kiln.lane.Outputs reads an answer of outputs alone (any dtype, rank, empty or scalar) as
    protobuf does, by its kept layout when the answer keeps the last one's dtypes and shapes
    and afresh when not; an error, printed values or a cut frame give None (the caller parses
    it with protobuf)."""
    from kiln.lane import Outputs
    rng = np.random.default_rng(1)
    answers = [
        [rng.standard_normal(3), np.array(2.5)],
        [rng.standard_normal(3), np.array(-1.0)],  # the same layout, other values
        [rng.standard_normal((2, 200)), np.array(7.0)],  # a multi-byte shape and length
        [np.arange(6, dtype="int32").reshape(2, 3), np.array([True, False]),
         np.zeros((0, 4)), np.array(3, dtype="int64"), np.array([1 + 2j], dtype="complex64")],
        [np.zeros((0, 4))],
        [],
    ]
    read = Outputs()
    for arrays in answers + answers[:2]:
        got = read(_answer_frame(arrays))
        assert len(got) == len(arrays)
        for g, a in zip(got, arrays):
            assert g.flags.writeable and g.flags.c_contiguous and g.flags.owndata
            assert_bitwise(g, np.asarray(a))
    # The kept layout is only a guess: the same size with another shape is read afresh.
    read(_answer_frame([np.ones((2, 3))]))
    assert_bitwise(read(_answer_frame([np.ones((3, 2))]))[0], np.ones((3, 2)))
    assert read(_answer_frame(code=5)) is None
    assert read(_answer_frame([np.ones(2)], printed=True)) is None
    frame = _answer_frame([np.ones(2)])
    assert read(frame[:-3]) is None and read(frame[:7]) is None
    assert read(frame + b"\x00") is None


def test_fast_path_outputs_of_changing_shapes_and_printed_values(server, capsys):
    """Fast-path calls whose outputs change shape from call to call, and a function that prints,
    give what the general path gives."""
    x = at.dvector("x")
    k = at.lscalar("k")
    f = kiln.function([x, k], [x[:k] * 2, (x ** 2).sum()])
    answered = _fast_answers(f._runner)
    for n in (3, 3, 1, 0, 3):
        a = np.arange(4.0) + n
        got = f(a, np.array(n, dtype="int64"))
        assert_bitwise(got[0], a[:n] * 2)
        assert_bitwise(got[1], np.array((a ** 2).sum()))
    assert answered == [True] * 5
    p = kiln.function([x], kiln.printing.Print("seen")(x) + 1)
    answered = _fast_answers(p._runner)
    assert_bitwise(p(np.ones(2)), np.full(2, 2.0))
    assert answered == [True] and "seen" in capsys.readouterr().out


def test_threads_sharing_a_function_of_changing_shapes_get_their_own_outputs(server):
    """Threads calling one function (one kept layout of its answers) with outputs of different
    shapes each get the right outputs."""
    x = at.dvector("x")
    f = kiln.function([x], [x * 2, x.sum()])
    errors = []

    def calls(n):
        a = np.arange(float(n))
        try:
            for _ in range(200):
                doubled, total = f(a)
                assert_bitwise(doubled, a * 2)
                assert_bitwise(total, np.array(a.sum()))
        except Exception as e:  # reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=calls, args=(n,)) for n in (1, 2, 3, 40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors[0]


def test_the_default_spin_follows_the_load(monkeypatch):
    """kiln.config.lane_spin None: 100 µs while the load average leaves a core to spare, 0 on a
    busy machine, looked at again only after a second; a set value is used as it is."""
    from kiln import lane as lane_module
    cores = len(os.sched_getaffinity(0))
    monkeypatch.setattr(kiln.config, "lane_spin", None)
    monkeypatch.setattr(lane_module, "_auto", [0.0, float("-inf")])
    monkeypatch.setattr(os, "getloadavg", lambda: (cores - 1.0, 0.0, 0.0))
    assert lane_module._spin() == lane_module._AUTO_SPIN
    monkeypatch.setattr(os, "getloadavg", lambda: (cores + 3.0, 0.0, 0.0))
    assert lane_module._spin() == lane_module._AUTO_SPIN  # within the second: not looked at
    lane_module._auto[1] -= 2 * lane_module._LOAD_LOOK
    assert lane_module._spin() == 0.0
    monkeypatch.setattr(kiln.config, "lane_spin", 2e-5)
    assert lane_module._spin() == 2e-5
