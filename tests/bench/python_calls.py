#!/usr/bin/python3
"""Calls from Python, local and on the server, against the same arithmetic in-process (PyTensor's
compiled function when PyTensor is importable, else NumPy), interleaved, several rounds; prints
a BENCH line (DESIGN.md section 5) per case and round:
  py_call_tiny_local: f(a), a of 3 float64, a + a**10, us per call;
  py_call_tiny_lane_vs_local: the same call on the server over the lane against the local call,
    interleaved (ref_name=floor: the same call with no transport; overhead= the lane's cost per
    call, kiln - ref);
  py_call_tiny_server: the same call on the server (over its same-host lane, as the client
    chooses by itself here), against a bare gRPC echo of the same request bytes from the same
    grpcio client (ref_name=grpc-echo; the echo server is rpc_benchmark --serve_echo, C++, when
    KILN_ECHO_BIN names it, else grpcio in Python); py_call_tiny_server_grpc: the same call over
    gRPC (kiln.config.lane off);
  py_logreg_step_local / _server / _shm / _resident: the tutorial's training step, X 400x784
    float64, w and b shared, ms per call; _server passes X and y in messages, _shm through the
    same-host shared-memory region, _resident names them by handle (kiln.resident); the three
    server cases over the lane, and _resident_grpc over gRPC.

Usage: python_calls.py [rounds]  (KILN_SERVER_BIN names the server binary)."""
import os
import subprocess
import sys
import time
from concurrent import futures

import grpc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from conftest import running_server  # noqa: E402
import kiln  # noqa: E402
import kiln.tensor as at  # noqa: E402
from kiln import _pb, wire  # noqa: E402
from kiln.lane import _varint  # noqa: E402

try:
    import pytensor
    import pytensor.tensor as pt
except ImportError:
    pytensor = None


def mean_seconds(fn, calls):
    """The mean time of `calls` calls of fn."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def best_seconds_interleaved(measured, m_calls, reference, r_calls, repeats=5):
    """The best over `repeats` of each one's mean call time, a batch of one then a batch of the
    other, so that both see the same machine."""
    best_m = best_r = float("inf")
    for _ in range(repeats):
        best_m = min(best_m, mean_seconds(measured, m_calls))
        best_r = min(best_r, mean_seconds(reference, r_calls))
    return best_m, best_r


def echo_message(payload):
    """kiln.bench.EchoMessage{payload} in wire form (field 1, length-delimited)."""
    return b"\x0a" + _varint(len(payload)) + payload


def start_echo_server():
    """(address, stop) of an echo service: rpc_benchmark's (C++) when KILN_ECHO_BIN names it,
    else grpcio's in this process."""
    binary = os.environ.get("KILN_ECHO_BIN")
    if binary:
        proc = subprocess.Popen([binary, "--serve_echo"], stdout=subprocess.PIPE, text=True)
        port = int(proc.stdout.readline().split()[1])
        return "127.0.0.1:%d" % port, proc.kill
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handler = grpc.unary_unary_rpc_method_handler(lambda request, context: request)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "kiln.bench.Echo", {"Echo": handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return "127.0.0.1:%d" % port, lambda: server.stop(None)


def tiny_cases(echo_address):
    """(name, kiln call, reference call, reference name)."""
    x = np.array([1.0, 2.0, 3.0])
    a = at.dvector("a")
    cases = []
    if pytensor is not None:
        pa = pt.dvector("a")
        ref, ref_name = pytensor.function([pa], pa + pa ** 10), "pytensor"
    else:
        ref, ref_name = (lambda v: v + v ** 10), "numpy"
    local = kiln.function([a], a + a ** 10, mode=kiln.Mode(execute="local"))
    cases.append(("py_call_tiny_local", lambda: local(x), lambda: ref(x), ref_name))
    f = kiln.function([a], a + a ** 10, mode=kiln.Mode(execute="server"))
    # The echo carries the call's request, and answers as many bytes.
    request = _pb.service_pb2.ExecuteRequest(function_id=f.function_id)
    wire.tensor_to_proto(x, request.args.add())
    payload = echo_message(request.SerializeToString())
    echo = grpc.insecure_channel(echo_address).unary_unary("/kiln.bench.Echo/Echo")
    cases.append(("py_call_tiny_server", lambda: f(x), lambda: echo(payload), "grpc-echo"))
    cases.append(("py_call_tiny_server_grpc", lambda: over_grpc(f, x), lambda: echo(payload),
                  "grpc-echo"))
    # The lane's own cost: the same function on the server against it run in this process.
    cases.append(("py_call_tiny_lane_vs_local", lambda: f(x), lambda: local(x), "floor"))
    return cases


def over_grpc(f, *args):
    """f(*args) with its client's same-host lane turned off for the call."""
    lane = f._runner.client._lane
    usable, lane.usable = lane.usable, False
    try:
        return f(*args)
    finally:
        lane.usable = usable


def logreg(mode_or_none, w0):
    """The tutorial's training step, in Kiln (mode) or PyTensor (None)."""
    lib, tensor = (kiln, at) if mode_or_none is not None else (pytensor, pt)
    x, y = tensor.dmatrix("x"), tensor.dvector("y")
    w, b = lib.shared(w0.copy(), name="w"), lib.shared(0.0, name="b")
    p_1 = 1 / (1 + tensor.exp(-tensor.dot(x, w) - b))
    xent = -y * tensor.log(p_1) - (1 - y) * tensor.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = lib.grad(cost, [w, b])
    kwargs = {"mode": mode_or_none} if mode_or_none is not None else {}
    return lib.function([x, y], [p_1 > 0.5, xent],
                        updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb)), **kwargs)


def numpy_logreg_step(w0):
    """The same step's arithmetic in NumPy."""
    state = {"w": w0.copy(), "b": 0.0}

    def step(X, Y):
        w, b = state["w"], state["b"]
        p = 1 / (1 + np.exp(-(X @ w) - b))
        xent = -Y * np.log(p) - (1 - Y) * np.log(1 - p)
        gz = (p - Y) / len(Y)
        state["w"] = w - 0.1 * (X.T @ gz + 0.02 * w)
        state["b"] = b - 0.1 * gz.sum()
        return p > 0.5, xent
    return step


def logreg_cases():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(400, 784)), rng.integers(0, 2, size=400).astype(np.float64)
    w0 = rng.normal(scale=0.01, size=784)  # small enough that no probability rounds to 0 or 1
    if pytensor is not None:
        ref, ref_name = logreg(None, w0), "pytensor"
    else:
        ref, ref_name = numpy_logreg_step(w0), "numpy"
    local = logreg(kiln.Mode(execute="local"), w0)
    server = logreg(kiln.Mode(execute="server"), w0)
    channel = server._runner.client.channel()
    Xr, Yr = kiln.resident(X), kiln.resident(Y)

    def on_server(shm, *args):
        channel.enabled = shm
        return server(*args)
    return [("py_logreg_step_local", lambda: local(X, Y), lambda: ref(X, Y), ref_name),
            ("py_logreg_step_server", lambda: on_server(False, X, Y), lambda: ref(X, Y),
             ref_name),
            ("py_logreg_step_shm", lambda: on_server(True, X, Y), lambda: ref(X, Y), ref_name),
            ("py_logreg_step_resident", lambda: on_server(True, Xr, Yr), lambda: ref(X, Y),
             ref_name),
            ("py_logreg_step_resident_grpc", lambda: over_grpc(server, Xr, Yr),
             lambda: ref(X, Y), ref_name)]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    echo_address, stop_echo = start_echo_server()
    with running_server() as address:
        kiln.config.server = address
        cases = [(c, 20000, 1e6, "us") for c in tiny_cases(echo_address)]
        cases += [(c, 1000, 1e3, "ms") for c in logreg_cases()]
        for _ in range(rounds):
            for (name, measured, reference, ref_name), calls, scale, unit in cases:
                measured(), reference()  # warm
                n = calls if name.endswith("_local") else calls // 10
                k, r = best_seconds_interleaved(measured, n, reference,
                                                n if ref_name == "grpc-echo" else calls)
                # Against the local call, what the lane adds to a call: overhead=kiln-ref.
                extra = (" overhead=%.4g" % ((k - r) * scale)) if ref_name == "local" else ""
                print("BENCH %s kiln=%.4g ref=%.4g unit=%s ref_name=%s ratio=%.2f%s"
                      % (name, k * scale, r * scale, unit, ref_name, k / r, extra), flush=True)
    stop_echo()


if __name__ == "__main__":
    main()
