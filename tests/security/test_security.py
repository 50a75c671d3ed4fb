"""Tests that try to get in: real kiln-server processes on 127.0.0.1 with TLS, mutual TLS, tokens,
tenants, quotas and per-tenant caches; certificates (Debian's openssl) and tokens are made at
test time. KILN_SERVER_BIN names the server binary."""
import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

import kiln.tensor as T  # noqa: E402
from kiln import _pb, wire  # noqa: E402
from kiln.client import Client, KilnError  # noqa: E402

pb = _pb.service_pb2
SERVER = os.environ.get("KILN_SERVER_BIN", os.path.join(ROOT, "build", "server", "kiln-server"))


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", name + ".key", "-out", name + ".pem", "-days", "2",
            "-subj", "/CN=" + name, cwd=d)
    return os.path.join(d, name + ".pem")


def make_cert(d, name, ca, server=True):
    """A key and certificate signed by `ca`; a server's names 127.0.0.1 and localhost."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name, cwd=d)
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n" if server
                else "extendedKeyUsage=clientAuth\n")
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
            "-CAcreateserial", "-out", name + ".pem", "-days", "2", "-extfile", ext, cwd=d)
    return os.path.join(d, name + ".pem"), os.path.join(d, name + ".key")


@pytest.fixture(scope="module")
def pki():
    d = tempfile.mkdtemp(prefix="kiln-pki-")
    make_ca(d, "ca")
    make_ca(d, "other-ca")
    paths = {"dir": d, "ca": os.path.join(d, "ca.pem"), "other_ca": os.path.join(d, "other-ca.pem")}
    paths["server"] = make_cert(d, "server", "ca")
    paths["server2"] = make_cert(d, "server2", "other-ca")
    paths["client"] = make_cert(d, "client", "ca", server=False)
    paths["intruder"] = make_cert(d, "intruder", "other-ca", server=False)
    return paths


class Server:
    """A kiln-server child on 127.0.0.1, stopped by stop()."""

    def __init__(self, *flags, host="127.0.0.1"):
        self.log = tempfile.NamedTemporaryFile(prefix="kiln-server-", suffix=".log", delete=False)
        # Port 0 for both: a port picked here and released could be taken before the server binds it.
        self.proc = subprocess.Popen(
            [SERVER, "--host", host, "--port", "0", "--metrics_port", "0",
             "--cache_dir=", *flags], stderr=self.log, stdout=subprocess.DEVNULL)
        for _ in range(300):
            text = self.text()
            m = re.search(r'"msg":"serving","address":"[^"]*:(\d+)"', text)
            if m:
                self.address = "127.0.0.1:" + m.group(1)
                self.metrics_port = int(re.search(r'"metrics_port":"(\d+)"', text).group(1))
                return
            assert self.proc.poll() is None, self.text()
            time.sleep(0.02)
        raise RuntimeError("kiln-server did not start:\n" + self.text())

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(20)
        os.unlink(self.log.name)


def tokens_file(d, lines):
    path = os.path.join(d, "tokens")
    with open(path, "w") as f:
        for token, rest in lines:
            f.write("sha256:%s %s\n" % (hashlib.sha256(token.encode()).hexdigest(), rest))
    return path


def a_graph(tag=2.0):
    x = T.dvector("x")
    req = pb.CompileRequest()
    req.graph.CopyFrom(wire.graph_to_proto([x], [T.exp(x) * tag]))
    return req


def refused(address, ca=None, cert=None, key=None):
    """The status code of a GetVersion on a new channel (TLS when `ca` is given), within 3 s."""
    import grpc
    read = lambda p: open(p, "rb").read() if p else None  # noqa: E731
    channel = (grpc.secure_channel(address, grpc.ssl_channel_credentials(read(ca), read(key),
                                                                         read(cert)))
               if ca else grpc.insecure_channel(address))
    try:
        channel.unary_unary("/kiln.v1.Kiln/GetVersion")(b"", timeout=3)
        return "OK"
    except grpc.RpcError as e:
        return e.code().name
    finally:
        channel.close()


def version(client):
    return client.call("GetVersion", pb.GetVersionRequest(), timeout=5)


def code_of(fn, *args, **kwargs):
    with pytest.raises(KilnError) as e:
        fn(*args, **kwargs)
    return e.value.code, e.value.message


def test_tls_handshake_and_a_call_and_a_plaintext_client_refused(pki):
    cert, key = pki["server"]
    s = Server("--tls_cert", cert, "--tls_key", key)
    try:
        assert '"tls":"on"' in s.text()
        client = Client(s.address, tls_ca=pki["ca"])
        assert version(client).protocol == 2
        resp = client.call("Compile", a_graph())
        assert resp.source == "compiled"
        assert refused(s.address) == "UNAVAILABLE"  # plaintext against TLS
    finally:
        s.stop()


def test_mutual_tls_lets_in_only_certificates_of_the_client_ca(pki):
    cert, key = pki["server"]
    s = Server("--tls_cert", cert, "--tls_key", key, "--tls_client_ca", pki["ca"])
    try:
        assert '"tls":"mutual"' in s.text()
        good_cert, good_key = pki["client"]
        assert version(Client(s.address, tls_ca=pki["ca"], tls_cert=good_cert,
                              tls_key=good_key)).protocol == 2
        bad_cert, bad_key = pki["intruder"]
        assert refused(s.address, pki["ca"], bad_cert, bad_key) == "UNAVAILABLE"
        assert refused(s.address, pki["ca"]) == "UNAVAILABLE"  # no client certificate
        assert refused(s.address, pki["ca"], good_cert, good_key) == "OK"
    finally:
        s.stop()


def test_certificates_reload_on_sighup_without_dropping_calls(pki):
    d = tempfile.mkdtemp(prefix="kiln-reload-")
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    for src, dst in ((pki["server"][0], cert), (pki["server"][1], key)):
        with open(src, "rb") as f, open(dst, "wb") as g:
            g.write(f.read())
    s = Server("--tls_cert", cert, "--tls_key", key)
    try:
        old = Client(s.address, tls_ca=pki["ca"])
        fid = old.call("Compile", a_graph(3.0)).function_id
        for src, dst in ((pki["server2"][0], cert), (pki["server2"][1], key)):
            with open(src, "rb") as f, open(dst, "wb") as g:
                g.write(f.read())
        s.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        # New connections see the new certificate within a second or two.
        while refused(s.address, pki["other_ca"]) != "OK":
            assert time.time() < deadline, s.text()
            time.sleep(0.2)
        assert refused(s.address, pki["ca"]) == "UNAVAILABLE"
        # The connection made before the reload goes on.
        req = pb.ExecuteRequest(function_id=fid)
        wire.tensor_to_proto(np.ones(2), req.args.add())
        assert len(old.call("Execute", req).outputs) == 1
        # A reload of a broken pair keeps the certificates in use.
        with open(key, "w") as f:
            f.write("not a key\n")
        s.proc.send_signal(signal.SIGHUP)
        time.sleep(1.5)
        assert "reload failed" in s.text()
        assert refused(s.address, pki["other_ca"]) == "OK"
    finally:
        s.stop()


def test_tokens_missing_wrong_and_revoked_after_reload(pki):
    d = tempfile.mkdtemp(prefix="kiln-tokens-")
    path = tokens_file(d, [("alpha-token", "alpha"), ("beta-token", "beta")])
    s = Server("--auth_tokens", path)
    try:
        for token in (None, "wrong", "alpha-token "):  # the client's handshake is refused
            code, message = code_of(lambda: Client(s.address, token=token))
            assert code == "UNAUTHENTICATED", message
            assert "alpha" not in message
        alpha = Client(s.address, token="alpha-token")
        assert version(alpha).protocol == 2
        # A stream without a token ends before any argument is read.
        import grpc
        stream = alpha._stub.ExecuteStream(iter([pb.ExecuteStreamRequest(
            request=pb.ExecuteRequest(function_id="0" * 64))]), timeout=5)
        with pytest.raises(grpc.RpcError) as e:
            list(stream)
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # Health stays open.
        import grpc
        with grpc.insecure_channel(s.address) as channel:
            check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                        request_serializer=lambda b: b,
                                        response_deserializer=lambda b: b)
            assert check(b"", timeout=5) == b"\x08\x01"
        # beta's token is revoked: the file loses its line, then SIGHUP.
        beta = Client(s.address, token="beta-token")
        tokens_file(d, [("alpha-token", "alpha")])
        s.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while True:
            try:
                version(beta)
                assert time.time() < deadline
                time.sleep(0.1)
            except KilnError as e:
                assert e.code == "UNAUTHENTICATED"
                break
        assert version(Client(s.address, token="alpha-token")).protocol == 2
        assert 'kiln_tenant_requests_total{tenant="alpha",code="OK"}' in urllib.request.urlopen(
            "http://127.0.0.1:%d/metrics" % s.metrics_port, timeout=5).read().decode()
    finally:
        s.stop()


def test_a_tenant_cannot_reach_another_tenants_session(pki):
    d = tempfile.mkdtemp(prefix="kiln-tenants-")
    s = Server("--auth_tokens", tokens_file(d, [("a-token", "a"), ("b-token", "b")]))
    try:
        a, b = Client(s.address, token="a-token"), Client(s.address, token="b-token")
        sid = a.call("CreateSession", pb.CreateSessionRequest()).session
        value = pb.SetSharedRequest(session=sid, name="w")
        wire.tensor_to_proto(np.float64(7), value.value)
        a.call("SetShared", value)
        x, w = T.dscalar("x"), T.dscalar("w")
        req = pb.CompileRequest()
        req.graph.CopyFrom(wire.graph_to_proto([x, w], [w + x], {id(w): "w"}))
        fid = b.call("Compile", req).function_id
        execute = pb.ExecuteRequest(function_id=fid, session=sid)
        wire.tensor_to_proto(np.float64(1), execute.args.add())
        calls = [("GetShared", pb.GetSharedRequest(session=sid, name="w")),
                 ("SetShared", value),
                 ("ListShared", pb.ListSharedRequest(session=sid)),
                 ("DeleteShared", pb.DeleteSharedRequest(session=sid, name="w")),
                 ("Execute", execute),
                 ("DeleteSession", pb.DeleteSessionRequest(session=sid))]
        for method, request in calls:
            code, message = code_of(b.call, method, request)
            assert code == "NOT_FOUND", (method, code, message)
        # A's session is untouched, and A executes against it.
        got = a.call("GetShared", pb.GetSharedRequest(session=sid, name="w"))
        assert float(wire.tensor_from_proto(got.value)) == 7.0
        out = a.call("Execute", execute)
        assert float(wire.tensor_from_proto(out.outputs[0])) == 8.0
    finally:
        s.stop()


def test_quotas_are_hit_and_recovered(pki):
    d = tempfile.mkdtemp(prefix="kiln-quotas-")
    s = Server("--auth_tokens", tokens_file(d, [
        ("q-token", "q compiles_per_second=2 sessions=1 session_bytes=1000"),
        ("free-token", "free")]))
    try:
        q = Client(s.address, token="q-token")
        q.call("Compile", a_graph(1.0))
        q.call("Compile", a_graph(1.0))
        code, message = code_of(q.call, "Compile", a_graph(1.0))
        assert code == "RESOURCE_EXHAUSTED" and "compiles_per_second" in message, message
        Client(s.address, token="free-token").call("Compile", a_graph(1.0))  # others go on
        time.sleep(0.6)
        q.call("Compile", a_graph(1.0))  # the bucket refilled
        sid = q.call("CreateSession", pb.CreateSessionRequest()).session
        code, message = code_of(q.call, "CreateSession", pb.CreateSessionRequest())
        assert code == "RESOURCE_EXHAUSTED" and "sessions=" in message, message
        big = pb.SetSharedRequest(session=sid, name="big")
        wire.tensor_to_proto(np.zeros(200), big.value)
        code, message = code_of(q.call, "SetShared", big)
        assert code == "RESOURCE_EXHAUSTED" and "session_bytes=" in message, message
        q.call("DeleteSession", pb.DeleteSessionRequest(session=sid))
        q.call("CreateSession", pb.CreateSessionRequest())  # a session again
    finally:
        s.stop()


def test_the_executions_quota_holds_while_one_runs(pki):
    d = tempfile.mkdtemp(prefix="kiln-executions-")
    s = Server("--auth_tokens", tokens_file(d, [("e-token", "e executions=1")]))
    try:
        e = Client(s.address, token="e-token")
        x = T.dvector("x")
        y = x
        for _ in range(40):  # a few hundred ms on 4M elements
            y = T.sin(y) * 0.5 + T.cos(y)
        req = pb.CompileRequest()
        req.graph.CopyFrom(wire.graph_to_proto([x], [y.sum()]))
        fid = e.call("Compile", req).function_id
        slow = pb.ExecuteRequest(function_id=fid)
        wire.tensor_to_proto(np.ones(1 << 22), slow.args.add())
        import threading
        results = []

        def run_slow():  # until it gets the tenant's one execution (a quick call may hold it)
            while not results:
                try:
                    results.append(e.call("Execute", slow))
                except KilnError as err:
                    assert err.code == "RESOURCE_EXHAUSTED", err

        running = threading.Thread(target=run_slow)
        running.start()
        quick = pb.ExecuteRequest(function_id=fid)
        wire.tensor_to_proto(np.ones(1), quick.args.add())
        codes = set()
        while running.is_alive():
            try:
                e.call("Execute", quick)
                codes.add("OK")
            except KilnError as err:
                assert err.code == "RESOURCE_EXHAUSTED" and "executions=" in err.message
                codes.add(err.code)
        running.join()
        assert results and "RESOURCE_EXHAUSTED" in codes
        assert len(e.call("Execute", quick).outputs) == 1  # recovered once it ended
    finally:
        s.stop()


def test_per_tenant_caches_hide_one_tenants_compiles_from_another(pki):
    d = tempfile.mkdtemp(prefix="kiln-scope-")
    path = tokens_file(d, [("a-token", "a"), ("b-token", "b")])
    for scope, expected in (("tenant", "compiled"), ("global", "memory")):
        s = Server("--auth_tokens", path, "--cache_scope", scope)
        try:
            a, b = Client(s.address, token="a-token"), Client(s.address, token="b-token")
            first = a.call("Compile", a_graph(5.0))
            assert first.source == "compiled"
            second = b.call("Compile", a_graph(5.0))
            assert second.source == expected, scope
            execute = pb.ExecuteRequest(function_id=first.function_id)
            wire.tensor_to_proto(np.ones(1), execute.args.add())
            if scope == "tenant":
                assert second.function_id != first.function_id
                code, _ = code_of(b.call, "Execute", execute)
                assert code == "NOT_FOUND"
                code, _ = code_of(b.call, "Print", pb.PrintRequest(function_id=first.function_id))
                assert code == "NOT_FOUND"
            else:
                assert second.function_id == first.function_id
                assert len(b.call("Execute", execute).outputs) == 1
        finally:
            s.stop()


def non_loopback_address():
    """This machine's address on its default route (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))
            return s.getsockname()[0]
        except OSError:
            return None


def test_the_metrics_endpoint_is_loopback_only_and_can_need_a_token():
    s = Server("--metrics_token", "scrape-secret")
    try:
        url = "http://127.0.0.1:%d/metrics" % s.metrics_port
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url, timeout=5)
        assert e.value.code == 401
        req = urllib.request.Request(url, headers={"Authorization": "Bearer scrape-secret"})
        assert "kiln_requests_total" in urllib.request.urlopen(req, timeout=5).read().decode()
        # /healthz stays open for probes.
        assert urllib.request.urlopen("http://127.0.0.1:%d/healthz" % s.metrics_port,
                                      timeout=5).read().decode().startswith("serving")
        remote = non_loopback_address()
        assert remote and not remote.startswith("127."), "no address beyond loopback to test"
        with pytest.raises(OSError):
            socket.create_connection((remote, s.metrics_port), timeout=3).close()
    finally:
        s.stop()


def test_plaintext_beyond_loopback_is_warned_about():
    s = Server(host="0.0.0.0")
    try:
        assert "plaintext beyond loopback" in s.text()
    finally:
        s.stop()
    s = Server()
    try:
        assert "plaintext beyond loopback" not in s.text()
    finally:
        s.stop()


def test_the_cpp_demo_and_the_node_example_bring_their_credentials(pki):
    d = tempfile.mkdtemp(prefix="kiln-clients-")
    cert, key = pki["server"]
    s = Server("--tls_cert", cert, "--tls_key", key,
               "--auth_tokens", tokens_file(d, [("demo-token", "demo")]))
    try:
        env = dict(os.environ, KILN_TOKEN="demo-token", KILN_TLS_CA=pki["ca"])
        demo = os.environ.get("KILN_DEMO_BIN", os.path.join(ROOT, "build", "client", "cpp",
                                                            "kiln_demo"))
        out = subprocess.run([demo, "--server=" + s.address], env=env, timeout=120,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[-2000:]
        refused_run = subprocess.run([demo, "--server=" + s.address], timeout=120,
                                     env=dict(env, KILN_TOKEN="wrong"),
                                     capture_output=True, text=True)
        assert refused_run.returncode != 0 and "UNAUTHENTICATED" in refused_run.stderr + \
            refused_run.stdout
        node_dir = os.path.join(ROOT, "client", "node")
        if os.path.isdir(os.path.join(node_dir, "node_modules")):
            out = subprocess.run(["node", "seed.js", s.address], cwd=node_dir, env=env,
                                 timeout=60, capture_output=True, text=True)
            assert out.returncode == 0, out.stderr[-2000:]
            assert "a + a**10" in out.stdout
        metrics = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % s.metrics_port,
                                         timeout=5).read().decode()
        assert 'kiln_tenant_requests_total{tenant="demo",code="UNAUTHENTICATED"}' not in metrics
        assert 'kiln_tenant_requests_total{tenant="demo",code="OK"}' in metrics
    finally:
        s.stop()


def test_a_profile_is_its_tenants_alone(pki):
    d = tempfile.mkdtemp(prefix="kiln-profile-")
    s = Server("--auth_tokens", tokens_file(d, [("a-token", "a"), ("b-token", "b")]))
    try:
        a, b = Client(s.address, token="a-token"), Client(s.address, token="b-token")
        req = a_graph(3.0)
        req.profile = True
        fa, fb = a.call("Compile", req), b.call("Compile", req)
        assert fa.function_id != fb.function_id  # even with the global cache
        assert fa.signature.profile and fb.source == "compiled"
        execute = pb.ExecuteRequest(function_id=fa.function_id)
        wire.tensor_to_proto(np.ones(2), execute.args.add())
        for _ in range(3):
            a.call("Execute", execute)
        profile = pb.PrintRequest(function_id=fa.function_id, format=pb.PrintRequest.PROFILE)
        assert "Time in 3 calls" in a.call("Print", profile).text
        # b can neither read a's profile nor run a's profiled function.
        assert code_of(b.call, "Print", profile)[0] == "NOT_FOUND"
        assert code_of(b.call, "Execute", execute)[0] == "NOT_FOUND"
        profile.function_id = fb.function_id
        assert "Time in 0 calls" in b.call("Print", profile).text
        # A function compiled without profile has none to print.
        plain = a.call("Compile", a_graph(3.0))
        code, message = code_of(a.call, "Print", pb.PrintRequest(
            function_id=plain.function_id, format=pb.PrintRequest.PROFILE))
        assert code == "FAILED_PRECONDITION" and "not compiled with profile" in message
    finally:
        s.stop()


def lane_hello(path, authorization):
    """The code of a raw hello on the lane at `path` with this `authorization`, and whether the
    server then closed the connection."""
    import struct
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(path)
        hello = pb.LaneRequest()
        hello.hello.authorization = authorization
        frame = hello.SerializeToString()
        s.sendall(struct.pack("<I", len(frame)) + frame)
        n = struct.unpack("<I", s.recv(4))[0]
        resp = pb.LaneResponse()
        resp.ParseFromString(s.recv(n))
        s.settimeout(0.5)
        try:
            closed = s.recv(1) == b""
        except socket.timeout:  # still open
            closed = False
        return resp.code, closed


def test_the_same_host_lane_needs_the_token_and_forgets_a_revoked_one(pki):
    d = tempfile.mkdtemp(prefix="kiln-lane-")
    path = tokens_file(d, [("alpha-token", "alpha"), ("beta-token", "beta")])
    s = Server("--auth_tokens", path)
    try:
        alpha, beta = Client(s.address, token="alpha-token"), Client(s.address, token="beta-token")
        lane = version(alpha).local_socket
        assert lane and os.stat(lane).st_mode & 0o777 == 0o660
        unauthenticated = 16
        for authorization in ("", "Bearer wrong", "alpha-token"):
            assert lane_hello(lane, authorization) == (unauthenticated, True), authorization
        assert lane_hello(lane, "Bearer alpha-token") == (0, False)
        fid = alpha.call("Compile", a_graph()).function_id
        execute = pb.ExecuteRequest(function_id=fid)
        wire.tensor_to_proto(np.zeros(2), execute.args.add())
        for client in (alpha, beta):  # over the lane: each thread's connection is made
            out = client.call("Execute", execute)
            np.testing.assert_array_equal(wire.tensor_from_proto(out.outputs[0]), [2.0, 2.0])
            assert client._lane._local.sock is not None
        # beta's token is revoked: its open lane connection stops working at the next call.
        tokens_file(d, [("alpha-token", "alpha")])
        s.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while True:
            try:
                beta.call("Execute", execute)
                assert time.time() < deadline
                time.sleep(0.1)
            except KilnError as e:
                assert e.code == "UNAUTHENTICATED", e
                break
        alpha.call("Execute", execute)
        metrics = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % s.metrics_port,
                                         timeout=5).read().decode()
        assert 'kiln_errors_total{method="LaneExecute",code="UNAUTHENTICATED"}' in metrics
        assert 'kiln_tenant_requests_total{tenant="alpha",code="OK"}' in metrics
    finally:
        s.stop()
