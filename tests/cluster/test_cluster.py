"""A real local cluster (deploy/cluster.sh): three kiln-server replicas, a Redis for the shared
function cache, a Redis for sessions and nginx in front, all on 127.0.0.1. Each test starts its
own cluster on free ports and stops it.

KILN_SERVER_BIN names the server binary, or KILN_CONTAINER_IMAGE an image whose containers are
the replicas (deploy/container_test.sh); KILN_CLUSTER_SH the script (default: the source
tree's). Any script with deploy/cluster.sh's verbs will do: deploy/podman_cluster.sh runs the
same cluster from deploy/compose.yaml or deploy/k8s (KILN_CLUSTER_MODE=compose or kube); the
tests find each part at the address its `addresses` verb prints, and kill a replica by the pid
it writes (the host's pid of kiln-server, in a container or not). KILN_CLUSTER_TIMEOUT bounds
each call of the script (seconds, default 90)."""
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

import kiln  # noqa: E402
import kiln.tensor as T  # noqa: E402
from kiln import _pb, wire  # noqa: E402
from kiln.client import Client  # noqa: E402

CLUSTER_SH = os.environ.get("KILN_CLUSTER_SH", os.path.join(ROOT, "deploy", "cluster.sh"))
CLUSTER_TIMEOUT = float(os.environ.get("KILN_CLUSTER_TIMEOUT", "90"))
REPLICAS = 3
pb = _pb.service_pb2


def _free_base():
    """A base port whose front, replicas, metrics and Redis ports are all free, below the
    kernel's ephemeral range (32768 and up), so that no connection of a test running beside
    this one can take one of them meanwhile."""
    rng = random.Random()
    for _ in range(50):
        base = rng.randrange(20000, 32500)
        wanted = [base] + [base + i for i in range(1, REPLICAS + 1)] + \
            [base + 100 + i for i in range(1, REPLICAS + 1)] + [base + 200, base + 201]
        ok = True
        for p in wanted:
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no free range of ports")


class Cluster:
    """deploy/cluster.sh (or KILN_CLUSTER_SH) on its own directory and ports."""

    def __init__(self, flags=""):
        self.dir = tempfile.mkdtemp(prefix="kiln-cluster-")
        self.base = _free_base()
        self.env = dict(os.environ, KILN_CLUSTER_DIR=self.dir, KILN_CLUSTER_PORT=str(self.base),
                        KILN_SERVER_FLAGS="--log_level=warning --threads=2 " + flags)
        try:
            self.sh("up", str(REPLICAS))
        except BaseException:
            try:  # what did start stops
                self.stop()
            except Exception:  # noqa: BLE001 - the failure to report is up's
                pass
            raise

    def sh(self, *args):
        done = subprocess.run([CLUSTER_SH, *args], env=self.env, timeout=CLUSTER_TIMEOUT,
                              capture_output=True, text=True)
        assert done.returncode == 0, "cluster.sh %s: %s" % (" ".join(args), done.stderr[-3000:])
        if args[0] in ("up", "start", "redis-start"):  # a container may come back elsewhere
            self._read_addresses()
        return done.stdout

    def _read_addresses(self):
        """front HOST:PORT / replica I GRPC METRICS / redis-cache HOST:PORT, from the script."""
        self.replicas, self.metrics_at = {}, {}
        for line in self.sh("addresses").splitlines():
            words = line.split()
            if words[0] == "front":
                self.front = words[1]
            elif words[0] == "replica":
                self.replicas[int(words[1])] = words[2]
                self.metrics_at[int(words[1])] = words[3]
            elif words[0] == "redis-cache":
                self.redis = words[1]

    def replica(self, i):
        return self.replicas[i]

    def metrics(self, i):
        url = "http://%s/metrics" % self.metrics_at[i]
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def health(self, i):
        url = "http://%s/healthz" % self.metrics_at[i]
        try:
            return urllib.request.urlopen(url, timeout=5).read().decode()
        except urllib.error.HTTPError as e:
            return e.read().decode()

    def total(self, name):
        return sum(self.metrics(i).get(name, 0) for i in range(1, REPLICAS + 1)
                   if self.running(i))

    def pid(self, i):
        with open(os.path.join(self.dir, "replica-%d.pid" % i)) as f:
            return int(f.read())

    def running(self, i):
        """True while replica i runs (a zombie that init has not reaped yet does not)."""
        try:
            with open("/proc/%d/stat" % self.pid(i)) as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, ValueError):
            return False

    def redis_cli(self, *args):
        host, port = self.redis.rsplit(":", 1)
        return subprocess.run(["redis-cli", "-h", host, "-p", port, *args],
                              check=True, timeout=10, capture_output=True, text=True).stdout

    def stop(self):
        try:
            self.sh("down")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def cluster():
    c = Cluster()
    yield c
    c.stop()


def new_graph(tag, nodes=3):
    """A compile request for a graph no server has seen: a chain of `nodes` elementwise ops on
    a vector, with `tag` folded into it."""
    x = T.dvector("x")
    y = x * float(tag)
    for i in range(nodes - 1):
        y = T.exp(y) * 0.5 if i % 2 else T.log1p(y) + y
    req = pb.CompileRequest()
    req.graph.CopyFrom(wire.graph_to_proto([x], [y]))
    return req


def execute(client, function_id, value):
    req = pb.ExecuteRequest(function_id=function_id)
    wire.tensor_to_proto(np.asarray(value, dtype=np.float64), req.args.add())
    return wire.tensor_from_proto(client.call("Execute", req).outputs[0])


def test_one_compile_for_a_hundred_clients_and_a_hit_from_redis_elsewhere(cluster):
    req = new_graph(np.random.default_rng().random() + 2)
    before = cluster.total("kiln_compiles_total")
    clients = [Client(cluster.front) for _ in range(100)]
    start = threading.Barrier(len(clients))
    ids, errors = [], []

    def compile_once(c):
        start.wait()
        try:
            ids.append(c.call("Compile", req).function_id)
        except Exception as e:  # noqa: BLE001 - every failure is reported below
            errors.append(e)

    threads = [threading.Thread(target=compile_once, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert len(ids) == 100 and len(set(ids)) == 1
    assert cluster.total("kiln_compiles_total") - before == 1
    # A replica that never saw the graph runs its id from Redis without compiling.
    fid = ids[0]
    saw = [i for i in range(1, REPLICAS + 1)
           if cluster.metrics(i).get('kiln_requests_total{method="Compile"}', 0) > 0]
    other = next(i for i in range(1, REPLICAS + 1) if i not in saw)
    m0 = cluster.metrics(other)
    out = execute(Client(cluster.replica(other)), fid, [0.5, 1.0])
    m1 = cluster.metrics(other)
    assert out.shape == (2,)
    assert m1['kiln_cache_lookups_total{tier="redis",result="hit"}'] == \
        m0['kiln_cache_lookups_total{tier="redis",result="hit"}'] + 1
    assert m1["kiln_compiles_total"] == m0["kiln_compiles_total"] == 0


def test_kill_9_of_a_replica_loses_no_update(cluster):
    clients = [Client(cluster.front) for _ in range(16)]
    x = T.dscalar("x")
    s = T.dscalar("s")
    req = pb.CompileRequest()
    req.graph.CopyFrom(wire.graph_to_proto([x, s], [s + x], {id(s): "count"}))
    up = req.updates.add()
    up.input = 1
    up.value.CopyFrom(req.graph.outputs[0])
    fid = clients[0].call("Compile", req).function_id
    sessions = []
    for c in clients:
        sid = c.call("CreateSession", pb.CreateSessionRequest()).session
        set_req = pb.SetSharedRequest(session=sid, name="count")
        wire.tensor_to_proto(np.float64(0), set_req.value)
        c.call("SetShared", set_req)
        sessions.append(sid)
    acked = [0] * len(clients)
    errors = []
    stop = threading.Event()

    def update_loop(k):
        c = clients[k]
        while not stop.is_set():
            e = pb.ExecuteRequest(function_id=fid, session=sessions[k])
            wire.tensor_to_proto(np.float64(1), e.args.add())
            try:
                c.call("Execute", e, timeout=30)
                acked[k] += 1
            except Exception as err:  # noqa: BLE001 - every failure is reported below
                errors.append(err)
                return

    threads = [threading.Thread(target=update_loop, args=(k,)) for k in range(len(clients))]
    for t in threads:
        t.start()
    time.sleep(1.5)
    # The replica serving the most sessions' updates dies.
    victim = max(range(1, REPLICAS + 1),
                 key=lambda i: cluster.metrics(i).get('kiln_requests_total{method="Execute"}', 0))
    assert cluster.metrics(victim)['kiln_requests_total{method="Execute"}'] > 0
    os.kill(cluster.pid(victim), 9)
    time.sleep(2.5)
    stop.set()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]
    assert min(acked) > 0
    for k, c in enumerate(clients):
        got = c.call("GetShared", pb.GetSharedRequest(session=sessions[k], name="count"))
        assert float(wire.tensor_from_proto(got.value)) == acked[k], (k, acked[k])


def function_of(tag):
    """A kiln.function of a graph no server has seen, through kiln.config.server."""
    x = T.dvector("x")
    return kiln.function([x], T.exp(x * float(tag)) + 1.0)


def test_redis_down_serves_from_local_tiers_and_recovers_empty(cluster):
    kiln.config.server = cluster.front
    f1 = function_of(3.25)
    assert f1([1.0]).shape == (1,)
    cluster.sh("redis-stop")
    # Served from the replicas' memory and disk (a replica without the function answers
    # NOT_FOUND, and the client compiles it again there), and a new graph compiles locally.
    for _ in range(5):
        assert f1([1.0]).shape == (1,)
    f2 = function_of(4.5)
    assert f2([2.0]).shape == (1,)
    down = [i for i in range(1, REPLICAS + 1)
            if cluster.metrics(i).get('kiln_redis_up{role="cache"}') == 0]
    assert down, "no replica noticed that Redis went away"
    assert "unreachable" in cluster.health(down[0])
    cluster.sh("redis-start")  # empty: nothing was saved
    time.sleep(1.2)  # a replica tries Redis again a second after it failed
    f3 = function_of(5.75)
    assert f3([3.0]).shape == (1,)
    # Redis is in use again: the new function is there.
    assert cluster.redis_cli("EXISTS", "kiln:fn:" + f3.function_id).strip() == "1"
    for f in (f1, f2, f3):
        assert f([1.0]).shape == (1,)
    for i in range(1, REPLICAS + 1):  # every replica talks to Redis again
        Client(cluster.replica(i)).call("Compile", new_graph(6 + i))
        assert cluster.metrics(i)['kiln_redis_up{role="cache"}'] == 1
    assert "unreachable" not in cluster.health(down[0])


def test_a_dead_lease_holder_is_taken_over_once_its_lease_lapses():
    c = Cluster(flags="--compile_lease=5s")
    try:
        slow = new_graph(1.5, nodes=5000)
        first = Client(c.replica(1))
        holder = threading.Thread(target=lambda: _ignore_errors(first.call, "Compile", slow))
        holder.start()
        deadline = time.time() + 30
        while not c.redis_cli("--scan", "--pattern", "kiln:lease:*").strip():
            assert time.time() < deadline, "replica 1 never took the compile lease"
            time.sleep(0.002)
        os.kill(c.pid(1), signal.SIGSTOP)  # mid-compile: it neither finishes nor renews
        answers = []
        waiter = threading.Thread(target=lambda: answers.append(
            Client(c.replica(2)).call("Compile", slow, timeout=120)))
        waiter.start()
        while c.metrics(2).get("kiln_compile_lease_waits_total", 0) < 1:
            assert time.time() < deadline, "replica 2 never waited for the lease"
            time.sleep(0.05)
        os.kill(c.pid(1), signal.SIGKILL)
        waiter.join(120)
        holder.join(30)
        assert answers and answers[0].source == "compiled"
        m = c.metrics(2)
        assert m["kiln_compile_lease_waits_total"] == 1
        assert m["kiln_compiles_total"] == 1
    finally:
        c.stop()


def _ignore_errors(fn, *args):
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - the replica it calls is killed on purpose
        pass


def test_status_names_every_part(cluster):
    status = cluster.sh("status")
    for name in ("redis-cache", "redis-sessions", "nginx", "replica-1", "replica-3"):
        assert re.search(name + r"\s+running", status), status
    assert status.count("health: serving") == REPLICAS


def grpc_health(address):
    """grpc.health.v1.Health/Check of the whole server: 1 SERVING, 2 NOT_SERVING."""
    import grpc
    with grpc.insecure_channel(address) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                    request_serializer=lambda b: b,
                                    response_deserializer=lambda b: b)
        reply = check(b"", timeout=5)
    return reply[1] if len(reply) == 2 else 0


def test_a_restarted_replica_loads_the_hottest_functions_before_it_serves(cluster):
    client = Client(cluster.front)
    ids = [client.call("Compile", new_graph(7.5 + k)).function_id for k in range(4)]
    cluster.sh("stop", "3")
    # Nothing on its disk either (a container's volume goes with it).
    shutil.rmtree(os.path.join(cluster.dir, "cache-3"), ignore_errors=True)
    cluster.sh("start", "3")
    deadline = time.time() + 30
    while "serving" not in cluster.health(3).splitlines()[0]:
        assert time.time() < deadline, cluster.health(3)
        time.sleep(0.05)
    assert grpc_health(cluster.replica(3)) == 1
    m = cluster.metrics(3)
    assert m["kiln_cache_functions"] == len(ids)
    assert m['kiln_cache_lookups_total{tier="redis",result="hit"}'] == len(ids)
    assert m["kiln_compiles_total"] == 0


def test_sigterm_says_not_serving_then_drains():
    c = Cluster(flags="--drain_delay=2s")
    try:
        client = Client(c.front)
        fid = client.call("Compile", new_graph(9.5)).function_id
        assert grpc_health(c.replica(1)) == 1
        pid = c.pid(1)
        os.kill(pid, 15)
        time.sleep(0.5)
        assert grpc_health(c.replica(1)) == 2  # still answering, no longer ready
        assert c.health(1).startswith("draining")
        for _ in range(20):  # the front goes on serving meanwhile and after
            assert execute(client, fid, [1.0]).shape == (1,)
            time.sleep(0.1)
        deadline = time.time() + 15
        while c.running(1):
            assert time.time() < deadline, "replica 1 did not exit after its drain"
            time.sleep(0.1)
    finally:
        c.stop()


def test_the_cpp_demo_runs_through_the_front(cluster):
    demo = os.environ.get("KILN_DEMO_BIN", os.path.join(ROOT, "build", "client", "cpp",
                                                        "kiln_demo"))
    out = subprocess.run([demo, "--server=" + cluster.front], check=True, timeout=120,
                         capture_output=True, text=True)
    assert "grad" in out.stdout.lower(), out.stdout[-2000:]
