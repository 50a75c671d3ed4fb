"""The four model graphs of tests/bench/model_graphs.py (radon, logreg, eight_schools, mixture)
under Kiln, locally and on the server, checked against the logp and gradient PyTensor 2.34.0
computed from the same program text (tests/golden/pytensor_models.json, written by
tests/golden/gen_pytensor_models.py). Node counts and times are the benchmark's
(tests/bench/models_vs_pytensor.py), not asserted here."""
import json
import os
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
