"""The special functions kiln.tensor.composed writes from other ops (betaln, logit, poch, kv):
values against mpmath in every branch of their switches, float32 computed in float64, and
gradients against the exact derivatives, NaN-free where an untaken branch would fail (the
numerics corpus, test_numerics_corpus.py, checks the values at its points)."""
import math

import numpy as np
import pytest

mp = pytest.importorskip("mpmath")
mp.mp.prec = 256


@pytest.fixture(scope="module")
def kt(server):
    import kiln.tensor as kt
    return kt


def _ulps(got, want, dtype):
    want = np.array(want, dtype)
    return np.abs(np.array(got, np.float64) - want.astype(np.float64)) / np.spacing(np.abs(want))


def _run(kt, fn, dtype, *columns):
    import kiln
    ins = [kt.vector(dtype=dtype) for _ in columns]
    out = fn(*ins)
    assert out.dtype == dtype
    return kiln.function(ins, out)(*[np.array(c, dtype) for c in columns])


def _betaln(a, b):
    return mp.log(abs(mp.beta(a, b)))


# (points, exact function, ulp bound) per function and branch; the points are exact in float64.
BRANCHES = {
    "betaln": [
        ([(12.0, 3e4), (1e5, 2.5e5), (10.0, 10.0), (640.5, 1000.0)], _betaln, 4),  # both >= 10
        ([(1.5, 1e6), (0.25, 1e9), (9.5, 10.0), (-2.5, 300.0)], _betaln, 4),  # hi >= 10 only
        ([(2.0, 3.0), (0.5, 9.75), (1e-200, 1e-200)], _betaln, 4),  # both small
    ],
    "logit": [([(0.25,), (0.5 + 2.0 ** -30,), (0.625,), (0.75,)], lambda x: mp.log(x / (1 - x)), 2),
              ([(2.0 ** -900,), (0.125,), (0.875,), (1 - 2.0 ** -50,)],
               lambda x: mp.log(x / (1 - x)), 2)],
    "poch": [([(100.0, 10.0), (0.5, 3.0), (-2.5, 3.0)], mp.rf, 4),  # direct
             ([(150.0, 30.0), (250.5, -30.25), (-200.5, 10.0), (171.0, 2.0)], mp.rf, 4),  # halved
             # beyond: exp of a gammaln difference, whose error is gammaln's ulp (7e2 ulp at
             # (500, 3), 6.4e3 at (1000, 0.5))
             ([(500.0, 3.0), (1000.0, 0.5)], mp.rf, 1e4)],
    "kv": [([(0.0, 1.0), (50.0, 100.0), (3.3, 600.0), (-2.5, 3.0)], mp.besselk, 2)],
}


@pytest.mark.parametrize("name", sorted(BRANCHES))
def test_values_in_every_branch(kt, name):
    for points, exact, bound in BRANCHES[name]:
        columns = list(zip(*points))
        want = [float(exact(*[mp.mpf(v) for v in p])) for p in points]
        got = _run(kt, getattr(kt, name), "float64", *columns)
        err = _ulps(got, want, "float64")
        assert err.max() <= bound, (name, points, got, want, err)


def test_float32_is_computed_in_float64(kt):
    """kv, poch and betaln of float32 round the float64 value: exact where float32's own
    exp(-x) is subnormal, gamma overflows or gammaln cancels; and infinite where the value is."""
    got = _run(kt, kt.kv, "float32", [50.0, 0.0], [100.0, 100.0])
    want = [float(mp.besselk(50, 100)), float(mp.besselk(0, 100))]
    assert _ulps(got, want, "float32").max() == 0
    got = _run(kt, kt.poch, "float32", [100.0, 150.0], [10.0, 30.0])
    assert got[0] == np.float32(float(mp.rf(100, 10))) and got[1] == np.inf
    got = _run(kt, kt.betaln, "float32", [1.5, 0.0], [1e6, 0.0])
    assert got[0] == np.float32(float(_betaln(mp.mpf(1.5), mp.mpf(1e6)))) and got[1] == np.inf


def test_logit_ends_as_scipy(kt):
    got = _run(kt, kt.logit, "float64", [0.0, 1.0, -0.5, 1.5, np.nan])
    assert got[0] == -np.inf and got[1] == np.inf and np.isnan(got[2:]).all()


def _grads(kt, fn, points):
    import kiln
    ins = [kt.dvector() for _ in points[0]]
    g = kiln.function(ins, kiln.grad(fn(*ins).sum(), ins))
    return [np.asarray(v) for v in g(*[np.array(c) for c in zip(*points)])]


def _betaln_grads(a, b):
    return [mp.digamma(a) - mp.digamma(a + b), mp.digamma(b) - mp.digamma(a + b)]


def _poch_grads(z, m):
    p = mp.rf(z, m)
    return [p * (mp.digamma(z + m) - mp.digamma(z)), p * mp.digamma(z + m)]


# (function, points in every branch, exact gradients, relative tolerance).
GRADIENTS = [
    ("betaln", [(12.0, 3e4), (1e5, 2.5e5), (1.5, 1e6), (0.5, 3.0), (2.0, 7.5), (300.0, 0.5),
                (9.5, 10.0), (10.0, 10.0)], _betaln_grads, 1e-9),
    ("logit", [(0.1,), (0.25,), (0.5,), (0.6,), (0.75,), (0.9,), (1e-300,), (1 - 2.0 ** -50,)],
     lambda x: [1 / (x * (1 - x))], 1e-12),
    ("poch", [(0.5, 3.0), (2.0, 1.5), (100.0, 10.0), (150.0, 30.0), (200.0, 30.0),
              (250.5, -30.25), (-200.5, 10.0), (500.0, 3.0)], _poch_grads, 1e-9),
]


@pytest.mark.parametrize("name,points,exact,rtol", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_gradients_are_exact_and_finite_in_every_branch(kt, name, points, exact, rtol):
    got = _grads(kt, getattr(kt, name), points)
    want = [exact(*[mp.mpf(v) for v in p]) for p in points]
    for i, g in enumerate(got):
        assert np.isfinite(g).all(), (name, i, g)
        np.testing.assert_allclose(g, [float(w[i]) for w in want], rtol=rtol,
                                   err_msg="%s d/d input %d" % (name, i))


def test_kv_gradient_wrt_x(kt):
    import kiln
    v, x = kt.dvector(), kt.dvector()
    g = kiln.function([v, x], kiln.grad(kt.kv(v, x).sum(), x))
    vs, xs = [0.0, 2.5, 50.0], [1.0, 5.0, 100.0]
    want = [float(-(mp.besselk(a - 1, b) + mp.besselk(a + 1, b)) / 2) for a, b in zip(vs, xs)]
    np.testing.assert_allclose(g(vs, xs), want, rtol=1e-12)
    assert math.isfinite(float(g([0.5], [700.0])[0]))
