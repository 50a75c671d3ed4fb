"""kiln.tensor.random against SciPy: every distribution passes a Kolmogorov-Smirnov (continuous)
or chi-square (discrete) test; RandomStream's default updates, seeding and no_default_updates
behave as Aesara's; draws repeat across thread counts and server restarts."""
import os
import re

import numpy as np
import pytest
from scipy import stats

import kiln
import kiln.tensor as at
from kiln.tensor.random import basic
from kiln.tensor.random.utils import RandomStream

from conftest import running_server

N = 20000
ALPHA = 1e-4  # a fixed seed makes these deterministic; this bound only guards against a bug


def draw(rv, n_calls=1, **kwargs):
    f = kiln.function([], rv, **kwargs)
    return [f() for _ in range(n_calls)]


def check_continuous(sample, cdf):
    assert stats.kstest(sample.ravel(), cdf).pvalue > ALPHA


def check_discrete(sample, pmf, support):
    """Chi-square of the counts on `support` (the rest pooled) against pmf."""
    sample = sample.ravel()
    expected = np.array([pmf(k) for k in support]) * len(sample)
    observed = np.array([(sample == k).sum() for k in support], dtype=float)
    rest_exp, rest_obs = len(sample) - expected.sum(), len(sample) - observed.sum()
    if rest_exp > 5:
        expected, observed = np.append(expected, rest_exp), np.append(observed, rest_obs)
    else:  # too few for a bin of their own: pooled with the last
        expected[-1] += rest_exp
        observed[-1] += rest_obs
    assert stats.chisquare(observed, expected).pvalue > ALPHA


CONTINUOUS = [
    ("uniform", (-1.0, 3.0), stats.uniform(-1, 4).cdf),
    ("normal", (3.0, 2.0), stats.norm(3, 2).cdf),
    ("gamma", (0.5, 2.0), stats.gamma(0.5, scale=0.5).cdf),  # Aesara's gamma(shape, rate)
    ("gamma", (7.5, 1.0), stats.gamma(7.5).cdf),
    ("beta", (2.0, 5.0), stats.beta(2, 5).cdf),
    ("beta", (0.3, 0.4), stats.beta(0.3, 0.4).cdf),
    ("exponential", (1.5,), stats.expon(scale=1.5).cdf),
]


@pytest.mark.parametrize("name,params,cdf", CONTINUOUS, ids=lambda c: str(c))
def test_continuous_distributions_match_scipy(server, name, params, cdf):
    srng = RandomStream(1234)
    sample = draw(getattr(srng, name)(*params, size=(N,)))[0]
    assert sample.dtype == np.float64 and sample.shape == (N,)
    check_continuous(sample, cdf)


DISCRETE = [
    ("integers", (-2, 5), stats.randint(-2, 5).pmf, range(-2, 5)),
    ("binomial", (20, 0.3), stats.binom(20, 0.3).pmf, range(0, 15)),
    ("binomial", (5000, 0.4), stats.binom(5000, 0.4).pmf, range(1900, 2100)),
    ("bernoulli", (0.25,), stats.bernoulli(0.25).pmf, range(2)),
    ("poisson", (3.5,), stats.poisson(3.5).pmf, range(12)),
    ("poisson", (80.0,), stats.poisson(80).pmf, range(55, 106)),
    ("categorical", (np.array([0.2, 0.5, 0.3]),), lambda k: [0.2, 0.5, 0.3][k], range(3)),
]


@pytest.mark.parametrize("name,params,pmf,support", DISCRETE, ids=lambda c: str(c)[:20])
def test_discrete_distributions_match_scipy(server, name, params, pmf, support):
    srng = RandomStream(99)
    sample = draw(getattr(srng, name)(*params, size=(N,)))[0]
    assert sample.dtype == np.int64
    check_discrete(sample, pmf, support)


def test_vector_distributions_match_scipy(server):
    srng = RandomStream(5)
    alphas = np.array([1.0, 2.0, 5.0])
    d = draw(srng.dirichlet(alphas, size=(N,)))[0]
    assert d.shape == (N, 3)
    np.testing.assert_allclose(d.sum(axis=1), 1.0)
    check_continuous(d[:, 2], stats.beta(5, 3).cdf)  # a Dirichlet's marginals are Betas
    mean, cov = np.array([1.0, -2.0]), np.array([[4.0, 1.2], [1.2, 1.0]])
    m = draw(srng.multivariate_normal(mean, cov, size=(N,)))[0]
    assert m.shape == (N, 2)
    dist2 = np.einsum("ij,jk,ik->i", m - mean, np.linalg.inv(cov), m - mean)
    check_continuous(dist2, stats.chi2(2).cdf)  # Mahalanobis distances are chi-square
    perms = np.array(draw(srng.permutation(4), n_calls=2400))
    assert perms.dtype == np.int8 and sorted(perms[0]) == [0, 1, 2, 3]
    check_discrete(perms[:, 0], lambda k: 0.25, range(4))
    picks = draw(srng.choice(np.array([10, 20, 30]), size=(N,), p=np.array([0.5, 0.3, 0.2])))[0]
    check_discrete(picks, lambda k: {10: 0.5, 20: 0.3, 30: 0.2}[k], [10, 20, 30])
    no_repeat = draw(srng.choice(50, size=(50,), replace=False))[0]
    assert sorted(no_repeat) == list(range(50))


def test_parameters_broadcast_and_size_is_symbolic(server):
    srng = RandomStream(3)
    loc = at.dvector("loc")
    y = srng.normal(loc, np.array([[1e-9], [1.0]]))
    assert y.type.shape == (2, None)
    out = kiln.function([loc], y)(np.array([0.0, 10.0, 20.0]))
    np.testing.assert_allclose(out[0], [0.0, 10.0, 20.0], atol=1e-6)
    n = at.lscalar("n")
    z = srng.uniform(size=(n, 3))
    assert z.type.shape == (None, 3)
    assert kiln.function([n], z)(4).shape == (4, 3)


def test_default_updates_and_seeding_follow_aesara(server):
    srng = RandomStream(seed=234)
    rv_u = srng.uniform(0, 1, size=(2, 2))
    rv_n = srng.normal(0, 1, size=(2, 2))
    f = kiln.function([], rv_u)
    g = kiln.function([], rv_n, no_default_updates=True)
    a, b = f(), f()
    assert not np.array_equal(a, b)  # the state advanced
    np.testing.assert_array_equal(g(), g())  # no default update: the same draw
    srng.seed(234)
    np.testing.assert_array_equal(f(), a)  # re-seeded: the first draw again
    srng2 = RandomStream(seed=234)
    np.testing.assert_array_equal(kiln.function([], srng2.uniform(0, 1, size=(2, 2)))(), a)
    assert len(srng.updates()) == 2 and srng.updates()[0][0] is rv_u.owner.inputs[0]
    # A list skips only the variables in it.
    h = kiln.function([], [rv_u, rv_n], no_default_updates=[rv_n.owner.inputs[0]])
    (u1, n1), (u2, n2) = h(), h()
    assert not np.array_equal(u1, u2) and np.array_equal(n1, n2)
    with pytest.raises(ValueError, match="rng"):
        srng.normal(rng=rv_u.owner.inputs[0])
    # The tutorial's: one draw per call, however often the graph reads it.
    nearly_zeros = kiln.function([], rv_u + rv_u - 2 * rv_u)
    np.testing.assert_allclose(nearly_zeros(), np.zeros((2, 2)), atol=1e-15)


def test_default_updates_inside_other_updates_are_collected(server):
    s, c = kiln.shared(0.0), kiln.shared(1.0)
    c.default_update = c + 1
    f = kiln.function([], [], updates=[(s, s + c)])
    f()
    f()
    assert s.get_value() == 3.0 and c.get_value() == 3.0


def test_a_shared_numpy_generator_is_a_state_without_update(server):
    rng = kiln.shared(np.random.default_rng(42))
    y = basic.normal(0, 1, size=(3,), rng=rng)
    f = kiln.function([], y)
    np.testing.assert_array_equal(f(), f())
    f2 = kiln.function([], y, updates=[(rng, y.owner.outputs[0])])
    assert not np.array_equal(f2(), f2())


def test_dprint_and_errors_are_aesaras(server):
    srng = RandomStream(234)
    x = srng.normal(0, 1, size=(2,))
    text = re.sub(r"0x[0-9A-F]+", "0x...", kiln.dprint(x, file="str"))
    assert text == ("normal_rv{0, (0, 0), floatX, False}.1 [id A]\n"
                    " |RandomGeneratorSharedVariable(<Generator(Philox) at 0x...>) [id B]\n"
                    " |TensorConstant{(1,) of 2} [id C]\n"
                    " |TensorConstant{11} [id D]\n"
                    " |TensorConstant{0} [id E]\n"
                    " |TensorConstant{1} [id F]\n")
    assert str(basic.exponential) == "exponential_rv{0, (0,), floatX, False}"
    bad = srng.normal(0, -1.0, size=(3,))
    with pytest.raises(kiln.KilnError, match="parameter scale must be >= 0, got -1"):
        kiln.function([], bad)()
    with pytest.raises(Exception, match="No gradient defined for random variables"):
        m = at.dscalar("m")
        kiln.grad(at.sum(srng.normal(m, 1.0, size=(2,))), m)


def _draws_on(address):
    """A draw of 300,000 normals and of 50,000 gammas from seed 11 on the server at address."""
    old = kiln.config.server
    kiln.config.server = address
    try:
        srng = RandomStream(11)
        return kiln.function([], [srng.normal(size=(300000,)), srng.gamma(3.0, 1.0,
                                                                            size=(50000,))])()
    finally:
        kiln.config.server = old


def test_draws_repeat_across_thread_counts_and_restarts(server):
    results = []
    for threads in ["1", "2", "2"]:  # the last is a restart of the second
        old = os.environ.get("KILN_NUM_THREADS")
        os.environ["KILN_NUM_THREADS"] = threads
        try:
            with running_server() as address:
                results.append(_draws_on(address))
        finally:
            if old is None:
                del os.environ["KILN_NUM_THREADS"]
            else:
                os.environ["KILN_NUM_THREADS"] = old
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
