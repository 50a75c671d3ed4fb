"""pytest fixtures: a real kiln-server on 127.0.0.1 for the Python client's tests.

The server binary is KILN_SERVER_BIN (set by CTest) or build/server/kiln-server; the client's
stubs come from KILN_PB_DIR (set by CTest) or are generated with protoc on first import."""
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))


def _server_binary():
    path = os.environ.get("KILN_SERVER_BIN") or os.path.join(ROOT, "build", "server",
                                                             "kiln-server")
    if not os.access(path, os.X_OK):
        raise RuntimeError("kiln-server not found at %s: build it (./deploy/build.sh "
                           "kiln-server) or set KILN_SERVER_BIN" % path)
    return path


@contextlib.contextmanager
def running_server(*flags):
    """A kiln-server on 127.0.0.1 with these extra flags, for the with-block: its host:port."""
    log = tempfile.NamedTemporaryFile(prefix="kiln-server-", suffix=".log", delete=False)
    proc = subprocess.Popen([_server_binary(), "--host", "127.0.0.1", "--port", "0",
                             "--metrics_port", "-1", "--cache_dir=", *flags], stderr=log,
                            stdout=subprocess.DEVNULL)
    address = None
    for _ in range(200):
        with open(log.name) as f:
            m = re.search(r'"msg":"serving","address":"([^"]+)"', f.read())
        if m:
            address = m.group(1)
            break
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    try:
        if address is None:
            with open(log.name) as f:
                raise RuntimeError("kiln-server did not start:\n" + f.read())
        yield address
    finally:
        if proc.poll() is not None and address is not None:  # it died under the tests: say why
            with open(log.name) as f:
                sys.__stderr__.write("kiln-server exited with %s; its log ends:\n%s\n"
                                     % (proc.returncode, f.read()[-20000:]))
        proc.terminate()
        proc.wait(timeout=30)
        os.unlink(log.name)


@pytest.fixture(scope="session")
def server():
    """host:port of a kiln-server started for this test session (and kiln.config.server)."""
    with running_server() as address:
        import kiln
        kiln.config.server = address
        yield address
