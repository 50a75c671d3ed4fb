"""The cost of running as a cluster, measured on a real local one (deploy/cluster.sh: three
replicas, two Redis servers, nginx) and a lone kiln-server beside it, in one run, calls
interleaved so that the machine's noise falls on both sides alike:

- rpc_compile_redis_hit: a replica's first Compile of a graph another replica compiled (loaded
  from Redis) against the memory hit of the same Compile on that replica;
- rpc_execute_via_front: an Execute through nginx against the same Execute sent to a replica;
- rpc_update_redis_session: an updating Execute whose session lives in Redis against the same
  call on a server whose sessions live in its memory.

Each line: BENCH <name> median_us=... reference_us=... ratio=... (medians over the rounds; every
call goes through the Python client, so both sides carry its ~0.2 ms per call).
Usage: cluster_vs_direct.py [rounds]  (KILN_SERVER_BIN names the server binary)."""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cluster"))

from test_cluster import Cluster, new_graph, execute, pb, wire  # noqa: E402
import kiln.tensor as T  # noqa: E402
from kiln.client import Client  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e6


def report(name, measured, reference):
    m, r = statistics.median(measured), statistics.median(reference)
    print("BENCH %s median_us=%.0f reference_us=%.0f ratio=%.2f rounds=%d"
          % (name, m, r, m / r, len(measured)), flush=True)


def updating_function(client):
    """A compiled `count += x` bound to a new session of `client`'s server."""
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
    return lambda: client.call("Execute", call)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    cluster = Cluster()
    lone = subprocess.Popen([os.environ.get("KILN_SERVER_BIN", "build/server/kiln-server"),
                             "--host", "127.0.0.1", "--port", str(cluster.base + 99),
                             "--metrics_port", "-1", "--cache_dir=", "--log_level=error"])
    try:
        one, two = Client(cluster.replica(1)), Client(cluster.replica(2))
        shared_hit, memory_hit = [], []
        for k in range(rounds // 4):
            req = new_graph(10 + k, nodes=200)
            one.call("Compile", req)
            shared_hit.append(timed(lambda: two.call("Compile", req)))
            memory_hit.append(timed(lambda: two.call("Compile", req)))
        report("rpc_compile_redis_hit", shared_hit, memory_hit)
        fid = one.call("Compile", req).function_id
        print("BENCH redis_entry_bytes nodes=200 bytes=%s"
              % cluster.redis_cli("STRLEN", "kiln:fn:" + fid).strip(), flush=True)

        front = Client(cluster.front)
        fid = front.call("Compile", new_graph(3)).function_id
        owner = next(i for i in range(1, 4)
                     if cluster.metrics(i).get('kiln_requests_total{method="Compile"}', 0))
        direct = Client(cluster.replica(owner))
        via_front, straight = [], []
        for _ in range(rounds):
            via_front.append(timed(lambda: execute(front, fid, [1.0, 2.0])))
            straight.append(timed(lambda: execute(direct, fid, [1.0, 2.0])))
        report("rpc_execute_via_front", via_front, straight)

        in_redis = updating_function(direct)
        in_memory = updating_function(Client("127.0.0.1:%d" % (cluster.base + 99)))
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
