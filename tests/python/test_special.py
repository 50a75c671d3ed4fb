"""The special functions (issue 37 item 4) from Python: names, classes and dtypes as Aesara
2.9.4's, values against SciPy (tests/golden/special_cases.txt, written by
tests/golden/gen_special_cases.py), and gradients equal to the numbers Aesara 2.9.4 computes
(recorded from the oracle: aesara.grad of the same sums at the same points)."""
import os

import numpy as np
import pytest

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "special_cases.txt")


@pytest.fixture(scope="module")
def kt(server):
    import kiln.tensor as kt
    return kt


def test_names_classes_and_dtypes_are_aesaras(kt):
    import kiln.scalar as ks
    k, x, a, b, c, z = (kt.dvector(n) for n in "kxabcz")
    assert str(kt.gammainc(k, x).owner.op) == "Elemwise{gammainc,no_inplace}"
    assert str(kt.betainc(a, b, x).owner.op) == "Elemwise{betainc,no_inplace}"
    assert str(kt.hyp2f1(a, b, c, z).owner.op) == "Elemwise{hyp2f1,no_inplace}"
    assert str(kt.tri_gamma(x).owner.op) == "Elemwise{tri_gamma,no_inplace}"
    assert str(kt.math.owens_t(a, b).owner.op) == "Elemwise{owens_t,no_inplace}"
    assert type(ks.gammainc).__name__ == "GammaInc"
    assert type(ks.owens_t).__name__ == "Owens_t"
    assert type(ks.hyp2f1).__name__ == "Hyp2F1"
    assert type(ks.betainc_der).__name__ == "BetaIncDer"
    # upgrade_to_float: int8 -> float32; int64 with float32 -> float64.
    assert kt.gammainc(kt.bvector(), kt.bvector()).dtype == "float32"
    assert kt.jv(kt.lscalar(), kt.fvector()).dtype == "float64"
    assert kt.betaincinv(kt.fscalar(), kt.fscalar(), kt.fvector()).dtype == "float32"
    for name in ("gammainc", "gammaincc", "gammaincinv", "gammainccinv", "gammau", "gammal",
                 "betainc", "betaincinv", "betaln", "polygamma", "tri_gamma", "i0", "i1", "iv",
                 "ive", "kv", "kve", "jv", "hyp2f1", "owens_t", "logit", "log1pexp", "log1mexp",
                 "logaddexp", "poch", "factorial"):
        assert callable(getattr(kt, name)) and callable(getattr(kt.math, name)), name


def _golden():
    groups = {}
    with open(GOLDEN) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.strip().split("|")
            op, dtype, args, expected = fields[:4]
            g = groups.setdefault((op, dtype), ([], [], []))
            g[0].append([float(v) for v in args.split(",")])
            g[1].append(float(expected))
            g[2].append(float(fields[4]) if len(fields) > 4 else np.nan)
    return groups


def test_values_match_scipy_and_aesara(kt):
    import kiln
    from kiln.tensor.basic import _elemwise
    for (op, dtype), (args, expected, truth) in sorted(_golden().items()):
        cols = np.array(args, dtype=dtype).T
        ins = [kt.vector(dtype=dtype) for _ in cols]
        f = kiln.function(ins, _elemwise(op, *ins))
        got = f(*cols)
        assert got.dtype == dtype, op
        rtol = 1.2e-7 if dtype == "float32" else 1e-12
        expected, truth = np.array(expected, dtype=dtype), np.array(truth)
        # Where Aesara's own series is the reference (the _der ops), kiln may differ from it
        # only by being closer to mpmath's value.
        closer = np.abs(got - truth) < np.abs(expected - truth) if op.endswith("_der") else \
            np.zeros(len(got), bool)
        np.testing.assert_allclose(got[~closer], expected[~closer], rtol=rtol, atol=0,
                                   err_msg="%s %s" % (op, dtype))


def _grads(kiln, inputs, y, *values):
    return [np.asarray(g) for g in kiln.function(inputs, kiln.grad(y.sum(), inputs))(*values)]


def test_gradients_are_aesaras(kt):
    import kiln
    k, x = kt.dvector("k"), kt.dvector("x")
    kv_, xv = [0.5, 2.5, 10.0], [0.5, 1.3, 3.0]
    gk, gx = _grads(kiln, [k, x], kt.gammainc(k, x), kv_, xv)
    np.testing.assert_allclose(gk, [-0.6472003523764859, -0.22962689833488775,
                                    -0.0014156364601478131], rtol=1e-12)
    np.testing.assert_allclose(gx, [0.4839414490382868, 0.3038757209668303,
                                    0.002700503931560479], rtol=1e-12)
    gk, gx = _grads(kiln, [k, x], kt.gammaincc(k, x), kv_, xv)
    np.testing.assert_allclose(gk, [0.6472001579457927, 0.2296271866528137,
                                    0.001415702149961958], rtol=1e-12)
    a, b, c, z = (kt.dvector(n) for n in "abcz")
    ga, gb, gx = _grads(kiln, [a, b, x], kt.betainc(a, b, x), [2.0, 0.5], [3.0, 0.5],
                        [0.3, 0.9])
    np.testing.assert_allclose(ga, [-0.24609372774672364, -0.2768155243583514], rtol=1e-12)
    np.testing.assert_allclose(gb, [0.1295450609648718, 0.5926200221433797], rtol=1e-12)
    np.testing.assert_allclose(gx, [1.764, 1.0610329539459693], rtol=1e-12)
    g = _grads(kiln, [a, b, c, z], kt.hyp2f1(a, b, c, z), [1.0, 0.5], [1.0, 2.5], [2.0, 4.0],
               [0.5, -0.7])
    np.testing.assert_allclose(g[0], [0.4804530139181962, -0.2941322067846902], rtol=1e-10)
    np.testing.assert_allclose(g[1], [0.4804530139181962, -0.052642887712113395], rtol=1e-10)
    np.testing.assert_allclose(g[2], [-0.2586397057283273, 0.03213568693655], rtol=1e-10)
    np.testing.assert_allclose(g[3], [1.2274112777602189, 0.1745465747240445], rtol=1e-12)
    g = _grads(kiln, [a, b], kt.math.owens_t(a, b), [1.0, -0.5], [2.0, 0.3])
    np.testing.assert_allclose(g[0], [-0.11548049634916464, 0.020989322345262913], rtol=1e-12)
    np.testing.assert_allclose(g[1], [0.0026128466569369842, 0.1274151326035304], rtol=1e-12)


def test_functions_written_from_other_ops(kt):
    import kiln
    sp = pytest.importorskip("scipy.special")
    a, b = kt.dvector("a"), kt.dvector("b")
    av, bv = np.array([0.5, 2.0, 7.5]), np.array([1.5, 3.0, 0.25])
    f = kiln.function([a, b], [kt.betaln(a, b), kt.poch(a, b), kt.kv(a, b), kt.logit(b / 4),
                               kt.factorial(a)])
    got = f(av, bv)
    np.testing.assert_allclose(got[0], sp.betaln(av, bv), rtol=1e-13)
    np.testing.assert_allclose(got[1], sp.poch(av, bv), rtol=1e-13)
    np.testing.assert_allclose(got[2], sp.kv(av, bv), rtol=1e-13)
    np.testing.assert_allclose(got[3], sp.logit(bv / 4), rtol=1e-13)
    np.testing.assert_allclose(got[4], sp.gamma(av + 1), rtol=1e-13)


def test_hyp2f1_der_wrt_out_of_range_is_an_error(kt):
    import kiln
    a, w = kt.dvector("a"), kt.dvector("w")
    f = kiln.function([a, w], kt.hyp2f1_der(a, a, a + 1, a / 2, w))
    f(np.array([0.5]), np.array([1.0]))
    with pytest.raises(Exception, match="wrt"):
        f(np.array([0.5]), np.array([3.0]))
