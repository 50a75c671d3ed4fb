"""The console's JSON (server/console/API.md) from a real kiln-server: what it holds after real
calls, its history, the metrics token, the tenants' scoping and --console=false."""
import tempfile
import time

import numpy as np
import pytest

from console_server import ConsoleServer, compile_request, kiln, tokens_file, T
from kiln.client import Client


@pytest.fixture
def server():
    s = ConsoleServer()
    kiln.config.server = s.address
    yield s
    s.stop()


def test_functions_sessions_and_history_show_what_the_server_did(server):
    x = T.dvector("x")
    f = kiln.function([x], [(x * 2.0 + 1).sum(), T.exp(x)])
    for _ in range(5):
        f(np.arange(3.0))
    w = kiln.shared(np.ones((3, 4)), name="W")
    g = kiln.function([x], (w * x.sum()).sum(), updates=[(w, w * 0.5)])
    g(np.ones(3))
    time.sleep(2.5)  # two of the history's 1 s samples after the calls

    status, listed = server.get("/api/functions")
    assert status == 200
    rows = {row["id"]: row for row in listed["functions"]}
    assert set(rows) == {f.function_id, g.function_id}
    row = rows[f.function_id]
    assert row["calls"] == 5 and row["source"] == "compiled"
    assert row["nodes_before"] > row["nodes_after"] == 3
    assert row["inputs"] == [{"name": "x", "type": "TensorType(float64, (?,))"}]
    assert row["first_use"] <= row["last_use"] and row["compile_ms"] > 0

    status, detail = server.get("/api/functions/" + f.function_id)
    graph = detail["graph"]
    assert status == 200 and len(graph["nodes"]) == 4  # x, then three applies
    labels = [n["label"] for n in graph["nodes"]]
    assert labels[0] == "x" and "Sum{acc_dtype=float64}" in labels
    assert {(e["from"], e["to"]) for e in graph["edges"]} == {(0, 1), (1, 2), (0, 3)}
    assert [o["from"] for o in graph["outputs"]] == [2, 3]
    assert "Sum{acc_dtype=float64} [id A]" in detail["dprint"]
    assert any(r["rule"] and r["count"] > 0 for r in detail["rewrites"])
    # The graph as the client built it: before fusion, as many nodes as nodes_before.
    assert detail["has_built"]
    status, built = server.get("/api/functions/%s/built" % f.function_id)
    assert status == 200
    applies = [n for n in built["graph"]["nodes"] if n["kind"] == "apply"]
    assert len(applies) == row["nodes_before"]
    assert "Elemwise{mul,no_inplace}" in built["dprint"]

    status, sessions = server.get("/api/sessions")
    (session,) = sessions["sessions"]
    (variable,) = session["variables"]  # named after W, made unique in the session
    assert variable["name"].startswith("W") and session["tenant"] == ""
    assert (variable["dtype"], variable["shape"], variable["bytes"]) == ("float64", [3, 4], 96)

    status, overview = server.get("/api/overview")
    assert overview["health"] == "serving" and overview["totals"]["functions"] == 2
    assert overview["tiers"][0] == {"name": "memory", "state": "up", "entries": 2,
                                    "bytes": overview["tiers"][0]["bytes"], "evictions": 0}
    samples = overview["history"]["samples"]
    assert samples and all(s["memory_bytes"] > 0 for s in samples)
    executed = sum(s["executions_per_second"] for s in samples)
    assert executed > 0 and any(s["by_rpc"] for s in samples)


def test_an_unknown_function_is_404_and_the_page_is_served(server):
    status, body = server.get("/api/functions/" + "0" * 64)
    assert status == 404 and body == {"error": "no such function"}
    assert server.get("/api/nothing")[0] == 404
    status, page = server.get("/console/")
    assert status == 200 and b"<title>Kiln console</title>" in page.replace(b"\n", b"")


def test_without_the_metrics_token_the_api_is_401():
    s = ConsoleServer("--metrics_token=sesame")
    try:
        status, body = s.get("/api/overview")
        assert status == 401 and body["needs"] == "metrics_token"
        assert s.get("/api/overview", {"Authorization": "Bearer wrong"})[0] == 401
        status, body = s.get("/api/overview", {"Authorization": "Bearer sesame"})
        assert status == 200 and body["health"] == "serving"
    finally:
        s.stop()


def test_a_tenant_sees_only_its_own_functions_and_sessions():
    with tempfile.TemporaryDirectory() as d:
        s = ConsoleServer("--auth_tokens=" + tokens_file(d, [("a-token", "alpha"),
                                                             ("b-token", "beta")]),
                          "--cache_scope=tenant")
        try:
            alpha, beta = Client(s.address, token="a-token"), Client(s.address, token="b-token")
            mine = alpha.call("Compile", compile_request(1.0)).function_id
            theirs = beta.call("Compile", compile_request(2.0)).function_id
            alpha.call("CreateSession", kiln._pb.service_pb2.CreateSessionRequest())
            assert s.get("/api/functions")[1]["needs"] == "tenant_token"
            as_alpha = {"X-Kiln-Token": "a-token"}
            assert [f["id"] for f in s.get("/api/functions", as_alpha)[1]["functions"]] == [mine]
            assert s.get("/api/functions/" + mine, as_alpha)[0] == 200
            # Another tenant's id answers as an unknown one does.
            assert s.get("/api/functions/" + theirs, as_alpha) == (404, {"error": "no such function"})
            assert len(s.get("/api/sessions", as_alpha)[1]["sessions"]) == 1
            assert s.get("/api/sessions", {"X-Kiln-Token": "b-token"})[1]["sessions"] == []
            assert s.get("/api/overview", as_alpha)[1]["tenant"] == "alpha"
            as_beta = {"X-Kiln-Token": "b-token", "X-Kiln-Action": "1"}
            assert s.post("/api/functions/%s/evict" % mine, as_beta)[0] == 404
            assert s.get("/api/functions/" + mine, as_alpha)[0] == 200
        finally:
            s.stop()


def test_console_false_turns_it_off():
    s = ConsoleServer("--console=false")
    try:
        assert s.get("/api/overview")[0] == 404
        assert s.get("/console/")[0] == 404
        assert s.get("/healthz")[0] == 200
    finally:
        s.stop()


def test_the_actions_evict_and_delete_need_their_header_and_the_tenant(server):
    x = T.dvector("x")
    f = kiln.function([x], T.exp(x))
    w = kiln.shared(np.ones(2), name="w")
    kiln.function([x], x + w, updates=[(w, w + 1)])(np.ones(2))
    session = server.get("/api/sessions")[1]["sessions"][0]["name"]
    evict = "/api/functions/%s/evict" % f.function_id
    assert server.post(evict, {})[0] == 403  # no X-Kiln-Action: a cross-site form, refused
    assert server.get("/api/functions/" + f.function_id)[0] == 200
    assert server.post(evict) == (200, {"evicted": f.function_id})
    assert server.get("/api/functions/" + f.function_id)[0] == 404
    assert server.post(evict)[0] == 404
    np.testing.assert_allclose(f(np.zeros(2)), [1.0, 1.0])  # compiled again on its next call
    delete = "/api/sessions/%s/delete" % session
    assert server.post(delete) == (200, {"deleted": session})
    assert server.get("/api/sessions")[1]["sessions"] == []
    assert server.post(delete) == (404, {"error": "no such session"})
