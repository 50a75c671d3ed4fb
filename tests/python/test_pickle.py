"""Pickled functions and shared variables: the graph, kept values and function id survive;
unpickled in another process (a multiprocessing pool), a function reconnects to the configured
server and finds itself in the cache."""
import multiprocessing
import os
import pickle

import numpy as np

import kiln
import kiln.tensor as kt
from kiln.compile.io import In


def _affine():
    x, s, u = kt.dvector("x"), kt.dscalar("s"), kt.dscalar("u")
    w = kiln.shared(np.ones(3), name="w")
    f = kiln.function([x, In(s, update=s + u, value=1.0), In(u, value=0.5)],
                      (x * w).sum() + s, updates=[(w, w * 2.0)])
    return f, w


def _call_unpickled(blob):
    """In a fresh process: unpickle, call twice, report what it saw."""
    f = pickle.loads(blob)
    first = f(np.arange(3.0))
    second = f(np.arange(3.0), u=2.0)
    return f.function_id, f.source, float(first), float(second), float(f["s"])


def test_a_function_and_its_shared_variable_round_trip_in_this_process(server):
    f, w = _affine()
    assert f(np.arange(3.0)) == 4.0  # 0 + 1 + 2 (w = 1) + s = 1
    assert f["s"] == 1.5 and w.get_value().tolist() == [2.0, 2.0, 2.0]
    g = pickle.loads(pickle.dumps(f))
    # A copy: its shared variable and kept value are its own, from the moment it was pickled.
    assert g["s"] == 1.5 and g._shared[0].get_value().tolist() == [2.0, 2.0, 2.0]
    assert g(np.arange(3.0)) == 7.5 and g["s"] == 2.0
    assert w.get_value().tolist() == [2.0, 2.0, 2.0]  # the original is untouched
    assert f(np.arange(3.0)) == 7.5 and f["s"] == 2.0
    assert [i.name for i in g.inputs] == ["x", "s", "u"]
    assert str(g.outputs[0].type) == "TensorType(float64, ())"
    w2 = pickle.loads(pickle.dumps(w))
    assert w2.get_value().tolist() == w.get_value().tolist()
    assert w2.session_name() != w.session_name()


def test_an_unpickled_function_finds_itself_in_the_servers_cache_from_another_process(server):
    f, _ = _affine()
    blob = pickle.dumps(f)
    ctx = multiprocessing.get_context("spawn")
    os.environ["KILN_SERVER"] = server  # the children's kiln.config.server
    try:
        with ctx.Pool(2) as pool:
            results = pool.map(_call_unpickled, [blob, blob])
    finally:
        del os.environ["KILN_SERVER"]
    for function_id, source, first, second, s in results:
        assert function_id == f.function_id
        assert source == "memory"
        assert (first, second, s) == (4.0, 7.5, 3.5)  # each child has its own session



class Model:
    """A user's model: inputs, shared weights, an output expression, its gradient and a
    compiled function, pickled together (identities kept within one pickle)."""

    def __init__(self):
        self.x = kt.dmatrix("x")
        self.W = kiln.shared(np.linspace(-1.0, 1.0, 6).reshape(3, 2), name="W")
        self.b = kiln.shared(np.zeros(2), name="b")
        self.y = kt.nnet.sigmoid(kt.dot(self.x, self.W) + self.b)
        self.y.name = "y"
        self.cost = (self.y ** 2).mean()
        self.gW = kiln.grad(self.cost, self.W)
        self.predict = kiln.function([self.x], self.y)


X = np.arange(6.0).reshape(2, 3) / 6.0


def _check_unpickled_model(blob):
    """Unpickles a Model (here or in a fresh process) and reports what it computes and prints."""
    m = pickle.loads(blob)
    assert m.predict._shared[0] is m.W  # one object for the function and the graph
    assert m.gW.owner is not None and m.W in kiln.graph.graph_inputs([m.gW])
    x_of_graph = [v for v in kiln.graph.graph_inputs([m.cost]) if v.name == "x"]
    assert x_of_graph == [m.x]
    f = kiln.function([m.x], [m.y, m.cost, m.gW])
    return ([a.tolist() for a in f(X)], m.predict(X).tolist(),
            kiln.dprint([m.y, m.cost, m.gW], file="str"))


def test_a_model_of_graphs_shared_variables_and_a_function_round_trips(server):
    m = Model()
    want = kiln.function([m.x], [m.y, m.cost, m.gW])(X)
    want = [a.tolist() for a in want]
    text = kiln.dprint([m.y, m.cost, m.gW], file="str")
    blob = pickle.dumps(m)
    assert _check_unpickled_model(blob) == (want, m.predict(X).tolist(), text)
    ctx = multiprocessing.get_context("spawn")
    os.environ["KILN_SERVER"] = server  # the children's kiln.config.server
    try:
        with ctx.Pool(1) as pool:
            (got,) = pool.map(_check_unpickled_model, [blob])
    finally:
        del os.environ["KILN_SERVER"]
    assert got == (want, m.predict(X).tolist(), text)
