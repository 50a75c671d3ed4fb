"""A kiln-server child with its console on a free metrics port, for the console's tests."""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "client", "python")]

import kiln  # noqa: E402
import kiln.tensor as T  # noqa: E402
from kiln import _pb, wire  # noqa: E402

SERVER = os.environ.get("KILN_SERVER_BIN", os.path.join(HERE, "..", "..", "build", "server",
                                                          "kiln-server"))


class ConsoleServer:
    """kiln-server on 127.0.0.1 (gRPC and metrics ports picked by it), stopped by stop()."""

    def __init__(self, *flags, wait_serving=True):
        self.log = tempfile.NamedTemporaryFile(prefix="kiln-console-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [SERVER, "--host", "127.0.0.1", "--port", "0", "--metrics_port", "0", "--cache_dir=",
             "--console_interval=1s", *flags], stderr=self.log, stdout=subprocess.DEVNULL)
        m = self._wait_for(r'"msg":"listening","address":"[^"]*:(\d+)".*?"metrics_port":"(\d+)"')
        self.address = "127.0.0.1:" + m.group(1)
        self.metrics_port = int(m.group(2))
        self.url = "http://127.0.0.1:%d" % self.metrics_port
        if wait_serving:
            self.wait_serving()

    def wait_serving(self):
        """Returns once the server says it is serving (warm)."""
        self._wait_for(r'"msg":"serving"', seconds=90)

    def _wait_for(self, pattern, seconds=20):
        deadline = time.time() + seconds
        while time.time() < deadline:
            m = re.search(pattern, self.text())
            if m:
                return m
            assert self.proc.poll() is None, self.text()
            time.sleep(0.02)
        raise RuntimeError("kiln-server did not log %r:\n%s" % (pattern, self.text()))

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def get(self, path, headers=None, method="GET"):
        """(HTTP status, body parsed as JSON when it is JSON) of GET path."""
        req = urllib.request.Request(self.url + path, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                status, body, kind = r.status, r.read(), r.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            status, body, kind = e.code, e.read(), e.headers.get("Content-Type", "")
        return status, json.loads(body) if kind.startswith("application/json") else body

    def post(self, path, headers=None):
        """post(path): an action, with its X-Kiln-Action header unless `headers` are given."""
        return self.get(path, {"X-Kiln-Action": "1"} if headers is None else headers, "POST")

    def stop(self):
        """Stops the server (again: nothing)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
        if os.path.exists(self.log.name):
            os.unlink(self.log.name)


def tokens_file(directory, tenants):
    """A --auth_tokens file giving each (token, tenant) pair."""
    path = os.path.join(directory, "tokens")
    with open(path, "w") as f:
        for token, tenant in tenants:
            f.write("sha256:%s %s\n" % (hashlib.sha256(token.encode()).hexdigest(), tenant))
    return path


def compile_request(scale):
    """A CompileRequest of exp(x) * scale: a different function per scale."""
    x = T.dvector("x")
    req = _pb.service_pb2.CompileRequest()
    wire.graph_to_proto([x], [T.exp(x) * scale], into=req.graph)
    return req
