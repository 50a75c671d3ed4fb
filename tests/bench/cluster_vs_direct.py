"""The cost of running as a cluster, measured on a real local one (deploy/cluster.sh: three
replicas, two Redis servers, nginx) and a lone kiln-server beside it, in one run, calls
interleaved so that the machine's noise falls on both sides alike:

- rpc_compile_redis_hit: a replica's first Compile of a graph another replica compiled (loaded
  from Redis) against the memory hit of the same Compile on that replica;
- rpc_execute_via_front: an Execute through nginx against the same Execute sent to a replica;
- rpc_update_redis_session: an updating Execute whose session lives in Redis against the same
  call on a server whose sessions live in its memory.

Each line: BENCH <name> median_us=... reference_us=... ratio=... (medians over the rounds). Calls
send pre-serialized requests through grpcio with the metadata the clients set, so that Python's
protobuf encoding does not hide the server's side; both sides still carry grpcio's ~0.1 ms.
Usage: cluster_vs_direct.py [rounds]  (KILN_SERVER_BIN names the server binary)."""
import os
import statistics
import subprocess
import sys
import time

import grpc
import numpy as np
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cluster"))

from test_cluster import Cluster, new_graph, pb, wire  # noqa: E402
import kiln.tensor as T  # noqa: E402
from kiln.client import Client  # noqa: E402


class Raw:
    """Calls of one server with pre-serialized requests, as the clients tag them."""

    def __init__(self, address):
        self.channel = grpc.insecure_channel(address)
        grpc.channel_ready_future(self.channel).result(timeout=30)

    def call(self, method, request_bytes, route=None):
        metadata = [("kiln-call-id", uuid.uuid4().hex)]
        if route:
            metadata.append(("kiln-route", route))
        return self.channel.unary_unary("/kiln.v1.Kiln/" + method)(
            request_bytes, metadata=metadata, timeout=60)


def timed(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e6


def report(name, measured, reference):
    m, r = statistics.median(measured), statistics.median(reference)
    print("BENCH %s median_us=%.0f reference_us=%.0f ratio=%.2f rounds=%d"
          % (name, m, r, m / r, len(measured)), flush=True)


def updating_function(address):
    """A call of a compiled `count += x` on a new session of the server at `address`."""
    client = Client(address)
    x, s = T.dscalar("x"), T.dscalar("s")
    req = pb.CompileRequest()
    req.graph.CopyFrom(wire.graph_to_proto([x, s], [s + x], {id(s): "count"}))
    up = req.updates.add()
    up.input = 1
    up.value.CopyFrom(req.graph.outputs[0])
    fid = client.call("Compile", req).function_id
    sid = client.call("CreateSession", pb.CreateSessionRequest()).session
    set_req = pb.SetSharedRequest(session=sid, name="count")
    wire.tensor_to_proto(np.float64(0), set_req.value)
    client.call("SetShared", set_req)
    call = pb.ExecuteRequest(function_id=fid, session=sid)
    wire.tensor_to_proto(np.float64(1), call.args.add())
    raw, data = Raw(address), call.SerializeToString()
    return lambda: raw.call("Execute", data, route=sid)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    cluster = Cluster()
    lone = subprocess.Popen([os.environ.get("KILN_SERVER_BIN", "build/server/kiln-server"),
                             "--host", "127.0.0.1", "--port", str(cluster.base + 99),
                             "--metrics_port", "-1", "--cache_dir=", "--log_level=error"])
    try:
        one, two = Client(cluster.replica(1)), Raw(cluster.replica(2))
        shared_hit, memory_hit = [], []
        for k in range(rounds // 4):
            req = new_graph(10 + k, nodes=200)
            one.call("Compile", req)
            data = req.SerializeToString()
            shared_hit.append(timed(lambda: two.call("Compile", data)))
            memory_hit.append(timed(lambda: two.call("Compile", data)))
        report("rpc_compile_redis_hit", shared_hit, memory_hit)
        fid = one.call("Compile", req).function_id
        print("BENCH redis_entry_bytes nodes=200 bytes=%s"
              % cluster.redis_cli("STRLEN", "kiln:fn:" + fid).strip(), flush=True)

        front = Client(cluster.front)
        fid = front.call("Compile", new_graph(3)).function_id
        owner = next(i for i in range(1, 4)
                     if cluster.metrics(i).get('kiln_requests_total{method="Compile"}', 0))
        direct, raw_front = Raw(cluster.replica(owner)), Raw(cluster.front)
        call = pb.ExecuteRequest(function_id=fid)
        wire.tensor_to_proto(np.asarray([1.0, 2.0]), call.args.add())
        data = call.SerializeToString()
        via_front, straight = [], []
        for _ in range(rounds):
            via_front.append(timed(lambda: raw_front.call("Execute", data, route=fid)))
            straight.append(timed(lambda: direct.call("Execute", data, route=fid)))
        report("rpc_execute_via_front", via_front, straight)

        in_redis = updating_function(cluster.replica(owner))
        in_memory = updating_function("127.0.0.1:%d" % (cluster.base + 99))
        redis_times, memory_times = [], []
        for _ in range(rounds):
            redis_times.append(timed(in_redis))
            memory_times.append(timed(in_memory))
        report("rpc_update_redis_session", redis_times, memory_times)
    finally:
        lone.terminate()
        lone.wait(10)
        cluster.stop()


if __name__ == "__main__":
    main()
