"""The model graphs of tests/bench/model_graphs.py (radon, logreg, eight_schools, mixture, gp)
under Kiln, locally and on the server, checked against the logp and gradient PyTensor 2.34.0
computed from the same program text (tests/golden/pytensor_models.json, written by
tests/golden/gen_pytensor_models.py), and the size of Kiln's optimized graph against PyTensor's
(the golden's node count) and against the count Kiln reached (KILN_NODES). Times are the
benchmark's (tests/bench/models_vs_pytensor.py), not asserted here."""
import json
import os
import re
import sys

import numpy as np
import pytest

import kiln
import kiln.tensor as at

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import model_graphs  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "pytensor_models.json")
with open(GOLDEN) as f:
    PYTENSOR = json.load(f)["models"]

# Kiln agreed with PyTensor to 2e-15 relative (logp) and 8e-14 (the largest gradient element's
# difference over its value) when this was written; 1e-12 leaves room for another summation order.
RTOL = 1e-12

# The nodes of Kiln's optimized graphs when the rewrites of issue 40 landed (PyTensor 2.34.0's in
# the golden: radon 72, logreg 23, eight_schools 19, mixture 46; gp, added with issue 37, 69);
# tests/README.md says node by node where the graphs differ. A rewrite that makes a graph larger fails here.
KILN_NODES = {"radon": 70, "logreg": 15, "eight_schools": 19, "mixture": 39, "gp": 59}


@pytest.mark.parametrize("execute", ["local", "server"])
@pytest.mark.parametrize("name", model_graphs.MODELS)
def test_logp_and_gradient_as_pytensor(server, name, execute):
    want = PYTENSOR[name]
    model = model_graphs.build(name, kiln, at)
    # The model's fixed point is the one PyTensor was evaluated at.
    np.testing.assert_array_equal(model.point[0], want["point"])
    f = kiln.function(model.inputs, model.outputs, mode=kiln.Mode(execute=execute))
    logp, dlogp = f(*model.point)
    assert np.ndim(logp) == 0 and dlogp.shape == model.point[0].shape
    np.testing.assert_allclose(logp, want["logp"], rtol=RTOL)
    dlogp_want = np.array(want["dlogp"])
    # Elements near zero after cancellation are held to the gradient's scale.
    np.testing.assert_allclose(dlogp, dlogp_want, rtol=RTOL,
                               atol=RTOL * np.abs(dlogp_want).max())


def test_radon_sizes_are_pytensors_benchmark():
    # 173 parameters: intercept, two county effects of 84 free values, floor effect, three scales.
    model = model_graphs.build("radon", kiln, at)
    assert model.inputs[0].type.shape == (173,)
    assert len(PYTENSOR["radon"]["dlogp"]) == 173


def optimized_nodes(f):
    """The apply nodes of a compiled function's optimized graph: those its debugprint numbers
    (each once, with its position in the toposort), as tests/bench/models_vs_pytensor.py counts
    them."""
    text = kiln.printing.debugprint(f, file="str")
    return len(set(re.findall(r"\[id (\w+)\](?: '[^']*')? \d+$", text, re.M)))


@pytest.mark.parametrize("name", model_graphs.MODELS)
def test_optimized_graph_no_larger_than_pytensors(server, name):
    model = model_graphs.build(name, kiln, at)
    f = kiln.function(model.inputs, model.outputs, mode=kiln.Mode(execute="local"))
    nodes = optimized_nodes(f)
    assert nodes <= PYTENSOR[name]["nodes"], (name, nodes, PYTENSOR[name]["nodes"])
    assert nodes <= KILN_NODES[name], (name, nodes, KILN_NODES[name])
