"""The Theano tutorials' logistic regression / MLP cost, -mean(log(p_y_given_x)[arange(len(y)),
y]), compiled as Aesara 2.9.4 compiles it (local_advanced_indexing_crossentropy_onehot and its
_grad): one CrossentropySoftmaxArgmax1HotWithBias for the cost, CrossentropySoftmax1HotWithBiasDx
for the gradient, and no advanced indexing left. Values against NumPy's log-softmax and its
analytic gradient ((softmax - onehot) / n). The node-by-node comparison with Aesara's graphs is
core/passes/nnet_rules_test.cc's GoldenGraphs (tests/golden/nnet_rewrites.txt beside
aesara_nnet_rewrites.txt)."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.tensor import nnet

FUSED = ("CrossentropySoftmaxArgmax1HotWithBias", "CrossentropySoftmax1HotWithBiasDx")
GONE = ("AdvancedSubtensor ", "AdvancedIncSubtensor", "LogSoftmax", "Softmax{")


def _reference(xv, wv, bv, yv):
    z = xv.astype(np.float64) @ wv + bv
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    n = len(yv)
    cost = -logp[np.arange(n), yv].mean()
    dz = np.exp(logp)
    dz[np.arange(n), yv] -= 1
    dz /= n
    return cost, xv.T @ dz, dz.sum(axis=0)


@pytest.mark.parametrize("form", ["log(p)[arange, y]", "log(p[arange, y])"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_tutorial_cost_is_fused(server, form, dtype):
    x = kt.matrix("x", dtype=dtype)
    W = kt.matrix("W", dtype=dtype)
    b = kt.vector("b", dtype=dtype)
    y = kt.lvector("y")
    p_y_given_x = nnet.softmax(kt.dot(x, W) + b)
    rows = kt.arange(y.shape[0])
    if form == "log(p)[arange, y]":
        cost = -kt.mean(kt.log(p_y_given_x)[rows, y])
    else:
        cost = -kt.mean(kt.log(p_y_given_x[rows, y]))
    f = kiln.function([x, W, b, y], [cost] + kiln.grad(cost, [W, b]))
    text = kiln.dprint(f, file="str")
    for name in FUSED:
        assert name in text, text
    for name in GONE:
        assert name not in text, text
    rng = np.random.RandomState(36)
    xv = rng.randn(7, 4).astype(dtype)
    wv = rng.randn(4, 3).astype(dtype)
    bv = rng.randn(3).astype(dtype)
    yv = np.array([0, 2, 1, 1, 0, 2, 2])
    got = f(xv, wv, bv, yv)
    want = _reference(xv, wv.astype(np.float64), bv.astype(np.float64), yv)
    tol = 1e-12 if dtype == "float64" else 2e-6
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_large_logits_stay_finite(server):
    # The fused op computes from the row's maximum: no overflow where softmax alone would.
    x, y = kt.dmatrix("x"), kt.lvector("y")
    cost = -kt.mean(kt.log(nnet.softmax(x))[kt.arange(y.shape[0]), y])
    f = kiln.function([x, y], [cost, kiln.grad(cost, x)])
    xv = np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]])
    c, g = f(xv, np.array([0, 0]))
    np.testing.assert_allclose(c, 400.0)
    np.testing.assert_allclose(g, [[0.0, 0.0, 0.0], [-0.5, 0.5, 0.0]], atol=1e-12)
