"""The console's pages in a real browser (headless Chromium, selenium) against a real
kiln-server holding functions the Python and C++ clients compiled: what a person sees on each
page, with no JavaScript error; screenshots kept under $KILN_CONSOLE_ARTIFACTS."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time

import numpy as np
import pytest

from browser import Browser, require_browser
from console_server import ConsoleServer, kiln, T

BUILD = os.environ.get("KILN_BUILD_DIR") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                         "build")
DEMO = os.environ.get("KILN_DEMO_BIN", os.path.join(BUILD, "client", "cpp", "kiln_demo"))


def require_page(server):
    """Fails (in CI) or skips when the build made no page: the server then serves a note."""
    status, page = server.get("/console/")
    if b"was not built" in page:
        if os.environ.get("CI"):
            pytest.fail("the console's page was not built (npm)")
        pytest.skip("the console's page was not built (npm)")


@pytest.fixture
def browser():
    require_browser()
    b = Browser()
    yield b
    errors = b.errors()
    b.close()
    assert errors == [], errors


@pytest.fixture
def server():
    s = ConsoleServer()
    kiln.config.server = s.address
    require_page(s)
    yield s
    s.stop()


def model_function():
    """A function with an OpFromGraph (an inner graph) and an in-place node."""
    a, b = T.dmatrix("a"), T.dmatrix("b")
    inner_x, inner_y = T.dscalar("u"), T.dscalar("v")
    op = kiln.OpFromGraph([inner_x, inner_y], [inner_x * inner_y + 1.0])
    s = T.exp(T.dot(a, b)).sum()
    f = kiln.function([a, b], op(s, s))
    f(np.ones((2, 3)), np.ones((3, 2)))
    return f


def test_overview_functions_and_a_functions_graph(server, browser):
    f = model_function()
    demo = subprocess.run([DEMO, "--server=" + server.address], capture_output=True, text=True,
                          timeout=120)
    assert demo.returncode == 0, demo.stderr[-2000:]
    time.sleep(2.2)  # two history samples after the calls
    base = server.url + "/console/"

    browser.open(base + "#/overview")
    health = browser.wait_for("[data-test=health]")[0]
    assert health.text == "serving"
    charts = browser.wait(lambda: [c for c in browser.all("[data-test=chart]")
                                   if int(c.get_attribute("data-points") or 0) >= 2],
                          message="charts with data points")
    assert len(charts) >= 3
    browser.shot("overview")

    browser.open(base + "#/functions")
    rows = browser.wait_for("[data-test=function-row]")
    ids = {r.get_attribute("data-id") for r in rows}
    listed = {e["id"] for e in server.get("/api/functions")[1]["functions"]}
    assert f.function_id in ids and ids == listed and len(ids) >= 2  # the C++ demo's too
    browser.shot("functions")

    browser.open(base + "#/function/" + f.function_id)
    graph = server.get("/api/functions/" + f.function_id)[1]["graph"]
    nodes = browser.wait_for("[data-test=graph-node]")
    assert len(nodes) == len(graph["nodes"])
    count = browser.wait_for("[data-test=node-count]")[0].text
    assert str(len(graph["nodes"])) in count
    applies = [n for n in graph["nodes"] if n["kind"] == "apply"]
    apply = next(n for n in applies if n["op"] == "OpFromGraph")
    browser.all("[data-test=graph-node][data-node-id='%d']" % apply["id"])[0].click()
    props = browser.wait(lambda: browser.all("[data-test=node-props]")[0].text.strip(),
                         message="the node's props")
    assert apply["label"] in props
    browser.shot("function")
    assert "[id A]" in browser.all("[data-test=dprint]")[0].text
    # Its inner graph opens in place: the node becomes a frame holding the inner nodes.
    browser.all("[data-test=graph-node][data-node-id='%d'] [data-test=graph-expand]"
                % apply["id"])[0].click()
    drawn = len(graph["nodes"]) - 1 + len(apply["inner"]["nodes"])
    browser.wait(lambda: len(browser.all("[data-test=graph-node]")) == drawn,
                 message="the inner graph's nodes drawn")
    assert browser.all("[data-test=graph-cluster][data-node-id='%d']" % apply["id"])
    browser.shot("function_inner_open")
    # The graph as the client built it, then back.
    built = server.get("/api/functions/%s/built" % f.function_id)[1]["graph"]
    browser.all("[data-test=graph-built]")[0].click()
    browser.wait(lambda: len(browser.all("[data-test=graph-node]")) == len(built["nodes"]),
                 message="the graph as built drawn")
    browser.shot("function_as_built")
    browser.all("[data-test=graph-optimized]")[0].click()
    browser.wait(lambda: len(browser.all("[data-test=graph-node]")) == len(graph["nodes"]),
                 message="the optimized graph drawn again")
    # Evict: the first click arms the button, the second acts; the list no longer has it.
    for _ in range(2):
        browser.all("[data-test=evict]")[0].click()
    browser.wait(lambda: "#/functions" in browser.driver.current_url and browser.all(
        "[data-test=function-row]"), message="back to the list")
    assert f.function_id not in {r.get_attribute("data-id")
                                 for r in browser.all("[data-test=function-row]")}


def test_a_session_is_shown_and_deleted(server, browser):
    w = kiln.shared(np.zeros((2, 3)), name="w")
    x = T.dmatrix("x")
    kiln.function([x], (x + w).sum(), updates=[(w, w + x)])(np.ones((2, 3)))
    browser.open(server.url + "/console/#/sessions")
    (card,) = browser.wait_for("[data-test=session-row]")
    (row,) = browser.all("[data-test=variable-row]")
    assert "float64" in row.text and "(2, 3)" in row.text
    browser.shot("sessions")
    for _ in range(2):
        browser.all("[data-test=delete-session]")[0].click()
    browser.wait_for("[data-test=empty]")
    assert server.get("/api/sessions")[1]["sessions"] == []


def test_a_graph_of_100000_nodes_becomes_interactive(server, browser):
    x = T.dscalar("x")
    y = x
    for i in range(100000):
        y = y * 1.0001 if i % 2 else y + 0.5
    t0 = time.time()
    f = kiln.function([x], y, mode=kiln.Mode(optimizer=None))
    nodes = server.get("/api/functions/" + f.function_id)[1]["nodes_after"]
    assert nodes >= 100000
    start = time.time()
    browser.open(server.url + "/console/#/function/" + f.function_id)
    browser.wait(lambda: browser.all("[data-test=node-count]") and browser.all(
        "[data-test=graph-node]"), timeout=120, message="the graph drawn")
    seconds = time.time() - start
    drawn = len(browser.all("[data-test=graph-node]"))
    browser.shot("function_100k")
    print("BENCH console_100k_nodes_interactive seconds=%.2f drawn=%d compile_seconds=%.1f"
          % (seconds, drawn, start - t0))
    assert drawn <= 5000 and seconds < 60


def test_the_token_form_when_the_api_needs_one(browser):
    s = ConsoleServer("--metrics_token=sesame")
    try:
        require_page(s)
        browser.allow(401)
        browser.open(s.url + "/console/#/overview")
        form = browser.wait_for("[data-test=token-form]")[0]
        assert form.get_attribute("data-needs") == "metrics_token"
        browser.shot("token_form")
        form.find_element("css selector", "input").send_keys("sesame")
        browser.all("[data-test=token-submit]")[0].click()
        assert browser.wait_for("[data-test=health]")[0].text == "serving"
    finally:
        browser.leave()
        s.stop()


def _redis(port, *args):
    """One command to the Redis on port (RESP over a socket); its first reply line."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        c.sendall(("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a)
                                                    for a in args)).encode())
        return c.recv(1024)


def test_warming_and_draining_states(browser):
    """A replica warms while its Redis is slow (a real Redis kept busy by DEBUG SLEEP), then
    drains after SIGTERM for --drain_delay: the overview says so each time."""
    port = _free_port()
    redis = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port),
                              "--save", "", "--appendonly", "no", "--enable-debug-command", "yes"],
                             stdout=subprocess.DEVNULL)
    stop = threading.Event()
    try:
        for _ in range(100):
            try:
                if _redis(port, "PING").startswith(b"+PONG"):
                    break
            except OSError:
                time.sleep(0.05)

        def keep_busy():  # each of the server's warm-up lookups waits up to 0.8 s
            while not stop.is_set():
                _redis(port, "DEBUG", "SLEEP", "0.8")

        threading.Thread(target=keep_busy, daemon=True).start()
        warm = ",".join("%064x" % i for i in range(1, 30))
        s = ConsoleServer("--redis=127.0.0.1:%d" % port, "--warm_functions=" + warm,
                          "--warm_timeout=60s", "--drain_delay=20s", wait_serving=False)
        try:
            require_page(s)
            browser.open(s.url + "/console/#/overview")
            assert browser.wait_for("[data-test=health]")[0].text == "warming"
            browser.shot("warming")
            stop.set()
            s.wait_serving()
            os.kill(s.proc.pid, signal.SIGTERM)
            browser.wait(lambda: s.get("/api/overview")[1]["health"] == "draining", 10,
                         "the server draining")
            browser.open(s.url + "/console/#/overview")
            assert browser.wait(lambda: browser.all("[data-test=health]")[0].text == "draining",
                                10, "the page saying draining")
            browser.shot("draining")
        finally:
            browser.leave()
            s.stop()
    finally:
        stop.set()
        redis.terminate()
        redis.wait(10)


def test_the_d3viz_page_opens_from_a_file_without_a_server(server, browser):
    f = model_function()
    expected = len(json.loads(f.print_compiled("GRAPH_JSON"))["nodes"])
    x = T.dvector("x")
    with tempfile.TemporaryDirectory() as d:
        compiled = kiln.d3viz(f, os.path.join(d, "graph.html"))
        built = kiln.d3viz.d3viz([T.exp(x) * 2.0], os.path.join(d, "built.html"))
        server.stop()  # the page needs no server
        browser.open("file://" + compiled)
        assert len(browser.wait_for("[data-test=graph-node]")) == expected
        browser.shot("d3viz")
        browser.open("file://" + built)
        assert len(browser.wait_for("[data-test=graph-node]")) == 5  # x, 2.0, its broadcast, exp, mul


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
